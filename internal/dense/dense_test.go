package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

const eps = 0x1p-52

// testKernels are the kernels exercised by every test: the CPU's own
// (assembly where available), the portable Go kernel, and reference loops
// with odd tile shapes that push every edge case of packing and masking.
func testKernels() []microKernel[float64] {
	ks := append([]microKernel[float64](nil), kernels()...)
	if raceEnabled {
		return append(ks[:1], microKernel[float64]{name: "ref3x5", mr: 3, nr: 5, fn: refKernel[float64](3, 5)})
	}
	if ks[len(ks)-1].name != goKernel.name {
		ks = append(ks, goKernel)
	}
	return append(ks,
		microKernel[float64]{name: "ref3x5", mr: 3, nr: 5, fn: refKernel[float64](3, 5)},
		microKernel[float64]{name: "ref1x1", mr: 1, nr: 1, fn: refKernel[float64](1, 1)},
	)
}

// wideSet is the kernel set that runs everything, float32 storage
// included, through the float64 kernel k.
func wideSet(k microKernel[float64]) kernelSet { return kernelSet{k64: k} }

func randMat(rnd *rand.Rand, r, c, ld int) []float64 {
	a := make([]float64, max(0, (r-1)*ld+c))
	for i := range a {
		a[i] = rnd.NormFloat64()
	}
	return a
}

// spd returns a random symmetric positive definite n×n matrix GᵀG/n + shift·I
// in a row-major slice of stride ld whose lower triangle is filled with NaN,
// and the same matrix as a gonum SymDense.
func spd(rnd *rand.Rand, n, ld int, shift float64) ([]float64, *mat.SymDense) {
	g := mat.NewDense(n, n, randMat(rnd, n, n, n))
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1/float64(n), g.T())
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+shift)
	}
	a := make([]float64, max(0, (n-1)*ld+n))
	for i := range a {
		a[i] = math.NaN()
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a[i*ld+j] = s.At(i, j)
		}
	}
	return a, s
}

func TestGemm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 13, 300}, {40, 33, 9}, {130, 70, 260}, {200, 20, 513}}
	for _, k := range testKernels() {
		for _, sh := range shapes {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					m, n, kk := sh[0], sh[1], sh[2]
					name := fmt.Sprintf("%s/%dx%dx%d/tA=%v/tB=%v", k.name, m, n, kk, tA, tB)
					t.Run(name, func(t *testing.T) {
						ar, ac := m, kk
						if tA {
							ar, ac = kk, m
						}
						br, bc := kk, n
						if tB {
							br, bc = n, kk
						}
						lda, ldb, ldc := ac+3, bc+1, n+2
						a := randMat(rnd, ar, ac, lda)
						b := randMat(rnd, br, bc, ldb)
						c := randMat(rnd, m, n, ldc)
						want := append([]float64(nil), c...)
						alpha := -0.75
						blas64.Implementation().Dgemm(trans(tA), trans(tB), m, n, kk, alpha, a, lda, b, ldb, 1, want, ldc)
						gemmWith(k, tA, tB, m, n, kk, alpha, a, lda, b, ldb, c, ldc, 3)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								// Each element is a k-term dot product: |error| ≤ γ_k Σ|a||b|
								// (Higham, Accuracy and Stability, §3.5); Σ|a||b| ≈ k for N(0,1)
								// entries, so 4·k·eps·(k+|c|) is a generous bound.
								tol := 4 * float64(kk) * eps * (float64(kk) + math.Abs(want[i*ldc+j]))
								if d := math.Abs(c[i*ldc+j] - want[i*ldc+j]); !(d <= tol) {
									t.Fatalf("C[%d,%d] = %v, want %v (diff %g > %g)", i, j, c[i*ldc+j], want[i*ldc+j], d, tol)
								}
							}
						}
						// Padding between rows of C is untouched.
						for i := 0; i+1 < m; i++ {
							for j := n; j < ldc; j++ {
								if c[i*ldc+j] != want[i*ldc+j] {
									t.Fatalf("padding C[%d,%d] changed", i, j)
								}
							}
						}
					})
				}
			}
		}
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// upperResidual returns max_ij |(UᵀU − A)_ij| / (|Uᵀ||U|)_ij over the
// upper triangle: the backward error of a Cholesky factor in units of the
// componentwise bound γ_{n+1}|Uᵀ||U| (Higham, Theorem 10.3).
func upperResidual(u []float64, n, ldu int, a *mat.SymDense) float64 {
	worst := 0.0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			var s, abs float64
			for p := 0; p <= i; p++ {
				s += u[p*ldu+i] * u[p*ldu+j]
				abs += math.Abs(u[p*ldu+i] * u[p*ldu+j])
			}
			worst = max(worst, math.Abs(s-a.At(i, j))/abs)
		}
	}
	return worst
}

