package dense

import (
	"math/rand/v2"
	"testing"
)

// TestSolvePanel checks that solving with an upper triangular U panel by
// panel (its rows cut into panels of h rows, each copied out with stride
// n − r0 as an out-of-core factor stores it) gives SolveTri's bits on the
// whole U, both ways, for panel heights that are multiples of 4 and an n
// that is not; and that it allocates nothing.
func TestSolvePanel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	const n = 203
	a, _ := spd(rnd, n, n, float64(n))
	if ok, _ := Cholesky(a, n, n, 1); !ok {
		t.Fatal("not PD")
	}
	for _, h := range []int{4, 32, 100, 204} {
		for _, trans := range []bool{false, true} {
			const k = 2
			want := make([][]float64, k)
			got := make([][]float64, k)
			b := make([]float64, n*k)
			for c := range k {
				want[c] = make([]float64, n)
				got[c] = make([]float64, n)
				for i := range n {
					want[c][i] = rnd.NormFloat64()
					got[c][i] = want[c][i]
					b[i*k+c] = want[c][i]
				}
			}
			SolveTri(Tri[float64]{Data: a, N: n, Stride: n}, trans, b, k, k, 1)
			np := (n + h - 1) / h
			panels := make([][]float64, np)
			for i := range np {
				r0 := i * h
				ph, w := min(h, n-r0), n-r0
				panels[i] = make([]float64, ph*w)
				for r := range ph {
					copy(panels[i][r*w:r*w+w], a[(r0+r)*n+r0:(r0+r)*n+n])
				}
			}
			views := make([][]float64, k)
			allocs := testing.AllocsPerRun(1, func() {
				for c := range k {
					copy(got[c], want[c])
				}
				for q := range np {
					i := np - 1 - q
					if trans {
						i = q
					}
					r0 := i * h
					for c := range k {
						views[c] = got[c][r0:]
					}
					SolvePanel(panels[i], min(h, n-r0), n-r0, n-r0, trans, views)
				}
			})
			if allocs != 0 {
				t.Errorf("h %d: %v allocations", h, allocs)
			}
			for c := range k {
				for i := range n {
					if got[c][i] != b[i*k+c] {
						t.Fatalf("h %d, trans %v: x[%d][%d] = %v, SolveTri %v", h, trans, i, c, got[c][i], b[i*k+c])
					}
				}
			}
		}
	}
}
