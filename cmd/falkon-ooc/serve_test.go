package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/serve/client"
)

// syncBuffer is a bytes.Buffer written by one goroutine and read by
// another.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingAddr = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startServe runs falkon-ooc serve in-process on a free port and returns
// its base URL and a function that stops it (as SIGTERM does) and
// returns its exit code and stderr.
func startServe(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), io.Discard, &stderr)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := servingAddr.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], func() (int, string) {
				cancel()
				return <-done, stderr.String()
			}
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeMatchesPredict: the predictions served for rows equal those
// falkon-ooc predict writes for the same rows, within 1e-12 (both run
// the model's kernel over the rows; blocks of other sizes may sum in
// another order), for a regression with standard deviations and
// intervals and for a classifier's probabilities, in the JSON and Arrow
// forms.
func TestServeMatchesPredict(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg.falkon")
	if code, _, e := runCLI("fit", "--out", reg, "--centers", "80", "--iters", "6", "--uncertainty", "--quiet", makeStore(t, dir, 1500, 11, "y")); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	cls := filepath.Join(dir, "cls.falkon")
	if code, _, e := runCLI("fit", "--out", cls, "--centers", "80", "--iters", "6", "--val-fraction", "0.2", "--quiet", makeStore(t, dir, 1500, 12, "label")); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	// A binary model with a stored decision threshold: its labels are
	// the threshold's.
	thr := filepath.Join(dir, "thr.falkon")
	if code, _, e := runCLI("fit", "--out", thr, "--centers", "80", "--iters", "6", "--val-fraction", "0.2", "--threshold", "0.3", "--quiet", makeStore(t, dir, 1500, 12, "label")); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	_, _, csvPath, rows := predictFixture(t, 300)
	for _, c := range []struct {
		model, query string
		flags        []string
	}{
		{reg, "std=true&interval=0.8", []string{"--std", "--interval", "0.8"}},
		{cls, "proba=true", []string{"--proba"}},
		{cls, "", nil},
		{thr, "proba=true", []string{"--proba"}},
	} {
		code, out, e := runCLI(append([]string{"predict", "--model", c.model, "--out", "-", csvPath}, c.flags...)...)
		if code != 0 {
			t.Fatalf("predict: %s", e)
		}
		recs := readCSV(t, out)
		url, stop := startServe(t, "--model", c.model, "--max-batch", "64")
		var body strings.Builder
		body.WriteString(`{"rows": [`)
		for i, r := range rows {
			if i > 0 {
				body.WriteString(",")
			}
			fmt.Fprintf(&body, `{"a": %s, "b": %s, "c": %s}`, r[2], r[3], r[4])
		}
		body.WriteString("]}")
		resp, err := http.Post(url+"/v1/predict?"+c.query, "application/json", strings.NewReader(body.String()))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		a, err := client.DecodeJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		compareAnswer(t, c.model+" "+c.query, recs, a)
		// One row a request, gathered into blocks by concurrent clients.
		single := make([]*client.Answer, len(rows))
		cl := client.New(url, nil)
		var q client.Query
		q.Proba = strings.Contains(c.query, "proba")
		q.Std = strings.Contains(c.query, "std")
		if q.Std {
			q.Interval = 0.8
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < len(rows); i += 8 {
					x := map[string]float64{}
					for j, f := range []string{"a", "b", "c"} {
						x[f], _ = strconv.ParseFloat(rows[i][2+j], 64)
					}
					var err error
					if single[i], err = cl.PredictRows(context.Background(), []map[string]float64{x}, q); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		merged := &client.Answer{Rows: len(rows)}
		for _, s := range single {
			if s == nil {
				t.FailNow()
			}
			for j, col := range s.Columns {
				if len(merged.Columns) <= j {
					merged.Columns = append(merged.Columns, client.Column{Name: col.Name})
				}
				merged.Columns[j].Values = append(merged.Columns[j].Values, col.Values...)
				merged.Columns[j].Labels = append(merged.Columns[j].Labels, col.Labels...)
			}
		}
		compareAnswer(t, c.model+" "+c.query+" one row a request", recs, merged)
		if code, e := stop(); code != 0 || !strings.Contains(e, "msg=stopped") {
			t.Errorf("serve stopped with %d: %s", code, e)
		}
	}
}

// compareAnswer compares predict's CSV records with a server's answer,
// column by column.
func compareAnswer(t *testing.T, what string, recs [][]string, a *client.Answer) {
	t.Helper()
	var names []string
	for _, c := range a.Columns {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), strings.Join(recs[0], ","); got != want {
		t.Fatalf("%s: columns %s, predict writes %s", what, got, want)
	}
	if a.Rows != len(recs)-1 {
		t.Fatalf("%s: %d rows, predict wrote %d", what, a.Rows, len(recs)-1)
	}
	for j, col := range a.Columns {
		for i, rec := range recs[1:] {
			if col.Labels != nil {
				if col.Labels[i] != rec[j] {
					t.Fatalf("%s: row %d %s %q, predict %q", what, i, col.Name, col.Labels[i], rec[j])
				}
				continue
			}
			want, err := strconv.ParseFloat(rec[j], 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := col.Values[i]; math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s: row %d %s %v, predict %v", what, i, col.Name, got, want)
			}
		}
	}
}

// TestServeModelSummary: GET /v1/model holds inspect --json's model.
func TestServeModelSummary(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--out", model, "--centers", "50", "--iters", "4", "--quiet", makeStore(t, dir, 800, 3, "y")); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	_, out, _ := runCLI("inspect", "--json", model)
	var insp struct{ Model json.RawMessage }
	if err := json.Unmarshal([]byte(out), &insp); err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, "--model", model)
	defer stop()
	raw, err := client.New(url, nil).Model(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID    string
		Model json.RawMessage
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	json.Compact(&a, got.Model)
	json.Compact(&b, insp.Model)
	if a.String() != b.String() || len(got.ID) != 12 {
		t.Errorf("/v1/model id %q model\n%s\ninspect --json's model\n%s", got.ID, a.String(), b.String())
	}
}

func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"serve"}, "falkon-ooc serve: --model is required"},
		{[]string{"serve", "--model", "m", "--nulls", "drop"}, `--nulls must be error, mean or zero, not "drop" (a server answers every row, so there is no drop)`},
		{[]string{"serve", "--model", "m", "--max-body", "lots"}, `--max-body: "lots" is not a size > 0`},
		{[]string{"serve", "--model", "m", "--max-batch", "0"}, "--max-batch must be at least 1, not 0"},
		{[]string{"serve", "--model", "m", "extra"}, `serve takes no arguments, found "extra"`},
	} {
		code, _, e := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(e, c.msg) {
			t.Errorf("%q: exit %d, %s\nwant %s", c.args, code, e, c.msg)
		}
	}
	code, _, e := runCLI("serve", "--model", filepath.Join(t.TempDir(), "none.falkon"))
	if code != exitFailure || !strings.Contains(e, "falkon-ooc serve: load model: open ") {
		t.Errorf("missing model: exit %d, %s", code, e)
	}
}

