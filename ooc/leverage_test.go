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
// weights change the preconditioner, not the estimator. Leverage draws
// exactly M distinct centres.
func TestLeverageMatchesDirectNystrom(t *testing.T) {
	const n, d, M = 2000, 12, 200
	x, y := ordinary(n, 5)
	const lambda, eps = 1e-4, 1e-12
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 256), ooc.Config{
		Centers: M, Sampling: ooc.SamplingLeverage, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2},
		Lambda: lambda, Jitter: eps, Iterations: 300, Tolerance: 1e-13, Seed: 2,
	}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.M() != M || m.Training().DuplicateCenters != 0 {
		t.Errorf("drew %d distinct centres (duplicates %d), want exactly %d", m.M(), m.Training().DuplicateCenters, M)
	}
	if lev := m.Training().LambdaLeverage; !(lev > 0 && lev < 1) {
		t.Errorf("λ_lev = %g, want in (0, 1)", lev)
	}
	want := direct(t, m, x, y, lambda, eps)
	// Tolerance: the 1e-6 relative, as for uniform centres
	// (TestFitMatchesDirectNystrom). The direct system has the jitter
	// εM I in K_MM; the weighted solver has εM D⁻², which differs by
	// ≤ εM max D⁻² ≈ 1e-9 relative here, far below it.
	r := relDiff(m.Alpha(), want)
	t.Logf("α within %.2g of the direct solution (%s after %d iterations, λ_lev = %.3g)", r, m.Training().Status, m.Training().Iterations, m.Training().LambdaLeverage)
	if r > 1e-6 {
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

// ordinary returns n rows of 12 features of the kinds a held-out table
// has: six Gaussian, three uniform rounded to float32, one small integer,
// one log-normal and one pure-noise column; y is smooth in most of them
// plus noise of standard deviation 0.3.
func ordinary(n int, seed uint64) (x, y []float64) {
	const d = 12
	rng := rand.New(rand.NewPCG(seed, 12))
	x = make([]float64, n*d)
	y = make([]float64, n)
	for i := range n {
		r := x[i*d : (i+1)*d]
		for j := range 6 {
			r[j] = rng.NormFloat64()
		}
		for j := 6; j < 9; j++ {
			r[j] = float64(float32(rng.Float64()))
		}
		r[9] = float64(rng.IntN(5))
		r[10] = math.Exp(rng.NormFloat64())
		r[11] = rng.NormFloat64()
		y[i] = math.Sin(r[0]) + 0.5*r[1]*r[2] + 0.3*r[3] - 0.4*r[4]*r[4] + math.Cos(3*r[6]) + r[7]*r[8] +
			0.2*r[9] + 0.5*math.Log1p(r[10]) + 0.3*rng.NormFloat64()
	}
	return x, y
}

// On ordinary data (no region of uneven density to find) leverage
// sampling must not lose to uniform: mean test RMSE over three seeds
// ≤ 1.01 × uniform's at the same M and seeds (issue #16: scores at the
// fit's λ lost by 3 %). One seed is not enough: at M = 300 the RMSE of
// either scheme moves by about 2 % from one draw of centres to the next.
func TestLeverageTiesUniformOnOrdinaryData(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical comparison of 6 fits (≈ 5 s); -short runs the D-weighting and spread tests")
	}
	const n, ntest, d, m = 30000, 5000, 12, 300
	x, y := ordinary(n, 1)
	xt, yt := ordinary(ntest, 2)
	src := stream.NewMemSource(x, d, y, 1, 4096)
	rmse := func(m *ooc.Model) float64 {
		p := make([]float64, ntest)
		m.PredictTo(p, xt, ntest)
		s := 0.0
		for i, v := range p {
			s += (v - yt[i]) * (v - yt[i])
		}
		return math.Sqrt(s / ntest)
	}
	var ru, rl float64
	for seed := uint64(1); seed <= 3; seed++ {
		cfg := ooc.Config{Centers: m, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(d)}, Lambda: 1e-6,
			Iterations: 20, Seed: seed}
		uni, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Sampling = ooc.SamplingLeverage
		lev, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lev.M() != m {
			t.Errorf("seed %d: leverage drew %d distinct centres, want %d", seed, lev.M(), m)
		}
		u, l := rmse(uni), rmse(lev)
		t.Logf("seed %d: test RMSE uniform %.4f, leverage %.4f (λ_lev = %.3g)", seed, u, l, lev.Training().LambdaLeverage)
		ru += u / 3
		rl += l / 3
	}
	if rl > 1.01*ru {
		t.Errorf("M = %d: mean leverage test RMSE %.4f > 1.01 × uniform's %.4f", m, rl, ru)
	}
}