func TestCholesky(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, k := range testKernels() {
		for _, n := range []int{0, 1, 2, 5, 31, 32, 33, 70, 255, 256, 257, 300, 530} {
			if (k.mr*k.nr < 4 || raceEnabled) && n > 300 {
				continue // the 1×1 reference kernel and the race detector are slow
			}
			t.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(t *testing.T) {
				ld := n + 5
				if n == 0 {
					if ok, col := choleskyWith(wideSet(k), []float64(nil), 0, 1, 2, nil); !ok || col != -1 {
						t.Fatal("n=0 failed")
					}
					return
				}
				a, s := spd(rnd, n, ld, 0.1)
				ok, col := choleskyWith(wideSet(k), a, n, ld, 2, nil)
				if !ok || col != -1 {
					t.Fatalf("Cholesky failed at column %d", col)
				}
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						if !math.IsNaN(a[i*ld+j]) {
							t.Fatalf("lower triangle [%d,%d] written", i, j)
						}
					}
				}
				// Backward error within γ_{n+1}|Uᵀ||U| (Higham, Thm 10.3).
				if r := upperResidual(a, n, ld, s); r > float64(n+1)*eps {
					t.Errorf("backward error %g > (n+1)·eps = %g", r, float64(n+1)*eps)
				}
				if n == 0 {
					return
				}
				// Forward error against gonum: ‖ΔU‖/‖U‖ ≲ κ(A)·n·eps (Higham,
				// Thm 10.8 gives O(κ₂(A)·u) for the factor; n·eps covers the
				// different summation orders of both implementations).
				var ch mat.Cholesky
				if !ch.Factorize(s) {
					t.Fatal("gonum: not PD")
				}
				var ug mat.TriDense
				ch.UTo(&ug)
				cond := ch.Cond()
				var diff, norm float64
				for i := 0; i < n; i++ {
					for j := i; j < n; j++ {
						d := a[i*ld+j] - ug.At(i, j)
						diff += d * d
						norm += ug.At(i, j) * ug.At(i, j)
					}
				}
				if rel := math.Sqrt(diff / norm); rel > cond*float64(n)*eps {
					t.Errorf("‖U − U_gonum‖/‖U‖ = %g > κ·n·eps = %g", rel, cond*float64(n)*eps)
				}
			})
		}
	}
}

func TestCholeskyWorkersIdentical(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	n := 600
	if raceEnabled {
		n = 300
	}
	a, _ := spd(rnd, n, n, 0.5)
	ref := append([]float64(nil), a...)
	Cholesky(ref, n, n, 1)
	same := func(what string, w int, got, want []float64) {
		t.Helper()
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("%s workers=%d: element %d = %v, workers=1 gives %v", what, w, i, got[i], want[i])
			}
		}
	}
	refC := make([]float64, n*n)
	UUt(ref, n, n, 0.5, refC, n, 1)
	// k = 10 splits right-hand sides among workers, k = 130 splits columns
	// in the GEMM-based solve.
	refX := map[int][]float64{}
	x0 := map[int][]float64{}
	for _, k := range []int{10, 130} {
		x0[k] = randMat(rnd, n, k, k)
		refX[k] = append([]float64(nil), x0[k]...)
		SolveUpperT(ref, n, n, refX[k], k, k, 1)
	}
	for _, w := range []int{2, 3, 8} {
		b := append([]float64(nil), a...)
		Cholesky(b, n, n, w)
		same("Cholesky", w, b, ref)
		c := make([]float64, n*n)
		UUt(ref, n, n, 0.5, c, n, w)
		same("UUt", w, c, refC)
		for k, x := range x0 {
			x = append([]float64(nil), x...)
			SolveUpperT(ref, n, n, x, k, k, w)
			same(fmt.Sprintf("SolveUpperT k=%d", k), w, x, refX[k])
		}
	}
}

