package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// eps32 is float32's unit roundoff ×2 (the spacing of floats at 1).
const eps32 = 0x1p-23

// testKernels32 are the float32 kernels exercised by the float32 tests:
// the CPU's own, the portable Go kernel and odd reference tiles.
func testKernels32() []microKernel[float32] {
	ks := append([]microKernel[float32](nil), kernels32()...)
	if raceEnabled {
		return append(ks[:1], microKernel[float32]{name: "ref32-3x5", mr: 3, nr: 5, fn: refKernel[float32](3, 5)})
	}
	return append(ks,
		microKernel[float32]{name: "ref32-3x5", mr: 3, nr: 5, fn: refKernel[float32](3, 5)},
		microKernel[float32]{name: "ref32-1x1", mr: 1, nr: 1, fn: refKernel[float32](1, 1)},
	)
}

// FuzzKernel32 holds every float32 micro-kernel to the reference loop and
// both to the exact (float64) sum of the same float32 products: a kc-term
// sum in float32 is within γ_kc Σ|a||b| of it (Higham, Accuracy and
// Stability, §3.1), with or without fused multiply-adds.
func FuzzKernel32(f *testing.F) {
	f.Add(uint64(1), uint16(1), uint8(0))
	f.Add(uint64(2), uint16(256), uint8(3))
	f.Add(uint64(3), uint16(37), uint8(17))
	f.Fuzz(func(t *testing.T, seed uint64, kc16 uint16, pad uint8) {
		kc := int(kc16%600) + 1
		rnd := rand.New(rand.NewPCG(seed, 98))
		for _, k := range kernels32() {
			a := to32(randMat(rnd, kc*k.mr, 1, 1))
			b := to32(randMat(rnd, kc*k.nr, 1, 1))
			ldc := k.nr + int(pad%8)
			c := to32(randMat(rnd, k.mr, ldc, ldc))
			want := append([]float32(nil), c...)
			refKernel[float32](k.mr, k.nr)(kc, a, b, want, ldc)
			k.fn(kc, a, b, c, ldc)
			for i := 0; i < k.mr; i++ {
				for j := 0; j < ldc; j++ {
					got, ref := c[i*ldc+j], want[i*ldc+j]
					if j >= k.nr {
						if got != ref {
							t.Fatalf("%s: padding c[%d,%d] changed", k.name, i, j)
						}
						continue
					}
					exact, mag := 0.0, 0.0
					for p := 0; p < kc; p++ {
						v := float64(a[p*k.mr+i]) * float64(b[p*k.nr+j])
						exact += v
						mag += math.Abs(v)
					}
					tol := float64(kc+1) * eps32 * (mag + math.Abs(exact) + 1)
					if d := math.Abs(float64(got) - float64(ref)); !(d <= 2*tol) {
						t.Fatalf("%s kc=%d: c[%d,%d] = %v, reference loop %v", k.name, kc, i, j, got, ref)
					}
				}
			}
		}
	})
}

