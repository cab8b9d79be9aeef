package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// makeStore writes a store of n rows: features a, b, c and target y =
// sin(a) + b² / 4 + noise, and (binary) label = a·b > 0 as 0/1.
func makeStore(t *testing.T, dir string, n int, seed uint64, target string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	cols := make([][]float64, 4)
	for range n {
		a, b, c := rng.NormFloat64(), rng.NormFloat64()*2+1, rng.Float64()
		cols[0] = append(cols[0], a)
		cols[1] = append(cols[1], b)
		cols[2] = append(cols[2], c)
		switch target {
		case "label":
			l := 0.0
			if a*(b-1) > 0 {
				l = 1
			}
			cols[3] = append(cols[3], l)
		default:
			cols[3] = append(cols[3], math.Sin(a)+b*b/4+0.05*rng.NormFloat64())
		}
	}
	path := filepath.Join(dir, "store-"+target)
	w, err := chunkstore.Create(path,
		[]chunkstore.ColumnSpec{{Name: "a", Type: "float64"}, {Name: "b", Type: "float64"}, {Name: "c", Type: "float32"}},
		[]chunkstore.ColumnSpec{{Name: target, Type: "float64"}},
		chunkstore.Options{ChunkRows: 700})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestFitPredictRoundTrip(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 3000, 1, "y")
	model := filepath.Join(dir, "m.falkon")
	code, out, errOut := runCLI("fit", "--out", model, "--centers", "300", "--iters", "15", "--json", train)
	if code != 0 {
		t.Fatalf("fit exit %d: %s", code, errOut)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("fit --json output is not one JSON document: %v\n%s", err, out)
	}
	for _, key := range []string{"n", "d", "k", "centers", "iterations", "seconds", "seconds_per_iteration", "model", "version", "config"} {
		if _, ok := res[key]; !ok {
			t.Errorf("fit --json lacks %q", key)
		}
	}
	if res["n"].(float64) != 3000 || res["d"].(float64) != 3 || res["centers"].(float64) != 300 {
		t.Errorf("fit --json: n=%v d=%v centers=%v", res["n"], res["d"], res["centers"])
	}
	if !strings.Contains(errOut, "memory needed ≈") {
		t.Errorf("fit did not print the memory it needs before starting; stderr:\n%s", errOut)
	}
	if _, err := os.Stat(model + ".ckpt"); err != nil {
		t.Errorf("no checkpoint kept after a successful fit (to extend it with --resume): %v", err)
	}
	if _, err := os.Stat(model + ".json"); err != nil {
		t.Errorf("no JSON summary beside the model: %v", err)
	}

	testDir := t.TempDir()
	test := makeStore(t, testDir, 1000, 2, "y")
	code, out, errOut = runCLI("predict", "--model", model, "--json", test)
	if code != 0 {
		t.Fatalf("predict exit %d: %s", code, errOut)
	}
	var pr map[string]any
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatalf("predict --json: %v\n%s", err, out)
	}
	if pr["rows"].(float64) != 1000 {
		t.Errorf("predict rows = %v", pr["rows"])
	}
	// The target's standard deviation is about 1.8: a relative squared
	// error of 0.03 is an RMSE of about 0.3, far better than the mean.
	if re := pr["rel_error"].(float64); re > 0.03 {
		t.Errorf("test relative error %.4f (RMSE %.3f), want < 0.03", re, pr["rmse"])
	}

	// CSV and Parquet outputs, one row per input row.
	csvOut := filepath.Join(testDir, "p.csv")
	if code, _, e := runCLI("predict", "--model", model, "--out", csvOut, "--quiet", test); code != 0 {
		t.Fatalf("predict --out csv: %s", e)
	}
	b, _ := os.ReadFile(csvOut)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1001 || lines[0] != "y_pred" {
		t.Errorf("CSV output: %d lines, header %q", len(lines), lines[0])
	}
	pq := filepath.Join(testDir, "p.parquet")
	if code, _, e := runCLI("predict", "--model", model, "--out", pq, "--quiet", test); code != 0 {
		t.Fatalf("predict --out parquet: %s", e)
	}
	if b, _ := os.ReadFile(pq); len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		t.Errorf("Parquet output is not a Parquet file")
	}
}

