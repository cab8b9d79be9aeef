package serve

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/serve/client"
)

// encLin is a linModel whose features are made by an encoding: a number
// x, a one-hot column c (levels a and b, (other), (null)) and a time
// column t with its day of the week.
type encLin struct {
	*linModel
	spec  *featenc.Spec
	nulls string
}

func (m *encLin) Info() Info {
	in := m.linModel.Info()
	in.Encoding, in.Nulls = m.spec, m.nulls
	return in
}

func newEncLin(t *testing.T) *encLin {
	t.Helper()
	c := featenc.Column{Source: "c", Kind: featenc.OneHot, Levels: []string{"7", "a", "b"}, Other: true, Null: true, Scale: featenc.Scale}
	c.Features = featenc.FeatureNames(c)
	tc := featenc.Column{Source: "t", Kind: featenc.Time, Cyclic: []string{featenc.DoW}}
	tc.Features = featenc.FeatureNames(tc)
	spec := &featenc.Spec{Columns: []featenc.Column{c, tc}}
	features := append(append([]string{"x"}, c.Features...), tc.Features...)
	w := make([]float64, len(features))
	for j := range w {
		w[j] = float64(j+1) * 0.37
	}
	return &encLin{linModel: newLin(features, w, 0.25), spec: spec}
}

// want returns the fake's predictions of raw input rows (x, the code of
// c, the days of t), assembled as falkon-ooc predict assembles them.
func (m *encLin) wantRows(t *testing.T, x, c, days []float64) []float64 {
	t.Helper()
	asm, err := featenc.NewAssembler(m.spec, m.features)
	if err != nil {
		t.Fatal(err)
	}
	n, d := len(x), len(m.features)
	feat := make([]float64, n*d)
	asm.Assemble(feat, [][]float64{x, c, days}, n)
	out := make([]float64, n)
	for i := range n {
		out[i] = m.want(feat[i*d:(i+1)*d], 0)
	}
	return out
}

func day(s string) float64 {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tm, _ = time.Parse(time.DateOnly, s)
	}
	return float64(tm.UnixNano()) / (86400 * 1e9)
}

func sameValues(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			return false
		}
	}
	return true
}

