package ooc_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// maxRelDiff returns max|a−b| / max|b|.
func maxRelDiff(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num = max(num, math.Abs(a[i]-b[i]))
		den = max(den, math.Abs(b[i]))
	}
	return num / den
}

// TestTuneMatchesFit checks the search against separate fits: for every
// (σ, λ) of the grid, the candidate's model is the model ooc.Fit returns
// on the training rows at that σ and λ with Iterations = the candidate's
// best iteration — the same centres, the same iterations, predictions
// within 1e-9 relative (the passes sum the chunks in another grouping, so
// the two agree to rounding, not bit for bit).
func TestTuneMatchesFit(t *testing.T) {
	const n, d, m = 3000, 3, 120
	x, y := synth(n, d, 11)
	src := stream.NewMemSource(x, d, y, 1, 250)
	base := ooc.Config{Centers: m, Iterations: 10, Seed: 5}
	run := ooc.RunOptions{Workers: 2}
	for _, tc := range []struct {
		name    string
		val     bool // separate validation source instead of a held-out fraction
		patient int
	}{
		{"held-out", false, -1},
		{"held-out, patience 1", false, 1},
		{"validation source", true, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ooc.TuneConfig{Base: base, Sigmas: []float64{1, 2.5}, Lambdas: []float64{1e-3, 1e-5, 1e-8},
				ValFraction: 0.2, Patience: tc.patient, SigmaHalving: -1}
			var train stream.Source
			run := run
			if tc.val {
				vx, vy := synth(500, d, 12)
				run.Validation = stream.NewMemSource(vx, d, vy, 1, 100)
				cfg.ValFraction = 0
				train = src
			} else {
				train, _ = stream.Holdout(src, 0.2, base.Seed)
			}
			res, err := ooc.Tune(context.Background(), src, cfg, run)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) != 6 {
				t.Fatalf("%d candidates, want 6", len(res.Candidates))
			}
			tx, _ := synth(200, d, 13)
			for i, c := range res.Candidates {
				if c.Stop == ooc.StopFailed {
					t.Fatalf("candidate %d failed: %s", i, c.Err)
				}
				want := fitCandidate(t, train, base, &c, c.BestIteration)
				got := res.Candidates[i].Model()
				if !slices.Equal(got.Centers(), want.Centers()) {
					t.Fatalf("candidate %d (σ %g, λ %g): centres differ from Fit's", i, c.Sigma, c.Lambda)
				}
				if got.Training().Iterations != want.Training().Iterations {
					t.Fatalf("candidate %d: %d iterations, Fit %d", i, got.Training().Iterations, want.Training().Iterations)
				}
				pg, pw := make([]float64, 200), make([]float64, 200)
				got.PredictTo(pg, tx, 200)
				want.PredictTo(pw, tx, 200)
				if e := maxRelDiff(pg, pw); e > 1e-9 {
					t.Errorf("candidate %d (σ %g, λ %g, %d iterations): predictions differ from Fit's by %.3g relative",
						i, c.Sigma, c.Lambda, c.BestIteration, e)
				}
				// The validation curve is Fit's validation on the same rows.
				if tc.patient < 0 && len(c.Validation) != 10 {
					t.Errorf("candidate %d: %d validation points, want 10", i, len(c.Validation))
				}
			}
		})
	}
}

