package loss

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tile returns a tile of n rows of cols scores with stride cols+2 (the
// two extra values are a marker that no method may touch), k outputs
// and, with weighted, row weights; targets are ±1 for logistic, normal
// otherwise.
func tile(rng *rand.Rand, n, cols, k int, weighted, pm bool) Tile {
	st := cols + 2
	t := Tile{F: make([]float64, n*st), N: n, Cols: cols, Stride: st, Y: make([]float64, n*k), K: k}
	for i := range t.F {
		t.F[i] = 3 * rng.NormFloat64()
		if i%st >= cols {
			t.F[i] = 12345
		}
	}
	for i := range t.Y {
		t.Y[i] = rng.NormFloat64()
		if pm {
			t.Y[i] = 1
			if rng.IntN(2) == 0 {
				t.Y[i] = -1
			}
		}
	}
	if weighted {
		t.W = make([]float64, n)
		for i := range t.W {
			t.W[i] = 0.5 + rng.Float64()
		}
	}
	return t
}

// value is the loss of one row and column by its definition.
func value(l Loss, y, f float64) float64 {
	if l == Squared {
		return (f - y) * (f - y) / 2
	}
	return math.Log1p(math.Exp(-y * f))
}

// TestLossDerivatives checks each loss's Grad, Values and HessMul
// against its definition: the values by the formula, the gradient
// weights and Hessian weights by central differences of the values
// (step 1e-5: the differences' error is O(h²) ≈ 1e-10 of the loss's
// third derivative, and rounding ≈ 1e-16/h² · |ℓ| ≈ 1e-6 for the second
// difference, hence its bound).
func TestLossDerivatives(t *testing.T) {
	for _, l := range []Loss{Squared, Logistic} {
		for _, weighted := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(1, 2))
			n, cols, k := 7, 6, 3
			tl := tile(rng, n, cols, k, weighted, l == Logistic)
			f0 := append([]float64(nil), tl.F...)
			const h = 1e-5
			steps := []float64{-h, 0, h}
			d := make([]float64, len(tl.F))
			for i := range d {
				d[i] = 1
			}
			// Values along f + s·1 for each column, one row at a time.
			for i := range n {
				row := tl
				row.F, row.N, row.Y = tl.F[i*tl.Stride:], 1, tl.Y[i*k:]
				if weighted {
					row.W = tl.W[i:]
				}
				vs := make([]float64, len(steps)*cols)
				l.Values(row, d[i*tl.Stride:], steps, vs)
				w := row.weight(0)
				for c := range cols {
					y, f := tl.Y[i*k+c%k], tl.F[i*tl.Stride+c]
					want := w * value(l, y, f)
					if got := vs[cols+c]; math.Abs(got-want) > 1e-14*(1+math.Abs(want)) {
						t.Errorf("%s: Values at s = 0, row %d column %d: %v, want %v", l.Name(), i, c, got, want)
					}
					gFD := (vs[2*cols+c] - vs[c]) / (2 * h)
					hFD := (vs[2*cols+c] - 2*vs[cols+c] + vs[c]) / (h * h)
					// Grad on a copy of this one row.
					one := Tile{F: []float64{f}, N: 1, Cols: 1, Stride: 1, Y: []float64{y}, K: 1, W: []float64{w}}
					hs, vv := []float64{0}, []float64{0}
					l.Grad(one, hs, vv)
					if g := one.F[0]; math.Abs(g-gFD) > 1e-8*(1+math.Abs(g)) {
						t.Errorf("%s: gradient weight %v, differences give %v", l.Name(), g, gFD)
					}
					if math.Abs(hs[0]-hFD) > 1e-4*(1+hs[0]) {
						t.Errorf("%s: Hessian weight %v, differences give %v", l.Name(), hs[0], hFD)
					}
					if math.Abs(vv[0]-want) > 1e-14*(1+want) {
						t.Errorf("%s: Grad's value %v, want %v", l.Name(), vv[0], want)
					}
					// HessMul on u = 2 at the same score gives 2·the Hessian weight.
					u := []float64{2}
					l.HessMul(Tile{F: []float64{f}, N: 1, Cols: 1, Stride: 1, Y: []float64{y}, K: 1, W: []float64{w}}, u)
					if math.Abs(u[0]-2*hs[0]) > 1e-15*(1+u[0]) {
						t.Errorf("%s: HessMul gives %v, Grad's Hessian weight ×2 is %v", l.Name(), u[0], 2*hs[0])
					}
					if cu := w * l.Curvature(f); math.Abs(cu-hs[0]) > 1e-15*(1+cu) {
						t.Errorf("%s: w·Curvature %v, Hessian weight %v", l.Name(), cu, hs[0])
					}
				}
			}
			for i, v := range tl.F {
				if v != f0[i] {
					t.Fatalf("%s: Values changed score %d", l.Name(), i)
				}
			}
			// Grad on the whole tile: the sums per column are the rows'.
			hs, vs := make([]float64, cols), make([]float64, cols)
			l.Grad(tl, hs, vs)
			for c := range cols {
				wantH, wantV := 0.0, 0.0
				for i := range n {
					w := tl.weight(i)
					y, f := tl.Y[i*k+c%k], f0[i*tl.Stride+c]
					wantV += w * value(l, y, f)
					wantH += w * l.Curvature(f)
				}
				if math.Abs(vs[c]-wantV) > 1e-13*(1+wantV) || math.Abs(hs[c]-wantH) > 1e-13*(1+wantH) {
					t.Errorf("%s: column %d sums h %v v %v, want %v %v", l.Name(), c, hs[c], vs[c], wantH, wantV)
				}
			}
			for i := range tl.F {
				if i%tl.Stride >= cols && tl.F[i] != 12345 {
					t.Fatalf("%s: Grad wrote past Cols at %d", l.Name(), i)
				}
			}
		}
	}
}

