package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/serve/client"
)

func newServer(t *testing.T, m Model, opt Options) (*Handler, *httptest.Server) {
	t.Helper()
	h, err := New(m, "A", opt)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return h, srv
}

func post(t *testing.T, url, ct, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPredictJSON(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	_, srv := newServer(t, m, Options{})
	for _, body := range []string{
		`{"rows": [{"a": 1, "b": 2}, {"b": 0.25, "a": -3e2}]}`,
		`{"columns": {"b": [2, 0.25], "a": [1, -300]}}`,
		" {\"rows\":[{\"a\":1,\"b\":2},\n{\"a\":-300,\"b\":0.25}]} \n",
	} {
		code, out := post(t, srv.URL+"/v1/predict", "application/json", body)
		want := fmt.Sprintf(`{"model":"A","rows":2,"columns":{"y0_pred":[%v,%v]}}`+"\n", m.want([]float64{1, 2}, 0), m.want([]float64{-300, 0.25}, 0))
		if code != 200 || out != want {
			t.Errorf("%s:\n%d %s\nwant %s", body, code, out, want)
		}
	}
	code, out := post(t, srv.URL+"/v1/predict", "application/json; charset=utf-8", `{"rows": []}`)
	if code != 200 || out != `{"model":"A","rows":0,"columns":{"y0_pred":[]}}`+"\n" {
		t.Errorf("no rows: %d %s", code, out)
	}
}

func TestPredictAsk(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	m.std = true
	_, srv := newServer(t, m, Options{})
	c := client.New(srv.URL, nil)
	a, err := c.PredictRows(context.Background(), []map[string]float64{{"a": 1, "b": 2}}, client.Query{Std: true, Interval: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, col := range a.Columns {
		names = append(names, col.Name)
	}
	if got := strings.Join(names, ","); got != "y0_pred,y0_std,y0_lower,y0_upper" {
		t.Fatalf("columns %s", got)
	}
	s := m.want([]float64{1, 2}, 0)
	sd := 0.25 + math.Abs(s)/100
	z := IntervalZ(0.9)
	if a.Columns[1].Values[0] != sd || a.Columns[2].Values[0] != s-z*sd || a.Columns[3].Values[0] != s+z*sd {
		t.Errorf("std answer %+v for score %v sd %v", a.Columns, s, sd)
	}
}

func TestClassifier(t *testing.T) {
	m := newLin([]string{"a"}, []float64{1}, 0)
	m.classes, m.labeled = []string{"no", "yes"}, true
	_, srv := newServer(t, m, Options{})
	code, out := post(t, srv.URL+"/v1/predict?proba=1", "application/json", `{"columns": {"a": [-2, 3]}}`)
	p := 1 / (1 + math.Exp(-3.0))
	pn := 1 / (1 + math.Exp(2.0))
	want := fmt.Sprintf(`{"model":"A","rows":2,"columns":{"y_pred":["no","yes"],"p_no":[%v,%v],"p_yes":[%v,%v]}}`+"\n", 1-pn, 1-p, pn, p)
	if code != 200 || out != want {
		t.Errorf("%d %s\nwant %s", code, out, want)
	}
	code, out = post(t, srv.URL+"/v1/predict", "application/json", `{"columns": {"a": [-2, 3]}}`)
	if want := `{"model":"A","rows":2,"columns":{"y_pred":["no","yes"],"score":[-2,3]}}` + "\n"; code != 200 || out != want {
		t.Errorf("%d %s\nwant %s", code, out, want)
	}
	m.labeled = false
	m.classes = []string{"0", "1"}
	_, srv2 := newServer(t, m, Options{})
	code, out = post(t, srv2.URL+"/v1/predict", "application/json", `{"columns": {"a": [-2, 3]}}`)
	if want := `{"model":"A","rows":2,"columns":{"y_pred":[0,1],"score":[-2,3]}}` + "\n"; code != 200 || out != want {
		t.Errorf("%d %s\nwant %s", code, out, want)
	}
}

// TestBadRequests: each refused request's status and the message the
// user reads.
func TestBadRequests(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	_, srv := newServer(t, m, Options{MaxRows: 3})
	for _, c := range []struct {
		name, ct, query, body string
		code                  int
		msg                   string
	}{
		{"malformed", "application/json", "", `{"rows": [{"a": 1, "b": 2}`, 400, `malformed JSON at byte 26: want ',' or ']', found the end of the body`},
		{"truncated", "application/json", "", `{"rows": [`, 400, `malformed JSON at byte 10: want an object (a row), found the end of the body`},
		{"not json", "application/json", "", `a=1&b=2`, 400, `malformed JSON at byte 0: want a JSON object {"rows": [...]} or {"columns": {...}}, found 'a'`},
		{"string", "application/json", "", `{"rows": [{"a": "1", "b": 2}]}`, 400, `row 0, field "a": a string, not a number`},
		{"bool", "application/json", "", `{"rows": [{"a": 1, "b": 2}, {"a": 1, "b": true}]}`, 400, `row 1, field "b": true or false, not a number`},
		{"array row", "application/json", "", `{"rows": [[1, 2]]}`, 400, `row 0: an array; a row is an object keyed by feature name`},
		{"missing", "application/json", "", `{"rows": [{"a": 1, "b": 2}, {"a": 1}]}`, 400, `row 1, field "b": missing (the row has 1 of the model's 2 features)`},
		{"extra", "application/json", "", `{"rows": [{"a": 1, "b": 2, "c": 3}]}`, 400, `row 0, field "c": not a feature of the model (its features: "a", "b")`},
		{"twice", "application/json", "", `{"rows": [{"a": 1, "a": 2}]}`, 400, `row 0, field "a": given twice`},
		{"NaN", "application/json", "", `{"rows": [{"a": NaN, "b": 2}]}`, 400, `row 0, field "a": malformed JSON at byte 16: NaN and Infinity are not JSON; a missing value is null`},
		{"null", "application/json", "", `{"rows": [{"a": null, "b": 2}]}`, 400, `row 0, field "a": null (the server runs with --nulls error; mean or zero read it as a value)`},
		{"overflow", "application/json", "", `{"rows": [{"a": 1, "b": -1e999}]}`, 400, `row 0, field "b": value -Inf is not a finite number`},
		{"bad number", "application/json", "", `{"rows": [{"a": 01, "b": 2}]}`, 400, `row 0, field "a": malformed JSON at byte 18: "01" is not a JSON number`},
		{"column short", "application/json", "", `{"columns": {"a": [1, 2], "b": [1]}}`, 400, `column "b" has 1 values, column "a" has 2`},
		{"column long", "application/json", "", `{"columns": {"a": [1], "b": [1, 2]}}`, 400, `column "b" has more values than column "a"'s 1`},
		{"column missing", "application/json", "", `{"columns": {"a": [1]}}`, 400, `column "b" is missing (the body has 1 of the model's 2 features)`},
		{"column not array", "application/json", "", `{"columns": {"a": 1, "b": [1]}}`, 400, `column "a" is a number, not an array of values`},
		{"unknown field", "application/json", "", `{"data": []}`, 400, `unknown field "data": the body is {"rows": [...]} or {"columns": {...}}; options go in the query (proba, std, interval)`},
		{"both", "application/json", "", `{"rows": [], "columns": {}}`, 400, `the body holds both "rows" and "columns", or one twice; send one`},
		{"trailing", "application/json", "", `{"rows": []} {}`, 400, `malformed JSON at byte 13: an object after the JSON object`},
		{"too many rows", "application/json", "", `{"rows": [{"a":1,"b":1},{"a":1,"b":1},{"a":1,"b":1},{"a":1,"b":1}]}`, 413, `the request holds more than 3 rows (--max-rows); split it`},
		{"content type", "text/csv", "", "a,b\n1,2\n", 415, `Content-Type "text/csv" is not served: send application/json or application/vnd.apache.arrow.stream`},
		{"no content type", "", "", `{"rows": []}`, 415, `no Content-Type: send application/json or application/vnd.apache.arrow.stream`},
		{"std", "application/json", "std=true", `{"rows": []}`, 400, `std: the model has no predictive standard deviations (fit it with --uncertainty)`},
		{"proba", "application/json", "proba=true", `{"rows": []}`, 400, `proba: a regression model has no class probabilities`},
		{"interval", "application/json", "interval=90", `{"rows": []}`, 400, `query parameter interval="90" is not a level between 0 and 1 (0.9: the central 90 % interval)`},
		{"arrow garbage", ArrowStream, "", "not arrow at all", 400, `malformed Arrow IPC stream`},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := srv.URL + "/v1/predict"
			if c.query != "" {
				u += "?" + c.query
			}
			code, out := post(t, u, c.ct, c.body)
			var e struct{ Error string }
			if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error == "" {
				t.Errorf("error body %q is not JSON with an error: %v", out, err)
			}
			if code != c.code || !strings.Contains(e.Error, c.msg) {
				t.Errorf("%d %s\nwant %d %s", code, out, c.code, c.msg)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/v1/predict")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET /v1/predict: %d", resp.StatusCode)
	}
}

func TestNulls(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	for _, c := range []struct {
		nulls string
		fill  []float64
	}{{"zero", []float64{0, 0}}, {"mean", []float64{0.5, 1.5}}} {
		_, srv := newServer(t, m, Options{Nulls: c.nulls})
		code, out := post(t, srv.URL+"/v1/predict", "application/json", `{"rows": [{"a": null, "b": 1e999}]}`)
		want := fmt.Sprintf(`{"model":"A","rows":1,"columns":{"y0_pred":[%v]}}`+"\n", m.want(c.fill, 0))
		if code != 200 || out != want {
			t.Errorf("--nulls %s: %d %s, want %s", c.nulls, code, out, want)
		}
	}
	m.features = []string{"a"}
	m.w = [][]float64{{1}}
	if _, err := New(m, "A", Options{Nulls: "drop"}); err == nil || !strings.Contains(err.Error(), "a server answers every row, so there is no drop") {
		t.Errorf("--nulls drop: %v", err)
	}
}

func arrowRecord(t *testing.T, a []int64, b []float32, bValid []bool) arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	ab := array.NewInt64Builder(mem)
	ab.AppendValues(a, nil)
	bb := array.NewFloat32Builder(mem)
	bb.AppendValues(b, bValid)
	schema := arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.PrimitiveTypes.Float32, Nullable: true}, {Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{bb.NewArray(), ab.NewArray()}, int64(len(a)))
}

func TestArrow(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	_, srv := newServer(t, m, Options{Nulls: "mean"})
	c := client.New(srv.URL, nil)
	rec := arrowRecord(t, []int64{1, -4, 7}, []float32{0.5, 2, 3}, []bool{true, false, true})
	a, err := c.PredictArrow(context.Background(), rec, client.Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{m.want([]float64{1, 0.5}, 0), m.want([]float64{-4, 1.5}, 0), m.want([]float64{7, 3}, 0)}
	if a.Model != "A" || a.Rows != 3 || len(a.Columns) != 1 || a.Columns[0].Name != "y0_pred" || fmt.Sprint(a.Columns[0].Values) != fmt.Sprint(want) {
		t.Errorf("answer %+v, want y0_pred %v", a, want)
	}

	// A string column, an unknown one.
	mem := memory.NewGoAllocator()
	str := func() arrow.Array {
		b := array.NewStringBuilder(mem)
		b.AppendValues([]string{"x"}, nil)
		return b.NewArray()
	}
	num := func() arrow.Array {
		b := array.NewFloat64Builder(mem)
		b.AppendValues([]float64{1}, nil)
		return b.NewArray()
	}
	for _, cc := range []struct {
		fields []arrow.Field
		cols   []arrow.Array
		msg    string
	}{
		{[]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.PrimitiveTypes.Float64}}, []arrow.Array{str(), num()}, `column "a" is of type utf8, not a number`},
		{[]arrow.Field{{Name: "z", Type: arrow.PrimitiveTypes.Float64}}, []arrow.Array{num()}, `column "z" is not a feature of the model`},
		{[]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float64}}, []arrow.Array{num()}, `column "b" is missing (the stream has 1 of the model's 2 features)`},
	} {
		rec := array.NewRecordBatch(arrow.NewSchema(cc.fields, nil), cc.cols, 1)
		_, err := c.PredictArrow(context.Background(), rec, client.Query{})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Msg, cc.msg) {
			t.Errorf("%v, want 400 %s", err, cc.msg)
		}
	}
	// Booleans and dictionaries are read as predict reads them from a
	// file (internal/table.Convert): true as 1, a dictionary by its values.
	bb := array.NewBooleanBuilder(mem)
	bb.AppendValues([]bool{true, false}, nil)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float64}).(*array.Float64DictionaryBuilder)
	if err := db.AppendArray(func() arrow.Array {
		b := array.NewFloat64Builder(mem)
		b.AppendValues([]float64{2.5, 2.5}, nil)
		return b.NewArray()
	}()); err != nil {
		t.Fatal(err)
	}
	rec = array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.FixedWidthTypes.Boolean}, {Name: "b", Type: db.Type()}}, nil), []arrow.Array{bb.NewArray(), db.NewArray()}, 2)
	a, err = c.PredictArrow(context.Background(), rec, client.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{m.want([]float64{1, 2.5}, 0), m.want([]float64{0, 2.5}, 0)}; fmt.Sprint(a.Columns[0].Values) != fmt.Sprint(want) {
		t.Errorf("bool and dictionary columns: %v, want %v", a.Columns[0].Values, want)
	}
	// NaN under --nulls error names the row.
	_, srv2 := newServer(t, m, Options{})
	rec = arrowRecord(t, []int64{1, 2}, []float32{0.5, float32(math.NaN())}, nil)
	_, err = client.New(srv2.URL, nil).PredictArrow(context.Background(), rec, client.Query{})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Row != 1 || ce.Field != "b" || !strings.Contains(ce.Msg, `row 1, field "b": value NaN is not a finite number`) {
		t.Errorf("NaN: %v", err)
	}
}

