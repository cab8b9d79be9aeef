package dense

// UUt computes C = alpha U Uᵀ for the n×n upper triangular U held in the
// upper triangle (j ≥ i) of u (row-major, stride ldu); the strict lower
// triangle of u is not read. The result is symmetric and only its upper
// triangle is written into c (stride ldc); the strict lower triangle of c is
// left alone, so C is laid out like gonum's mat.SymDense. c must not
// overlap u. This is LAPACK's dlauum (out of place, with a scale), used for
// FALKON's S = T Tᵀ / M + λI.
//
// At most workers goroutines run; the result does not depend on workers.
// The flops (n³/3) run as a sequence of rank-256 updates
// C₀:ₑ,₀:ₑ += U₀:ₑ,ₚ:ₑ U₀:ₑ,ₚ:ₑᵀ (e = p+256) through the parallel GEMM, with
// the triangular part of each column slice masked while packing.
func UUt(u []float64, n, ldu int, alpha float64, c []float64, ldc int, workers int) {
	uutWith(best, u, n, ldu, alpha, c, ldc, workers)
}

func uutWith(kern microKernel, u []float64, n, ldu int, alpha float64, c []float64, ldc int, workers int) {
	checkMat("UUt U", u, n, n, ldu)
	checkMat("UUt C", c, n, n, ldc)
	for i := 0; i < n; i++ {
		clear(c[i*ldc+i : i*ldc+n])
	}
	ws := newWorkspace(kern, workers)
	for p := 0; p < n; p += kcBlock {
		e := min(n, p+kcBlock)
		ws.gemm(&gemmArgs{
			m: e, n: e, k: e - p, alpha: alpha,
			a: u[p:], lda: ldu,
			b: u[p:], ldb: ldu, tB: true,
			c: c, ldc: ldc,
			upper: true,
			tri:   true, triD: p,
		}, ws.s)
	}
}
