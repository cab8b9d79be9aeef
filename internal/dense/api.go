package dense

import "fmt"

// best and best32 are the fastest float64 and float32 micro-kernels this
// CPU supports.
var (
	best   = kernels()[0]
	best32 = kernels32()[0]
)

// A kernelSet is the pair of micro-kernels a call runs: k64 for float64
// storage and for the parts of float32 routines that accumulate in
// float64 (the diagonal blocks of Cholesky), k32 for the rest of the
// float32 routines. With k32.fn nil, float32 storage runs entirely
// through k64, as before round 5 (tests and benchmarks compare the two).
type kernelSet struct {
	k64 microKernel[float64]
	k32 microKernel[float32]
}

// bestSet is the fastest kernelSet of this CPU.
var bestSet = kernelSet{best, best32}

// wide returns ks without its float32 kernel.
func (ks kernelSet) wide() kernelSet { return kernelSet{k64: ks.k64} }

// as32 is s as []float32 when E is float32 and ks has a float32 kernel:
// the routine then runs in float32 arithmetic.
func as32[E Float](ks kernelSet, s []E) ([]float32, bool) {
	if ks.k32.fn == nil {
		return nil, false
	}
	s32, ok := any(s).([]float32)
	return s32, ok
}

// Kernel names the float64 micro-kernel in use ("avx512-12x16", "avx2-6x8"
// or "go4x4"), for benchmark reports.
func Kernel() string { return best.name }

// Kernel32 names the float32 micro-kernel in use ("avx512-f32-12x32",
// "avx2-f32-6x16" or "go4x4-f32").
func Kernel32() string { return best32.name }

func checkMat[E Float](name string, s []E, rows, cols, ld int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("dense: %s: negative dimension %d×%d", name, rows, cols))
	}
	if ld < max(1, cols) {
		panic(fmt.Sprintf("dense: %s: stride %d < %d columns", name, ld, cols))
	}
	if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("dense: %s: %d elements too short for %d×%d with stride %d", name, len(s), rows, cols, ld))
	}
}

// Gemm computes C += alpha op(A) op(B) for row-major C (m×n, stride ldc),
// op(A) m×k and op(B) k×n. op(A) is A (stored m×k, stride lda) or, when
// transA, Aᵀ with A stored k×m; likewise op(B) with transB. C must not
// overlap A or B. At most workers goroutines run (workers < 1 means 1).
// The result does not depend on workers.
func Gemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, workers int) {
	gemmWith(best, transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc, workers)
}

func gemmWith(kern microKernel[float64], transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, workers int) {
	if transA {
		checkMat("Gemm A", a, k, m, lda)
	} else {
		checkMat("Gemm A", a, m, k, lda)
	}
	if transB {
		checkMat("Gemm B", b, n, k, ldb)
	} else {
		checkMat("Gemm B", b, k, n, ldb)
	}
	checkMat("Gemm C", c, m, n, ldc)
	ws := newWorkspace(kern, workers)
	defer ws.release()
	gemm(ws, &gemmArgs[float64]{m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, tA: transA, b: b, ldb: ldb, tB: transB, c: c, ldc: ldc}, ws.s)
}

// GramUpper adds alpha XᵀX to the upper triangle, diagonal included, of
// the k×k matrix C (row-major, stride ldc), for X n×k (row-major, stride
// ldx): BLAS dsyrk (upper, transpose). C's strict lower triangle is left
// alone, and tiles wholly below the diagonal are skipped, so it takes
// about half the flops of Gemm(true, false, k, k, n, …). C must not
// overlap X. At most workers goroutines run; the result does not depend
// on workers.
func GramUpper(x []float64, n, k, ldx int, alpha float64, c []float64, ldc int, workers int) {
	checkMat("GramUpper X", x, n, k, ldx)
	checkMat("GramUpper C", c, k, k, ldc)
	ws := newWorkspace(best, workers)
	defer ws.release()
	gemm(ws, &gemmArgs[float64]{m: k, n: k, k: n, alpha: alpha, a: x, lda: ldx, tA: true, b: x, ldb: ldx, c: c, ldc: ldc, upper: true}, ws.s)
}
