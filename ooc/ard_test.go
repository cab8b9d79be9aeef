package ooc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// ardToy returns a small problem where feature 0 matters a lot, feature 1
// a little and feature 2 not at all.
func ardToy(n, nv, m int, seed uint64) *ardProblem {
	rng := rand.New(rand.NewPCG(seed, 1))
	const d = 3
	gen := func(rows int) (x, y []float64) {
		for range rows {
			a, b, c := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
			x = append(x, a, b, c)
			y = append(y, math.Sin(2*a)+0.3*b+0.05*rng.NormFloat64())
		}
		return x, y
	}
	p := &ardProblem{n: n, nv: nv, m: m, d: d}
	p.x, p.y = gen(n)
	p.xv, p.yv = gen(nv)
	p.c = append([]float64(nil), p.x[:m*d]...)
	return p
}

// TestARDGradient checks the analytic gradient of the hold-out objective
// against central finite differences, for every log length scale and log
// λ, at several points.
func TestARDGradient(t *testing.T) {
	p := ardToy(80, 30, 20, 1)
	for _, pt := range []struct {
		theta []float64
		phi   float64
	}{
		{[]float64{0, 0, 0}, math.Log(1e-3)},
		{[]float64{-0.5, 0.7, 1.5}, math.Log(1e-2)},
		{[]float64{0.3, -0.2, 0.1}, math.Log(1e-5)},
	} {
		grad := make([]float64, 4)
		p.lossGrad(pt.theta, pt.phi, grad)
		const h = 1e-5
		for i := range 4 {
			th := append([]float64(nil), pt.theta...)
			phi := pt.phi
			step := func(s float64) float64 {
				th2 := append([]float64(nil), th...)
				ph2 := phi
				if i < 3 {
					th2[i] += s
				} else {
					ph2 += s
				}
				return p.lossGrad(th2, ph2, nil)
			}
			fd := (step(h) - step(-h)) / (2 * h)
			// Central differences err by O(h²) ≈ 1e-10 relative, plus the
			// rounding of the loss (≈ 1e-16 / h): 1e-5 relative is ample
			// and far below any error in the formula.
			if math.Abs(fd-grad[i]) > 1e-5*math.Max(math.Abs(fd), 1e-3) {
				t.Errorf("θ %v, φ %.3g: parameter %d: gradient %.10g, finite differences %.10g", pt.theta, pt.phi, i, grad[i], fd)
			}
		}
	}
}

// TestARDLearns checks that the steps lower the hold-out error and make
// the irrelevant feature's length scale the longest.
func TestARDLearns(t *testing.T) {
	p := ardToy(600, 200, 80, 2)
	res, err := p.learn(context.Background(), 1, 1e-4, ARDConfig{}.resolved(800))
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Loss < 0.8*res.Start) {
		t.Errorf("hold-out MSE %.4g → %.4g: not lowered by 20 %%", res.Start, res.Loss)
	}
	if !(res.Sigmas[2] > res.Sigmas[0] && res.Sigmas[2] > res.Sigmas[1]) {
		t.Errorf("σ = %v: the irrelevant feature 2 should have the longest length scale", res.Sigmas)
	}
}

// TestARDConfigDefaults pins the subsample's default size: min(n, 5000)
// below 10⁵ rows, 20 000 from 10⁵ rows on (the higgs-rough finding,
// ARDConfig.Rows), and a size the user gives is kept (up to n).
func TestARDConfigDefaults(t *testing.T) {
	for _, c := range []struct {
		rows      int
		n         int64
		want, ctr int
	}{
		{0, 800, 800, 80},
		{0, 40_000, 5000, 500},
		{0, 99_999, 5000, 500},
		{0, 100_000, 20_000, 500},
		{0, 10_000_000, 20_000, 500},
		{3000, 10_000_000, 3000, 300},
		{50_000, 30_000, 30_000, 500},
	} {
		got := ARDConfig{Rows: c.rows}.resolved(c.n)
		if got.Rows != c.want || got.Centers != c.ctr || got.Steps != 80 || got.Rate != 0.05 {
			t.Errorf("ARDConfig{Rows: %d}.resolved(%d) = %+v, want Rows %d, Centers %d, Steps 80, Rate 0.05", c.rows, c.n, got, c.want, c.ctr)
		}
	}
}
