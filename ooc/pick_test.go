package ooc_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// farData is y = sin(x₀) + 0.5·x₁ + noise (sd 0.3) on two standard
// normal features.
func farData(n int, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x, y = make([]float64, 2*n), make([]float64, n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x[2*i], x[2*i+1] = a, b
		y[i] = math.Sin(a) + 0.5*b + 0.3*rng.NormFloat64()
	}
	return x, y
}

// TestPickOneSEFarRow plants a row 6 standard deviations out along both
// features. The lowest validation RMSE of the grid is at λ = 1e-8 and a
// wide σ, whose nearly polynomial fit predicts the far row far outside
// every target seen (the validation rows, where the data are dense,
// cannot see it); the one-standard-error rule takes a larger λ whose
// validation RMSE is within noise of the lowest, and its prediction stays
// within the targets' range. With Pick = PickOneSE the search returns
// that model. (The grid's σ start at 4: σ 2 reaches within 0.01 % of
// the same lowest RMSE with λ = 1e-5, and which of such near-ties is the
// lowest is noise.)
func TestPickOneSEFarRow(t *testing.T) {
	x, y := farData(3000, 1)
	src := stream.NewMemSource(x, 2, y, 1, 500)
	lo, hi := slices.Min(y), slices.Max(y)
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 200, Iterations: 30, Seed: 1},
		Sigmas: []float64{4, 8, 16}, Lambdas: []float64{1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2},
		ValFraction: 0.2, SigmaHalving: -1}
	far := []float64{6, 6}
	for _, rule := range []ooc.PickRule{"", ooc.PickBest, ooc.PickOneSE, ooc.PickTol} {
		tc.Pick = rule
		res, err := ooc.Tune(context.Background(), src, tc, ooc.RunOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := cmpOr(rule, ooc.DefaultPick)
		if res.Pick != want {
			t.Fatalf("Pick %q: result says %q", rule, res.Pick)
		}
		low, one := res.Candidates[res.Lowest], res.Candidates[res.OneSE]
		for i, c := range res.Candidates {
			if c.Stop != ooc.StopFailed && c.BestMetric < low.BestMetric {
				t.Fatalf("candidate %d has validation %g below the lowest's %g", i, c.BestMetric, low.BestMetric)
			}
			if !(c.BestSE > 0 && c.BestSE < c.BestMetric/10) {
				t.Fatalf("candidate %d: standard error %g of RMSE %g", i, c.BestSE, c.BestMetric)
			}
		}
		if !(one.Lambda > low.Lambda) || !(one.BestMetric <= low.BestMetric+low.BestSE) {
			t.Fatalf("1-SE candidate σ %g λ %g (%g) against the lowest σ %g λ %g (%g ± %g)",
				one.Sigma, one.Lambda, one.BestMetric, low.Sigma, low.Lambda, low.BestMetric, low.BestSE)
		}
		// No candidate with a larger λ (or as large and a larger σ) is
		// within one standard error.
		for i, c := range res.Candidates {
			if c.BestMetric <= low.BestMetric+low.BestSE && (c.Lambda > one.Lambda || (c.Lambda == one.Lambda && c.Sigma > one.Sigma)) {
				t.Fatalf("candidate %d (σ %g λ %g, %g) is more regularised than the 1-SE pick and within one SE", i, c.Sigma, c.Lambda, c.BestMetric)
			}
		}
		// PickTol: the largest λ within the relative tolerance
		// (Base.MinImprovement's default) of the lowest RMSE.
		tol := res.Candidates[res.Tol]
		limit := low.BestMetric * (1 + res.Tolerance)
		if res.Tolerance != ooc.DefaultMinImprovement || res.TolMetric != "rmse" ||
			tol.Lambda < low.Lambda || !(tol.BestMetric <= limit) {
			t.Fatalf("tol pick σ %g λ %g (%g) against the lowest σ %g λ %g (%g), tolerance %g by %s",
				tol.Sigma, tol.Lambda, tol.BestMetric, low.Sigma, low.Lambda, low.BestMetric, res.Tolerance, res.TolMetric)
		}
		for i, c := range res.Candidates {
			if c.Lambda > tol.Lambda && c.BestMetric <= limit {
				t.Fatalf("candidate %d (σ %g λ %g, %g) is within the tolerance with a larger λ than the tol pick's %g", i, c.Sigma, c.Lambda, c.BestMetric, tol.Lambda)
			}
		}
		p := make([]float64, 1)
		low.Model().PredictTo(p, far, 1)
		if p[0] >= lo && p[0] <= hi {
			t.Fatalf("the lowest pick (σ %g, λ %g) predicts %g at the far row, inside the targets' range [%g, %g]: the test shows nothing",
				low.Sigma, low.Lambda, p[0], lo, hi)
		}
		lowFar := p[0]
		one.Model().PredictTo(p, far, 1)
		if !(p[0] >= lo && p[0] <= hi) {
			t.Fatalf("the 1-SE pick (σ %g, λ %g) predicts %g at the far row, outside the targets' range [%g, %g]", one.Sigma, one.Lambda, p[0], lo, hi)
		}
		pick := map[ooc.PickRule]int{ooc.PickBest: res.Lowest, ooc.PickOneSE: res.OneSE, ooc.PickTol: res.Tol}[want]
		if res.Best != pick || res.Model() != res.Candidates[pick].Model() {
			t.Fatalf("Pick %q: Best %d, want %d", rule, res.Best, pick)
		}
		t.Logf("pick %s: lowest σ %g λ %g RMSE %.4f ± %.4f predicts %.2f; 1-SE σ %g λ %g RMSE %.4f predicts %.3f (targets in [%.2f, %.2f]); tol σ %g λ %g RMSE %.4f",
			res.Pick, low.Sigma, low.Lambda, low.BestMetric, low.BestSE, lowFar, one.Sigma, one.Lambda, one.BestMetric, p[0], lo, hi, tol.Sigma, tol.Lambda, tol.BestMetric)
	}
	tc.Pick = "2se"
	_, err := ooc.Tune(context.Background(), src, tc, ooc.RunOptions{Workers: 2})
	var ce *ooc.ConfigError
	if !errors.As(err, &ce) || ce.Field != "TuneConfig.Pick" || err.Error() != `invalid configuration: unknown pick rule "2se" (want tol, best or 1se)` {
		t.Fatalf("Pick 2se: %v", err)
	}
}

func cmpOr(r, def ooc.PickRule) ooc.PickRule {
	if r == "" {
		return def
	}
	return r
}
