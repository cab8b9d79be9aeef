package main

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/cliargs"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags/flagtest"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// parseSettings runs a command line of flagtest.Lines through
// falkon-ooc-beam's flag set of fit or tune and the checks runFit and
// runTune make before any work, and renders what it set.
func parseSettings(line []string) (string, error) {
	fs, _, o, _, _ := commandFlags(line[0])
	args, err := cliargs.Permute(fs, line[1:])
	if err == nil {
		err = fs.Parse(args)
	}
	if err != nil {
		return "", err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if line[0] == "tune" {
		tc, err := o.tuneConfig(set)
		return flagtest.Settings(&o.Flags, tc.Base, nil, &tc), err
	}
	cfg, tuned, err := o.fitConfig(set)
	return flagtest.Settings(&o.Flags, cfg, tuned, nil), err
}

// TestSharedSettings feeds every flag fit and tune share with falkon-ooc
// (flagtest.Lines) through falkon-ooc-beam's parser and expects the
// settings falkon-ooc's parser gives: the golden file falkon-ooc's
// TestSharedSettings writes and checks.
func TestSharedSettings(t *testing.T) {
	var b strings.Builder
	for _, l := range flagtest.Lines {
		s, err := parseSettings(l)
		if err != nil {
			t.Errorf("%q: %v", l, err)
		}
		b.WriteString("$ " + strings.Join(l, " ") + "\n" + s + "\n\n")
	}
	want, err := os.ReadFile("../../../internal/cliflags/testdata/settings.golden")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n"); b.String() != string(want) {
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("falkon-ooc-beam's settings differ from falkon-ooc's at line %d:\n%s\nfalkon-ooc:\n%s", i+1, g[i], w[i])
			}
		}
		t.Fatalf("falkon-ooc-beam gives %d lines of settings, falkon-ooc %d", len(g), len(w))
	}
}

// TestRefusedFlags: every flag of falkon-ooc fit and tune that a Beam run
// cannot honour parses, and is refused by name with the reason, before
// any work; the help leaves it out. --val-fraction's mistakes are refused
// as falkon-ooc refuses them.
func TestRefusedFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"fit", "--val-fraction", "1"}, "falkon-ooc-beam fit: --val-fraction must be in [0, 1), got 1\n"},
		{[]string{"fit", "--val-fraction", "0.2", "--val", "v.store"}, "falkon-ooc-beam fit: --val and --val-fraction exclude each other\n"},
		{[]string{"fit", "--uncertainty", "--val-fraction", "0"}, "falkon-ooc-beam fit: --uncertainty fits the standard deviations on validation rows: --val-fraction 0 leaves none (give --val INPUT or a fraction such as 0.1)\n"},
		{[]string{"fit", "--val-fraction", "0.0001"}, "falkon-ooc-beam fit: --val-fraction: holding out 0.0001 of 100 rows leaves 100 training and 0 validation rows, and both need some: give a larger fraction"},
		{[]string{"fit", "--plot", "p.png"}, "falkon-ooc-beam fit: --plot: falkon-ooc-beam draws no plots (falkon-ooc fit has it)"},
		{[]string{"tune", "--plot", "p.png"}, "falkon-ooc-beam tune: --plot: falkon-ooc-beam draws no plots (falkon-ooc tune has it)"},
		{[]string{"fit", "--val", "v.csv"}, "falkon-ooc-beam fit: --val v.csv: not a chunk store (make one from Parquet/CSV files with falkon-ooc-beam ingest)"},
		{[]string{"tune", "--val", "s3://b/v.store"}, "falkon-ooc-beam tune: --val s3://b/v.store: give a store on a local path: this process reads the validation rows"},
	} {
		args := append(c.args, "--out", filepath.Join(t.TempDir(), "m"), "--quiet", store(t, 100))
		code, stdout, stderr := runCmd(args...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, c.msg) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.msg)
		}
	}
	for _, name := range []string{"target", "features", "exclude", "weight", "nulls", "cache", "categorical", "max-levels", "time-features"} {
		for _, cmd := range []string{"fit", "tune"} {
			code, _, stderr := runCmd(cmd, "--"+name, "x", "--out", "m", "s.store")
			want := "falkon-ooc-beam " + cmd + ": --" + name + ": falkon-ooc-beam reads a chunk store: make one from Parquet/CSV files with falkon-ooc-beam ingest (falkon-ooc " + cmd + " has it)\n"
			if code != exitUsage || !strings.HasPrefix(stderr, want) {
				t.Errorf("%s --%s: exit %d, stderr %q; want %q", cmd, name, code, stderr, want)
			}
		}
	}
	for _, cmd := range []string{"fit", "tune"} {
		_, help, _ := runCmd(cmd, "--help")
		for _, name := range []string{"plot", "target", "nulls", "cache"} {
			if strings.Contains(help, "\n  --"+name+" ") {
				t.Errorf("%s --help lists the refused --%s", cmd, name)
			}
		}
		if !strings.Contains(help, "\n  --kernel string\n") || !strings.Contains(help, "\n  --sigma LIST\n") {
			t.Errorf("%s --help lacks --kernel or --sigma:\n%s", cmd, help)
		}
	}
}

