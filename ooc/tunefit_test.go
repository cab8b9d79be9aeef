package ooc_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestFitPatienceKeepsBestIteration: with Config.Patience, Fit stops once
// the validation metric has not improved for that many iterations, and
// its model is the model of the best validated iteration: the model Fit
// returns with Iterations = that iteration and no patience (the CG
// iterates are the same).
func TestFitPatienceKeepsBestIteration(t *testing.T) {
	const n, d = 1500, 3
	x, y := synth(n, d, 41)
	src := stream.NewMemSource(x, d, y, 1, 200)
	train, held := stream.Holdout(src, 0.3, 3)
	// A λ so small that the validation error turns up after a few
	// iterations (the fit starts to follow the noise).
	cfg := ooc.Config{Centers: 300, Iterations: 60, Lambda: 1e-12, Seed: 3, Kernel: kernelSigma(0.4), Patience: 2}
	run := ooc.RunOptions{Validation: held, Workers: 2}
	got, err := ooc.Fit(context.Background(), train, cfg, run)
	if err != nil {
		t.Fatal(err)
	}
	tr := got.Training()
	if tr.Status != ooc.StatusPatience {
		t.Fatalf("status %q after %d iterations, want %q (validation %v)", tr.Status, tr.Iterations, ooc.StatusPatience, tr.Validation)
	}
	// The model is the best validated iteration's; the fit stopped after
	// Patience validations without a 0.1 % improvement over the metric
	// of the last one that had.
	bestRMSE := *tr.Validation[tr.BestIteration-1].RMSE
	ref, since := math.Inf(1), 0
	for _, p := range tr.Validation {
		if *p.RMSE < bestRMSE {
			t.Errorf("iteration %d has RMSE %v, below the best iteration %d's %v", p.Iteration, *p.RMSE, tr.BestIteration, bestRMSE)
		}
		if *p.RMSE < ref*(1-ooc.DefaultMinImprovement) {
			ref, since = *p.RMSE, 0
		} else {
			since++
		}
		if since == cfg.Patience && p.Iteration != tr.Iterations {
			t.Errorf("patience ran out at iteration %d, the fit stopped after %d", p.Iteration, tr.Iterations)
		}
	}
	refCfg := cfg
	refCfg.Patience, refCfg.Iterations = 0, tr.BestIteration
	want, err := ooc.Fit(context.Background(), train, refCfg, run)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := synth(100, d, 42)
	pg, pw := make([]float64, 100), make([]float64, 100)
	got.PredictTo(pg, tx, 100)
	want.PredictTo(pw, tx, 100)
	if !slices.Equal(pg, pw) {
		t.Errorf("the patience model differs from Fit's at iteration %d by %.3g relative", tr.BestIteration, maxRelDiff(pg, pw))
	}
	// Phases: sample, K_MM, the three factorisation steps, rhs, then an
	// iteration per iteration, whose pass also validates the iteration
	// before it: the held-out rows have no pass of their own (patience
	// stops the fit before the last iterate would need one).
	var names []string
	for _, p := range tr.Phases {
		if p.Wall < 0 || p.CPU < 0 {
			t.Errorf("phase %s: negative time %+v", p.Name, p)
		}
		if len(names) == 0 || names[len(names)-1] != p.Name {
			names = append(names, p.Name)
		}
	}
	wantPhases := []string{"sample", "kmm", "chol_t", "t_tt", "chol_a", "rhs", "iteration"}
	if !slices.Equal(names, wantPhases) {
		t.Errorf("phases %v, want %v", names, wantPhases)
	}
	iters := 0
	for _, p := range tr.Phases {
		if p.Name == "iteration" {
			iters++
		}
	}
	if iters != tr.Iterations {
		t.Errorf("%d iteration phases for %d iterations", iters, tr.Iterations)
	}
}