// TestGemm32 runs the float32 GEMM driver with every option (transposes,
// upper and strict masks, triangular operands) against the same GEMM in
// float64 on the same float32 data.
func TestGemm32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 42))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 13, 300}, {40, 33, 9}, {130, 70, 260}, {200, 200, 513}}
	type opt struct{ tA, tB, upper, strict bool }
	var opts []opt
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			opts = append(opts, opt{tA: tA, tB: tB})
		}
	}
	opts = append(opts, opt{tA: true, upper: true}, opt{tB: true, upper: true, strict: true})
	for _, k := range testKernels32() {
		for _, sh := range shapes {
			for _, o := range opts {
				m, n, kk := sh[0], sh[1], sh[2]
				if o.upper {
					n = m
				}
				if k.mr*k.nr < 4 && kk > 300 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%dx%dx%d/%+v", k.name, m, n, kk, o), func(t *testing.T) {
					ar, ac := m, kk
					if o.tA {
						ar, ac = kk, m
					}
					br, bc := kk, n
					if o.tB {
						br, bc = n, kk
					}
					lda, ldb, ldc := ac+3, bc+1, n+2
					a := to32(randMat(rnd, ar, ac, lda))
					b := to32(randMat(rnd, br, bc, ldb))
					c := to32(randMat(rnd, m, n, ldc))
					a64, b64, want := to64(a), to64(b), to64(c)
					const alpha = -0.75
					ws64 := newWorkspace(best, 2)
					defer ws64.release()
					gemm(ws64, &gemmArgs[float64]{m: m, n: n, k: kk, alpha: alpha, a: a64, lda: lda, tA: o.tA, b: b64, ldb: ldb, tB: o.tB, c: want, ldc: ldc, upper: o.upper, strict: o.strict}, ws64.s)
					ws := newWorkspace(k, 3)
					defer ws.release()
					gemm(ws, &gemmArgs[float32]{m: m, n: n, k: kk, alpha: alpha, a: a, lda: lda, tA: o.tA, b: b, ldb: ldb, tB: o.tB, c: c, ldc: ldc, upper: o.upper, strict: o.strict}, ws.s)
					for i := range c {
						// A k-term float32 dot product of N(0,1) entries:
						// |error| ≤ γ_k Σ|a||b| ≈ k·eps32·k, loosely.
						tol := 2 * float64(kk) * eps32 * (float64(kk) + math.Abs(want[i]))
						if d := math.Abs(float64(c[i]) - want[i]); !(d <= tol) {
							t.Fatalf("C[%d] = %v, want %v (diff %g > %g)", i, c[i], want[i], d, tol)
						}
					}
				})
			}
		}
	}
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// spd32 is spd rounded to float32 (NaN below the diagonal), with the
// float64 copy of the same float32 values.
func spd32(rnd *rand.Rand, n, ld int, shift float64) ([]float32, []float64) {
	a, _ := spd(rnd, n, ld, shift)
	a32 := to32(a)
	return a32, to64(a32)
}

// relDiffUpper is ‖X − Y‖_F / ‖Y‖_F over the upper triangles.
func relDiffUpper(x []float32, y []float64, n, ld int) float64 {
	var d, s float64
	for i := range n {
		for j := i; j < n; j++ {
			e := float64(x[i*ld+j]) - y[i*ld+j]
			d += e * e
			s += y[i*ld+j] * y[i*ld+j]
		}
	}
	return math.Sqrt(d / s)
}

// backward32 is max |UᵀU − A| / max |A| for the float32 factor in u's
// upper triangle and A (float64, upper triangle) in a.
func backward32(u []float32, a []float64, n, ld int) float64 {
	var worst, amax float64
	for i := range n {
		for j := i; j < n; j++ {
			s := 0.0
			for p := 0; p <= i; p++ {
				s += float64(u[p*ld+i]) * float64(u[p*ld+j])
			}
			worst = max(worst, math.Abs(s-a[i*ld+j]))
			amax = max(amax, math.Abs(a[i*ld+j]))
		}
	}
	return worst / amax
}

// TestCholesky32 holds the float32 factorisation (float32 trailing
// updates and panel solves, float64 diagonal blocks) to the float64 one of
// the same float32 matrix, at sizes around the panel and kernel edges and
// with odd strides, and checks its backward error: Higham's Thm 10.3 bound
// γ_{n+1}|Uᵀ||U| in float32 is (n+1)·eps32/2 relative for these matrices.
func TestCholesky32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(43, 44))
	for _, k := range testKernels32() {
		for _, n := range []int{1, 2, 5, 31, 33, 70, 255, 256, 257, 300, 530, 777} {
			if (k.mr*k.nr < 4 || raceEnabled) && n > 300 {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(t *testing.T) {
				ld := n + 3
				a32, a64 := spd32(rnd, n, ld, 0.1)
				ks := kernelSet{k64: best, k32: k}
				if ok, col := choleskyWith(ks, a32, n, ld, 2, nil); !ok {
					t.Fatalf("float32 Cholesky failed at column %d", col)
				}
				for i := range n {
					for j := range i {
						if !math.IsNaN(float64(a32[i*ld+j])) {
							t.Fatalf("lower triangle [%d,%d] written", i, j)
						}
					}
				}
				if r := backward32(a32, a64, n, ld); r > float64(n+1)*eps32 {
					t.Errorf("backward error %g > (n+1)·eps32 = %g", r, float64(n+1)*eps32)
				}
				u64 := append([]float64(nil), a64...)
				if ok, _ := Cholesky(u64, n, ld, 2); !ok {
					t.Fatal("float64 Cholesky failed")
				}
				// κ(A) ≤ 40 here: the factor's forward error is
				// O(κ·n·eps32) (Higham, Thm 10.8), far less in practice.
				if rel := relDiffUpper(a32, u64, n, ld); rel > 4*math.Sqrt(float64(n))*eps32 {
					t.Errorf("‖U32 − U64‖/‖U64‖ = %g > 4√n·eps32 = %g", rel, 4*math.Sqrt(float64(n))*eps32)
				}
			})
		}
	}
}