// TestTuneValidationCurve checks the metrics scored inside the passes
// against Model.Evaluate of Fit's model on the held-out rows.
func TestTuneValidationCurve(t *testing.T) {
	const n, d = 2000, 2
	x, y := synth(n, d, 21)
	src := stream.NewMemSource(x, d, y, 1, 300)
	base := ooc.Config{Centers: 80, Iterations: 6, Seed: 9}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: []float64{1.5},
		Lambdas: []float64{1e-4, 1e-6}, ValFraction: 0.25, Patience: -1}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	train, held := stream.Holdout(src, 0.25, base.Seed)
	if res.ValRows != int64(rowCount(held)) || res.N != int64(rowCount(train)) {
		t.Fatalf("rows: %d training, %d validation; want %d and %d", res.N, res.ValRows, rowCount(train), rowCount(held))
	}
	for _, c := range res.Candidates {
		for _, p := range c.Validation {
			mdl := fitCandidate(t, train, base, &c, p.Iteration)
			ev, err := mdl.Evaluate(context.Background(), held, ooc.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(*ev.RMSE-*p.RMSE) > 1e-9**ev.RMSE || ev.Rows != p.Rows {
				t.Errorf("λ %g, iteration %d: RMSE %v over %d rows in the pass, %v over %d by Evaluate",
					c.Lambda, p.Iteration, *p.RMSE, p.Rows, *ev.RMSE, ev.Rows)
			}
		}
	}
}

// fitCandidate fits train with base at the candidate's kernel and λ.
func fitCandidate(t *testing.T, train stream.Source, base ooc.Config, c *ooc.TuneCandidate, iters int) *ooc.Model {
	t.Helper()
	base.Kernel, base.Lambda, base.Iterations = c.Kernel, c.Lambda, iters
	m, err := ooc.Fit(context.Background(), train, base, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rowCount(s stream.Source) int {
	n := 0
	for i := range s.NumChunks() {
		n += s.ChunkRows(i)
	}
	return n
}

// TestTuneStoppedNeverBeatsBetter checks the choice under early stopping:
// candidates leave the pass (by patience and by halving), and the chosen
// one has the lowest best validation metric of all — a candidate that
// stopped early is never chosen over one that beat it on validation, and
// the one that did beat everyone is chosen even if it stopped early. Each
// candidate's validation curve, replayed through the stopping rules
// (replayStops), says when and why it stopped.
func TestTuneStoppedNeverBeatsBetter(t *testing.T) {
	const n, d = 3000, 3
	x, y := synth(n, d, 31)
	src := stream.NewMemSource(x, d, y, 1, 200)
	for _, tc := range []struct {
		name              string
		patience, halving int
		minImp            float64
	}{
		{"patience", 1, 0, 1e-3},
		{"halving", -1, 2, 1e-3},
		{"both", 2, 3, 1e-3},
		{"min improvement", 2, 0, 0.05},
		{"never", -1, 0, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{
				Base:   ooc.Config{Centers: 100, Iterations: 12, Seed: 1},
				Sigmas: []float64{0.3, 1, 3, 10}, Lambdas: []float64{1e-1, 1e-4, 1e-7, 1e-10},
				Patience: tc.patience, Halving: tc.halving, MinImprovement: tc.minImp, SigmaHalving: -1,
			}, ooc.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			early := 0
			for _, c := range res.Candidates {
				if c.Stop == ooc.StopPatience || c.Stop == ooc.StopHalving {
					early++
					// The budget: 12 iterations, twice as many with patience
					// for a candidate still improving (DefaultMaxPasses).
					if c.Iterations >= 12*(1+min(max(tc.patience, 0), 1)) {
						t.Errorf("σ %g λ %g stopped by %s after all %d iterations", c.Sigma, c.Lambda, c.Stop, c.Iterations)
					}
				}
				if c.BestIteration < 1 || c.BestIteration > c.Iterations {
					t.Errorf("σ %g λ %g: best iteration %d of %d", c.Sigma, c.Lambda, c.BestIteration, c.Iterations)
				}
				// BestMetric is the minimum of its curve, at BestIteration
				// (the first iteration that reached it).
				mn, at := math.Inf(1), 0
				for _, p := range c.Validation {
					if *p.RMSE < mn {
						mn, at = *p.RMSE, p.Iteration
					}
				}
				if c.BestMetric != mn || c.BestIteration != at {
					t.Errorf("σ %g λ %g: best metric %v at %d, curve minimum %v at %d", c.Sigma, c.Lambda, c.BestMetric, c.BestIteration, mn, at)
				}
			}
			replayStops(t, res, tc.patience, tc.halving, tc.minImp)
			if tc.name == "never" {
				if early != 0 {
					t.Fatalf("%d candidates stopped early without patience or halving", early)
				}
				return
			}
			if early == 0 {
				t.Fatal("no candidate stopped early: the test proves nothing")
			}
			best := res.Candidates[res.Lowest]
			for i, c := range res.Candidates {
				if c.BestMetric < best.BestMetric {
					t.Errorf("chose σ %g λ %g (%s, best %v) over candidate %d σ %g λ %g (%s, best %v)",
						best.Sigma, best.Lambda, best.Stop, best.BestMetric, i, c.Sigma, c.Lambda, c.Stop, c.BestMetric)
				}
			}
			if res.Model() != res.Candidates[res.Best].Model() || res.Model() == nil {
				t.Fatal("Model is not the best candidate's")
			}
		})
	}
}

// replayStops checks each candidate's Stop and Iterations against its
// validation curve replayed through the rules: patience runs out after
// patience validations in a row none of which is below the last
// reference·(1 − minImp) (the reference moving only on such an
// improvement); at each halving step h·2^j the worse half of the live
// candidates by best metric so far stop, the better ⌈half⌉ stay.
func replayStops(t *testing.T, res *ooc.TuneResult, patience, halving int, minImp float64) {
	t.Helper()
	cands := res.Candidates
	live := make([]bool, len(cands))
	for i := range live {
		live[i] = true
	}
	ref, since, best := make([]float64, len(cands)), make([]int, len(cands)), make([]float64, len(cands))
	for i := range cands {
		ref[i], best[i] = math.Inf(1), math.Inf(1)
	}
	want := make([]string, len(cands))
	wantIters := make([]int, len(cands))
	last := 0
	for _, c := range cands {
		last = max(last, c.Iterations)
	}
	for it := 1; it <= last; it++ {
		for i, c := range cands {
			if !live[i] {
				continue
			}
			if it > c.Iterations { // ran out of iterations or budget
				live[i], want[i], wantIters[i] = false, c.Stop, c.Iterations
				continue
			}
			v := *c.Validation[it-1].RMSE
			best[i] = min(best[i], v)
			if v < ref[i]*(1-minImp) {
				ref[i], since[i] = v, 0
			} else if since[i]++; patience > 0 && since[i] >= patience && it < last {
				live[i], want[i], wantIters[i] = false, ooc.StopPatience, it
			}
		}
		if q := it / max(halving, 1); halving > 0 && it%halving == 0 && q&(q-1) == 0 {
			var idx []int
			for i := range cands {
				if live[i] {
					idx = append(idx, i)
				}
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(best[a], best[b]) })
			for _, i := range idx[(len(idx)+1)/2:] {
				live[i], want[i], wantIters[i] = false, ooc.StopHalving, it
			}
		}
	}
	for i, c := range cands {
		if live[i] {
			want[i], wantIters[i] = c.Stop, c.Iterations
		}
		if c.Stop != want[i] || c.Iterations != wantIters[i] {
			t.Errorf("σ %g λ %g: stopped by %s after %d iterations; the rules stop it by %s after %d",
				c.Sigma, c.Lambda, c.Stop, c.Iterations, want[i], wantIters[i])
		}
	}
}

