package serve

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowBody returns an Arrow IPC stream of one record batch per entry of
// batches (each a column per field, all of the batch's length).
func arrowBody(t *testing.T, fields []arrow.Field, batches ...[]arrow.Array) string {
	t.Helper()
	schema := arrow.NewSchema(fields, nil)
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(schema))
	for _, cols := range batches {
		rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRequestErrors: every way a request's rows are refused, in the
// three forms (JSON rows, JSON columns, Arrow), for a model whose
// request columns are a number x, a categorical c and a time t: the
// status, and the message, row and field the user reads. A bad value
// names its row and the field the request gave it, malformed JSON
// inside a row included.
func TestRequestErrors(t *testing.T) {
	m := newEncLin(t)
	_, srv := newServer(t, m, Options{})
	mem := memory.NewGoAllocator()
	f64 := func(v []float64, valid []bool) arrow.Array {
		b := array.NewFloat64Builder(mem)
		b.AppendValues(v, valid)
		return b.NewArray()
	}
	str := func(v ...string) arrow.Array {
		b := array.NewStringBuilder(mem)
		b.AppendValues(v, nil)
		return b.NewArray()
	}
	ts := func(v []arrow.Timestamp, valid []bool) arrow.Array {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"})
		b.AppendValues(v, valid)
		return b.NewArray()
	}
	fx := arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	fc := arrow.Field{Name: "c", Type: arrow.BinaryTypes.String}
	ft := arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, Nullable: true}
	const nullsErr = " (the server runs with --nulls error; mean or zero read it as a value)"
	const inputs = `its input columns: "x", "c", "t"`

	for _, c := range []struct {
		name, ct, body string
		code, row      int
		field, msg     string
	}{
		// JSON rows.
		{"rows/number is a string", "json", `{"rows": [{"x": "1", "c": "a", "t": 1}]}`,
			400, 0, "x", `row 0, field "x": a string, not a number`},
		{"rows/number is NaN", "json", `{"rows": [{"x": 1, "c": "a", "t": 1}, {"x": NaN, "c": "a", "t": 1}]}`,
			400, 1, "x", `row 1, field "x": malformed JSON at byte 44: NaN and Infinity are not JSON; a missing value is null`},
		{"rows/number is not JSON", "json", `{"rows": [{"x": 01, "c": "a", "t": 1}]}`,
			400, 0, "x", `row 0, field "x": malformed JSON at byte 18: "01" is not a JSON number`},
		{"rows/number is null", "json", `{"rows": [{"x": null, "c": "a", "t": 1}]}`,
			400, 0, "x", `row 0, field "x": null` + nullsErr},
		{"rows/number overflows", "json", `{"rows": [{"c": "a", "t": 1, "x": 1e999}]}`,
			400, 0, "x", `row 0, field "x": value +Inf is not a finite number` + nullsErr},
		{"rows/level is an object", "json", `{"rows": [{"x": 1, "c": {}, "t": 1}]}`,
			400, 0, "c", `row 0, field "c": an object, not a level (a string)`},
		{"rows/level is not JSON", "json", `{"rows": [{"x": 1, "c": ], "t": 1}]}`,
			400, 0, "c", `row 0, field "c": malformed JSON at byte 24: want a value, found ']'`},
		{"rows/time is not a date", "json", `{"rows": [{"x": 1, "c": "a", "t": "2024-13-01"}]}`,
			400, 0, "t", `row 0, field "t": "2024-13-01" is not a date (2024-03-04) or an RFC 3339 timestamp (2024-03-04T06:00:00Z)`},
		{"rows/time is a bool", "json", `{"rows": [{"x": 1, "c": "a", "t": true}]}`,
			400, 0, "t", `row 0, field "t": true or false, not a date or a number of days`},
		{"rows/time is null", "json", `{"rows": [{"x": 1, "c": "a", "t": null}]}`,
			400, 0, "t", `row 0, field "t": null` + nullsErr},
		{"rows/missing", "json", `{"rows": [{"x": 1, "c": "a", "t": 1}, {"x": 1, "t": 1}]}`,
			400, 1, "c", `row 1, field "c": missing (the row has 2 of the model's 3 input columns)`},
		{"rows/a feature, not an input column", "json", `{"rows": [{"x": 1, "c=a": 1, "c": "a", "t": 1}]}`,
			400, 0, "c=a", `row 0, field "c=a": not an input column of the model (` + inputs + `)`},
		{"rows/twice", "json", `{"rows": [{"x": 1, "c": "a", "x": 2, "t": 1}]}`,
			400, 0, "x", `row 0, field "x": given twice`},
		{"rows/not an object", "json", `{"rows": [{"x": 1, "c": "a", "t": 1}, 7]}`,
			400, 1, "", `row 1: a number; a row is an object keyed by input column name`},
		{"rows/malformed row", "json", `{"rows": [{"x": 1 "c": "a", "t": 1}]}`,
			400, 0, "", `row 0: malformed JSON at byte 18: want ',' or '}', found a string`},

		// JSON columns: a value's row is its index in the column.
		{"columns/number is a string", "json", `{"columns": {"x": [1, "2"], "c": ["a", "b"], "t": [1, 2]}}`,
			400, 1, "x", `row 1, field "x": a string, not a number`},
		{"columns/number is NaN", "json", `{"columns": {"c": ["a", "b"], "x": [1, NaN]}}`,
			400, 1, "x", `row 1, field "x": malformed JSON at byte 39: NaN and Infinity are not JSON; a missing value is null`},
		{"columns/number is null", "json", `{"columns": {"x": [1, 2, null], "c": ["a", "b", "a"], "t": [1, 2, 3]}}`,
			400, 2, "x", `row 2, field "x": null` + nullsErr},
		{"columns/level is an array", "json", `{"columns": {"x": [1], "c": [["a"]], "t": [1]}}`,
			400, 0, "c", `row 0, field "c": an array, not a level (a string)`},
		{"columns/time is not a date", "json", `{"columns": {"x": [1, 2], "c": ["a", "b"], "t": ["2024-03-04", "March"]}}`,
			400, 1, "t", `row 1, field "t": "March" is not a date (2024-03-04) or an RFC 3339 timestamp (2024-03-04T06:00:00Z)`},
		{"columns/time is null", "json", `{"columns": {"x": [1], "c": ["a"], "t": [null]}}`,
			400, 0, "t", `row 0, field "t": null` + nullsErr},
		{"columns/missing", "json", `{"columns": {"x": [1], "c": ["a"]}}`,
			400, -1, "t", `column "t" is missing (the body has 2 of the model's 3 input columns)`},
		{"columns/unknown", "json", `{"columns": {"x": [1], "y": [1]}}`,
			400, -1, "y", `column "y" is not an input column of the model (` + inputs + `)`},
		{"columns/twice", "json", `{"columns": {"x": [1], "x": [1]}}`,
			400, -1, "x", `column "x" given twice`},
		{"columns/not an array", "json", `{"columns": {"x": 1}}`,
			400, -1, "x", `column "x" is a number, not an array of values`},
		{"columns/short", "json", `{"columns": {"x": [1, 2], "c": ["a"]}}`,
			400, -1, "c", `column "c" has 1 values, column "x" has 2`},
		{"columns/long", "json", `{"columns": {"x": [1], "c": ["a", "b"]}}`,
			400, -1, "c", `column "c" has more values than column "x"'s 1`},

		// Arrow: a value's row counts the rows of earlier batches.
		{"arrow/number is NaN", "arrow", arrowBody(t, []arrow.Field{fx, fc, ft},
			[]arrow.Array{f64([]float64{1, 2}, nil), str("a", "b"), ts([]arrow.Timestamp{0, 86400}, nil)},
			[]arrow.Array{f64([]float64{3, 4}, nil), str("a", "b"), ts([]arrow.Timestamp{0, 86400}, nil)},
			[]arrow.Array{f64([]float64{5, math.NaN()}, nil), str("a", "b"), ts([]arrow.Timestamp{0, 86400}, nil)}),
			400, 5, "x", `row 5, field "x": value NaN is not a finite number` + nullsErr},
		{"arrow/number is null", "arrow", arrowBody(t, []arrow.Field{fx, fc, ft},
			[]arrow.Array{f64([]float64{1, 0}, []bool{true, false}), str("a", "b"), ts([]arrow.Timestamp{0, 86400}, nil)}),
			400, 1, "x", `row 1, field "x": null` + nullsErr},
		{"arrow/time is null", "arrow", arrowBody(t, []arrow.Field{ft, fc, fx},
			[]arrow.Array{ts([]arrow.Timestamp{0}, []bool{false}), str("a"), f64([]float64{1}, nil)}),
			400, 0, "t", `row 0, field "t": null` + nullsErr},
		{"arrow/number is a string", "arrow", arrowBody(t, []arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String}, fc, ft},
			[]arrow.Array{str("1"), str("a"), ts([]arrow.Timestamp{0}, nil)}),
			400, -1, "x", `column "x" is of type utf8, not a number`},
		{"arrow/level is a float", "arrow", arrowBody(t, []arrow.Field{fx, {Name: "c", Type: arrow.PrimitiveTypes.Float64}, ft},
			[]arrow.Array{f64([]float64{1}, nil), f64([]float64{1}, nil), ts([]arrow.Timestamp{0}, nil)}),
			400, -1, "c", `column "c" is of type float64, not a level (strings or integers)`},
		{"arrow/time is a string", "arrow", arrowBody(t, []arrow.Field{fx, fc, {Name: "t", Type: arrow.BinaryTypes.String}},
			[]arrow.Array{f64([]float64{1}, nil), str("a"), str("2024-03-04")}),
			400, -1, "t", `column "t" is of type utf8, not a date, a timestamp or a number of days`},
		{"arrow/missing", "arrow", arrowBody(t, []arrow.Field{fx, fc},
			[]arrow.Array{f64([]float64{1}, nil), str("a")}),
			400, -1, "t", `column "t" is missing (the stream has 2 of the model's 3 input columns)`},
		{"arrow/unknown", "arrow", arrowBody(t, []arrow.Field{fx, {Name: "c=a", Type: arrow.PrimitiveTypes.Float64}},
			[]arrow.Array{f64([]float64{1}, nil), f64([]float64{1}, nil)}),
			400, -1, "c=a", `column "c=a" is not an input column of the model (` + inputs + `)`},
		{"arrow/twice", "arrow", arrowBody(t, []arrow.Field{fx, fx},
			[]arrow.Array{f64([]float64{1}, nil), f64([]float64{1}, nil)}),
			400, -1, "x", `column "x" appears twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ct := "application/json"
			if c.ct == "arrow" {
				ct = ArrowStream
			}
			code, out := post(t, srv.URL+"/v1/predict", ct, c.body)
			var e struct {
				Error string
				Row   *int
				Field string
			}
			if err := json.Unmarshal([]byte(out), &e); err != nil {
				t.Fatalf("error body %q: %v", out, err)
			}
			row := -1
			if e.Row != nil {
				row = *e.Row
			}
			if code != c.code || e.Error != c.msg || row != c.row || e.Field != c.field {
				t.Errorf("%d %s\nwant %d %s (row %d, field %q)", code, strings.TrimSpace(out), c.code, c.msg, c.row, c.field)
			}
		})
	}
}
