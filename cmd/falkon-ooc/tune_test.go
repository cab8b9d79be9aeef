package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

func TestTuneHelp(t *testing.T) {
	code, out, errOut := runCLI("tune", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "tune_help.golden", out)
}

// TestTuneCLI runs a small search end to end: the table, --json with
// every candidate's curve, the best model written to --out and read by
// predict, --plot, and progress with the memory estimate on stderr.
func TestTuneCLI(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 3000, 1, "y")
	model := filepath.Join(dir, "m.falkon")
	plotPath := filepath.Join(dir, "tune.png")
	code, out, errOut := runCLI("tune", "--out", model, "--centers", "150", "--iters", "8",
		"--sigma", "0.5,1,2", "--lambda", "1e-7:1e-3:3", "--plot", plotPath, train)
	if code != 0 {
		t.Fatalf("tune exit %d: %s", code, errOut)
	}
	for _, want := range []string{"candidate", "best rmse", "± se", "pick", "best       candidate", "model      " + model} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n < 10 {
		t.Errorf("table of 9 candidates has %d lines:\n%s", n, out)
	}
	if !strings.Contains(errOut, "memory needed ≈") || !strings.Contains(errOut, "3 σ × 3 λ = 9 candidates") {
		t.Errorf("stderr lacks the grid or the memory estimate:\n%s", errOut)
	}
	if b, err := os.ReadFile(plotPath); err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Errorf("--plot did not write a PNG: %v", err)
	}
	if m, err := ooc.Load(model); err != nil || m.M() != 150 {
		t.Fatalf("--out: %v", err)
	}
	test := makeStore(t, t.TempDir(), 500, 2, "y")
	code, pout, errOut := runCLI("predict", "--model", model, "--json", test)
	if code != 0 {
		t.Fatalf("predict on the tuned model: exit %d: %s", code, errOut)
	}
	var pr map[string]any
	if err := json.Unmarshal([]byte(pout), &pr); err != nil {
		t.Fatal(err)
	}
	if re := pr["rel_error"].(float64); re > 0.05 {
		t.Errorf("tuned model: test relative error %.3f", re)
	}

	code, out, errOut = runCLI("tune", "--out", model, "--centers", "150", "--iters", "6", "--sigma", "1,2",
		"--lambda", "1e-6,1e-3", "--json", "--quiet", train)
	if code != 0 || errOut != "" {
		t.Fatalf("tune --json exit %d, stderr %q", code, errOut)
	}
	var res struct {
		Version    string
		Metric     string
		Best, Tol  int
		Lowest     int
		Pick       string
		Tolerance  float64
		TolMetric  string `json:"tol_metric"`
		ValRows    int64  `json:"val_rows"`
		Candidates []struct {
			Sigma, Lambda float64
			BestMetric    float64 `json:"best_metric"`
			BestIteration int     `json:"best_iteration"`
			Validation    []ooc.ValPoint
			Stop          string
		}
		Memory ooc.Memory `json:"memory_estimate"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json is not one document: %v\n%s", err, out)
	}
	if res.Version == "" || res.Metric != "rmse" || len(res.Candidates) != 4 || res.Memory.Total == 0 {
		t.Fatalf("--json: %+v", res)
	}
	for _, c := range res.Candidates {
		if len(c.Validation) == 0 || c.BestIteration < 1 || c.Stop == "" {
			t.Errorf("candidate σ %g λ %g: %d validation points, best iteration %d, stop %q",
				c.Sigma, c.Lambda, len(c.Validation), c.BestIteration, c.Stop)
		}
		if c.BestMetric < res.Candidates[res.Lowest].BestMetric {
			t.Errorf("lowest is %d but σ %g λ %g has a lower metric", res.Lowest, c.Sigma, c.Lambda)
		}
	}
	// The default pick, tol: the largest λ within a relative 0.1 %
	// (--min-improvement's default) of the lowest RMSE.
	low, tp := res.Candidates[res.Lowest], res.Candidates[res.Tol]
	limit := low.BestMetric * (1 + ooc.DefaultMinImprovement)
	if res.Pick != "tol" || res.Best != res.Tol || res.Tolerance != ooc.DefaultMinImprovement || res.TolMetric != "rmse" ||
		tp.Lambda < low.Lambda || !(tp.BestMetric <= limit) {
		t.Errorf("--json: pick %q, best %d, tol %d (σ %g λ %g, %g), lowest %d (σ %g λ %g, %g), tolerance %g by %q",
			res.Pick, res.Best, res.Tol, tp.Sigma, tp.Lambda, tp.BestMetric, res.Lowest, low.Sigma, low.Lambda, low.BestMetric, res.Tolerance, res.TolMetric)
	}
	for _, c := range res.Candidates {
		if c.Lambda > tp.Lambda && c.BestMetric <= limit {
			t.Errorf("σ %g λ %g (%g) is within 0.1 %% of the lowest with a larger λ than the pick's %g", c.Sigma, c.Lambda, c.BestMetric, tp.Lambda)
		}
	}
	if m2, err := ooc.Load(model); err != nil || m2.Config().Lambda != res.Candidates[res.Best].Lambda {
		t.Errorf("--out holds λ %v, the best candidate has %v (%v)", m2.Config().Lambda, res.Candidates[res.Best].Lambda, err)
	}

	// --pick 1se: the model is the one-standard-error pick, the JSON names
	// both picks and every candidate's standard error, and the text table
	// marks both.
	code, out, errOut = runCLI("tune", "--out", model, "--centers", "150", "--iters", "8", "--sigma", "0.5,1,2",
		"--lambda", "1e-8:1e-2:4", "--pick", "1se", "--json", "--quiet", train)
	if code != 0 || errOut != "" {
		t.Fatalf("tune --pick 1se exit %d, stderr %q", code, errOut)
	}
	var pick struct {
		Best, Lowest int
		OneSE        int `json:"one_se"`
		Pick         string
		Candidates   []struct {
			Sigma, Lambda float64
			BestMetric    float64 `json:"best_metric"`
			BestSE        float64 `json:"best_se"`
		}
	}
	if err := json.Unmarshal([]byte(out), &pick); err != nil {
		t.Fatal(err)
	}
	lo, one := pick.Candidates[pick.Lowest], pick.Candidates[pick.OneSE]
	if pick.Pick != "1se" || pick.Best != pick.OneSE || !(one.BestMetric <= lo.BestMetric+lo.BestSE) || !(lo.BestSE > 0) {
		t.Fatalf("--pick 1se: pick %q, best %d, lowest %d (%g ± %g), 1-SE %d (%g)", pick.Pick, pick.Best, pick.Lowest,
			lo.BestMetric, lo.BestSE, pick.OneSE, one.BestMetric)
	}
	if m2, err := ooc.Load(model); err != nil || m2.Config().Lambda != one.Lambda || m2.Config().Kernel.Sigma != one.Sigma {
		t.Errorf("--pick 1se: --out holds λ %v σ %v, the 1-SE candidate λ %v σ %v (%v)", m2.Config().Lambda, m2.Config().Kernel.Sigma, one.Lambda, one.Sigma, err)
	}
	code, out, errOut = runCLI("tune", "--out", model, "--centers", "150", "--iters", "8", "--sigma", "0.5,1,2",
		"--lambda", "1e-8:1e-2:4", "--pick", "1se", "--quiet", train)
	if code != 0 {
		t.Fatalf("tune --pick 1se exit %d: %s", code, errOut)
	}
	if pick.Lowest == pick.OneSE {
		if !strings.Contains(out, "best,1se") {
			t.Errorf("the table does not mark candidate %d as both picks:\n%s", pick.Lowest+1, out)
		}
	} else {
		want := fmt.Sprintf("pick       --pick 1se took candidate %d; --pick best would take candidate %d", pick.OneSE+1, pick.Lowest+1)
		if !strings.Contains(out, want) || !regexp.MustCompile(`(?m) best(,tol)?$`).MatchString(out) || !regexp.MustCompile(`(?m) 1se(,tol)?$`).MatchString(out) {
			t.Errorf("stdout lacks %q or the table's pick column:\n%s", want, out)
		}
	}
}

func TestTuneErrors(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 400, 5, "y")
	model := filepath.Join(dir, "m.falkon")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no out", []string{"tune", train}, 2, "--out MODEL is required"},
		{"lambda list", []string{"tune", "--out", model, "--lambda", "1e-3,x", train}, 2, `--lambda: "x" is not a number > 0`},
		{"lambda range", []string{"tune", "--out", model, "--lambda", "1e-3:1e-6:4", train}, 2,
			`falkon-ooc tune: invalid value "1e-3:1e-6:4" for flag --lambda: "1e-3:1e-6:4": want LO:HI:COUNT with 0 < LO ≤ HI and COUNT ≥ 1 (COUNT 1 only when LO = HI)`},
		{"sigma zero", []string{"tune", "--out", model, "--sigma", "0", train}, 2, "falkon-ooc tune: --sigma: sigma must be > 0 and finite, got 0\n"},
		{"sigma linear", []string{"tune", "--out", model, "--kernel", "linear", "--sigma", "1", train}, 2,
			"falkon-ooc tune: --sigma: the linear kernel has no length scale to search: give no sigmas\n"},
		{"both validations", []string{"tune", "--out", model, "--val", train, "--val-fraction", "0.2", train}, 2, "--val and --val-fraction exclude each other"},
		{"patience", []string{"tune", "--out", model, "--patience", "-1", train}, 2, "--patience must be ≥ 0, got -1"},
		{"pick", []string{"tune", "--out", model, "--pick", "lowest", train}, 2, `falkon-ooc tune: --pick: unknown pick rule "lowest" (want tol, best or 1se)` + "\n"},
		{"max memory syntax", []string{"tune", "--out", model, "--max-memory", "lots", train}, 2, `--max-memory: "lots" is not a size > 0 (e.g. 12GiB, 800MB)`},
		{"max memory", []string{"tune", "--out", model, "--centers", "300", "--max-memory", "50MB", "--precond-precision", "float64", train}, 1,
			"falkon-ooc tune: not enough memory: the search over 5 σ × 6 λ with M = 300 needs about"},
		{"max memory float64", []string{"tune", "--out", model, "--centers", "300", "--max-memory", "50MB", "--precond-precision", "float64", train}, 1,
			"with float64 preconditioners (one M × M buffer for each of the 30 candidates: 20.8 MiB), more than the limit of 47.7 MiB: use fewer centres, sigmas or lambdas, or float32 preconditioners"},
		{"max memory auto", []string{"tune", "--out", model, "--centers", "300", "--max-memory", "45MB", train}, 1,
			"with float32 preconditioners (one M × M buffer for each of the 30 candidates: 10.5 MiB), more than the limit of 42.9 MiB: use fewer centres, sigmas or lambdas"},
		{"sigma halving", []string{"tune", "--out", model, "--sigma-halving", "-2", train}, 2, `--sigma-halving: "-2" is not an iteration ≥ 1 (give a LIST such as 2,4,10, or 0 for off)`},
		{"sigma halving order", []string{"tune", "--out", model, "--sigma-halving", "4,2", train}, 2, "--sigma-halving: σ-halving steps must be ascending iterations ≥ 1, got [4 2]"},
		{"centres", []string{"tune", "--out", model, "--centers", "390", train}, 2,
			"falkon-ooc tune: --centers: centers (M = 390) must not exceed the number of training rows (n = 360)\n"},
		// The checks ooc.ValidateTune makes, each naming the flag; with
		// CSV inputs that do not exist they fail before any input is read.
		{"halving", []string{"tune", "--out", model, "--target", "y", "--halving", "-1", "missing.csv"}, 2,
			"falkon-ooc tune: --halving: halving must be ≥ 0, got -1\n"},
		{"val fraction", []string{"tune", "--out", model, "--target", "y", "--val-fraction", "1.5", "missing.csv"}, 2,
			"falkon-ooc tune: --val-fraction: validation fraction must be in [0, 1), got 1.5\n"},
		{"ard rows", []string{"tune", "--out", model, "--target", "y", "--ard", "--ard-rows", "-1", "missing.csv"}, 2,
			"falkon-ooc tune: --ard-rows and --ard-steps must be ≥ 0\n"},
		{"ard kernel", []string{"tune", "--out", model, "--target", "y", "--ard", "--kernel", "laplacian", "missing.csv"}, 2,
			"falkon-ooc tune: --ard: ARD learns the length scales of the Gaussian kernel, not of the laplacian kernel\n"},
		{"tune jitter", []string{"tune", "--out", model, "--target", "y", "--jitter", "-1", "missing.csv"}, 2,
			"falkon-ooc tune: --jitter: jitter must be ≥ 0, got -1\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, e := runCLI(c.args...)
			if code != c.code || !strings.Contains(e, c.want) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant it to contain %q", code, c.code, e, c.want)
			}
			if _, err := os.Stat(model); !os.IsNotExist(err) {
				t.Fatalf("a failed tune left %s", model)
			}
		})
	}
}

// TestTunePrecondAuto checks --precond-precision auto: a search over the
// memory limit with float64 preconditioners but not with float32 stores
// them in float32, says so, and the model records it.
func TestTunePrecondAuto(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 400, 5, "y")
	model := filepath.Join(dir, "m.falkon")
	code, _, errOut := runCLI("tune", "--out", model, "--centers", "300", "--iters", "2", "--max-memory", "62MB", train)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "tune: with float64 preconditioners the search is over the memory limit of 59.1 MiB: storing them in float32 (--precond-precision float32)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	m, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Config().PrecondPrecision; p != "float32" {
		t.Errorf("model's preconditioner precision %q, want float32", p)
	}
}

// TestTuneBudgetCLI: the start line states the search's budget of
// passes; a candidate stopped by it says so in the table, the cap line
// and --json, with its last improvement; a fit that runs all its --iters
// while validating says where its validation last improved; a budget too
// small is a usage error naming --max-passes.
func TestTuneBudgetCLI(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 3000, 1, "y")
	model := filepath.Join(dir, "m.falkon")
	code, out, errOut := runCLI("tune", "--out", model, "--centers", "150", "--iters", "3", "--sigma", "1",
		"--lambda", "1e-9", "--max-passes", "7", train)
	if code != 0 {
		t.Fatalf("tune exit %d: %s", code, errOut)
	}
	if want := "1 σ × 1 λ = 1 candidates on " + train + "; at most 7 passes over the data (--max-passes): past --iters 3 a candidate continues while its validation improves (--patience 3)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	for _, want := range []string{" budget ", "cap        1 candidate(s) stopped at the cap with the validation still improving: candidate 1 rmse ", " at iteration 4; a larger --max-passes (or --iters) lets them run on"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI("tune", "--out", model, "--centers", "150", "--iters", "3", "--sigma", "1",
		"--lambda", "1e-9", "--max-passes", "7", "--json", "--quiet", train)
	if code != 0 {
		t.Fatalf("tune --json exit %d: %s", code, errOut)
	}
	var res struct {
		Passes     int
		Candidates []struct {
			Stop string
			Last *ooc.Improvement `json:"last_improvement"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if c := res.Candidates[0]; res.Passes != 7 || c.Stop != "budget" || c.Last == nil || !c.Last.Still || c.Last.Iteration != 4 || !(c.Last.To < c.Last.From) {
		t.Errorf("--json: %d passes, stop %q, last improvement %+v", res.Passes, c.Stop, c.Last)
	}
	code, _, errOut = runCLI("tune", "--out", model, "--max-passes", "3", train)
	if want := "falkon-ooc tune: --max-passes: the budget of passes must be 0 (the default) or ≥ 4 (the centre sampling, the right-hand side, one iteration and the final validation), got 3\n"; code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("--max-passes 3: exit %d, stderr %q", code, errOut)
	}

	// A fit that runs all its --iters while its validation improves.
	code, out, errOut = runCLI("fit", "--out", model, "--centers", "150", "--sigma", "1", "--lambda", "1e-9", "--iters", "3",
		"--patience", "3", "--val-fraction", "0.2", train)
	if code != 0 {
		t.Fatalf("fit exit %d: %s", code, errOut)
	}
	if want := "cap        stopped at --iters 3 with the validation RMSE still improving ("; !strings.Contains(out, want) || !strings.Contains(out, "at iteration 3): a larger --iters may give a better model") {
		t.Errorf("fit stdout lacks %q:\n%s", want, out)
	}
	code, out, _ = runCLI("fit", "--out", model, "--centers", "150", "--sigma", "1", "--lambda", "1e-9", "--iters", "3",
		"--patience", "3", "--val-fraction", "0.2", "--json", "--quiet", train)
	var fr struct {
		Cap *ooc.Improvement `json:"stopped_at_cap"`
	}
	if err := json.Unmarshal([]byte(out), &fr); code != 0 || err != nil || fr.Cap == nil || !fr.Cap.Still || fr.Cap.Iteration != 3 {
		t.Errorf("fit --json: exit %d, %v, stopped_at_cap %+v", code, err, fr.Cap)
	}
}