func TestTuneErrors(t *testing.T) {
	x, y := synth(500, 2, 1)
	src := stream.NewMemSource(x, 2, y, 1, 100)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  ooc.TuneConfig
		want string
		is   error
		opts ooc.RunOptions
	}{
		{"lambda", ooc.TuneConfig{Lambdas: []float64{1e-3, 0}}, "invalid configuration: lambda must be > 0 and finite, got 0", ooc.ErrConfig, ooc.RunOptions{}},
		{"sigma", ooc.TuneConfig{Sigmas: []float64{-1}}, "invalid configuration: sigma must be > 0 and finite, got -1", ooc.ErrConfig, ooc.RunOptions{}},
		{"fraction", ooc.TuneConfig{ValFraction: 1}, "invalid configuration: validation fraction must be in [0, 1), got 1", ooc.ErrConfig, ooc.RunOptions{}},
		{"halving", ooc.TuneConfig{Halving: -1}, "invalid configuration: halving must be ≥ 0, got -1", ooc.ErrConfig, ooc.RunOptions{}},
		{"linear sigmas", ooc.TuneConfig{Base: ooc.Config{Kernel: kernel.Kernel{Kind: kernel.Linear}}, Sigmas: []float64{1}},
			"invalid configuration: the linear kernel has no length scale to search: give no sigmas", ooc.ErrConfig, ooc.RunOptions{}},
		{"memory", ooc.TuneConfig{Base: ooc.Config{Centers: 400, PrecondPrecision: precond.Float64}, Sigmas: []float64{1, 2}, Lambdas: []float64{1, 2, 3}},
			"not enough memory: the search over 2 σ × 3 λ with M = 400 needs about", ooc.ErrMemory, ooc.RunOptions{MaxMemory: 45 << 20}},
		{"centres", ooc.TuneConfig{Base: ooc.Config{Centers: 10000}},
			"invalid configuration: centers (M = 10000) must not exceed the number of training rows", ooc.ErrConfig, ooc.RunOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ooc.Tune(ctx, src, tc.cfg, tc.opts)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tc.is) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTuneARD checks the ARD step: it learns one length scale per feature
// on the training rows, every candidate uses them, and the best model is
// Fit's with that kernel.
func TestTuneARD(t *testing.T) {
	const n, d = 3000, 3
	x, y := synth(n, d, 41)
	src := stream.NewMemSource(x, d, y, 1, 250)
	base := ooc.Config{Centers: 100, Iterations: 8, Seed: 2}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Lambdas: []float64{1e-6, 1e-4},
		ARD: &ooc.ARDConfig{Rows: 1000, Centers: 100, Steps: 30}}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ARD == nil || len(res.ARD.Sigmas) != d || !(res.ARD.Loss < res.ARD.Start) {
		t.Fatalf("ARD result %+v", res.ARD)
	}
	best := res.Candidates[res.Best]
	if !slices.Equal(best.Kernel.Sigmas, res.ARD.Sigmas) {
		t.Fatalf("best kernel %v, learned σ %v", best.Kernel, res.ARD.Sigmas)
	}
	train, _ := stream.Holdout(src, ooc.DefaultValFraction, base.Seed)
	want := fitCandidate(t, train, base, &best, best.BestIteration)
	tx, _ := synth(100, d, 42)
	pg, pw := make([]float64, 100), make([]float64, 100)
	res.Model().PredictTo(pg, tx, 100)
	want.PredictTo(pw, tx, 100)
	if e := maxRelDiff(pg, pw); e > 1e-9 {
		t.Errorf("ARD model differs from Fit's with the learned σ by %.3g", e)
	}
	// With a grid, the learned scales compete with it: one more group of
	// candidates, the pick the best of all on the validation rows.
	grid := []float64{0.5, 4}
	res2, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: grid, Lambdas: []float64{1e-6, 1e-4},
		SigmaHalving: -1, ARD: &ooc.ARDConfig{Rows: 1000, Centers: 100, Steps: 30}}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Candidates) != 6 || !slices.Equal(res2.Candidates[0].Kernel.Sigmas, res2.ARD.Sigmas) ||
		res2.Candidates[2].Sigma != 0.5 || res2.Candidates[5].Sigma != 4 {
		t.Fatalf("candidates %+v", res2.Candidates)
	}
	for i, c := range res2.Candidates {
		if c.BestMetric < res2.Candidates[res2.Lowest].BestMetric {
			t.Errorf("candidate %d (%v) beats the lowest %d", i, c.BestMetric, res2.Lowest)
		}
	}
	_, err = ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigmas: []float64{1, 1, 1}}},
		ARD: &ooc.ARDConfig{}}, ooc.RunOptions{})
	if want := "invalid configuration: ARD learns the per-feature length scales: give no Base.Kernel.Sigmas"; err == nil || err.Error() != want {
		t.Errorf("ARD with sigmas: %v, want %q", err, want)
	}
	_, err = ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Kernel: kernel.Kernel{Kind: kernel.Laplacian}}, ARD: &ooc.ARDConfig{}}, ooc.RunOptions{})
	if want := "invalid configuration: ARD learns the length scales of the Gaussian kernel, not of the laplacian kernel"; err == nil || err.Error() != want {
		t.Errorf("ARD with the Laplacian kernel: %v, want %q", err, want)
	}
}

