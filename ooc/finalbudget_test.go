package ooc_test

import (
	"context"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestFitTunedFinalBudget: FitTuned's final fit does not stop at
// Fit.Iterations while its validation improves: it continues by
// patience within the search's budget of passes (DefaultMaxPasses of
// Iterations and Patience, or Search.MaxPasses), and is the Fit with
// that many iterations as its cap. A budget below Iterations cuts it.
func TestFitTunedFinalBudget(t *testing.T) {
	const n, d = 3000, 3
	x, y := synth(n, d, 71)
	src := stream.NewMemSource(x, d, y, 1, 300)
	// A tiny λ at σ 0.5: the validation RMSE still falls after 3
	// iterations.
	search := ooc.TuneConfig{Sigmas: []float64{0.5}, Lambdas: []float64{1e-9}, ValFraction: 0.2}
	fit := ooc.Config{Centers: 300, Iterations: 3, Seed: 5}
	for _, c := range []struct {
		maxPasses, budget, iters int
	}{
		{0, 2 + 3 + 3 + 1, 6}, // the default: the centres, the right-hand side, 2·3 iterations, the final validation
		{12, 12, 9},
		{5, 5, 2}, // below Iterations: the budget cuts the fit too
	} {
		s := search
		s.MaxPasses = c.maxPasses
		got, err := ooc.FitTuned(context.Background(), src, ooc.FitTunedConfig{Fit: fit, Rows: 1500, Centers: 100, Search: s},
			ooc.RunOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		tr := got.Training()
		if tr.Handoff.MaxPasses != c.budget || got.Config().Iterations != c.iters || tr.Iterations > c.iters {
			t.Fatalf("MaxPasses %d: budget %d, cap %d, ran %d iterations; want a budget of %d passes, a cap of %d",
				c.maxPasses, tr.Handoff.MaxPasses, got.Config().Iterations, tr.Iterations, c.budget, c.iters)
		}
		if c.iters > fit.Iterations && tr.Iterations <= fit.Iterations {
			t.Errorf("MaxPasses %d: the fit stopped at Iterations %d (%s), validation %v", c.maxPasses, tr.Iterations, tr.Status, tr.Validation)
		}
		if c.iters == 6 && ooc.StoppedAtCap(got) == nil && tr.Status != ooc.StatusPatience {
			t.Errorf("MaxPasses %d: status %s after %d iterations, and no last improvement at the cap", c.maxPasses, tr.Status, tr.Iterations)
		}
		// The final fit is Fit with the budget's cap and patience.
		train, held := stream.Holdout(src, 0.2, fit.Seed)
		ref := fit
		ref.Kernel, ref.Lambda, ref.Patience, ref.Iterations = got.Kernel(), got.Config().Lambda, ooc.DefaultPatience, c.iters
		want, err := ooc.Fit(context.Background(), train, ref, ooc.RunOptions{Workers: 2, Validation: held})
		if err != nil {
			t.Fatal(err)
		}
		tx, _ := synth(50, d, 72)
		pg, pw := make([]float64, 50), make([]float64, 50)
		got.PredictTo(pg, tx, 50)
		want.PredictTo(pw, tx, 50)
		if !slices.Equal(pg, pw) || want.Training().Iterations != tr.Iterations {
			t.Errorf("MaxPasses %d: the final fit (%d iterations) differs from Fit's with a cap of %d (%d iterations) by %.3g",
				c.maxPasses, tr.Iterations, c.iters, want.Training().Iterations, maxRelDiff(pg, pw))
		}
	}
}