// TestCholesky32NotPD checks that the float32 path reports the failing
// column as the float64 one does.
func TestCholesky32NotPD(t *testing.T) {
	rnd := rand.New(rand.NewPCG(45, 46))
	for _, tc := range []struct{ n, bad int }{{10, 3}, {400, 40}, {600, 300}} {
		a32, _ := spd32(rnd, tc.n, tc.n, 0.5)
		a32[tc.bad*tc.n+tc.bad] = -1
		if ok, col := Cholesky(a32, tc.n, tc.n, 2); ok || col != tc.bad {
			t.Errorf("n=%d: ok=%v col=%d, want false %d", tc.n, ok, col, tc.bad)
		}
	}
}

// TestUUt32 holds the float32 U Uᵀ (UUt and UUtPacked) to float64 on the
// same float32 factor: each entry is a sum of up to n products formed in
// float32 per 256-term block, so its error is ≤ γ_n (|U||Uᵀ|)_ij.
func TestUUt32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(47, 48))
	for _, k := range testKernels32() {
		for _, n := range []int{1, 3, 17, 255, 257, 600} {
			if (k.mr*k.nr < 4 || raceEnabled) && n > 257 {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(t *testing.T) {
				ld := n + 5
				ks := kernelSet{k64: best, k32: k}
				u := to32(randMat(rnd, n, n, ld))
				c := make([]float32, len(u))
				for i := range c {
					c[i] = float32(math.NaN())
				}
				const alpha = 0.5
				uutWith(ks, u, n, ld, alpha, c, ld, 2)
				want := make([]float64, len(u))
				uutWith(bestSet, to64(u), n, ld, alpha, want, ld, 2)
				// The packed form: U transposed in the lower triangle.
				p := make([]float32, len(u))
				for i := range n {
					for j := i; j < n; j++ {
						p[j*ld+i] = u[i*ld+j]
						if j > i {
							p[i*ld+j] = float32(math.NaN())
						}
					}
				}
				uutPackedWith(ks, p, n, ld, alpha, 2, nil)
				for i := range n {
					for j := range n {
						got := c[i*ld+j]
						if j < i {
							if !math.IsNaN(float64(got)) {
								t.Fatalf("lower C[%d,%d] written", i, j)
							}
							continue
						}
						tol := 2 * float64(n) * eps32 * float64(n-j+1) * alpha * 4
						if d := math.Abs(float64(got) - want[i*ld+j]); !(d <= tol) {
							t.Fatalf("C[%d,%d] = %v, want %v", i, j, got, want[i*ld+j])
						}
						if j > i && p[i*ld+j] != got {
							t.Fatalf("UUtPacked C[%d,%d] = %v, UUt %v", i, j, p[i*ld+j], got)
						}
					}
				}
			})
		}
	}
}

