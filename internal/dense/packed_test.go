package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// packedPrecond runs FALKON's factorisations on one buffer the way package
// precond does: T = chol(K) in the upper triangle, moved to the lower,
// S = T Tᵀ·alpha + shift·I formed in the upper triangle (its diagonal
// through RowNorms2), A = chol(S) there; T's diagonal is returned aside.
func packedPrecond[E Float](ks kernelSet, a []E, n, ld int, alpha, shift float64, workers int) (tdiag []float64, ok bool) {
	if ok, _ := choleskyWith(ks, a, n, ld, workers, nil); !ok {
		return nil, false
	}
	sdiag := make([]float64, n)
	RowNorms2(a, n, ld, alpha, sdiag)
	TransposeUpper(a, n, ld)
	uutPackedWith(ks, a, n, ld, alpha, workers, nil)
	tdiag = make([]float64, n)
	for i := range n {
		tdiag[i] = float64(a[i*ld+i])
		a[i*ld+i] = E(sdiag[i] + shift)
	}
	ok, _ = choleskyWith(ks, a, n, ld, workers, nil)
	return tdiag, ok
}

// TestPackedLayout holds the one-buffer preconditioner to the two-buffer
// one (Cholesky, UUt, Cholesky on separate matrices), for both
// triangles' solves, in float64 and float32.
func TestPackedLayout(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	impl := blas64.Implementation()
	for _, kern := range testKernels() {
		for _, n := range []int{1, 5, 33, 257, 520} {
			if (kern.mr*kern.nr < 4 && n > 300) || (raceEnabled && n > 33) {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d", kern.name, n), func(t *testing.T) {
				ld := n + 2
				const alpha, shift = 0.7, 0.05
				a, _ := spd(rnd, n, ld, 0.1)
				// Reference: two buffers.
				tt := append([]float64(nil), a...)
				if ok, _ := Cholesky(tt, n, ld, 2); !ok {
					t.Fatal("T not PD")
				}
				s := make([]float64, len(a))
				UUt(tt, n, ld, alpha, s, ld, 2)
				for i := range n {
					s[i*ld+i] += shift
				}
				if ok, _ := Cholesky(s, n, ld, 2); !ok {
					t.Fatal("S not PD")
				}
				p := append([]float64(nil), a...)
				tdiag, ok := packedPrecond(wideSet(kern), p, n, ld, alpha, shift, 2)
				if !ok {
					t.Fatal("packed: not PD")
				}
				a32 := make([]float32, len(a))
				for i, v := range a {
					a32[i] = float32(v)
				}
				tdiag32, ok := packedPrecond(wideSet(kern), a32, n, ld, alpha, shift, 2)
				if !ok {
					t.Fatal("packed float32: not PD")
				}
				// The same in float32 arithmetic (bestSet's float32
				// kernel): the tolerance below holds both.
				n32 := make([]float32, len(a))
				for i, v := range a {
					n32[i] = float32(v)
				}
				ndiag32, ok := packedPrecond(kernelSet{k64: kern, k32: best32}, n32, n, ld, alpha, shift, 2)
				if !ok {
					t.Fatal("packed float32 arithmetic: not PD")
				}
				// Factors: T in the lower triangle (diagonal aside), A in the upper.
				for i := range n {
					for j := i; j < n; j++ {
						gotT, gotA := p[j*ld+i], p[i*ld+j]
						if i == j {
							gotT = tdiag[i]
						}
						// The same algorithm on the same data: only the
						// summation order of the masked GEMM may differ.
						if d := math.Abs(gotT - tt[i*ld+j]); d > 1e-12 {
							t.Fatalf("T[%d,%d] = %v, want %v", i, j, gotT, tt[i*ld+j])
						}
						if d := math.Abs(gotA - s[i*ld+j]); d > 1e-12 {
							t.Fatalf("A[%d,%d] = %v, want %v", i, j, gotA, s[i*ld+j])
						}
						// float32: entries are O(1) and the factors are
						// well conditioned (κ(S) ≤ 40), so each step loses
						// a few units of float32 rounding (6e-8) times √n.
						g32T, g32A := float64(a32[j*ld+i]), float64(a32[i*ld+j])
						if i == j {
							g32T = tdiag32[i]
						}
						tol := 1e-6 * (1 + math.Sqrt(float64(n)))
						if d := math.Abs(g32T - tt[i*ld+j]); d > tol {
							t.Fatalf("float32 T[%d,%d] = %v, want %v", i, j, g32T, tt[i*ld+j])
						}
						if d := math.Abs(g32A - s[i*ld+j]); d > tol {
							t.Fatalf("float32 A[%d,%d] = %v, want %v", i, j, g32A, s[i*ld+j])
						}
						n32T, n32A := float64(n32[j*ld+i]), float64(n32[i*ld+j])
						if i == j {
							n32T = ndiag32[i]
						}
						if d := math.Abs(n32T - tt[i*ld+j]); d > tol {
							t.Fatalf("float32 arithmetic T[%d,%d] = %v, want %v", i, j, n32T, tt[i*ld+j])
						}
						if d := math.Abs(n32A - s[i*ld+j]); d > tol {
							t.Fatalf("float32 arithmetic A[%d,%d] = %v, want %v", i, j, n32A, s[i*ld+j])
						}
					}
				}
				// Solves on each packed triangle against Dtrsm on the
				// separate factors.
				for _, k := range []int{1, 3, 40} {
					for _, tr := range []bool{false, true} {
						for _, lower := range []bool{false, true} {
							ref := s
							tri := Tri[float64]{Data: p, N: n, Stride: ld}
							if lower {
								ref = tt
								tri.Lower, tri.Diag = true, tdiag
							}
							b := randMat(rnd, n, k, k)
							want := append([]float64(nil), b...)
							impl.Dtrsm(blas.Left, blas.Upper, trans(tr), blas.NonUnit, n, k, 1, ref, ld, want, k)
							got := append([]float64(nil), b...)
							solveTri(kern, tri, tr, got, k, k, 2)
							for i := range got {
								if d := math.Abs(got[i] - want[i]); !(d <= 1e-10*(1+math.Abs(want[i]))) {
									t.Fatalf("k=%d T=%v lower=%v: x[%d] = %v, want %v", k, tr, lower, i, got[i], want[i])
								}
							}
						}
					}
				}
			})
		}
	}
}