// TestTuneAsFalkonOOC: 'falkon-ooc-beam tune --sigma 2,4 --lambda
// 1e-6,1e-4 STORE' picks the model that 'falkon-ooc tune' picks with the
// same flags: the same candidate, every candidate's best metric within
// 1e-9 relative, and the two models' predictions within 1e-9.
func TestTuneAsFalkonOOC(t *testing.T) {
	bin := buildFalkonOOC(t)
	dir := t.TempDir()
	s := store(t, 4000)
	flags := []string{"--sigma", "2,4", "--lambda", "1e-6,1e-4", "--centers", "80", "--iters", "6", "--json", "--quiet"}
	type result struct {
		Best       int `json:"best"`
		Candidates []struct {
			Sigma, Lambda float64
			BestMetric    float64 `json:"best_metric"`
		} `json:"candidates"`
	}
	local := filepath.Join(dir, "local.falkon")
	out, err := exec.Command(bin, append([]string{"tune", "--out", local, s}, flags...)...).Output()
	if err != nil {
		t.Fatalf("falkon-ooc tune: %v", err)
	}
	var want result
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	onBeam := filepath.Join(dir, "beam.falkon")
	// One chunk per range (the store has 8): the ranges' sums are added
	// in chunk order, as the local passes add the chunks'. (With fewer
	// ranges each range sums its chunks first, and the metrics agree to
	// about 1e-8: TestTune.)
	code, stdout, stderr := runCmd(append([]string{"tune", "--out", onBeam, "--partitions", "8", s}, flags...)...)
	if code != exitOK {
		t.Fatalf("falkon-ooc-beam tune: exit %d: %s", code, stderr)
	}
	var got result
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Best != want.Best || len(got.Candidates) != 4 || len(want.Candidates) != 4 {
		t.Fatalf("falkon-ooc-beam picks candidate %d of %d, falkon-ooc %d of %d", got.Best, len(got.Candidates), want.Best, len(want.Candidates))
	}
	for i, c := range got.Candidates {
		w := want.Candidates[i]
		if c.Sigma != w.Sigma || c.Lambda != w.Lambda || math.Abs(c.BestMetric-w.BestMetric) > 1e-9*w.BestMetric {
			t.Errorf("candidate %d: σ %g λ %g metric %.12g; falkon-ooc σ %g λ %g metric %.12g", i, c.Sigma, c.Lambda, c.BestMetric, w.Sigma, w.Lambda, w.BestMetric)
		}
	}
	ml, err := ooc.Load(local)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := ooc.Load(onBeam)
	if err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x, y := make([]float64, r.ChunkRows(0)*r.Dim()), make([]float64, r.ChunkRows(0))
	if err := r.ReadChunk(context.Background(), 0, x, y); err != nil {
		t.Fatal(err)
	}
	pl, pb := make([]float64, len(y)), make([]float64, len(y))
	ml.PredictTo(pl, x, len(y))
	mb.PredictTo(pb, x, len(y))
	for i := range pl {
		if math.Abs(pl[i]-pb[i]) > 1e-9*max(1, math.Abs(pl[i])) {
			t.Fatalf("row %d: falkon-ooc-beam's model predicts %.15g, falkon-ooc's %.15g", i, pb[i], pl[i])
		}
	}
}