// TestServeSignals runs falkon-ooc serve in a child process: SIGHUP
// reloads the model file (a new model is served, a damaged file leaves
// the old one serving and is logged), and SIGTERM stops it with exit 0
// once it has answered.
func TestServeSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two models and runs a server in a child process")
	}
	dir := t.TempDir()
	store := makeStore(t, dir, 800, 3, "y")
	m1, m2 := filepath.Join(dir, "m1.falkon"), filepath.Join(dir, "m2.falkon")
	for i, m := range []string{m1, m2} {
		if code, _, e := runCLI("fit", "--out", m, "--centers", strconv.Itoa(40+10*i), "--iters", "4", "--quiet", store); code != 0 {
			t.Fatalf("fit: %s", e)
		}
	}
	served := filepath.Join(dir, "served.falkon")
	if err := copyFile(m1, served); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestSignalHelperProcess$", "--", "serve", "--model", served, "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "FALKON_OOC_SIGNAL_HELPER=1")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if s := stderr.String(); ok(s) {
				return s
			}
		}
		t.Fatalf("no %s:\n%s", what, stderr.String())
		return ""
	}
	m := servingAddr.FindStringSubmatch(waitFor("serving line", servingAddr.MatchString))
	c := client.New("http://"+m[1], nil)
	id := func() string {
		raw, err := c.Model(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ ID string }
		json.Unmarshal(raw, &doc)
		return doc.ID
	}
	id1 := id()
	if err := copyFile(m2, served); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("swap", func(s string) bool { return strings.Contains(s, `msg="model swapped in"`) })
	id2 := id()
	if id2 == id1 {
		t.Fatalf("SIGHUP: still serving %s", id1)
	}
	if err := os.WriteFile(served, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("failed reload", func(s string) bool {
		return strings.Contains(s, `msg="reload failed; the previous model keeps serving" id=`+id2)
	})
	if got := id(); got != id2 {
		t.Errorf("after a failed reload serving %s, want %s", got, id2)
	}
	if _, err := c.PredictRows(context.Background(), []map[string]float64{{"a": 1, "b": 2, "c": 0.5}}, client.Query{}); err != nil {
		t.Errorf("after a failed reload: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("SIGTERM: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Errorf("no stopped line:\n%s", stderr.String())
	}
}

// TestServeEncodedMatchesPredict: a model fitted on a categorical and a
// date column answers the same predictions, within 1e-12, as
// falkon-ooc predict writes for the same rows of a CSV file, through
// JSON rows (levels as strings, NULL as null, dates as strings), JSON
// columns and Arrow (a dictionary of strings, dates); levels the model
// does not know are answered and counted, as predict counts them.
func TestServeEncodedMatchesPredict(t *testing.T) {
	dir := t.TempDir()
	regions := []string{"north", "south", "east", "west", "mid", "far"}
	effect := map[string]float64{"north": 1, "south": -1, "east": 0.5, "west": -0.5, "mid": 0, "far": 2, "": 0.3, "zz": 0}
	rng := rand.New(rand.NewPCG(5, 6))
	type row struct {
		x      float64
		region string
		day    time.Time
	}
	gen := func(n int, unseen bool) []row {
		out := make([]row, n)
		for i := range out {
			r := row{x: rng.NormFloat64(), region: regions[rng.IntN(len(regions))], day: time.Date(2023, 1, 1+rng.IntN(500), 0, 0, 0, 0, time.UTC)}
			if rng.Float64() < 0.1 {
				r.region = ""
			}
			if unseen && rng.Float64() < 0.1 {
				r.region = "zz"
			}
			out[i] = r
		}
		return out
	}
	write := func(path string, rows []row) {
		var b strings.Builder
		b.WriteString("x,region,day,y\n")
		for _, r := range rows {
			y := r.x + effect[r.region] + math.Sin(2*math.Pi*float64(r.day.Weekday())/7) + 0.1*rng.NormFloat64()
			fmt.Fprintf(&b, "%v,%s,%s,%v\n", r.x, r.region, r.day.Format(time.DateOnly), y)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	write(train, gen(800, false))
	rows := gen(150, true)
	write(test, rows)
	store, mpath := filepath.Join(dir, "store"), filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("ingest", "--quiet", "--out", store, "--target", "y", "--time-features", "dow,doy", "--max-levels", "4", train); code != 0 {
		t.Fatalf("ingest: %s", e)
	}
	if code, _, e := runCLI("fit", "--out", mpath, "--centers", "60", "--iters", "5", "--uncertainty", "--quiet", store); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	code, out, e := runCLI("predict", "--model", mpath, "--out", "-", "--std", test)
	if code != 0 {
		t.Fatalf("predict: %s", e)
	}
	recs := readCSV(t, out)
	// Levels beyond the model's (zz, and the two of the six that
	// --max-levels 4 left out) as predict counts them.
	mu := regexp.MustCompile(`(\d+) values of column "region" not among the model's levels`).FindStringSubmatch(e)
	if mu == nil {
		t.Fatalf("predict counts no unseen levels: %s", e)
	}
	unseen, _ := strconv.Atoi(mu[1])
	url, stop := startServe(t, "--model", mpath, "--max-batch", "16")
	defer stop()
	cl := client.New(url, nil)
	q := client.Query{Std: true}
	check := func(what string, a *client.Answer, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		compareAnswer(t, what, recs, a)
		if a.Unseen["region"] != int64(unseen) {
			t.Fatalf("%s: unseen %v, want region: %d", what, a.Unseen, unseen)
		}
	}
	values := make([]map[string]any, len(rows))
	for i, r := range rows {
		values[i] = map[string]any{"x": r.x, "region": r.region, "day": r.day.Format(time.DateOnly)}
		if r.region == "" {
			values[i]["region"] = nil
		}
	}
	a, err := cl.PredictValues(context.Background(), values, q)
	check("JSON rows", a, err)

	var body strings.Builder
	body.WriteString(`{"columns": {"region": [`)
	for i, r := range rows {
		if i > 0 {
			body.WriteString(",")
		}
		if r.region == "" {
			body.WriteString("null")
		} else {
			fmt.Fprintf(&body, "%q", r.region)
		}
	}
	body.WriteString(`], "x": [`)
	for i, r := range rows {
		if i > 0 {
			body.WriteString(",")
		}
		body.WriteString(strconv.FormatFloat(r.x, 'g', -1, 64))
	}
	body.WriteString(`], "day": [`)
	for i, r := range rows {
		if i > 0 {
			body.WriteString(",")
		}
		fmt.Fprintf(&body, "%q", r.day.Format(time.RFC3339))
	}
	body.WriteString("]}}")
	resp, err := http.Post(url+"/v1/predict?std=true", "application/json", strings.NewReader(body.String()))
	if err != nil {
		t.Fatal(err)
	}
	a, err = client.DecodeJSON(resp.Body)
	resp.Body.Close()
	check("JSON columns", a, err)

	mem := memory.NewGoAllocator()
	xb := array.NewFloat64Builder(mem)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	tb := array.NewDate32Builder(mem)
	for _, r := range rows {
		xb.Append(r.x)
		if r.region == "" {
			db.AppendNull()
		} else if err := db.AppendString(r.region); err != nil {
			t.Fatal(err)
		}
		tb.Append(arrow.Date32FromTime(r.day))
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32}, {Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "region", Type: db.Type(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{tb.NewArray(), xb.NewArray(), db.NewArray()}, int64(len(rows)))
	a, err = cl.PredictArrow(context.Background(), rec, q)
	check("Arrow", a, err)

	// One row a request, gathered into blocks by concurrent clients.
	single := make([]*client.Answer, len(rows))
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; i < len(rows); i += 6 {
				var err error
				if single[i], err = cl.PredictValues(context.Background(), values[i:i+1], q); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	merged := &client.Answer{Rows: len(rows)}
	for _, s := range single {
		if s == nil {
			t.FailNow()
		}
		for j, col := range s.Columns {
			if len(merged.Columns) <= j {
				merged.Columns = append(merged.Columns, client.Column{Name: col.Name})
			}
			merged.Columns[j].Values = append(merged.Columns[j].Values, col.Values...)
		}
	}
	compareAnswer(t, "one row a request", recs, merged)
	resp, err = http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	met, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`falkon_serve_unseen_levels_total{column="region"} %d`, 4*unseen); !strings.Contains(string(met), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
