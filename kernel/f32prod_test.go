package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel/internal/tile"
)

// TestF32Products measures KtKvAdd with the float32 products
// (f32Products) against the float64 products of the same Float32 and
// BF16 tiles and against the exact float64 sums (dense, from Eval): the
// two differ by at most 20·2⁻²⁴ of the sum of magnitudes Σ|K||K u + v|
// (the products' own bound: about 11 roundings for K·u, 7 for Kᵀs), and
// their max and RMS errors against the exact sums are logged. Where the
// products are not assembly (no AVX-512, noasm) both are the float64
// products and equal.
func TestF32Products(t *testing.T) {
	defer func(f bool) { f32Products = f }(f32Products)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sz := range []struct{ rows, m, d int }{{37, 70, 5}, {1003, 1000, 18}, {203, 2000, 28}, {301, 500, 90}} {
		x, cen := randMat(rng, sz.rows, sz.d), randMat(rng, sz.m, sz.d)
		k := Kernel{Kind: Gaussian, Sigma: 0.5 * math.Sqrt(float64(sz.d))}
		K := naive(k, x, cen, sz.rows, sz.m, sz.d)
		u, v, w0 := randMat(rng, sz.m, 2), randMat(rng, sz.rows, 2), randMat(rng, sz.m, 2)
		want, scale := dense(K, w0, u, v, sz.rows, sz.m, 2)
		for _, p := range []Precision{Float32, BF16} {
			cs := NewCenters(k, cen, sz.m, sz.d, p)
			ws := cs.NewWorkspace()
			var w [2][]float64
			for i, f := range []bool{false, true} {
				f32Products = f
				w[i] = append([]float64(nil), w0...)
				cs.KtKvAdd(ws, w[i], x, sz.rows, u, v, 2)
			}
			name := fmt.Sprintf("%v/%dx%dx%d", p, sz.rows, sz.m, sz.d)
			var e64, e32, rms64, rms32, diff float64
			for j := range want {
				diff = max(diff, math.Abs(w[1][j]-w[0][j])/scale[j])
				if d := math.Abs(w[1][j] - w[0][j]); d > 20*0x1p-24*scale[j] {
					t.Fatalf("%s: w[%d] = %v with float32 products, %v with float64 (difference %.3g of the magnitude)",
						name, j, w[1][j], w[0][j], d/scale[j])
				}
				a, b := math.Abs(w[0][j]-want[j])/scale[j], math.Abs(w[1][j]-want[j])/scale[j]
				e64, e32 = max(e64, a), max(e32, b)
				rms64, rms32 = rms64+a*a, rms32+b*b
			}
			n := float64(len(want))
			t.Logf("%s: error / Σ|K||s| against exact: float64 products max %.2g rms %.2g, float32 products max %.2g rms %.2g; between the two max %.2g (assembly %v)",
				name, e64, math.Sqrt(rms64/n), e32, math.Sqrt(rms32/n), diff, tile.F32Products())
			if !tile.F32Products() && !equal(w[0], w[1]) {
				t.Errorf("%s: float32 products changed the result without assembly", name)
			}
		}
	}
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