// buildFalkonOOC builds falkon-ooc into a temporary directory and returns
// its path; the test is skipped with -short or without a go command.
func buildFalkonOOC(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds falkon-ooc")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build falkon-ooc with")
	}
	bin := filepath.Join(t.TempDir(), "falkon-ooc")
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(goCmd, "-C", root, "build", "-o", bin, "./cmd/falkon-ooc").CombinedOutput(); err != nil {
		t.Fatalf("go build falkon-ooc: %v\n%s", err, b)
	}
	return bin
}

// TestFitValFractionAsFalkonOOC: 'falkon-ooc-beam fit --val-fraction 0.2
// --uncertainty STORE' gives the model 'falkon-ooc fit' gives with the
// same flags: the same centres (drawn from the training rows), the same
// iterations and best iteration (patience on the held-out rows), the
// validation metrics, the predictions and the standard deviations within
// 1e-9. --uncertainty alone holds out 0.1 of the store in both.
func TestFitValFractionAsFalkonOOC(t *testing.T) {
	bin := buildFalkonOOC(t)
	dir := t.TempDir()
	s := store(t, 4000)
	for _, flags := range [][]string{
		{"--val-fraction", "0.2", "--patience", "2", "--uncertainty", "--uncertainty-method", "exact", "--uncertainty-rank", "10"},
		{"--uncertainty"},
	} {
		flags = append(flags, "--centers", "80", "--sigma", "1.5", "--lambda", "1e-6", "--iters", "12", "--json", "--quiet", "--no-checkpoint")
		type result struct {
			Iterations    int `json:"iterations"`
			BestIteration int `json:"best_iteration"`
		}
		local := filepath.Join(dir, "local.falkon")
		out, err := exec.Command(bin, append([]string{"fit", "--force", "--out", local, s}, flags...)...).Output()
		if err != nil {
			t.Fatalf("falkon-ooc fit %q: %v", flags, err)
		}
		var want result
		if err := json.Unmarshal(out, &want); err != nil {
			t.Fatal(err)
		}
		onBeam := filepath.Join(dir, "beam.falkon")
		// One chunk per range (the store has 8), as TestTuneAsFalkonOOC.
		code, stdout, stderr := runCmd(append([]string{"fit", "--force", "--out", onBeam, "--partitions", "8", s}, flags...)...)
		if code != exitOK {
			t.Fatalf("falkon-ooc-beam fit %q: exit %d: %s", flags, code, stderr)
		}
		var got result
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q: falkon-ooc-beam fit %+v, falkon-ooc fit %+v", flags, got, want)
		}
		ml, err := ooc.Load(local)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := ooc.Load(onBeam)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ml.Centers(), mb.Centers()) {
			t.Fatalf("%q: the centres differ", flags)
		}
		near := func(what string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
				t.Fatalf("%q: %s: falkon-ooc-beam's model %.15g, falkon-ooc's %.15g", flags, what, got, want)
			}
		}
		lt, bt := ml.Training(), mb.Training()
		if len(lt.Validation) == 0 || len(lt.Validation) != len(bt.Validation) {
			t.Fatalf("%q: %d validations on Beam, %d locally", flags, len(bt.Validation), len(lt.Validation))
		}
		for i, v := range bt.Validation {
			near("validation RMSE", *v.RMSE, *lt.Validation[i].RMSE)
		}
		lu, bu := ml.Uncertainty(), mb.Uncertainty()
		near("the variance's λ", bu.Lambda, lu.Lambda)
		if bu.Rows != lu.Rows {
			t.Errorf("%q: the uncertainty fitted on %d rows on Beam, %d locally", flags, bu.Rows, lu.Rows)
		}
		r, err := chunkstore.Open(s)
		if err != nil {
			t.Fatal(err)
		}
		x, y := make([]float64, r.ChunkRows(0)*r.Dim()), make([]float64, r.ChunkRows(0))
		err = r.ReadChunk(context.Background(), 0, x, y)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		pl, pb, sl, sb := make([]float64, len(y)), make([]float64, len(y)), make([]float64, len(y)), make([]float64, len(y))
		ml.PredictStdTo(pl, sl, x, len(y))
		mb.PredictStdTo(pb, sb, x, len(y))
		for i := range pl {
			near("prediction", pb[i], pl[i])
			near("standard deviation", sb[i], sl[i])
		}
	}
}