func TestFitBinary(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 3, "label")
	model := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--out", model, "--centers", "200", "--quiet", train); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	test := makeStore(t, t.TempDir(), 800, 4, "label")
	code, out, e := runCLI("predict", "--model", model, "--json", test)
	if code != 0 {
		t.Fatal(e)
	}
	var pr map[string]any
	json.Unmarshal([]byte(out), &pr)
	if pr["task"] != "binary" || pr["error_rate"].(float64) > 0.1 || pr["auc"].(float64) < 0.95 {
		t.Errorf("binary predict: %v", pr)
	}
}

func TestFitPredictErrors(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 500, 5, "y")
	model := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--out", model, "--centers", "50", "--iters", "3", "--quiet", train); code != 0 {
		t.Fatal(e)
	}
	// A store without the feature "b".
	w, err := chunkstore.Create(filepath.Join(dir, "nob"), []chunkstore.ColumnSpec{{Name: "a", Type: "float64"}, {Name: "c", Type: "float64"}}, nil, chunkstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Append([][]float64{{1, 2}, {3, 4}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	noTarget := filepath.Join(dir, "nob")
	trunc := filepath.Join(dir, "trunc.falkon")
	b, _ := os.ReadFile(model)
	os.WriteFile(trunc, b[:len(b)/2], 0o644)

	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"lambda zero", []string{"fit", "--out", model, "--lambda", "0", train}, 2, "--lambda must be > 0, got 0"},
		{"lambda negative", []string{"fit", "--out", model, "--lambda", "-1", train}, 2, "falkon-ooc fit: --lambda: lambda must be > 0, got -1\n"},
		{"sigma", []string{"fit", "--out", model, "--sigma", "0", train}, 2, "--sigma must be > 0, got 0"},
		{"centers negative", []string{"fit", "--out", model, "--centers", "-1", train}, 2, "falkon-ooc fit: --centers: centers must be ≥ 0 (0: the default), got -1\n"},
		{"centers > n", []string{"fit", "--out", model, "--centers", "501", train}, 2,
			"falkon-ooc fit: --centers: centers (M = 501) must not exceed the number of training rows (n = 500)\n"},
		// The checks ooc.Validate makes, each naming the flag; with CSV
		// inputs that do not exist they fail before any input is read.
		{"iters zero", []string{"fit", "--out", model, "--iters", "0", train}, 2, "falkon-ooc fit: --iters must be ≥ 1, got 0\n"},
		{"iters negative", []string{"fit", "--out", model, "--iters", "-2", train}, 2, "falkon-ooc fit: --iters: iterations must be ≥ 1, got -2\n"},
		{"tol", []string{"fit", "--out", model, "--tol", "-1", train}, 2, "falkon-ooc fit: --tol: tolerance must be ≥ 0, got -1\n"},
		{"jitter", []string{"fit", "--out", model, "--target", "y", "--jitter", "-1", "missing.csv"}, 2, "falkon-ooc fit: --jitter: jitter must be ≥ 0, got -1\n"},
		{"workers", []string{"fit", "--out", model, "--target", "y", "--workers", "-1", "missing.csv"}, 2, "falkon-ooc fit: --workers: workers must be ≥ 0, got -1\n"},
		{"candidates", []string{"fit", "--out", model, "--candidates", "-1", train}, 2, "falkon-ooc fit: --candidates: candidates must be ≥ 0, got -1\n"},
		{"precond", []string{"fit", "--out", model, "--target", "y", "--precond", "lu", "missing.csv"}, 2,
			"falkon-ooc fit: --precond: unknown preconditioner \"lu\" (want cholesky, eigen, pivoted or nystrom)\n"},
		{"precond precision", []string{"fit", "--out", model, "--precond-precision", "half", train}, 2,
			"falkon-ooc fit: --precond-precision must be float64, float32 or auto, got \"half\"\n"},
		{"val every zero", []string{"fit", "--out", model, "--val-every", "0", train}, 2, "falkon-ooc fit: --val-every must be ≥ 1, got 0\n"},
		{"val every", []string{"fit", "--out", model, "--target", "y", "--val-every", "-1", "missing.csv"}, 2,
			"falkon-ooc fit: --val-every: validation interval must be ≥ 1, got -1\n"},
		{"val fraction", []string{"fit", "--out", model, "--target", "y", "--val-fraction", "1", "missing.csv"}, 2,
			"falkon-ooc fit: --val-fraction must be in [0, 1), got 1\n"},
		{"no out", []string{"fit", train}, 2, "--out MODEL is required"},
		{"no targets", []string{"fit", "--out", model, noTarget}, 1, "has no target column: ingest it with --target COLUMN"},
		{"bad kernel", []string{"fit", "--out", model, "--kernel", "bogus", train}, 2, "--kernel:"},
		{"missing feature", []string{"predict", "--model", model, noTarget}, 1, `the model's feature column(s) ["b"] are missing`},
		{"truncated model", []string{"predict", "--model", trunc, train}, 1, "model file " + trunc + ": not a valid file: the trailer is missing or damaged (truncated or extended file)"},
		{"bad out", []string{"predict", "--model", model, "--out", "x.txt", train}, 2, "--out x.txt: the name must end in .parquet or .csv (or be -)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, e := runCLI(c.args...)
			if code != c.code || !strings.Contains(e, c.want) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant it to contain %q", code, c.code, e, c.want)
			}
		})
	}
}