// TestTuneSigmaHalving checks successive halving over whole σ: at
// iterations 2 and 4 the σ whose best candidate so far is in the worse
// half stop, all their λ together, and the choice is still the candidate
// with the lowest best validation metric.
func TestTuneSigmaHalving(t *testing.T) {
	const n, d = 3000, 3
	x, y := synth(n, d, 51)
	src := stream.NewMemSource(x, d, y, 1, 200)
	sigmas := []float64{0.05, 0.7, 2, 30}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{
		Base:   ooc.Config{Centers: 100, Iterations: 8, Seed: 3},
		Sigmas: sigmas, Lambdas: []float64{1e-3, 1e-6}, Patience: -1, SigmaHalving: 2,
	}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The best validation metric of σ's candidates up to iteration it.
	bestUpTo := func(sigma float64, it int) float64 {
		b := math.Inf(1)
		for _, c := range res.Candidates {
			if c.Sigma != sigma {
				continue
			}
			for _, p := range c.Validation {
				if p.Iteration <= it {
					b = min(b, *p.RMSE)
				}
			}
		}
		return b
	}
	stoppedAt := map[float64]int{}
	for _, c := range res.Candidates {
		it := c.Iterations
		if c.Stop == ooc.StopSigmaHalving {
			if prev, ok := stoppedAt[c.Sigma]; ok && prev != it {
				t.Fatalf("σ %g: its λ stopped at iterations %d and %d, not together", c.Sigma, prev, it)
			}
			stoppedAt[c.Sigma] = it
		} else if c.Stop != ooc.StopIterations {
			t.Fatalf("σ %g λ %g stopped by %s", c.Sigma, c.Lambda, c.Stop)
		}
	}
	// 4 σ: 2 stop after iteration 2, 1 after iteration 4, 1 runs all 8.
	var at2, at4 []float64
	for s, it := range stoppedAt {
		switch it {
		case 2:
			at2 = append(at2, s)
		case 4:
			at4 = append(at4, s)
		default:
			t.Fatalf("σ %g stopped after iteration %d, not at a halving step", s, it)
		}
	}
	if len(at2) != 2 || len(at4) != 1 {
		t.Fatalf("stopped after iteration 2: σ %v, after 4: σ %v; want 2 and 1", at2, at4)
	}
	for _, s := range sigmas {
		if _, ok := stoppedAt[s]; ok {
			continue
		}
		// The survivor beat every σ stopped at each step, at that step.
		for _, q := range at2 {
			if bestUpTo(s, 2) > bestUpTo(q, 2) {
				t.Errorf("σ %g (best %v at iteration 2) kept over σ %g (best %v)", s, bestUpTo(s, 2), q, bestUpTo(q, 2))
			}
		}
		if bestUpTo(s, 4) > bestUpTo(at4[0], 4) {
			t.Errorf("σ %g kept over σ %g at iteration 4", s, at4[0])
		}
	}
	if _, ok := stoppedAt[0.05]; !ok {
		t.Error("σ = 0.05, far too narrow, was not stopped")
	}
	best := res.Candidates[res.Best]
	for _, c := range res.Candidates {
		if c.BestMetric < best.BestMetric {
			t.Errorf("chose σ %g λ %g (best %v) over σ %g λ %g (best %v)", best.Sigma, best.Lambda, best.BestMetric,
				c.Sigma, c.Lambda, c.BestMetric)
		}
	}
}

