package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// store writes a store of n rows, 3 features and a target.
func store(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s.store")
	rng := rand.New(rand.NewPCG(3, 4))
	cols := make([][]float64, 4)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range n {
		for j := range 3 {
			cols[j][i] = rng.NormFloat64()
		}
		cols[3][i] = cols[0][i]*cols[1][i] + 0.1*rng.NormFloat64()
	}
	spec := func(s string) chunkstore.ColumnSpec { return chunkstore.ColumnSpec{Name: s, Type: "float64"} }
	w, err := chunkstore.Create(dir, []chunkstore.ColumnSpec{spec("a"), spec("b"), spec("c")}, []chunkstore.ColumnSpec{spec("y")},
		chunkstore.Options{ChunkRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "usage: falkon-ooc-beam COMMAND [flags] INPUT…"},
		{[]string{"serve"}, `falkon-ooc-beam: unknown command "serve" (the commands are ingest, fit, tune and predict)`},
		{[]string{"predict", "a.csv"}, "falkon-ooc-beam predict: --model MODEL is required"},
		{[]string{"predict", "--model", "m"}, "falkon-ooc-beam predict: no INPUT given"},
		{[]string{"predict", "--model", "m", "-"}, "falkon-ooc-beam predict: standard input (-) cannot be predicted on Beam; give files"},
		{[]string{"predict", "--model", "m", "a.csv", "--nulls", "skip"}, `falkon-ooc-beam predict: --nulls must be error, drop, mean or zero, not "skip"`},
		{[]string{"predict", "--model", "m", "a.csv"}, "falkon-ooc-beam predict: give --out DIR (or --out FILE.parquet for a single input) for the predictions, or --beside to write each beside its input"},
		{[]string{"predict", "--model", "m", "a.csv", "--out", "d", "--beside"}, "falkon-ooc-beam predict: --out and --beside exclude each other"},
		{[]string{"ingest", "a.csv"}, "falkon-ooc-beam ingest: --out STORE is required"},
		{[]string{"ingest", "--out", "s"}, "falkon-ooc-beam ingest: no input files"},
		{[]string{"ingest", "a.csv", "--out", "s", "--nulls", "mean"}, `falkon-ooc-beam ingest: --nulls must be error or drop, not "mean" (--nulls mean needs falkon-ooc ingest)`},
		{[]string{"tune", "s.store", "--out", "m", "--resume"}, "falkon-ooc-beam tune: unknown flag --resume"},
		{[]string{"tune", "s.store", "--out", "m", "--sigma", "1,x"}, `falkon-ooc-beam tune: invalid value "1,x" for flag --sigma: "x" is not a number > 0`},
		{[]string{"tune", "s.store", "--out", "m", "--sigmas", "1,2"}, "falkon-ooc-beam tune: unknown flag --sigmas (did you mean --sigma?)"},
		{[]string{"tune", "s.store", "--out", "m", "--val-fraction", "1"}, "falkon-ooc-beam tune: --val-fraction: validation fraction must be in [0, 1), got 1"},
		{[]string{"fit", "s.store"}, "falkon-ooc-beam fit: --out MODEL is required"},
		{[]string{"fit", "--out", "m"}, "falkon-ooc-beam fit: want exactly one STORE, got 0 arguments"},
		{[]string{"fit", "s.store", "--out", "m", "--partitions", "0"}, "falkon-ooc-beam fit: --partitions must be ≥ 1, got 0"},
		{[]string{"fit", "s.store", "--out", "m", "--object-timeout", "-1s"}, "falkon-ooc-beam fit: --object-timeout must be ≥ 0, got -1s"},
		{[]string{"fit", "s.store", "--out", "m", "--runner", "storm"}, `falkon-ooc-beam fit: --runner must be prism, flink, spark, dataflow or universal, got "storm"`},
		{[]string{"fit", "s.store", "--out", "m", "--runner", "flink"}, "falkon-ooc-beam fit: --runner flink needs --temp: a directory (path or URL) the workers write and this process reads"},
		{[]string{"fit", "s.store", "--out", "m", "--sigma", "-1"}, "falkon-ooc-beam fit: --sigma must be > 0, got -1"},
		{[]string{"fit", "s.store", "--out", "m", "--lambda", "0"}, "falkon-ooc-beam fit: --lambda must be > 0, got 0"},
		{[]string{"fit", "s.store", "--out", "m", "--precision", "float16"}, `falkon-ooc-beam fit: --precision must be float64 or float32, got "float16"`},
		{[]string{"fit", "s.store", "--out", "m", "--job-opts", "project"}, `falkon-ooc-beam fit: --job-opts: "project" is not name=value`},
		{[]string{"fit", "s.store", "--out", "m", "--job-opts", "no_such_flag=1"}, `falkon-ooc-beam fit: --job-opts: "no_such_flag" is not a Beam flag of this program`},
		{[]string{"fit", "s.store", "--out", "m", "--bogus"}, "falkon-ooc-beam fit: unknown flag --bogus"},
		{[]string{"fit", "s.store", "--out", "m", "--loss", "hinge"}, `falkon-ooc-beam fit: --loss: unknown loss "hinge" (want squared or logistic)`},
		{[]string{"fit", "s.store", "--out", "m", "--class-weight", "even"}, `falkon-ooc-beam fit: --class-weight: unknown class weighting "even" (want none or balanced)`},
		{[]string{"fit", "s.store", "--out"}, "falkon-ooc-beam fit: flag --out needs a value"},
		{[]string{"fit", "s.store", "--out", "m", "--loss", "logistic", "--newton-steps", "2147483648"},
			"falkon-ooc-beam fit: --newton-steps: Newton steps must be in [1, 1000] (0: 8; each step is 1 + Iterations passes over the data), got 2147483648"},
		{[]string{"tune", "s.store", "--out", "m", "--loss", "logistic", "--newton-steps", "1000000000000"},
			"falkon-ooc-beam tune: --newton-steps: Newton steps must be in [1, 1000] (0: 8; each step is 1 + Iterations passes over the data), got 1000000000000"},
	} {
		code, stdout, stderr := runCmd(c.args...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, c.msg+"\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.msg)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}} {
		code, stdout, stderr := runCmd(args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "usage: falkon-ooc-beam COMMAND [flags] INPUT…") {
			t.Errorf("%q: exit %d, stderr %q, stdout %.80q", args, code, stderr, stdout)
		}
		for _, c := range beamCommands {
			if !strings.Contains(stdout, "\n  "+c.name+" ") {
				t.Errorf("%q does not list %s:\n%s", args, c.name, stdout)
			}
		}
	}
	for _, args := range [][]string{{"fit", "--help"}, {"help", "fit"}} {
		code, stdout, stderr := runCmd(args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "usage: falkon-ooc-beam fit --out MODEL [flags] STORE") ||
			!strings.Contains(stdout, "\n  --partitions int\n") {
			t.Errorf("%q: exit %d, stderr %q, stdout %.80q", args, code, stderr, stdout)
		}
	}
	if code, stdout, stderr := runCmd("help", "serve"); code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, `falkon-ooc-beam: unknown command "serve"`) {
		t.Errorf("help serve: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestVerbose: Beam's and Prism's INFO logs reach stderr with --verbose
// only (TestFitJSON checks that they do not without it).
func TestVerbose(t *testing.T) {
	s := store(t, 1000)
	out := filepath.Join(t.TempDir(), "m.falkon")
	code, _, stderr := runCmd("fit", s, "--out", out, "--centers", "20", "--iters", "1", "--partitions", "1", "--quiet", "--verbose")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "level=INFO") {
		t.Errorf("--verbose: no INFO log on stderr: %q", stderr)
	}
	if strings.Contains(stderr, "beam: kernel_product job") {
		t.Errorf("--quiet --verbose: progress on stderr: %q", stderr)
	}
}

func TestFitMissingStore(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCmd("fit", filepath.Join(dir, "nope.store"), "--out", filepath.Join(dir, "m"), "--quiet")
	if code != exitFailure || !strings.Contains(stderr, "nope.store") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestFitJSON fits on Prism through the command and checks the model it
// writes against the --json document.
func TestFitJSON(t *testing.T) {
	s := store(t, 6000)
	out := filepath.Join(t.TempDir(), "m.falkon")
	code, stdout, stderr := runCmd("fit", s, "--out", out, "--centers", "100", "--iters", "4", "--partitions", "3", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if res.N != 6000 || res.Centers != 100 || res.Iterations != 4 || res.Beam.Runner != "prism" ||
		res.Beam.Partitions != 3 || res.Beam.Jobs != 6 || res.Beam.Failed != 0 { // the centres' rows, the right-hand side, 4 iterations
		t.Errorf("--json: %+v", res)
	}
	if !strings.Contains(stderr, "beam: kernel_product job on prism, 3 partitions") {
		t.Errorf("progress on stderr lacks the jobs: %q", stderr)
	}
	if strings.Contains(stderr, "level=INFO") {
		t.Errorf("Beam's info logs reach stderr: %q", stderr)
	}
	// More partitions than chunks: said once.
	code, _, stderr2 := runCmd("fit", s, "--out", out, "--centers", "100", "--iters", "2", "--partitions", "64")
	if code != exitOK || strings.Count(stderr2, "beam: --partitions 64 cut to ") != 1 {
		t.Errorf("--partitions 64: exit %d, the cut not said once: %q", code, stderr2)
	}
	// One line per stage, however often the stage reports progress.
	for _, line := range []string{"fit: computing K_MM", "fit: factorising the preconditioner"} {
		if n := strings.Count(stderr, line); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", line, n, stderr)
		}
	}
	m, err := ooc.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.M() != 100 {
		t.Errorf("model has M = %d", m.M())
	}
	if _, err := os.Stat(out + ".json"); err != nil {
		t.Error(err)
	}
	code, stdout, _ = runCmd("fit", s, "--out", out, "--centers", "100", "--iters", "4", "--partitions", "3", "--quiet")
	if code != exitOK || !strings.Contains(stdout, fmt.Sprintf("beam       prism, 3 partitions, 6 jobs (0 failed)")) {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// TestFitResume: the checkpoint is kept after a fit, and --resume with a
// larger --iters runs only the iterations that remain.
func TestFitResume(t *testing.T) {
	s := store(t, 3000)
	out := filepath.Join(t.TempDir(), "m.falkon")
	code, _, stderr := runCmd("fit", s, "--out", out, "--centers", "60", "--iters", "2", "--partitions", "2", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd("fit", s, "--out", out, "--centers", "60", "--iters", "5", "--partitions", "2", "--resume", "--json")
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 5 || res.Beam.Jobs != 1+3 || !strings.Contains(stderr, "fit: resuming after iteration 2 from "+out+".ckpt") {
		t.Errorf("resumed: %d iterations, %d jobs; stderr %q", res.Iterations, res.Beam.Jobs, stderr)
	}
}

// TestTune: falkon-ooc-beam tune on Prism picks what ooc.Tune picks on the
// same store, with every candidate's best metric within 1e-8 relative,
// and writes the best candidate's model.
func TestTune(t *testing.T) {
	dir := store(t, 4000)
	model := filepath.Join(t.TempDir(), "m.falkon")
	code, stdout, stderr := runCmd("tune", dir, "--out", model, "--sigma", "1,2", "--lambda", "1e-3,1e-6",
		"--centers", "60", "--iters", "4", "--partitions", "3", "--json", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got tuneResult
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, err := ooc.Tune(context.Background(), r, ooc.TuneConfig{
		Base:   ooc.Config{Centers: 60, Iterations: 4, Lambda: ooc.DefaultLambda},
		Sigmas: []float64{1, 2}, Lambdas: []float64{1e-3, 1e-6}, ValFraction: ooc.DefaultValFraction}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Best != want.Best || len(got.Candidates) != 4 || got.Beam.Jobs != want.Passes { // the centres' rows job included
		t.Fatalf("best %d of %d candidates after %d jobs; locally best %d after %d passes", got.Best, len(got.Candidates), got.Beam.Jobs, want.Best, want.Passes)
	}
	for i, c := range got.Candidates {
		w := want.Candidates[i].BestMetric
		if d := c.BestMetric - w; d > 1e-8*w || d < -1e-8*w {
			t.Errorf("candidate %d: best metric %v, locally %v", i, c.BestMetric, w)
		}
	}
	m, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config().Lambda != want.Candidates[want.Best].Lambda {
		t.Errorf("the model has λ %g, the best candidate %g", m.Config().Lambda, want.Candidates[want.Best].Lambda)
	}
}

// TestFitLogistic: falkon-ooc-beam fit --loss logistic on a binary store
// runs its gradient and Hessian passes as Beam jobs and writes the model
// of ooc.Fit's logistic loss (its Newton steps recorded).
func TestFitLogistic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b.store")
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 3000
	cols := make([][]float64, 3)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range n {
		cols[0][i], cols[1][i] = rng.NormFloat64(), rng.NormFloat64()
		if cols[0][i]*cols[1][i]+0.3*rng.NormFloat64() > 0 {
			cols[2][i] = 1
		}
	}
	spec := func(s string) chunkstore.ColumnSpec { return chunkstore.ColumnSpec{Name: s, Type: "float64"} }
	w, err := chunkstore.Create(dir, []chunkstore.ColumnSpec{spec("a"), spec("b")}, []chunkstore.ColumnSpec{spec("y")},
		chunkstore.Options{ChunkRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "m.falkon")
	code, stdout, stderr := runCmd("fit", dir, "--out", model, "--loss", "logistic", "--newton-steps", "3", "--iters", "3",
		"--centers", "40", "--partitions", "2", "--json", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	jobs := 1 + 3*(1+3) + 1 // the centres, 3 × (gradient, 3 CG), the last line search
	for _, s := range m.Training().NewtonSteps[:2] {
		if s.Step < 1 { // a shortened step's gradient
			jobs++
		}
	}
	if m.Config().Loss != ooc.LossLogistic || len(m.Training().NewtonSteps) != 3 || res.Beam.Jobs != jobs || !m.HasProba() {
		t.Fatalf("loss %q, %d Newton steps, %d jobs", m.Config().Loss, len(m.Training().NewtonSteps), res.Beam.Jobs)
	}
}

// TestOutputGuard: fit and tune refuse, before any work, an --out that
// would replace a user's file, the store they read, or a user's
// MODEL.json or MODEL.ckpt, with falkon-ooc fit's messages (one output
// guard, internal/outguard), and an object-storage --out they cannot
// write. Nothing is changed.
func TestOutputGuard(t *testing.T) {
	st := store(t, 100)
	dir := t.TempDir()
	data := filepath.Join(dir, "data.csv")
	user := filepath.Join(dir, "user")
	for p, b := range map[string]string{data: "a,y\n1,2\n", user + ".json": `{"mine": 1}`, filepath.Join(dir, "u2.ckpt"): "notes"} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := filepath.Join(st, "meta.json")
	before, _ := os.ReadFile(meta)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fit", "--out", data, "--centers", "10", "--iters", "1", st}, 1,
			"falkon-ooc-beam fit: --out " + data + " exists and is not a falkon-ooc model: not replacing it; pass --force to replace it, or choose another --out"},
		{[]string{"tune", "--out", data, "--centers", "10", "--iters", "1", st}, 1,
			"falkon-ooc-beam tune: --out " + data + " exists and is not a falkon-ooc model"},
		{[]string{"fit", "--out", meta, "--centers", "10", "--iters", "1", st}, 1,
			"falkon-ooc-beam fit: --out " + meta + " lies inside the store " + st + ", which it would damage; choose another --out"},
		{[]string{"tune", "--out", meta, "--force", "--centers", "10", "--iters", "1", st}, 1,
			"falkon-ooc-beam tune: --out " + meta + " lies inside the store " + st},
		{[]string{"fit", "--out", user, "--centers", "10", "--iters", "1", st}, 1,
			"falkon-ooc-beam fit: --out " + user + ": its summary " + user + ".json exists and is not the summary of a falkon-ooc model: not replacing it; pass --force to replace it, or choose another --out"},
		{[]string{"fit", "--out", filepath.Join(dir, "u2"), "--centers", "10", "--iters", "1", st}, 1,
			"its checkpoint " + filepath.Join(dir, "u2.ckpt") + " exists and is not a falkon-ooc checkpoint"},
		{[]string{"fit", "--out", "s3://bucket/m", "--centers", "10", "--iters", "1", st}, 2,
			"falkon-ooc-beam fit: --out s3://bucket/m: this process writes the model, its summary and checkpoint to local files; give a local path"},
	} {
		code, _, e := runCmd(c.args...)
		if code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, e, c.code, c.want)
		}
	}
	if b, _ := os.ReadFile(data); string(b) != "a,y\n1,2\n" {
		t.Errorf("data.csv changed: %q", b)
	}
	if b, _ := os.ReadFile(meta); !bytes.Equal(b, before) {
		t.Errorf("the store's meta.json changed")
	}
	if b, _ := os.ReadFile(user + ".json"); string(b) != `{"mine": 1}` {
		t.Errorf("user.json changed: %q", b)
	}
}
