package ooc

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/stream"
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

// TestARDGroups: the one-hot features of a categorical column share one
// length scale, as do the sine and cosine of a cycle; a fit learns one
// value per group (the ungrouped fit learns one per level), and the
// irrelevant feature's stays the longest.
func TestARDGroups(t *testing.T) {
	spec := &featenc.Spec{Columns: []featenc.Column{
		{Source: "c", Kind: featenc.OneHot, Levels: []string{"l0", "l1", "l2", "l3"}, Scale: featenc.Scale},
		{Source: "t", Kind: featenc.Time, Cyclic: []string{featenc.Hour, featenc.DoW}},
	}}
	for i := range spec.Columns {
		spec.Columns[i].Features = featenc.FeatureNames(spec.Columns[i])
	}
	features := []string{"a", "c=l0", "c=l1", "c=l2", "c=l3", "t", "t:hour_sin", "t:hour_cos", "t:dow_sin", "t:dow_cos", "noise"}
	if got, want := ardGroups(features, spec), []int{0, 1, 1, 1, 1, 2, 3, 3, 4, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("ardGroups = %v, want %v", got, want)
	}
	if g := ardGroups([]string{"a", "b"}, nil); g != nil {
		t.Fatalf("ardGroups without an encoding = %v, want nil", g)
	}
	if g := ardGroups([]string{"a", "t"}, &featenc.Spec{Columns: []featenc.Column{{Source: "t", Kind: featenc.Time, Features: []string{"t"}}}}); g != nil {
		t.Fatalf("ardGroups with no shared scale = %v, want nil", g)
	}

	// y = sin(2a) + effect(level of c) + ε; noise is irrelevant.
	rng := rand.New(rand.NewPCG(7, 1))
	effect := []float64{-0.8, 0.1, 0.5, 0.9}
	const d = 6
	gen := func(rows int) (x, y []float64) {
		for range rows {
			a, l, z := rng.NormFloat64(), rng.IntN(4), rng.NormFloat64()
			x = append(x, a)
			for k := range 4 {
				v := 0.0
				if k == l {
					v = 1 / featenc.Scale
				}
				x = append(x, v)
			}
			x = append(x, z)
			y = append(y, math.Sin(2*a)+effect[l]+0.05*rng.NormFloat64())
		}
		return x, y
	}
	group := ardGroups([]string{"a", "c=l0", "c=l1", "c=l2", "c=l3", "noise"}, spec)
	learn := func(group []int) *ARDResult {
		p := &ardProblem{n: 600, nv: 200, m: 80, d: d, group: group}
		p.x, p.y = gen(p.n)
		p.xv, p.yv = gen(p.nv)
		p.c = slices.Clone(p.x[:p.m*d])
		res, err := p.learn(context.Background(), 1, 1e-4, ARDConfig{}.resolved(800))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := learn(group)
	if len(res.Sigmas) != d {
		t.Fatalf("%d length scales, want one per feature (%d)", len(res.Sigmas), d)
	}
	for j := 2; j <= 4; j++ {
		if res.Sigmas[j] != res.Sigmas[1] {
			t.Fatalf("σ = %v: the one-hot features of c differ", res.Sigmas)
		}
	}
	if !(res.Sigmas[5] > res.Sigmas[0] && res.Sigmas[5] > res.Sigmas[1]) || !(res.Loss < 0.5*res.Start) {
		t.Fatalf("σ = %v, hold-out MSE %.4g → %.4g: the irrelevant feature should have the longest scale and the error halve", res.Sigmas, res.Start, res.Loss)
	}
	free := learn(nil)
	if free.Sigmas[1] == free.Sigmas[2] && free.Sigmas[2] == free.Sigmas[3] {
		t.Fatalf("σ = %v: without groups the levels' scales should differ (the test would not see a grouping)", free.Sigmas)
	}
}

// encodedMem is an in-memory source with an encoding.
type encodedMem struct {
	*stream.MemSource
	spec *featenc.Spec
}

func (e encodedMem) Encoding() *featenc.Spec { return e.spec }

// TestSampleSourceEncoding: the subsample fit --tune searches on reports
// its parent's encoding, so that its ARD groups the encoded columns'
// features (it learned one scale per one-hot feature when it did not).
func TestSampleSourceEncoding(t *testing.T) {
	spec := &featenc.Spec{Columns: []featenc.Column{{Source: "c", Kind: featenc.OneHot, Levels: []string{"a", "b"}, Scale: featenc.Scale}}}
	spec.Columns[0].Features = featenc.FeatureNames(spec.Columns[0])
	parent := encodedMem{stream.NewMemSource(make([]float64, 12), 3, make([]float64, 4), 1, 4), spec}
	s := &sampleSource{MemSource: stream.NewMemSource(make([]float64, 6), 3, make([]float64, 2), 1, 2), meta: parent}
	if got := stream.EncodingOf(s); got != spec {
		t.Fatalf("EncodingOf(subsample) = %v, want the parent's", got)
	}
	if g := ardGroups([]string{"c=a", "c=b", "x"}, stream.EncodingOf(s)); !slices.Equal(g, []int{0, 0, 1}) {
		t.Fatalf("groups %v", g)
	}
}