// fit --resume with no checkpoint starts from the beginning and says so;
// run again with more iterations, it extends the finished fit.
func TestFitResumeWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 300, 6, "y")
	model := filepath.Join(dir, "none.falkon")
	code, _, e := runCLI("fit", "--out", model, "--resume", "--iters", "3", "--lambda", "1e-2", train)
	if code != 0 || !strings.Contains(e, "fit: --resume: no checkpoint "+model+".ckpt; starting from the beginning") {
		t.Fatalf("resume without checkpoint: exit %d, %s", code, e)
	}
	code, out, e := runCLI("fit", "--out", model, "--resume", "--iters", "5", "--lambda", "1e-2", "--json", train)
	if code != 0 || !strings.Contains(e, "fit: resuming after iteration 3 from "+model+".ckpt") {
		t.Fatalf("extend a finished fit: exit %d, %s", code, e)
	}
	var res struct{ Iterations int }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Iterations != 5 {
		t.Fatalf("extended fit: %d iterations, err %v", res.Iterations, err)
	}
}

func TestFitValidationAndPlot(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 7, "y")
	valStore := makeStore(t, t.TempDir(), 500, 8, "y")
	model := filepath.Join(dir, "m.falkon")
	png := filepath.Join(dir, "fit.png")
	code, out, e := runCLI("fit", "--out", model, "--centers", "100", "--iters", "6", "--val-fraction", "0.25", "--plot", png, "--json", "--quiet", train)
	if code != 0 {
		t.Fatal(e)
	}
	var res struct {
		N          int64 `json:"n"`
		Validation []struct {
			Iteration int     `json:"iteration"`
			RMSE      float64 `json:"rmse"`
		} `json:"validation"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.N < 1300 || res.N > 1700 || len(res.Validation) != 6 || res.Validation[5].RMSE >= res.Validation[0].RMSE {
		t.Errorf("--val-fraction: n = %d, validation %+v", res.N, res.Validation)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("--plot did not write a PNG: %v", err)
	}
	code, out, e = runCLI("fit", "--out", model, "--centers", "100", "--iters", "4", "--val", valStore, "--val-every", "2", "--json", "--quiet", train)
	if code != 0 {
		t.Fatal(e)
	}
	res.Validation = nil
	json.Unmarshal([]byte(out), &res)
	if len(res.Validation) != 2 || res.Validation[1].Iteration != 4 {
		t.Errorf("--val --val-every 2: validation %+v", res.Validation)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--val-fraction", "1"}, "--val-fraction must be in [0, 1), got 1"},
		{[]string{"--val-fraction", "0.1", "--val", valStore}, "--val and --val-fraction exclude each other"},
		{[]string{"--plot", "x.svg"}, "--plot x.svg: the name must end in .png"},
	} {
		code, _, e := runCLI(append(append([]string{"fit", "--out", model}, c.args...), train)...)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, stderr %s", c.args, code, e)
		}
	}
}