func TestCholeskyNotPD(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ n, bad int }{{1, 0}, {10, 3}, {100, 99}, {400, 0}, {400, 40}, {400, 300}} {
		t.Run(fmt.Sprintf("n=%d/bad=%d", tc.n, tc.bad), func(t *testing.T) {
			n := tc.n
			a, _ := spd(rnd, n, n, 1)
			// Replace row/column bad by a copy of row/column 0 scaled, making
			// the leading (bad+1)×(bad+1) block singular... simpler: make the
			// Schur complement at bad negative by setting A[bad][bad] very
			// negative; leading minors before bad are unchanged.
			a[tc.bad*n+tc.bad] = -1e3
			ok, col := Cholesky(a, n, n, 2)
			if ok || col != tc.bad {
				t.Fatalf("Cholesky = %v, %d; want false, %d", ok, col, tc.bad)
			}
		})
	}
	a := []float64{math.NaN()}
	if ok, col := Cholesky(a, 1, 1, 1); ok || col != 0 {
		t.Fatalf("NaN: Cholesky = %v, %d", ok, col)
	}
}

// upperOf returns the upper triangle of a (stride ld) as a TriDense.
func upperOf(a []float64, n, ld int) *mat.TriDense {
	u := mat.NewTriDense(n, mat.Upper, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			u.SetTri(i, j, a[i*ld+j])
		}
	}
	return u
}

func TestUUt(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, k := range testKernels() {
		for _, n := range []int{1, 3, 17, 255, 256, 257, 600} {
			if (k.mr*k.nr < 4 && n > 300) || (raceEnabled && n > 3 && n != 257) {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(t *testing.T) {
				ld := n + 3
				u := randMat(rnd, n, n, ld) // lower triangle holds garbage, must be ignored
				c := make([]float64, max(0, (n-1)*ld+n))
				for i := range c {
					c[i] = math.NaN()
				}
				alpha := 0.5
				uutWith(wideSet(k), u, n, ld, alpha, c, ld, 2)
				// Reference through gonum's Dgemm on a dense copy (its Dtrmm
				// path for TriDense is two orders of magnitude slower).
				ut := mat.DenseCopyOf(upperOf(u, n, ld))
				var want mat.Dense
				want.Mul(ut, ut.T())
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						got := c[i*ld+j]
						if j < i {
							if !math.IsNaN(got) {
								t.Fatalf("lower C[%d,%d] written", i, j)
							}
							continue
						}
						// γ_n (|U||Uᵀ|)_ij ≤ n·eps·(n−j) for N(0,1) entries, bounded loosely.
						tol := 2 * float64(n) * eps * float64(n-j+1) * alpha * 4
						if d := math.Abs(got - alpha*want.At(i, j)); !(d <= tol) {
							t.Fatalf("C[%d,%d] = %v, want %v", i, j, got, alpha*want.At(i, j))
						}
					}
				}
			})
		}
	}
}