// TestFitTuned checks the whole job against its parts: the search runs
// on the subsample with the validation rows held out of it, the final fit
// is Fit on the training rows with the best candidate's σ and λ (carried
// by the rule) and patience, validated on all the held-out rows.
func TestFitTuned(t *testing.T) {
	const n, d = 4000, 3
	x, y := synth(n, d, 51)
	src := stream.NewMemSource(x, d, y, 1, 300)
	fit := ooc.Config{Centers: 400, Iterations: 15, Seed: 7}
	tc := ooc.FitTunedConfig{Fit: fit, Rows: 1500, Centers: 100, Handoff: ooc.HandoffSqrt,
		Search: ooc.TuneConfig{Sigmas: []float64{0.5, 1, 2}, Lambdas: []float64{1e-7, 1e-5, 1e-3}, ValFraction: 0.2}}
	got, err := ooc.FitTuned(context.Background(), src, tc, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tr := got.Training()
	res, ho := tr.Search, tr.Handoff
	if res == nil || ho == nil {
		t.Fatal("the model carries no search or hand-off")
	}
	if len(res.Candidates) != 9 || res.M != 100 || res.N != 1500 {
		t.Fatalf("search: %d candidates, M = %d, n = %d; want 9, 100, 1500", len(res.Candidates), res.M, res.N)
	}
	for i, c := range res.Candidates {
		if c.BestMetric < res.Candidates[res.Lowest].BestMetric {
			t.Errorf("candidate %d (%.4g) beats the lowest %d (%.4g)", i, c.BestMetric, res.Lowest, res.Candidates[res.Lowest].BestMetric)
		}
	}
	var names []string
	iters := 0
	for _, p := range res.Phases {
		if len(names) == 0 || names[len(names)-1] != p.Name {
			names = append(names, p.Name)
		}
		if p.Name == "iteration" {
			iters++
		}
	}
	maxIter := 0
	for _, c := range res.Candidates {
		maxIter = max(maxIter, c.Iterations)
	}
	if len(names) < 3 || !slices.Equal(names[:3], []string{"sample", "precond_rhs", "iteration"}) || iters != maxIter || res.PeakRSS <= 0 {
		t.Errorf("search phases %v (%d iterations, the longest candidate ran %d), peak RSS %d", names, iters, maxIter, res.PeakRSS)
	}
	best := res.Candidates[res.Best]
	train, held := stream.Holdout(src, 0.2, fit.Seed)
	ntrain := int64(rowCount(train))
	// 1500·0.2/0.8 = 375 validation rows, raised to 1000, cut to the
	// held-out rows.
	if ho.SearchRows != 1500 || ho.SearchValRows != min(1000, int64(rowCount(held))) {
		t.Errorf("hand-off rows %d and %d validation", ho.SearchRows, ho.SearchValRows)
	}
	wantLambda := best.Lambda * math.Sqrt(1500/float64(ntrain))
	if math.Abs(ho.Lambda-wantLambda) > 1e-15*wantLambda || got.Config().Lambda != ho.Lambda {
		t.Errorf("λ %g (model %g), want %g × √(1500/%d) = %g", ho.Lambda, got.Config().Lambda, best.Lambda, ntrain, wantLambda)
	}
	if got.Kernel().Sigma != best.Sigma || ho.Sigma != best.Sigma {
		t.Errorf("σ %g, the search chose %g", got.Kernel().Sigma, best.Sigma)
	}
	// Patience, within the search's default budget of passes: 2 + 2·15
	// CG iterations + 1 (TestFitTunedFinalBudget).
	ref := fit
	ref.Kernel, ref.Lambda, ref.Patience, ref.Iterations = best.Kernel, ho.Lambda, ooc.DefaultPatience, 30
	if ho.MaxPasses != 33 || got.Config().Iterations != 30 {
		t.Errorf("final fit: budget %d passes, cap %d iterations; want 33 and 30", ho.MaxPasses, got.Config().Iterations)
	}
	want, err := ooc.Fit(context.Background(), train, ref, ooc.RunOptions{Workers: 2, Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	if got.M() != 400 || tr.N != ntrain {
		t.Errorf("final fit: M = %d, n = %d; want 400, %d", got.M(), tr.N, ntrain)
	}
	tx, _ := synth(100, d, 52)
	pg, pw := make([]float64, 100), make([]float64, 100)
	got.PredictTo(pg, tx, 100)
	want.PredictTo(pw, tx, 100)
	if !slices.Equal(pg, pw) {
		t.Errorf("the final model differs from Fit's with the hand-off by %.3g relative", maxRelDiff(pg, pw))
	}
	// The search's table survives the model file.
	b, err := got.SummaryJSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Training struct {
			Search  *ooc.TuneResult `json:"search"`
			Handoff *ooc.Handoff    `json:"handoff"`
		} `json:"training"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Training.Search == nil || len(doc.Training.Search.Candidates) != 9 || doc.Training.Handoff.Lambda != ho.Lambda {
		t.Errorf("summary JSON lacks the search or the hand-off: %s", b)
	}
}

// TestFitTunedErrors: settings that cannot work fail before any pass,
// naming the field.
func TestFitTunedErrors(t *testing.T) {
	x, y := synth(500, 2, 61)
	src := stream.NewMemSource(x, 2, y, 1, 100)
	for _, tc := range []struct {
		name  string
		cfg   ooc.FitTunedConfig
		field string
	}{
		{"rule", ooc.FitTunedConfig{Handoff: "cubic"}, "FitTunedConfig.Handoff"},
		{"rows", ooc.FitTunedConfig{Rows: -1}, "FitTunedConfig.Rows"},
		{"centres over rows", ooc.FitTunedConfig{Rows: 50, Centers: 60, Fit: ooc.Config{Centers: 100}}, "FitTunedConfig.Centers"},
		{"lambda", ooc.FitTunedConfig{Search: ooc.TuneConfig{Lambdas: []float64{-1}}}, "TuneConfig.Lambdas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ooc.FitTuned(context.Background(), src, tc.cfg, ooc.RunOptions{})
			var ce *ooc.ConfigError
			if !asConfigError(err, &ce) || ce.Field != tc.field {
				t.Fatalf("error %v, want a ConfigError on %s", err, tc.field)
			}
		})
	}
}

func kernelSigma(s float64) kernel.Kernel { return kernel.Kernel{Kind: kernel.Gaussian, Sigma: s} }

func asConfigError(err error, ce **ooc.ConfigError) bool { return errors.As(err, ce) }

// A patience fit killed after each of its iterations in turn and resumed
// from the checkpoint stops where the uninterrupted one stops, with the
// same model bit for bit: the checkpoint carries the best iteration, its
// β and the validations since; resuming a fit that had already stopped
// runs no iteration.
func TestResumePatience(t *testing.T) {
	const d = 3
	x, y := synth(1500, d, 41)
	src := stream.NewMemSource(x, d, y, 1, 200)
	train, held := stream.Holdout(src, 0.3, 3)
	cfg := ooc.Config{Centers: 300, Iterations: 60, Lambda: 1e-12, Seed: 3, Kernel: kernelSigma(0.4), Patience: 2}
	full, err := ooc.Fit(context.Background(), train, cfg, ooc.RunOptions{Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	ft := full.Training()
	path := filepath.Join(t.TempDir(), "fit.ckpt")
	killed := errors.New("killed")
	if ft.Status != ooc.StatusPatience || ft.Iterations < 4 {
		t.Fatalf("the uninterrupted fit: %s after %d iterations", ft.Status, ft.Iterations)
	}
	for _, at := range []int{1, ft.BestIteration - 1, ft.BestIteration, ft.Iterations - 1, ft.Iterations} {
		if at < 1 {
			continue
		}
		run := ooc.RunOptions{Validation: held, Checkpoint: func(cp *ooc.Checkpoint) error {
			if err := cp.WriteFile(path); err != nil {
				return err
			}
			if cp.Iteration == at {
				return killed
			}
			return nil
		}}
		if _, err := ooc.Fit(context.Background(), train, cfg, run); !errors.Is(err, killed) {
			t.Fatalf("killed at %d: err = %v", at, err)
		}
		cp, err := ooc.ReadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		resumed, err := ooc.Fit(context.Background(), train, cfg, ooc.RunOptions{Validation: held, Resume: cp})
		if err != nil {
			t.Fatal(err)
		}
		rt := resumed.Training()
		if rt.Iterations != ft.Iterations || rt.BestIteration != ft.BestIteration || rt.Status != ooc.StatusPatience {
			t.Errorf("killed at %d: resumed fit ran %d iterations, best %d, %s; uninterrupted %d, best %d", at,
				rt.Iterations, rt.BestIteration, rt.Status, ft.Iterations, ft.BestIteration)
		}
		if !slices.Equal(resumed.Alpha(), full.Alpha()) {
			t.Errorf("killed at %d: α differs from the uninterrupted fit's by %.3g relative", at, maxRelDiff(resumed.Alpha(), full.Alpha()))
		}
	}
}

// TestTuneExtend: a pick on the edge of the grid is said, and with
// Extend the grid grows beyond that edge (two values, spaced as the
// outermost two) and the search runs again.
func TestTuneExtend(t *testing.T) {
	const d = 3
	x, y := synth(2000, d, 71)
	src := stream.NewMemSource(x, d, y, 1, 250)
	// λ far too large: the smallest of the grid wins.
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 100, Iterations: 8, Seed: 1}, Sigmas: []float64{1, 2}, Lambdas: []float64{1, 10},
		SigmaHalving: -1}
	res, err := ooc.Tune(context.Background(), src, tc, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Edges, "smallest λ") || res.Extended != 0 || res.Candidates[res.Best].Lambda != 1 {
		t.Fatalf("edges %v after %d extensions, pick λ = %g", res.Edges, res.Extended, res.Candidates[res.Best].Lambda)
	}
	tc.Extend = 2
	res, err = ooc.Tune(context.Background(), src, tc, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lams []float64
	for _, c := range res.Candidates {
		if !slices.Contains(lams, c.Lambda) {
			lams = append(lams, c.Lambda)
		}
	}
	// 1, 10 → 0.01, 0.1, 1, 10 → 0.0001, 0.001, 0.01, 0.1, 1, 10.
	if res.Extended != 2 || !slices.Equal(lams, []float64{0.0001, 0.001, 0.01, 0.1, 1, 10}) || res.Candidates[res.Best].Lambda > 0.001 {
		t.Errorf("after %d extensions: λ grid %v, pick λ = %g, edges %v", res.Extended, lams, res.Candidates[res.Best].Lambda, res.Edges)
	}
}

// The fit after the search reuses the memory of the search's candidates
// (an M × M factor each) rather than taking new memory from the system:
// precond.Build collects them first. Without that, the Go API (no memory
// limit, unlike the CLI) held both at once: 1.2 → 2.0 GiB for kin40k at
// M = 10⁴, with 1.1 s of fresh page faults in K_MM.
// It runs in a process of its own: the heap other tests leave behind
// would hold room for the fit's factor either way.
func TestFitTunedReusesSearchMemory(t *testing.T) {
	if !heapChild(t) {
		return
	}
	const n, d, m = 9000, 3, 1800
	x, y := synth(n, d, 53)
	src := stream.NewMemSource(x, d, y, 1, 1000)
	var st runtime.MemStats
	var search uint64 // the heap's size during the search, at most
	tc := ooc.FitTunedConfig{Fit: ooc.Config{Centers: m, Iterations: 3, Seed: 7}, Rows: 6000, Centers: 1000,
		Search: ooc.TuneConfig{Sigmas: []float64{0.5, 1, 2}, Lambdas: []float64{1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2},
			ValFraction: 0.1}}
	run := ooc.RunOptions{Workers: 2, SearchProgress: func(ooc.TuneProgress) {
		runtime.ReadMemStats(&st)
		search = max(search, st.HeapSys)
	}}
	if _, err := ooc.FitTuned(context.Background(), src, tc, run); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&st)
	final := uint64(m * m * 8) // the fit's factor
	if st.HeapSys >= search+final/2 {
		t.Errorf("the heap grew from %.0f MiB in the search to %.0f MiB: the fit's %.0f MiB factor did not reuse the search's memory",
			float64(search)/(1<<20), float64(st.HeapSys)/(1<<20), float64(final)/(1<<20))
	}
}

// A second fit in the same process reuses the first one's memory for its
// preconditioner (precond.Build and BuildNystrom collect garbage before
// allocating it), so that a service fitting again and again holds one
// factor, not two, and does not fault fresh pages in each time.
func TestFitAgainReusesMemory(t *testing.T) {
	for _, pc := range []struct {
		name    string
		meth    precond.Method
		m, rank int
		bytes   int64 // what the preconditioner allocates
	}{
		{"cholesky", precond.MethodCholesky, 1800, 0, 1800 * 1800 * 8},
		{"nystrom", precond.MethodNystrom, 4000, 1500, precond.NystromBytes(4000, 1500)},
	} {
		t.Run(pc.name, func(t *testing.T) {
			if !heapChild(t) {
				return
			}
			const n, d = 8000, 3
			x, y := synth(n, d, 59)
			src := stream.NewMemSource(x, d, y, 1, 1000)
			cfg := ooc.Config{Centers: pc.m, Iterations: 2, Seed: 7, Lambda: 1e-5, Preconditioner: pc.meth, PrecondRank: pc.rank}
			var st runtime.MemStats
			var first uint64
			for i := range 4 {
				if _, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2}); err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&st)
				if i == 0 {
					first = st.HeapSys
					continue
				}
				if st.HeapSys >= first+uint64(pc.bytes)/2 {
					t.Fatalf("after fit %d the heap is %.0f MiB, after the first %.0f MiB: the %.0f MiB preconditioner did not reuse the earlier fit's memory",
						i+1, float64(st.HeapSys)/(1<<20), float64(first)/(1<<20), float64(pc.bytes)/(1<<20))
				}
			}
		})
	}
}

// heapChild runs the calling test again in a child process of its own
// and reports whether this is that child: heap figures need a fresh
// heap, not the one other tests leave behind. Skipped under -short (the
// race detector skews them).
func heapChild(t *testing.T) bool {
	t.Helper()
	if testing.Short() {
		t.Skip("heap figures are skewed by the race detector")
	}
	if os.Getenv("FALKON_HEAP_CHILD") != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FALKON_HEAP_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return false
}

// TestFitTunedPatienceNever: the final fit's Patience means what it means
// in Fit. 0 is DefaultPatience (these data stop it early, within a budget
// with room past Iterations); a negative value never stops: the final fit
// runs its Iterations, and the budget has no room past them.
func TestFitTunedPatienceNever(t *testing.T) {
	const n, d = 1500, 3
	x, y := synth(n, d, 41)
	src := stream.NewMemSource(x, d, y, 1, 200)
	run := func(patience int) *ooc.Model {
		tc := ooc.FitTunedConfig{Fit: ooc.Config{Centers: 300, Iterations: 15, Seed: 3, Patience: patience}, Rows: 1000, Centers: 100,
			Search: ooc.TuneConfig{Sigmas: []float64{0.4}, Lambdas: []float64{1e-12}, ValFraction: 0.3}}
		m, err := ooc.FitTuned(context.Background(), src, tc, ooc.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	def := run(0).Training()
	if def.Status != ooc.StatusPatience || def.Handoff.MaxPasses != 2+2*15+1 {
		t.Fatalf("Patience 0: %s after %d iterations, budget %d passes; want it stopped by DefaultPatience within 33: the data do not test it",
			def.Status, def.Iterations, def.Handoff.MaxPasses)
	}
	m := run(-1)
	tr := m.Training()
	if tr.Status != ooc.StatusIterationLimit || tr.Iterations != 15 || tr.Handoff.MaxPasses != 2+15+1 || m.Config().Iterations != 15 {
		t.Errorf("Patience −1: %s after %d iterations (cap %d), budget %d passes; want all 15 iterations within 18 passes",
			tr.Status, tr.Iterations, m.Config().Iterations, tr.Handoff.MaxPasses)
	}
	if m.Config().Patience != -1 {
		t.Errorf("the model's Config says Patience %d, want −1", m.Config().Patience)
	}
}
