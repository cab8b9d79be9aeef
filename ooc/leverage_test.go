package ooc_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// mixture returns n rows in 2-D: a fraction dense of them in a tight blob
// at the origin (y = 1), the rest spread uniformly over [-3, 3]², where
// y = sin(2x₁)cos(2x₂) carries the signal.
func mixture(n int, dense float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x = make([]float64, 2*n)
	y = make([]float64, n)
	for i := range n {
		if rng.Float64() < dense {
			x[2*i], x[2*i+1] = 0.05*rng.NormFloat64(), 0.05*rng.NormFloat64()
			y[i] = 1
		} else {
			a, b := 6*rng.Float64()-3, 6*rng.Float64()-3
			x[2*i], x[2*i+1] = a, b
			y[i] = math.Sin(2*a) * math.Cos(2*b)
		}
		y[i] += 0.01 * rng.NormFloat64()
	}
	return x, y
}

// The leverage-weighted solver (T = chol(D K_MM D + εMI), K_nM D) matches
// the direct solution of the Nyström system on the centres it drew: the
// weights change the preconditioner, not the estimator.
func TestLeverageMatchesDirectNystrom(t *testing.T) {
	x, y := mixture(2000, 0.9, 1)
	const lambda, eps = 1e-4, 1e-14
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 2, y, 1, 256), ooc.Config{
		Centers: 200, Sampling: ooc.SamplingLeverage, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3},
		Lambda: lambda, Jitter: eps, Iterations: 300, Tolerance: 1e-13, Seed: 2, NoStandardize: true,
	}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.M() >= 200 || m.Training().DuplicateCenters == 0 {
		t.Logf("drew %d distinct centres of 200 (duplicates merged: %d)", m.M(), m.Training().DuplicateCenters)
	}
	want := direct(t, m, x, y, lambda, 0)
	// Tolerance: the 1e-6; the jitter εM D⁻² (≤ 1e-9 here)
	// differs from the direct system's 0 far below it.
	if r := relDiff(m.Alpha(), want); r > 1e-6 {
		t.Errorf("α differs from the direct solution by %.3g relative (%s after %d iterations)", r, m.Training().Status, m.Training().Iterations)
	}
}

// On a mixture where 90 % of the rows sit in a tight blob, uniform
// sampling spends about 90 % of the centres there; leverage sampling
// spends most of them on the spread-out rows, where the signal is.
func TestLeverageSpreadsCentres(t *testing.T) {
	x, y := mixture(20000, 0.9, 4)
	cfg := ooc.Config{Centers: 300, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3}, Lambda: 1e-6,
		Iterations: 3, Seed: 5, NoStandardize: true}
	outside := func(m *ooc.Model) float64 {
		out := 0
		for j := range m.M() {
			if math.Hypot(m.Centers()[2*j], m.Centers()[2*j+1]) > 0.3 {
				out++
			}
		}
		return float64(out) / float64(m.M())
	}
	src := stream.NewMemSource(x, 2, y, 1, 1000)
	uni, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sampling = ooc.SamplingLeverage
	lev, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fu, fl := outside(uni), outside(lev)
	t.Logf("centres outside the blob: uniform %.2f, leverage %.2f (%d distinct)", fu, fl, lev.M())
	if fu > 0.2 || fl < 0.6 {
		t.Errorf("centres outside the blob: uniform %.2f (want ≈ 0.1), leverage %.2f (want > 0.6)", fu, fl)
	}
}