func TestSolve(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	impl := blas64.Implementation()
	for _, kern := range testKernels() {
		for _, n := range []int{1, 7, 16, 17, 100, 300} {
			for _, k := range []int{1, 2, 3, 8, 21, 40} {
				for _, tr := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/n=%d/k=%d/T=%v", kern.name, n, k, tr), func(t *testing.T) {
						ldu, ldb := n+1, k+2
						// A well-conditioned triangular factor: the Cholesky factor
						// of an SPD matrix with eigenvalues in [0.1, ~4].
						a, _ := spd(rnd, n, ldu, 0.1)
						if ok, _ := Cholesky(a, n, ldu, 1); !ok {
							t.Fatal("not PD")
						}
						b := randMat(rnd, n, k, ldb)
						want := append([]float64(nil), b...)
						impl.Dtrsm(blas.Left, blas.Upper, trans(tr), blas.NonUnit, n, k, 1, a, ldu, want, ldb)
						solveWith(kern, tr, a, n, ldu, b, k, ldb, 2)
						// Forward error ≤ κ(U)·n·eps·|x| (Higham, Thm 8.5); κ(U) ≤ √κ(A) ≈ 10 here.
						for i := 0; i < n; i++ {
							for j := 0; j < k; j++ {
								x, w := b[i*ldb+j], want[i*ldb+j]
								if d := math.Abs(x - w); !(d <= 100*float64(n)*eps*(1+math.Abs(w))) {
									t.Fatalf("X[%d,%d] = %v, want %v", i, j, x, w)
								}
							}
						}
						if k == 1 {
							x := make([]float64, n)
							for i := range x {
								x[i] = rnd.NormFloat64()
							}
							w := append([]float64(nil), x...)
							impl.Dtrsv(blas.Upper, trans(tr), blas.NonUnit, n, a, ldu, w, 1)
							if tr {
								SolveUpperTVec(a, n, ldu, x)
							} else {
								SolveUpperVec(a, n, ldu, x)
							}
							for i := range x {
								if d := math.Abs(x[i] - w[i]); !(d <= 100*float64(n)*eps*(1+math.Abs(w[i]))) {
									t.Fatalf("vec x[%d] = %v, want %v", i, x[i], w[i])
								}
							}
						}
					})
				}
			}
		}
	}
}

// FuzzKernel holds every micro-kernel to the reference loop.
func FuzzKernel(f *testing.F) {
	f.Add(uint64(1), uint16(1), uint8(0))
	f.Add(uint64(2), uint16(256), uint8(3))
	f.Add(uint64(3), uint16(37), uint8(17))
	f.Fuzz(func(t *testing.T, seed uint64, kc16 uint16, pad uint8) {
		kc := int(kc16%600) + 1
		rnd := rand.New(rand.NewPCG(seed, 99))
		for _, k := range kernels() {
			a := randMat(rnd, kc*k.mr, 1, 1)
			b := randMat(rnd, kc*k.nr, 1, 1)
			ldc := k.nr + int(pad%8)
			c := randMat(rnd, k.mr, ldc, ldc)
			want := append([]float64(nil), c...)
			refKernel[float64](k.mr, k.nr)(kc, a, b, want, ldc)
			k.fn(kc, a, b, c, ldc)
			for i := range c {
				// FMA and separate multiply-add differ by at most one
				// rounding per term: ≤ 2·kc·eps·Σ|a||b| ≈ 2·kc²·eps.
				if d := math.Abs(c[i] - want[i]); !(d <= 2*float64(kc*kc)*eps+eps*math.Abs(want[i])) {
					t.Fatalf("%s kc=%d: c[%d] = %v, want %v", k.name, kc, i, c[i], want[i])
				}
			}
		}
	})
}

// FuzzRows holds axpy4 and dot4 (assembly on amd64) to their Go loops.
func FuzzRows(f *testing.F) {
	f.Add(uint64(1), uint16(1), uint8(0))
	f.Add(uint64(2), uint16(8), uint8(3))
	f.Add(uint64(3), uint16(1003), uint8(17))
	f.Fuzz(func(t *testing.T, seed uint64, n16 uint16, pad uint8) {
		n := int(n16 % 2000)
		ldu := n + int(pad)
		rnd := rand.New(rand.NewPCG(seed, 7))
		u := randMat(rnd, 4, n, max(ldu, 1))
		x := randMat(rnd, 1, n, max(n, 1))
		a := [4]float64{rnd.NormFloat64(), rnd.NormFloat64(), rnd.NormFloat64(), rnd.NormFloat64()}
		if n == 0 {
			u, x = nil, nil
		}
		// One product per term, summed over ≤ 4 terms (axpy) or n (dot):
		// FMA changes each by one rounding, ≤ 4·eps·Σ|terms| resp. 2n·eps·Σ|terms|.
		y, want := append([]float64(nil), x...), append([]float64(nil), x...)
		axpy4(&a, u, ldu, y)
		axpy4Go(&a, u, ldu, want)
		for j := range y {
			if d := math.Abs(y[j] - want[j]); !(d <= 16*eps*(1+math.Abs(want[j]))*4) {
				t.Fatalf("axpy4 n=%d: y[%d] = %v, want %v", n, j, y[j], want[j])
			}
		}
		s, ws := dot4(u, ldu, x), dot4Go(u, ldu, x)
		for r := range s {
			if d := math.Abs(s[r] - ws[r]); !(d <= 2*float64(n+1)*eps*float64(n+1)) {
				t.Fatalf("dot4 n=%d: s[%d] = %v, want %v", n, r, s[r], ws[r])
			}
		}
	})
}