// TestTunePrecondFloat32 checks that the search honours
// Config.PrecondPrecision: every candidate's model is Fit's with the
// same float32 preconditioner (same operations: predictions within
// 1e-9), and the memory estimate counts one 4M² buffer per candidate.
func TestTunePrecondFloat32(t *testing.T) {
	const n, d, m = 2000, 3, 90
	x, y := synth(n, d, 61)
	src := stream.NewMemSource(x, d, y, 1, 250)
	base := ooc.Config{Centers: m, Iterations: 6, Seed: 4, PrecondPrecision: precond.Float32}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: []float64{1.5},
		Lambdas: []float64{1e-3, 1e-6}, Patience: -1}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * precond.Bytes(m, precond.Float32); res.Memory.Precond != want {
		t.Errorf("preconditioner memory %d, want %d (two float32 M × M buffers)", res.Memory.Precond, want)
	}
	train, _ := stream.Holdout(src, ooc.DefaultValFraction, base.Seed)
	tx, _ := synth(100, d, 62)
	for _, c := range res.Candidates {
		want := fitCandidate(t, train, base, &c, c.BestIteration)
		if got := c.Model().Training().PrecondBytes; got != want.Training().PrecondBytes {
			t.Errorf("λ %g: preconditioner of %d bytes, Fit's %d", c.Lambda, got, want.Training().PrecondBytes)
		}
		pg, pw := make([]float64, 100), make([]float64, 100)
		c.Model().PredictTo(pg, tx, 100)
		want.PredictTo(pw, tx, 100)
		if e := maxRelDiff(pg, pw); e > 1e-9 {
			t.Errorf("λ %g: model differs from Fit's (float32 preconditioner) by %.3g", c.Lambda, e)
		}
	}
}

