package dense

import "fmt"

// best is the fastest micro-kernel this CPU supports.
var best = kernels()[0]

// Kernel names the micro-kernel in use ("avx512-12x16", "avx2-6x8" or
// "go4x4"), for benchmark reports.
func Kernel() string { return best.name }

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

func gemmWith(kern microKernel, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, workers int) {
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
