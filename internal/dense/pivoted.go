package dense

import "math"

// PivotedCholesky computes the Cholesky factorisation with complete
// (diagonal) pivoting of the symmetric positive semidefinite n×n matrix A
// held in the upper triangle of a (row-major, stride lda; the strict lower
// triangle is not touched), as LAPACK's dpstrf:
//
//	Pᵀ A P = Uᵀ U,   U = [U₁₁ U₁₂] (rank × n, U₁₁ upper triangular),
//
// stopping at the first pivot (the largest remaining diagonal of the Schur
// complement) at or below tol·max(diag A), or that is not a number. On
// return rows 0..rank−1 of a's upper triangle hold U in the pivoted order,
// perm[j] is the original index of position j (so P e_j = e_perm[j]), and
// the rest of a's upper triangle is unspecified. rank = n for a positive
// definite A well above tol.
//
// The algorithm is blocked (dpstrf): within a panel of 256 pivots each
// pivot's row is formed with the panel's earlier rows only, the panel's
// contributions to the diagonal are kept in a length-n vector, and after
// the panel the trailing upper triangle is updated with the parallel
// GEMM, so the O(rank·n²) flops run at GEMM speed. mon, when not nil, is
// called before each panel with the fraction of the work of a full-rank
// factorisation done; returning false abandons the call (rank −1).
func PivotedCholesky[E Float](a []E, n, lda int, tol float64, workers int, mon Monitor) (perm []int, rank int) {
	return pivotedWith(bestSet, a, n, lda, tol, workers, mon)
}

func pivotedWith[E Float](ks kernelSet, a []E, n, lda int, tol float64, workers int, mon Monitor) ([]int, int) {
	checkMat("PivotedCholesky", a, n, n, lda)
	if a32, ok := as32(ks, a); ok {
		return pivotedP(ks.k32, a32, n, lda, tol, workers, mon)
	}
	return pivotedP(ks.k64, a, n, lda, tol, workers, mon)
}

// pivotedP is PivotedCholesky with the trailing updates in precision P;
// the panels' rows are formed with float64 sums.
func pivotedP[E, P Float](kern microKernel[P], a []E, n, lda int, tol float64, workers int, mon Monitor) ([]int, int) {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	if n == 0 {
		return perm, 0
	}
	dmax := 0.0
	for i := range n {
		dmax = max(dmax, float64(a[i*lda+i]))
	}
	stop := tol * dmax
	if !(dmax > 0) {
		return perm, 0
	}
	ws := newWorkspace(kern, workers)
	defer ws.release()
	work := make([]float64, n) // the current panel's part of each diagonal
	for k := 0; k < n; k += cholBlock {
		if mon != nil && !mon(cubeDone(k, n)) {
			return perm, -1
		}
		jb := min(cholBlock, n-k)
		clear(work[k:])
		for j := k; j < k+jb; j++ {
			if j > k {
				row := a[(j-1)*lda:]
				for i := j; i < n; i++ {
					v := float64(row[i])
					work[i] += v * v
				}
			}
			p, ajj := j, math.Inf(-1)
			for i := j; i < n; i++ {
				if d := float64(a[i*lda+i]) - work[i]; d > ajj || math.IsNaN(d) {
					p, ajj = i, d
					if math.IsNaN(d) {
						break
					}
				}
			}
			if !(ajj > stop) {
				return perm, j
			}
			if p != j {
				symSwap(a, n, lda, j, p)
				work[j], work[p] = work[p], work[j]
				perm[j], perm[p] = perm[p], perm[j]
			}
			ajj = math.Sqrt(ajj)
			a[j*lda+j] = E(ajj)
			// Row j of U: (A[j][j+1:] − Σ_{i=k}^{j−1} U[i][j] U[i][j+1:]) / U[j][j].
			rj := a[j*lda+j+1 : j*lda+n]
			i := k
			for ; i+4 <= j; i += 4 {
				c := [4]float64{float64(a[i*lda+j]), float64(a[(i+1)*lda+j]), float64(a[(i+2)*lda+j]), float64(a[(i+3)*lda+j])}
				axpy4G(&c, a[i*lda+j+1:], lda, rj)
			}
			for ; i < j; i++ {
				axpyG(-float64(a[i*lda+j]), a[i*lda+j+1:i*lda+n], rj)
			}
			inv := 1 / float64(a[j*lda+j])
			for c := range rj {
				rj[c] = E(float64(rj[c]) * inv)
			}
		}
		rest := n - k - jb
		if rest == 0 {
			break
		}
		// A₂₂ −= U₁₂ᵀ U₁₂ over the panel's rows.
		a12 := a[k*lda+k+jb:]
		gemm(ws, &gemmArgs[E]{
			m: rest, n: rest, k: jb, alpha: -1,
			a: a12, lda: lda, tA: true,
			b: a12, ldb: lda,
			c: a[(k+jb)*lda+k+jb:], ldc: lda,
			upper: true,
		}, ws.s)
	}
	if mon != nil {
		mon(1)
	}
	return perm, n
}

// symSwap exchanges indices j < p of the symmetric matrix in a's upper
// triangle (rows and columns, as LAPACK's dsyswapr) and, in the rows
// above j (rows of U already formed), columns j and p.
func symSwap[E Float](a []E, n, lda, j, p int) {
	for i := 0; i < j; i++ {
		a[i*lda+j], a[i*lda+p] = a[i*lda+p], a[i*lda+j]
	}
	a[j*lda+j], a[p*lda+p] = a[p*lda+p], a[j*lda+j]
	for k := j + 1; k < p; k++ {
		a[j*lda+k], a[k*lda+p] = a[k*lda+p], a[j*lda+k]
	}
	for k := p + 1; k < n; k++ {
		a[j*lda+k], a[p*lda+k] = a[p*lda+k], a[j*lda+k]
	}
}

// SyrkStrictUpper adds alpha X Xᵀ to the strict upper triangle of the
// n×n matrix C (stride ldc), for X n×k (stride ldx); C's diagonal and
// lower triangle are left alone. X must not overlap C's strict upper
// triangle. At most workers goroutines run.
func SyrkStrictUpper[E Float](x []E, n, k, ldx int, alpha float64, c []E, ldc int, workers int) {
	checkMat("SyrkStrictUpper X", x, n, k, ldx)
	checkMat("SyrkStrictUpper C", c, n, n, ldc)
	if x32, ok := as32(bestSet, x); ok {
		syrkStrictUpperP(best32, x32, n, k, ldx, alpha, any(c).([]float32), ldc, workers)
		return
	}
	syrkStrictUpperP(best, x, n, k, ldx, alpha, c, ldc, workers)
}

func syrkStrictUpperP[E, P Float](kern microKernel[P], x []E, n, k, ldx int, alpha float64, c []E, ldc int, workers int) {
	ws := newWorkspace(kern, workers)
	defer ws.release()
	gemm(ws, &gemmArgs[E]{
		m: n, n: n, k: k, alpha: alpha,
		a: x, lda: ldx,
		b: x, ldb: ldx, tB: true,
		c: c, ldc: ldc,
		upper: true, strict: true,
	}, ws.s)
}
