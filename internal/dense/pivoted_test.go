package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// lowRank returns G Gᵀ (G n×r standard normal) in the upper triangle of an
// n×n slice of stride ld, lower triangle NaN, and its full copy.
func lowRank(rnd *rand.Rand, n, r, ld int) ([]float64, []float64) {
	g := randMat(rnd, n, r, r)
	full := make([]float64, n*n)
	a := make([]float64, max(0, (n-1)*ld+n))
	for i := range a {
		a[i] = math.NaN()
	}
	for i := range n {
		for j := range n {
			s := 0.0
			for l := range r {
				s += g[i*r+l] * g[j*r+l]
			}
			full[i*n+j] = s
			if j >= i {
				a[i*ld+j] = s
			}
		}
	}
	return a, full
}

func TestPivotedCholesky(t *testing.T) {
	rnd := rand.New(rand.NewPCG(31, 32))
	for _, kern := range testKernels() {
		for _, c := range []struct{ n, r int }{{1, 1}, {5, 2}, {40, 40}, {300, 70}, {600, 600}, {600, 150}} {
			if (kern.mr*kern.nr < 4 && c.n > 300) || (raceEnabled && c.n > 40) {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d/r=%d", kern.name, c.n, c.r), func(t *testing.T) {
				n, ld := c.n, c.n+1
				a, full := lowRank(rnd, n, c.r, ld)
				if c.r == n {
					for i := range n {
						a[i*ld+i] += float64(n)
						full[i*n+i] += float64(n)
					}
				}
				orig := append([]float64(nil), a...)
				perm, rank := pivotedWith(wideSet(kern), a, n, ld, 1e-10, 2, nil)
				if rank != c.r {
					t.Fatalf("rank %d, want %d", rank, c.r)
				}
				for i := range a {
					if i%ld < i/ld && !math.IsNaN(a[i]) && math.IsNaN(orig[i]) {
						t.Fatal("lower triangle written")
					}
				}
				// PᵀAP = UᵀU, entry by entry; errors are of order
				// n·eps·max|A| (Higham, Thm 10.14 with pivoting).
				scale := 0.0
				for _, v := range full {
					scale = max(scale, math.Abs(v))
				}
				for x := range n {
					for y := x; y < n; y++ {
						s := 0.0
						for i := 0; i < rank && i <= x; i++ {
							s += a[i*ld+x] * a[i*ld+y]
						}
						if d := math.Abs(s - full[perm[x]*n+perm[y]]); d > 100*float64(n)*eps*scale {
							t.Fatalf("(UᵀU)[%d,%d] = %v, want %v", x, y, s, full[perm[x]*n+perm[y]])
						}
					}
				}
				// Pivots decrease.
				for i := 1; i < rank; i++ {
					if a[i*ld+i] > a[(i-1)*ld+i-1]*(1+1e-12) {
						t.Fatalf("pivot %d (%v) above pivot %d (%v)", i, a[i*ld+i], i-1, a[(i-1)*ld+i-1])
					}
				}
				// The same factor for any number of workers.
				b := append([]float64(nil), orig...)
				perm1, rank1 := pivotedWith(wideSet(kern), b, n, ld, 1e-10, 1, nil)
				for i := 0; i < rank; i++ {
					if perm1[i] != perm[i] {
						t.Fatal("perm depends on workers")
					}
					for j := i; j < n; j++ {
						if b[i*ld+j] != a[i*ld+j] {
							t.Fatal("U depends on workers")
						}
					}
				}
				_ = rank1
			})
		}
	}
}

func TestPivotedCholeskyEdge(t *testing.T) {
	if _, r := PivotedCholesky([]float64{0, 0, 0, 0}, 2, 2, 1e-12, 1, nil); r != 0 {
		t.Errorf("zero matrix: rank %d", r)
	}
	if _, r := PivotedCholesky([]float64{1, 0, 0, math.NaN()}, 2, 2, 1e-12, 1, nil); r != 0 {
		t.Errorf("NaN diagonal: rank %d, want 0 (a NaN pivot candidate stops the factorisation)", r)
	}
	calls := 0
	a, _ := lowRank(rand.New(rand.NewPCG(1, 1)), 600, 600, 600)
	if _, r := PivotedCholesky(a, 600, 600, 0, 1, func(float64) bool { calls++; return calls < 2 }); r != -1 {
		t.Errorf("abandoned: rank %d", r)
	}
}

func TestSyrkStrictUpper(t *testing.T) {
	rnd := rand.New(rand.NewPCG(33, 34))
	const n, k = 37, 300
	x := randMat(rnd, n, k, k+1)
	c := make([]float64, n*n)
	for i := range c {
		c[i] = math.NaN()
	}
	for i := range n {
		clear(c[i*n+i+1 : i*n+n])
	}
	SyrkStrictUpper(x, n, k, k+1, 0.5, c, n, 2)
	for i := range n {
		for j := range n {
			if j <= i {
				if !math.IsNaN(c[i*n+j]) {
					t.Fatalf("C[%d,%d] written", i, j)
				}
				continue
			}
			s := 0.0
			for l := range k {
				s += x[i*(k+1)+l] * x[j*(k+1)+l]
			}
			if d := math.Abs(c[i*n+j] - 0.5*s); d > 1e-12*float64(k) {
				t.Fatalf("C[%d,%d] = %v, want %v", i, j, c[i*n+j], 0.5*s)
			}
		}
	}
}

// TestGramUpper: C's upper triangle (diagonal included) gets alpha·XᵀX
// added for sizes across tile and block edges; its strict lower triangle
// is not written.
func TestGramUpper(t *testing.T) {
	rnd := rand.New(rand.NewPCG(35, 36))
	for _, sz := range [][2]int{{300, 37}, {1000, 530}, {5, 1}} {
		n, k := sz[0], sz[1]
		x := randMat(rnd, n, k, k+3)
		c := make([]float64, k*k)
		for i := range c {
			c[i] = math.NaN()
		}
		for i := range k {
			for j := i; j < k; j++ {
				c[i*k+j] = 1
			}
		}
		GramUpper(x, n, k, k+3, 0.5, c, k, 2)
		for i := range k {
			for j := range k {
				if j < i {
					if !math.IsNaN(c[i*k+j]) {
						t.Fatalf("%d×%d: C[%d,%d] written", n, k, i, j)
					}
					continue
				}
				s := 0.0
				for l := range n {
					s += x[l*(k+3)+i] * x[l*(k+3)+j]
				}
				if d := math.Abs(c[i*k+j] - 1 - 0.5*s); d > 1e-12*float64(n) {
					t.Fatalf("%d×%d: C[%d,%d] = %v, want %v", n, k, i, j, c[i*k+j], 1+0.5*s)
				}
			}
		}
	}
}
