package kernel

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// KtFKvAdd with a hook that scales each row of K·u by a weight is, bit
// for bit, KtWKvAdd with those weights; the hook sees every row once, in
// tiles that cover the rows in order.
func TestKtFKvAddHook(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	const m, d, rows, k = 37, 3, 301, 2
	cs, x, u, rw := make([]float64, m*d), make([]float64, rows*d), make([]float64, m*k), make([]float64, rows)
	for _, a := range [][]float64{cs, x, u, rw} {
		for i := range a {
			a[i] = rng.NormFloat64()
		}
	}
	c := NewCenters(Kernel{Kind: Gaussian, Sigma: 1.3}, cs, m, d, Float64)
	ws := c.NewWorkspace()
	want, got := make([]float64, m*k), make([]float64, m*k)
	c.KtWKvAdd(ws, want, x, rows, u, rw, nil, k)
	next := 0
	c.KtFKvAdd(ws, got, x, rows, u, k, func(s []float64, r0, n int) {
		if r0 != next || len(s) != n*k {
			t.Fatalf("tile at row %d of %d rows (len %d), want row %d", r0, n, len(s), next)
		}
		next += n
		for i := range n {
			for l := range k {
				s[i*k+l] *= rw[r0+i]
			}
		}
	})
	if next != rows || !slices.Equal(got, want) {
		t.Fatalf("the hook saw %d rows; KtFKvAdd = KtWKvAdd: %v", next, slices.Equal(got, want))
	}
}
