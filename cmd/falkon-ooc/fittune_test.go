package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestFitTune runs the whole job through the CLI: the search's table on
// stdout and in --json, the model's metadata carrying it, the final fit at
// --centers with the pick, stopped by patience.
func TestFitTune(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 4000, 3, "y")
	model := filepath.Join(dir, "m.falkon")
	code, out, errOut := runCLI("fit", "--tune", "--out", model, "--centers", "400", "--tune-centers", "100",
		"--tune-rows", "2000", "--sigma", "0.7,1.4,2.8", "--lambda", "1e-7:1e-3:3", "--handoff", "linear", "--json", train)
	if code != 0 {
		t.Fatalf("fit --tune exit %d: %s", code, errOut)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("fit --tune --json is not one document: %v\n%s", err, out)
	}
	if res.Search == nil || len(res.Search.Candidates) != 9 || res.Search.M != 100 || res.Search.N != 2000 {
		t.Fatalf("--json search: %+v", res.Search)
	}
	best := res.Search.Candidates[res.Search.Best]
	// The linear hand-off: λ · 2000 search rows / n.
	if want := best.Lambda * 2000 / float64(res.N); res.Centers != 400 || math.Abs(res.Config.Lambda-want) > 1e-15*want ||
		res.Config.Kernel.Sigma != best.Sigma {
		t.Errorf("final fit: M = %d, λ = %g, σ = %g; search picked λ = %g, σ = %g", res.Centers, res.Config.Lambda,
			res.Config.Kernel.Sigma, best.Lambda, best.Sigma)
	}
	if res.Handoff == nil || res.Handoff.Rule != ooc.HandoffLinear || res.Handoff.SearchValRows != 4000-res.N {
		t.Errorf("--json handoff: %+v", res.Handoff)
	}
	// --iters 50 by default; past it the fit continues by patience
	// within the budget of 3 + 2·50 passes: a cap of 100 iterations.
	if res.Config.Patience != ooc.DefaultPatience || res.Config.Iterations != 100 || res.Handoff.MaxPasses != 103 ||
		res.Iterations > 100 || len(res.Validation) != res.Iterations {
		t.Errorf("patience %d, cap %d, budget %d passes, %d iterations, %d validations (want patience 3, a cap of 100, 103 passes, one validation each)",
			res.Config.Patience, res.Config.Iterations, res.Handoff.MaxPasses, res.Iterations, len(res.Validation))
	}
	if want := "at M = 400, at most 103 passes over the data (--max-passes): past --iters 50 the fit continues while its validation improves (--patience 3)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if len(res.Phases) == 0 || res.PeakRSS <= 0 {
		t.Errorf("--json lacks the phases or the peak RSS: %d phases, %d bytes", len(res.Phases), res.PeakRSS)
	}
	for _, want := range []string{"fit --tune: searching σ × λ", "fit --tune: search: n = 2000 training rows",
		"fit --tune: search: hand-off: λ = " + fmt.Sprint(res.Config.Lambda) + " for the fit, from the search's " +
			fmt.Sprint(best.Lambda) + " by --handoff linear"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	summary, err := os.ReadFile(model + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(summary), `"search"`) || !strings.Contains(string(summary), `"handoff"`) {
		t.Errorf("the model's summary lacks the search or the hand-off")
	}
	// inspect shows the search, the hand-off, the patience and the phases.
	code, out, errOut = runCLI("inspect", model)
	if code != 0 {
		t.Fatalf("inspect exit %d: %s", code, errOut)
	}
	for _, want := range []string{"search (fit --tune):", "handoff    λ = ", "patience  ", "phases    sample ", "iteration ×"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	// All 431 validation rows: fewer than the search's 1000.
	// The text output: the table, the pick and the hand-off; the slope
	// rule measures nothing on 2000 search rows and says so.
	code, out, errOut = runCLI("fit", "--tune", "--out", model, "--centers", "300", "--tune-centers", "100",
		"--tune-rows", "2000", "--sigma", "1,2", "--lambda", "1e-6,1e-4", "--handoff", "slope", "--quiet", train)
	if code != 0 {
		t.Fatalf("fit --tune exit %d: %s", code, errOut)
	}
	for _, want := range []string{"best rmse      ± se      R²     MAE  best iteration", "search     candidate",
		"handoff    λ = ", "(--handoff slope)", "slope      not measured (2000 search rows: too few for a probe on a quarter of them, or one λ): α = 1, as linear",
		"model      "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestFitTuneUsage: the search's flags without --tune, and bad values,
// are usage errors naming the flag, before any input is read.
func TestFitTuneUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lambda", "1e-8:1e-3:6"}, "--lambda 1e-8:1e-3:6 gives 6 values: a search over them needs --tune"},
		{[]string{"--sigma", "1,2"}, "--sigma 1,2 gives 2 values: a search over them needs --tune"},
		{[]string{"--tune-rows", "100"}, "--tune-rows goes with --tune"},
		{[]string{"--pick", "1se"}, "--pick goes with --tune"},
		{[]string{"--tune", "--pick", "2se"}, `--pick: unknown pick rule "2se" (want tol, best or 1se)`},
		{[]string{"--tune", "--handoff", "cubic"}, `--handoff must be keep, sqrt, linear or slope, got "cubic"`},
		{[]string{"--patience", "2"}, "--patience stops by the validation metric: give --val-fraction or --val"},
		{[]string{"--tune", "--lambda", "1e-3:1e-8:3"}, `invalid value "1e-3:1e-8:3" for flag --lambda: "1e-3:1e-8:3": want LO:HI:COUNT with 0 < LO ≤ HI`},
		{[]string{"--tune", "--ard", "--sigmas", "1,2,3"}, "--ard learns the per-feature length scales: give no --sigmas"},
	} {
		args := append([]string{"fit", "--out", filepath.Join(dir, "m"), filepath.Join(dir, "no-such.store")}, tc.args...)
		code, _, errOut := runCLI(args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestFitTuneLogistic: fit --tune --loss logistic works with every other
// flag at its default, and with --patience (counted in Newton steps); the
// search's objective never rises in the model's Newton steps.
func TestFitTuneLogistic(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,y\n")
	rng := rand.New(rand.NewPCG(3, 3))
	for range 400 {
		a, c := rng.NormFloat64(), rng.NormFloat64()
		cls := min(int((math.Atan2(c, a)+math.Pi)/(2*math.Pi)*3), 2)
		fmt.Fprintf(&b, "%.6f,%.6f,%d\n", a, c, cls)
	}
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.falkon")
	code, _, e := runCLI("fit", "--tune", "--loss", "logistic", "--target", "y", "--out", m, "--quiet", csv)
	if code != 0 {
		t.Fatalf("fit --tune --loss logistic: exit %d: %s", code, e)
	}
	mdl, err := ooc.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	tr := mdl.Training()
	if n := len(tr.NewtonSteps); mdl.Config().Loss != ooc.LossLogistic || n < 1 || n > ooc.DefaultNewtonSteps || (n < ooc.DefaultNewtonSteps) != (tr.Status == ooc.StatusPatience) ||
		tr.Search == nil || mdl.Config().Iterations != ooc.DefaultLogisticIterations {
		t.Fatalf("loss %q, %d Newton steps, --iters %d, search %v", mdl.Config().Loss, len(tr.NewtonSteps), mdl.Config().Iterations, tr.Search != nil)
	}
	for i, s := range tr.NewtonSteps {
		if s.After > s.Objective {
			t.Errorf("step %d: objective %v → %v", i+1, s.Objective, s.After)
		}
	}
	// A plain fit with --patience 0 runs every Newton step.
	code, _, e = runCLI("fit", "--loss", "logistic", "--val-fraction", "0.2", "--patience", "0", "--target", "y", "--out", m, "--force", "--quiet", csv)
	if code != 0 {
		t.Fatalf("--patience 0 with the logistic loss: exit %d, stderr %q", code, e)
	}
	if mdl, err = ooc.Load(m); err != nil || len(mdl.Training().NewtonSteps) != ooc.DefaultNewtonSteps {
		t.Fatalf("--patience 0: %v, %d Newton steps", err, len(mdl.Training().NewtonSteps))
	}
}