// TestTrsm32 holds the float32 recursive triangular solves (the panel
// solves of Cholesky) to float64 ones on the same float32 data.
func TestTrsm32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(49, 50))
	for _, k := range testKernels32() {
		for _, n := range []int{1, 7, 33, 100, 256, 301} {
			for _, m := range []int{1, 5, 64, 200} {
				for _, tr := range []bool{false, true} {
					if (k.mr*k.nr < 4 || raceEnabled) && n*m > 10000 {
						continue
					}
					t.Run(fmt.Sprintf("%s/n=%d/m=%d/T=%v", k.name, n, m, tr), func(t *testing.T) {
						ldu, ldb := n+1, m+3
						a, _ := spd(rnd, n, ldu, 0.1)
						if ok, _ := Cholesky(a, n, ldu, 1); !ok {
							t.Fatal("not PD")
						}
						u := to32(a)
						b := to32(randMat(rnd, n, m, ldb))
						want := to64(b)
						ws64 := newWorkspace(best, 1)
						defer ws64.release()
						trsmPar(ws64, tr, to64(u), n, ldu, want, m, ldb, 1)
						ws := newWorkspace(k, 2)
						defer ws.release()
						trsmPar(ws, tr, u, n, ldu, b, m, ldb, 2)
						// Forward error ≤ κ(U)·n·eps32·|x| (Higham, Thm 8.5),
						// κ(U) ≤ √κ(A) ≤ 7 here.
						for i := range n {
							for j := range m {
								x, w := float64(b[i*ldb+j]), want[i*ldb+j]
								if d := math.Abs(x - w); !(d <= 10*float64(n)*eps32*(1+math.Abs(w))) {
									t.Fatalf("X[%d,%d] = %v, want %v", i, j, x, w)
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestWorkersIdentical32 checks the package's invariant for float32: the
// same bits for any number of workers.
func TestWorkersIdentical32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(51, 52))
	n := 700
	if raceEnabled {
		n = 300
	}
	a, _ := spd32(rnd, n, n, 0.5)
	ref := append([]float32(nil), a...)
	Cholesky(ref, n, n, 1)
	refC := make([]float32, n*n)
	UUt(ref, n, n, 0.5, refC, n, 1)
	refP := append([]float32(nil), ref...)
	TransposeUpper(refP, n, n)
	UUtPacked(refP, n, n, 0.5, 1, nil)
	v0, _ := spd32(rnd, n, n, 0.5)
	refV := append([]float32(nil), v0...)
	refPerm, refRank := PivotedCholesky(refV, n, n, 1e-6, 1, nil)
	same := func(what string, w int, got, want []float32) {
		t.Helper()
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("%s workers=%d: element %d = %v, workers=1 gives %v", what, w, i, got[i], want[i])
			}
		}
	}
	for _, w := range []int{2, 3, 8} {
		b := append([]float32(nil), a...)
		Cholesky(b, n, n, w)
		same("Cholesky", w, b, ref)
		c := make([]float32, n*n)
		UUt(ref, n, n, 0.5, c, n, w)
		same("UUt", w, c, refC)
		p := append([]float32(nil), ref...)
		TransposeUpper(p, n, n)
		UUtPacked(p, n, n, 0.5, w, nil)
		same("UUtPacked", w, p, refP)
		v := append([]float32(nil), v0...)
		perm, rank := PivotedCholesky(v, n, n, 1e-6, w, nil)
		if rank != refRank || fmt.Sprint(perm) != fmt.Sprint(refPerm) {
			t.Fatalf("PivotedCholesky workers=%d: rank %d, workers=1 gives %d (or the permutations differ)", w, rank, refRank)
		}
		same("PivotedCholesky", w, v, refV)
	}
}

// FuzzRows32 holds axpy4F32 (assembly on amd64) to its Go loop: four
// products summed in float32, fused or not, differ by ≤ 4 roundings of
// Σ|terms|.
func FuzzRows32(f *testing.F) {
	f.Add(uint64(1), uint16(1), uint8(0))
	f.Add(uint64(2), uint16(16), uint8(3))
	f.Add(uint64(3), uint16(1003), uint8(17))
	f.Fuzz(func(t *testing.T, seed uint64, n16 uint16, pad uint8) {
		n := int(n16 % 2000)
		ldu := max(n+int(pad), 1)
		rnd := rand.New(rand.NewPCG(seed, 8))
		u := to32(randMat(rnd, 4, n, ldu))
		x := to32(randMat(rnd, 1, n, max(n, 1)))
		a := [4]float32{float32(rnd.NormFloat64()), float32(rnd.NormFloat64()), float32(rnd.NormFloat64()), float32(rnd.NormFloat64())}
		if n == 0 {
			u, x = nil, nil
		}
		y, want := append([]float32(nil), x...), append([]float32(nil), x...)
		axpy4F32(&a, u, ldu, y)
		axpy4F32Go(&a, u, ldu, want)
		for j := range y {
			mag := math.Abs(float64(x[j]))
			for r := range 4 {
				mag += math.Abs(float64(a[r]) * float64(u[r*ldu+j]))
			}
			if d := math.Abs(float64(y[j]) - float64(want[j])); !(d <= 8*eps32*mag) {
				t.Fatalf("axpy4F32 n=%d: y[%d] = %v, want %v", n, j, y[j], want[j])
			}
		}
	})
}

// TestPivotedCholesky32 runs the pivoted factorisation on float32
// storage (float32 panel rows and trailing updates): it finds the rank of
// a float32 G Gᵀ and reproduces it to float32 accuracy, n·eps32·max|A|
// (Higham, Thm 10.14).
func TestPivotedCholesky32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(53, 54))
	for _, k := range testKernels32() {
		for _, c := range []struct{ n, r int }{{5, 2}, {300, 70}, {600, 150}, {600, 600}} {
			if (k.mr*k.nr < 4 || raceEnabled) && c.n > 300 {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d/r=%d", k.name, c.n, c.r), func(t *testing.T) {
				n, ld := c.n, c.n+2
				a64, full := lowRank(rnd, n, c.r, ld)
				if c.r == n {
					for i := range n {
						a64[i*ld+i] += float64(n)
						full[i*n+i] += float64(n)
					}
				}
				a := to32(a64)
				perm, rank := pivotedWith(kernelSet{k64: best, k32: k}, a, n, ld, 1e-5, 2, nil)
				if rank != c.r {
					t.Fatalf("rank %d, want %d", rank, c.r)
				}
				scale := 0.0
				for _, v := range full {
					scale = max(scale, math.Abs(v))
				}
				worst := 0.0
				for x := range n {
					for y := x; y < n; y++ {
						s := 0.0
						for i := 0; i < rank && i <= x; i++ {
							s += float64(a[i*ld+x]) * float64(a[i*ld+y])
						}
						worst = max(worst, math.Abs(s-full[perm[x]*n+perm[y]]))
					}
				}
				if worst > float64(n)*eps32*scale {
					t.Errorf("max |UᵀU − PᵀAP| = %g > n·eps32·max|A| = %g", worst, float64(n)*eps32*scale)
				}
			})
		}
	}
}

// FuzzAxpyScale32 holds axpyF32 and scaleF32 (assembly on amd64) to their
// Go loops: one product and one sum in float32 each, so they differ at
// most by the rounding of a fused multiply-add, ≤ 2 units of |y| + |a x|.
func FuzzAxpyScale32(f *testing.F) {
	f.Add(uint64(1), uint16(1), uint8(0))
	f.Add(uint64(2), uint16(16), uint8(3))
	f.Add(uint64(3), uint16(1003), uint8(17))
	f.Fuzz(func(t *testing.T, seed uint64, n16 uint16, off uint8) {
		n := int(n16 % 2000)
		o := int(off % 16)
		rnd := rand.New(rand.NewPCG(seed, 9))
		x := to32(randMat(rnd, 1, n+o, n+o))[o:]
		y0 := to32(randMat(rnd, 1, n+o, n+o))[o:]
		a := float32(rnd.NormFloat64())
		y, want := append([]float32(nil), y0...), append([]float32(nil), y0...)
		axpyF32(a, x, y)
		axpyF32Go(a, x, want)
		for j := range y {
			mag := math.Abs(float64(y0[j])) + math.Abs(float64(a)*float64(x[j]))
			if d := math.Abs(float64(y[j]) - float64(want[j])); !(d <= 2*eps32*mag) {
				t.Fatalf("axpyF32 n=%d: y[%d] = %v, want %v", n, j, y[j], want[j])
			}
		}
		got, ref := append([]float32(nil), x...), append([]float32(nil), x...)
		scaleF32(a, got)
		scaleF32Go(a, ref)
		for j := range got {
			if got[j] != ref[j] {
				t.Fatalf("scaleF32 n=%d: x[%d] = %v, want %v", n, j, got[j], ref[j])
			}
		}
	})
}

// TestPackT12 holds the AVX-512 packing of transposed float32 panels to
// packA's element-by-element loop, bit for bit: full and partial panels,
// groups of every length, any alpha, and triangular operands (whose
// panels above the triangle it packs, the loop the rest).
func TestPackT12(t *testing.T) {
	if packT12 == nil {
		t.Skip("no AVX-512 packing on this build or CPU")
	}
	keep := packT12
	defer func() { packT12 = keep }()
	rnd := rand.New(rand.NewPCG(61, 62))
	for _, mb := range []int{1, 11, 12, 13, 24, 191, 192, 193, 400} {
		for _, kb := range []int{1, 7, 512} {
			for _, alpha := range []float64{1, -1, 0.37} {
				for _, triD := range []int{-1, 2, 150} {
					tri := triD >= 0
					lda := mb + 5
					a := to32(randMat(rnd, kb+3, lda, lda))
					g := &gemmArgs[float32]{m: mb, n: 1, k: kb, alpha: alpha, a: a, lda: lda, tA: true, tri: tri, triD: max(triD, 0)}
					mbR := (mb + 11) / 12 * 12
					want := make([]float32, mbR*kb)
					got := make([]float32, mbR*kb)
					for i := range got {
						got[i], want[i] = float32(i), float32(-i) // stale contents
					}
					packT12 = nil
					packA(want, 12, g, 1, 2, mb, kb)
					packT12 = keep
					packA(got, 12, g, 1, 2, mb, kb)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("mb=%d kb=%d alpha=%v triD=%d: ap[%d] = %v, want %v", mb, kb, alpha, triD, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestPackBTri holds packB of a triangular op(B) (the U Uᵀ's: stored
// untransposed in the packed layout, transposed in UUt) to its
// definition, bit for bit: the full panels left of the triangle go row
// by row (untransposed) or 16 columns at a time (transposed, packT16),
// the rest element by element, and each must hold op(B)[pc+p][jc+j]
// where jc+j ≤ pc+p+triD and zero elsewhere, whatever the buffer held
// before, for any split of the columns among workers. triD < 0 is an
// untriangular op(B).
func TestPackBTri(t *testing.T) {
	rnd := rand.New(rand.NewPCG(63, 64))
	const nr, jc, pc = 32, 5, 3
	for _, tB := range []bool{false, true} {
		for _, nb := range []int{1, 31, 32, 33, 200, 512} {
			for _, kb := range []int{1, 9, 256} {
				for _, triD := range []int{-1, 0, 40, 300, 900} {
					ld := jc + nb + 3
					rows := pc + kb
					if tB {
						ld, rows = pc+kb+2, jc+nb
					}
					b := to32(randMat(rnd, rows, ld, ld))
					op := func(p, j int) float32 { // op(B)[p][j]
						if tB {
							return b[j*ld+p]
						}
						return b[p*ld+j]
					}
					g := &gemmArgs[float32]{m: 1, n: nb, k: kb, alpha: 1, b: b, ldb: ld, tB: tB, tri: triD >= 0, triD: max(triD, 0)}
					nbR := (nb + nr - 1) / nr * nr
					for _, split := range []int{nbR, 64} {
						got := make([]float32, kb*nbR)
						for i := range got {
							got[i] = float32(i + 1) // stale contents
						}
						for j0 := 0; j0 < nb; j0 += split {
							packB(got, nr, g, pc, jc, kb, nb, j0, min(nb, j0+split))
						}
						for j := 0; j < nbR; j++ {
							for p := 0; p < kb; p++ {
								var want float32
								if j < nb && (triD < 0 || jc+j <= pc+p+triD) {
									want = op(pc+p, jc+j)
								}
								if got := got[j/nr*nr*kb+p*nr+j%nr]; math.Float32bits(got) != math.Float32bits(want) {
									t.Fatalf("tB=%v nb=%d kb=%d triD=%d split=%d: op(B)[%d][%d] packed as %v, want %v", tB, nb, kb, triD, split, p, j, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPackANoTrans holds packA of an untransposed op(A) (X Xᵀ's, U Uᵀ's)
// to its definition, bit for bit: full 12-row panels go k-step by
// k-step (packN12), the rest row by row, and each must hold alpha
// op(A)[ic+i][pc+p] where, under tri, ic+i ≤ pc+p+triD, and zero
// elsewhere, whatever the buffer held before.
func TestPackANoTrans(t *testing.T) {
	rnd := rand.New(rand.NewPCG(65, 66))
	const mr, ic, pc = 12, 3, 2
	for _, mb := range []int{1, 11, 12, 13, 36, 100} {
		for _, kb := range []int{1, 9, 256} {
			for _, triD := range []int{-1, 0, 30, 500} {
				lda := pc + kb + 4
				a := to32(randMat(rnd, ic+mb, lda, lda))
				g := &gemmArgs[float32]{m: mb, n: 1, k: kb, alpha: 0.37, a: a, lda: lda, tri: triD >= 0, triD: max(triD, 0)}
				mbR := (mb + mr - 1) / mr * mr
				got := make([]float32, mbR*kb)
				for i := range got {
					got[i] = float32(i + 1) // stale contents
				}
				packA(got, mr, g, ic, pc, mb, kb)
				for i := 0; i < mbR; i++ {
					for p := 0; p < kb; p++ {
						var want float32
						if i < mb && (triD < 0 || ic+i <= pc+p+triD) {
							want = float32(0.37) * a[(ic+i)*lda+pc+p]
						}
						if got := got[i/mr*mr*kb+p*mr+i%mr]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("mb=%d kb=%d triD=%d: op(A)[%d][%d] packed as %v, want %v", mb, kb, triD, i, p, got, want)
						}
					}
				}
			}
		}
	}
}