// TestEncoded: a model with categorical and time features reads its
// input columns (levels as strings, numbers or null; dates, timestamps
// or days) in the JSON rows and columns forms and in Arrow (strings,
// dictionaries, dates, timestamps), assembles the features as predict
// does, and counts unseen levels in the answer and the metrics.
func TestEncoded(t *testing.T) {
	m := newEncLin(t)
	_, srv := newServer(t, m, Options{})
	x := []float64{1.5, -2, 0.25, 3, 0}
	c := []float64{featenc.Code("a"), featenc.Code("zz"), featenc.NullCode, featenc.Code("7"), featenc.Code("b")}
	days := []float64{day("2024-03-04"), day("2024-03-05T06:30:00Z"), 19800.5, day("2023-12-31"), day("2024-01-01T23:00:00+02:00")}
	want := m.wantRows(t, x, c, days)

	cl := client.New(srv.URL, nil)
	rows := []map[string]any{
		{"x": 1.5, "c": "a", "t": "2024-03-04"},
		{"t": "2024-03-05T06:30:00Z", "c": "zz", "x": -2},
		{"x": 0.25, "c": nil, "t": 19800.5},
		{"x": 3, "c": 7, "t": "2023-12-31"},
		{"x": 0, "c": "b", "t": time.Date(2024, 1, 1, 23, 0, 0, 0, time.FixedZone("", 7200))},
	}
	a, err := cl.PredictValues(context.Background(), rows, client.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameValues(a.Columns[0].Values, want) || a.Unseen["c"] != 1 || len(a.Unseen) != 1 {
		t.Errorf("rows: %v, unseen %v; want %v, unseen c: 1", a.Columns[0].Values, a.Unseen, want)
	}
	code, out := post(t, srv.URL+"/v1/predict", "application/json",
		`{"columns": {"c": ["a", "zz", null, 7, "b"], "x": [1.5, -2, 0.25, 3, 0], "t": ["2024-03-04", "2024-03-05T06:30:00Z", 19800.5, "2023-12-31", "2024-01-01T23:00:00+02:00"]}}`)
	ac, err := client.DecodeJSON(strings.NewReader(out))
	if code != 200 || err != nil || !sameValues(ac.Columns[0].Values, want) || ac.Unseen["c"] != 1 {
		t.Errorf("columns: %d %s, want %v", code, out, want)
	}

	// Arrow: c as a dictionary of strings with a null, t as timestamps;
	// then c as strings and t as dates.
	mem := memory.NewGoAllocator()
	xb := array.NewFloat64Builder(mem)
	xb.AppendValues(x, nil)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for _, s := range []string{"a", "zz", "", "7", "b"} {
		if s == "" {
			db.AppendNull()
		} else if err := db.AppendString(s); err != nil {
			t.Fatal(err)
		}
	}
	tsType := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	tb := array.NewTimestampBuilder(mem, tsType)
	for _, v := range days {
		tb.Append(arrow.Timestamp(math.Round(v * 86400e3)))
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: tsType}, {Name: "c", Type: db.Type(), Nullable: true}, {Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{tb.NewArray(), db.NewArray(), xb.NewArray()}, 5)
	aa, err := cl.PredictArrow(context.Background(), rec, client.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameValues(aa.Columns[0].Values, want) || aa.Unseen["c"] != 1 {
		t.Errorf("Arrow dictionary and timestamps: %v, unseen %v; want %v", aa.Columns[0].Values, aa.Unseen, want)
	}
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"b", "a"}, nil)
	dtb := array.NewDate32Builder(mem)
	dtb.AppendValues([]arrow.Date32{19786, 19000}, nil)
	xb.AppendValues([]float64{2, 4}, nil)
	rec = array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.BinaryTypes.String}, {Name: "t", Type: arrow.FixedWidthTypes.Date32}, {Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil),
		[]arrow.Array{sb.NewArray(), dtb.NewArray(), xb.NewArray()}, 2)
	aa, err = cl.PredictArrow(context.Background(), rec, client.Query{})
	w2 := m.wantRows(t, []float64{2, 4}, []float64{featenc.Code("b"), featenc.Code("a")}, []float64{19786, 19000})
	if err != nil || !sameValues(aa.Columns[0].Values, w2) || aa.Unseen != nil {
		t.Errorf("Arrow strings and dates: %v %v, unseen %v; want %v", aa, err, aa.Unseen, w2)
	}

	_, metrics := get(t, srv.URL+"/metrics")
	if !strings.Contains(metrics, `falkon_serve_unseen_levels_total{column="c"} 3`) {
		t.Errorf("metrics: no count of 3 unseen levels of c:\n%s", grepLines(metrics, "unseen"))
	}
}

// TestEncodedNulls: without --nulls the server reads missing values as
// the model's training data did (mean for a model ingested with --nulls
// mean): a time column's null is the training mean of its days, and a
// categorical null is its own level whatever the policy.
func TestEncodedNulls(t *testing.T) {
	m := newEncLin(t)
	m.nulls = "mean"
	_, srv := newServer(t, m, Options{})
	tj := 0
	for j, f := range m.features {
		if f == "t" {
			tj = j
		}
	}
	mean := m.linModel.Info().FeatureMean[tj]
	want := m.wantRows(t, []float64{1}, []float64{featenc.NullCode}, []float64{mean})
	code, out := post(t, srv.URL+"/v1/predict", "application/json", `{"rows": [{"x": 1, "c": null, "t": null}]}`)
	if a, err := client.DecodeJSON(strings.NewReader(out)); code != 200 || err != nil || !sameValues(a.Columns[0].Values, want) {
		t.Errorf("%d %s, want %v", code, out, want)
	}
	_, srv = newServer(t, m, Options{Nulls: "error"})
	if code, out := post(t, srv.URL+"/v1/predict", "application/json", `{"rows": [{"x": 1, "c": null, "t": null}]}`); code != 400 || !strings.Contains(out, `field \"t\": null`) {
		t.Errorf("--nulls error: %d %s", code, out)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return fmt.Sprint(out)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