func TestSolveAllocs(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 14))
	n := 50
	a, _ := spd(rnd, n, n, 1)
	Cholesky(a, n, n, 1)
	x := randMat(rnd, n, 1, 1)
	for name, f := range map[string]func(){
		"SolveUpper k=1":  func() { SolveUpper(a, n, n, x, 1, 1, 2) },
		"SolveUpperT k=1": func() { SolveUpperT(a, n, n, x, 1, 1, 2) },
		"SolveUpperVec":   func() { SolveUpperVec(a, n, n, x) },
		"SolveUpperTVec":  func() { SolveUpperTVec(a, n, n, x) },
	} {
		if got := testing.AllocsPerRun(10, f); got != 0 {
			t.Errorf("%s allocates %v times per call", name, got)
		}
	}
}

// FuzzCholesky holds the factorisation with the CPU's fastest kernel to
// the same algorithm with the portable Go kernel: the two differ only by
// fused versus separate multiply-adds, so U agrees to κ(A)·n·eps.
func FuzzCholesky(f *testing.F) {
	f.Add(uint64(1), uint16(5))
	f.Add(uint64(2), uint16(257))
	f.Add(uint64(3), uint16(70))
	f.Fuzz(func(t *testing.T, seed uint64, n16 uint16) {
		n := int(n16%300) + 1
		rnd := rand.New(rand.NewPCG(seed, 5))
		a, s := spd(rnd, n, n, 0.1)
		b := append([]float64(nil), a...)
		ok1, _ := choleskyWith(wideSet(kernels()[0]), a, n, n, 2, nil)
		ok2, _ := choleskyWith(wideSet(goKernel), b, n, n, 1, nil)
		if !ok1 || !ok2 {
			t.Fatalf("not PD: %v %v", ok1, ok2)
		}
		var ch mat.Cholesky
		ch.Factorize(s)
		tol := ch.Cond() * float64(n) * eps
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				if d := math.Abs(a[i*n+j] - b[i*n+j]); !(d <= tol*(1+math.Abs(b[i*n+j]))) {
					t.Fatalf("U[%d,%d] = %v with %s, %v with %s", i, j, a[i*n+j], kernels()[0].name, b[i*n+j], goKernel.name)
				}
			}
		}
	})
}

func TestShapePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Cholesky short":  func() { Cholesky(make([]float64, 8), 3, 3, 1) },
		"Cholesky stride": func() { Cholesky(make([]float64, 9), 3, 2, 1) },
		"UUt C short":     func() { UUt(make([]float64, 9), 3, 3, 1, make([]float64, 5), 3, 1) },
		"Solve B short":   func() { SolveUpper(make([]float64, 9), 3, 3, make([]float64, 5), 2, 2, 1) },
		"SolveVec short":  func() { SolveUpperVec(make([]float64, 9), 3, 3, make([]float64, 2)) },
		"Gemm negative":   func() { Gemm(false, false, -1, 2, 2, 1, nil, 2, nil, 2, nil, 2, 1) },
		"Gemm A stride": func() {
			Gemm(false, false, 2, 2, 3, 1, make([]float64, 6), 2, make([]float64, 6), 2, make([]float64, 4), 2, 1)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