// TestSquaredGradIsResidual pins the squared loss's gradient weight to
// the weighted residual w(f − y) and its Hessian weight to w.
func TestSquaredGradIsResidual(t *testing.T) {
	tl := Tile{F: []float64{3, -1}, N: 2, Cols: 1, Stride: 1, Y: []float64{1, 1}, K: 1, W: []float64{2, 0.5}}
	h, v := []float64{0}, []float64{0}
	Squared.Grad(tl, h, v)
	if tl.F[0] != 4 || tl.F[1] != -1 || h[0] != 2.5 || v[0] != 2*4/2+0.5*4/2 {
		t.Errorf("Grad: scores %v, h %v, v %v; want [4 -1], 2.5, 5", tl.F, h, v)
	}
}

// TestStable checks Sigmoid and Softplus far out, where the naive
// formulas overflow or lose everything to rounding.
func TestStable(t *testing.T) {
	for _, c := range []struct{ x, sig, soft float64 }{
		{0, 0.5, math.Ln2},
		{800, 1, 800},
		{-800, 0, 0},
		{-40, math.Exp(-40) / (1 + math.Exp(-40)), math.Log1p(math.Exp(-40))},
		{40, 1 / (1 + math.Exp(-40)), 40 + math.Log1p(math.Exp(-40))},
	} {
		if s := Sigmoid(c.x); s != c.sig {
			t.Errorf("Sigmoid(%v) = %v, want %v", c.x, s, c.sig)
		}
		if s := Softplus(c.x); s != c.soft {
			t.Errorf("Softplus(%v) = %v, want %v", c.x, s, c.soft)
		}
	}
	if Sigmoid(-40) == 0 {
		t.Error("Sigmoid(−40) underflowed to 0")
	}
}

func TestByName(t *testing.T) {
	for _, l := range []Loss{Squared, Logistic} {
		if got, ok := ByName(l.Name()); !ok || got != l {
			t.Errorf("ByName(%q) = %v, %v", l.Name(), got, ok)
		}
	}
	if _, ok := ByName("hinge"); ok {
		t.Error(`ByName("hinge") found a loss`)
	}
}

// TestNoAllocs: a loss's methods allocate nothing (they run per tile of
// every chunk of every pass).
func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, l := range []Loss{Squared, Logistic} {
		tl := tile(rng, 16, 4, 2, true, true)
		d := make([]float64, len(tl.F))
		h, v, vs := make([]float64, 4), make([]float64, 4), make([]float64, 3*4)
		steps := []float64{0.5, 0.25, 0.125}
		if a := testing.AllocsPerRun(10, func() {
			l.Values(tl, d, steps, vs)
			l.HessMul(tl, d)
			l.Grad(tl, h, v)
		}); a != 0 {
			t.Errorf("%s: %v allocations per tile", l.Name(), a)
		}
	}
}