// TestTuneMemoryError checks the message of a search over the memory
// limit: it names the precision and the per-candidate buffers, and
// suggests float32 only when the preconditioners are not float32
// already; a precision left to choose ("") has tried float32 too.
func TestTuneMemoryError(t *testing.T) {
	x, y := synth(500, 2, 1)
	src := stream.NewMemSource(x, 2, y, 1, 100)
	for _, tc := range []struct {
		prec     precond.Precision
		contains string
		suffix   string
	}{
		{precond.Float64, "with float64 preconditioners (one M × M buffer for each of the 6 candidates: ",
			"use fewer centres, sigmas or lambdas, or float32 preconditioners"},
		{"", "with float32 preconditioners (one M × M buffer for each of the 6 candidates: ",
			"MiB: use fewer centres, sigmas or lambdas"},
		{precond.Float32, "with float32 preconditioners (one M × M buffer for each of the 6 candidates: ",
			"MiB: use fewer centres, sigmas or lambdas"},
	} {
		_, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Centers: 400, PrecondPrecision: tc.prec},
			Sigmas: []float64{1, 2}, Lambdas: []float64{1, 2, 3}}, ooc.RunOptions{MaxMemory: 10 << 20})
		if err == nil || !errors.Is(err, ooc.ErrMemory) || !strings.Contains(err.Error(), tc.contains) ||
			!strings.HasSuffix(err.Error(), tc.suffix) ||
			!strings.HasPrefix(err.Error(), "not enough memory: the search over 2 σ × 3 λ with M = 400 needs about ") {
			t.Errorf("precision %q: error %v", tc.prec, err)
		}
	}
}