// TestBatching: concurrent one-row requests are gathered into blocks of
// several rows, and each gets its own row's prediction.
func TestBatching(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	_, srv := newServer(t, m, Options{Workers: 1, MaxBatch: 64, MaxDelay: 20 * time.Millisecond})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			code, out := post(t, srv.URL+"/v1/predict", "application/json", fmt.Sprintf(`{"rows": [{"a": %d, "b": 1}]}`, i))
			want := fmt.Sprintf(`{"model":"A","rows":1,"columns":{"y0_pred":[%v]}}`+"\n", m.want([]float64{float64(i), 1}, 0))
			if code != 200 || out != want {
				errs <- fmt.Errorf("request %d: %d %s, want %s", i, code, out, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := m.maxRows.Load(); got < 2 {
		t.Errorf("the largest block held %d rows: nothing was gathered", got)
	}
}

func TestHealthMetricsModel(t *testing.T) {
	m := newLin([]string{"a", "b"}, []float64{2, -1}, 0.5)
	h, srv := newServer(t, m, Options{})
	post(t, srv.URL+"/v1/predict", "application/json", `{"rows": [{"a": 1, "b": 2}]}`)
	post(t, srv.URL+"/v1/predict", "application/json", `{"rows": [{"a": 1}]}`)
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, out := get("/healthz"); code != 200 || out != "ok\n" {
		t.Errorf("/healthz %d %q", code, out)
	}
	if code, out := get("/readyz"); code != 200 {
		t.Errorf("/readyz %d %q", code, out)
	}
	if code, out := get("/v1/model"); code != 200 || out != `{"id":"A","model":{"centers": 7, "task": "x"}}`+"\n" {
		t.Errorf("/v1/model %d %q", code, out)
	}
	_, met := get("/metrics")
	for _, want := range []string{
		`falkon_serve_requests_total{code="200"} 1`,
		`falkon_serve_requests_total{code="400"} 1`,
		`falkon_serve_errors_total{kind="bad_row"} 1`,
		`falkon_serve_rows_total 1`,
		`falkon_serve_model_info{centers="7",features="2",id="A",task="regression"} 1`,
		`falkon_serve_batch_rows_count 1`,
		`falkon_serve_request_duration_seconds_count{form="json"} 2`,
		`go_goroutines`,
	} {
		if !strings.Contains(met, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	h.Drain()
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz while draining: %d", code)
	}
}

// TestBusy: past MaxInflight requests are answered 503 with Retry-After,
// not queued.
func TestBusy(t *testing.T) {
	m := newLin([]string{"a"}, []float64{1}, 0)
	h, srv := newServer(t, m, Options{MaxInflight: 1})
	// Hold the one slot with a request whose body has not arrived.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/predict", pr)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan int)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	pw.Write([]byte(`{"rows": [`))
	for h.inflight.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	resp, err := http.Post(srv.URL+"/v1/predict", "application/json", strings.NewReader(`{"rows": []}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(b), "server busy: too many requests in flight (--max-inflight); retry later") {
		t.Errorf("%d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	pw.Write([]byte(`{"a": 1}]}`))
	pw.Close()
	if code := <-done; code != 200 {
		t.Errorf("the request holding the slot: %d", code)
	}
}

// TestClientBusy: past MaxClientInflight requests in flight from one
// client, its next request is answered 429 with Retry-After, while other
// clients are served and the client is again once its request ends.
func TestClientBusy(t *testing.T) {
	m := newLin([]string{"a"}, []float64{1}, 0)
	h, srv := newServer(t, m, Options{MaxInflight: 10, MaxClientInflight: 1})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/predict", pr)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan int)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	pw.Write([]byte(`{"rows": [`))
	for h.inflight.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	resp, err := http.Post(srv.URL+"/v1/predict", "application/json", strings.NewReader(`{"rows": [{"a": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(b), "too many requests in flight from this client (--max-client-inflight); retry later") {
		t.Errorf("same client: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	other := httptest.NewRequest("POST", "/v1/predict", strings.NewReader(`{"rows": [{"a": 1}]}`))
	other.RemoteAddr = "192.0.2.7:4000"
	other.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, other)
	if rec.Code != 200 {
		t.Errorf("another client: %d %s", rec.Code, rec.Body)
	}
	pw.Write([]byte(`{"a": 1}]}`))
	pw.Close()
	if code := <-done; code != 200 {
		t.Errorf("the request in flight: %d", code)
	}
	if code, out := post(t, srv.URL+"/v1/predict", "application/json", `{"rows": [{"a": 1}]}`); code != 200 {
		t.Errorf("the client once its request ended: %d %s", code, out)
	}
	_, met := get(t, srv.URL+"/metrics")
	for _, want := range []string{`falkon_serve_requests_total{code="429"} 1`, `falkon_serve_errors_total{kind="busy"} 1`} {
		if !strings.Contains(met, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestMemoryBudget: a request whose rows would pass MaxMemory is
// answered 503.
func TestMemoryBudget(t *testing.T) {
	m := newLin([]string{"a"}, []float64{1}, 0)
	_, srv := newServer(t, m, Options{MaxMemory: 4096})
	var b bytes.Buffer
	b.WriteString(`{"columns": {"a": [0`)
	for range 2000 {
		b.WriteString(",1")
	}
	b.WriteString("]}}")
	code, out := post(t, srv.URL+"/v1/predict", "application/json", b.String())
	if code != 503 || !strings.Contains(out, "memory budget (--max-memory)") {
		t.Errorf("%d %s", code, out)
	}
	if code, _ := post(t, srv.URL+"/v1/predict", "application/json", `{"columns": {"a": [1, 2]}}`); code != 200 {
		t.Errorf("a small request after: %d (the budget was not returned)", code)
	}
}