// TestSolveTriFloat32 holds the float32 solves to the float64 ones on the
// same (float32-representable) factor: the arithmetic is float64 in both,
// so they differ by summation order only.
func TestSolveTriFloat32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{1, 6, 37, 300} {
		ld := n + 1
		a, _ := spd(rnd, n, ld, 0.1)
		if ok, _ := Cholesky(a, n, ld, 1); !ok {
			t.Fatal("not PD")
		}
		a32 := make([]float32, len(a))
		for i := range n {
			for j := range n {
				v := a[i*ld+j] // U in both triangles
				if j < i {
					v = a[j*ld+i]
				}
				a32[i*ld+j] = float32(v)
				a[i*ld+j] = float64(a32[i*ld+j])
			}
		}
		diag := make([]float64, n)
		for i := range diag {
			diag[i] = a[i*ld+i]
		}
		for _, k := range []int{1, 2, 33} {
			for _, tr := range []bool{false, true} {
				for _, lower := range []bool{false, true} {
					b := randMat(rnd, n, k, k)
					want := append([]float64(nil), b...)
					SolveTri(Tri[float64]{Data: a, N: n, Stride: ld, Lower: lower}, tr, want, k, k, 2)
					got := append([]float64(nil), b...)
					t32 := Tri[float32]{Data: a32, N: n, Stride: ld, Lower: lower}
					if lower {
						t32.Diag = diag
					}
					SolveTri(t32, tr, got, k, k, 2)
					for i := range got {
						if d := math.Abs(got[i] - want[i]); !(d <= 1e-12*(1+math.Abs(want[i]))) {
							t.Fatalf("n=%d k=%d T=%v lower=%v: x[%d] = %v, want %v", n, k, tr, lower, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestMonitor checks that the monitors see increasing fractions ending at
// 1, and that returning false abandons the call.
func TestMonitor(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	const n = 700
	a, _ := spd(rnd, n, n, 0.1)
	var seen []float64
	mon := func(f float64) bool { seen = append(seen, f); return true }
	if ok, _ := CholeskyMon(a, n, n, 2, mon); !ok {
		t.Fatal("not PD")
	}
	if len(seen) != 4 || seen[0] != 0 || seen[len(seen)-1] != 1 {
		t.Fatalf("Cholesky monitor saw %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("not increasing: %v", seen)
		}
	}
	seen = nil
	TransposeUpper(a, n, n)
	if !UUtPacked(a, n, n, 1, 2, mon) || len(seen) != 4 || seen[3] != 1 {
		t.Fatalf("UUtPacked monitor saw %v", seen)
	}
	b, _ := spd(rnd, n, n, 0.1)
	calls := 0
	stop := func(float64) bool { calls++; return calls < 2 }
	if ok, col := CholeskyMon(b, n, n, 2, stop); ok || col != -1 || calls != 2 {
		t.Fatalf("abandoned Cholesky: ok=%v col=%d after %d calls", ok, col, calls)
	}
	calls = 0
	if UUtPacked(a, n, n, 1, 2, stop) || calls != 2 {
		t.Fatal("UUtPacked was not abandoned")
	}
}

func TestTransposeUpper(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 200} {
		ld := n + 3
		a := make([]float32, max(0, (n-1)*ld+n))
		for i := range a {
			a[i] = float32(i)
		}
		orig := append([]float32(nil), a...)
		TransposeUpper(a, n, ld)
		for i := range n {
			for j := range n {
				want := orig[i*ld+j]
				if j < i {
					want = orig[j*ld+i]
				}
				if a[i*ld+j] != want {
					t.Fatalf("n=%d: a[%d,%d] = %v, want %v", n, i, j, a[i*ld+j], want)
				}
			}
		}
	}
}