// TestTuneFailedSigma checks that a σ whose T cannot be factorised fails
// its own candidates only: the others are fitted (the right-hand side's
// pass runs while the preconditioners are built) and the best comes from
// them.
func TestTuneFailedSigma(t *testing.T) {
	const n, d, m = 2000, 3, 100
	x, y := synth(n, d, 21)
	src := stream.NewMemSource(x, d, y, 1, 200)
	// σ = 1e6 makes K_MM all ones to rounding: with a jitter of 1e-300
	// its Cholesky fails. σ = 1 is an ordinary kernel.
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{
		Base:    ooc.Config{Centers: m, Iterations: 5, Seed: 3, Jitter: 1e-300},
		Sigmas:  []float64{1e6, 1},
		Lambdas: []float64{1e-3, 1e-6},
	}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		failed := c.Stop == ooc.StopFailed
		if failed != (c.Sigma == 1e6) {
			t.Fatalf("σ %g λ %g: stop %q (%s)", c.Sigma, c.Lambda, c.Stop, c.Err)
		}
		if failed && (!strings.Contains(c.Err, "not positive definite") || c.Model() != nil) {
			t.Fatalf("σ %g λ %g: error %q, model %v", c.Sigma, c.Lambda, c.Err, c.Model())
		}
		if !failed && (c.BestIteration == 0 || c.Model() == nil) {
			t.Fatalf("σ %g λ %g: best iteration %d, model %v", c.Sigma, c.Lambda, c.BestIteration, c.Model())
		}
	}
	if best := res.Candidates[res.Best]; best.Sigma != 1 || res.Model() == nil {
		t.Fatalf("best: σ %g, model %v", best.Sigma, res.Model())
	}
}

// TestTuneProgressPrecond checks that the factorisations, which run
// beside the right-hand side's pass, are reported: StagePrecond at 0
// before that pass and at 1 before the first iteration.
func TestTuneProgressPrecond(t *testing.T) {
	x, y := synth(1500, 3, 31)
	var stages []ooc.TuneProgress
	_, err := ooc.Tune(context.Background(), stream.NewMemSource(x, 3, y, 1, 150), ooc.TuneConfig{
		Base:    ooc.Config{Centers: 80, Iterations: 3, Seed: 2},
		Sigmas:  []float64{0.5, 2},
		Lambdas: []float64{1e-3, 1e-6},
	}, ooc.RunOptions{Workers: 2, SearchProgress: func(p ooc.TuneProgress) { stages = append(stages, p) }})
	if err != nil {
		t.Fatal(err)
	}
	start, done, rhs, iter := -1, -1, -1, -1
	for i, p := range stages {
		switch {
		case p.Stage == ooc.StagePrecond && p.Fraction == 0 && start < 0:
			start = i
		case p.Stage == ooc.StagePrecond && p.Fraction == 1:
			done = i
		case p.Stage == ooc.StageRHS && rhs < 0:
			rhs = i
		case p.Stage == ooc.StageIterate && iter < 0:
			iter = i
		}
	}
	if start < 0 || done < 0 || rhs < 0 || iter < 0 || !(start < rhs && rhs < done && done < iter) {
		t.Fatalf("precond start %d, right-hand side %d, precond done %d, first iteration %d: want them in that order", start, rhs, done, iter)
	}
}

// TestTuneARDBinary: ARD learns length scales for a binary task on the
// ±1 codes the fit regresses on: a feature the label does not depend on
// gets a longer length scale than the ones it does.
func TestTuneARDBinary(t *testing.T) {
	const n, d = 3000, 3
	rng := rand.New(rand.NewPCG(61, 1))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		a, b, c := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		x[i*d], x[i*d+1], x[i*d+2] = a, b, c
		if math.Sin(2*a)+0.5*b+0.3*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	src := stream.NewMemSource(x, d, y, 1, 250)
	base := ooc.Config{Centers: 150, Iterations: 8, Seed: 2}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Lambdas: []float64{1e-6, 1e-4},
		ARD: &ooc.ARDConfig{Rows: 1500, Centers: 150, Steps: 40}}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.ARD.Sigmas
	if !(res.ARD.Loss < res.ARD.Start) || !(s[2] > s[0] && s[2] > s[1]) {
		t.Errorf("ARD on a binary label: loss %.4g → %.4g, σ = %v (want the irrelevant third feature's longest)", res.ARD.Start, res.ARD.Loss, s)
	}
	if res.Metric != "error_rate" || res.Model().Task() != ooc.TaskBinary {
		t.Errorf("metric %s, task %s", res.Metric, res.Model().Task())
	}
}
