package dense

// smallK is the number of right-hand sides below which the solves run as
// dot products and axpys over a transposed copy of B instead of through the
// GEMM, whose nr-wide tiles would be mostly padding.
const smallK = 32

// SolveUpper solves U X = B in place, where U is the n×n upper triangular
// matrix in the upper triangle of u (row-major, stride ldu; the strict lower
// triangle is not read) and B is n×k in b (row-major, stride ldb). It is
// BLAS dtrsm (left, upper, no transpose, non-unit). U must be nonsingular;
// a zero diagonal gives Inf or NaN. At most workers goroutines run, and only
// for k ≥ 8; the result does not depend on workers.
func SolveUpper(u []float64, n, ldu int, b []float64, k, ldb int, workers int) {
	solveWith(best, false, u, n, ldu, b, k, ldb, workers)
}

// SolveUpperT solves Uᵀ X = B in place, with U and B as for SolveUpper
// (dtrsm left, upper, transpose, non-unit).
func SolveUpperT(u []float64, n, ldu int, b []float64, k, ldb int, workers int) {
	solveWith(best, true, u, n, ldu, b, k, ldb, workers)
}

// SolveUpperVec solves U x = b in place for a contiguous vector x of
// length n (dtrsv), with U as for SolveUpper.
func SolveUpperVec(u []float64, n, ldu int, x []float64) {
	checkMat("SolveUpperVec U", u, n, n, ldu)
	checkMat("SolveUpperVec x", x, n, 1, 1)
	backSubst(u, n, ldu, [][]float64{x})
}

// SolveUpperTVec solves Uᵀ x = b in place for a contiguous vector x of
// length n (dtrsv, transpose).
func SolveUpperTVec(u []float64, n, ldu int, x []float64) {
	checkMat("SolveUpperTVec U", u, n, n, ldu)
	checkMat("SolveUpperTVec x", x, n, 1, 1)
	forwSubst(u, n, ldu, [][]float64{x})
}

func solveWith(kern microKernel, trans bool, u []float64, n, ldu int, b []float64, k, ldb int, workers int) {
	checkMat("SolveUpper U", u, n, n, ldu)
	checkMat("SolveUpper B", b, n, k, ldb)
	if n == 0 || k == 0 {
		return
	}
	if k >= smallK {
		ws := newWorkspace(kern, workers)
		ws.trsmPar(trans, u, n, ldu, b, k, ldb, len(ws.s))
		return
	}
	xt := make([]float64, k*n)
	xs := make([][]float64, k)
	for c := range xs {
		xs[c] = xt[c*n : c*n+n]
	}
	for i := 0; i < n; i++ {
		for c := range xs {
			xs[c][i] = b[i*ldb+c]
		}
	}
	if trans {
		forwSubst(u, n, ldu, xs)
	} else {
		backSubst(u, n, ldu, xs)
	}
	for i := 0; i < n; i++ {
		for c := range xs {
			b[i*ldb+c] = xs[c][i]
		}
	}
}

// backSubst solves U x = b for each x in xs: x_i = (b_i − U_i,i+1: x_i+1:) / U_ii,
// reading each row of U once for all right-hand sides.
func backSubst(u []float64, n, ldu int, xs [][]float64) {
	for i := n - 1; i >= 0; i-- {
		row := u[i*ldu+i+1 : i*ldu+n]
		d := u[i*ldu+i]
		c := 0
		for ; c+2 <= len(xs); c += 2 {
			x0, x1 := xs[c], xs[c+1]
			s0, s1 := dot2(row, x0[i+1:n], x1[i+1:n])
			x0[i] = (x0[i] - s0) / d
			x1[i] = (x1[i] - s1) / d
		}
		if c < len(xs) {
			x := xs[c]
			x[i] = (x[i] - dot(row, x[i+1:n])) / d
		}
	}
}

// forwSubst solves Uᵀ x = b for each x in xs: x_i = b_i / U_ii, then
// b_i+1: −= x_i U_i,i+1:, reading each row of U once for all right-hand sides.
func forwSubst(u []float64, n, ldu int, xs [][]float64) {
	for i := 0; i < n; i++ {
		row := u[i*ldu+i+1 : i*ldu+n]
		d := u[i*ldu+i]
		c := 0
		for ; c+2 <= len(xs); c += 2 {
			x0, x1 := xs[c], xs[c+1]
			x0[i] /= d
			x1[i] /= d
			axpy2(-x0[i], -x1[i], row, x0[i+1:n], x1[i+1:n])
		}
		if c < len(xs) {
			x := xs[c]
			x[i] /= d
			axpy(-x[i], row, x[i+1:n])
		}
	}
}

func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		s0 += xs[0] * ys[0]
		s1 += xs[1] * ys[1]
		s2 += xs[2] * ys[2]
		s3 += xs[3] * ys[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dot2(x, y0, y1 []float64) (float64, float64) {
	y0 = y0[:len(x)]
	y1 = y1[:len(x)]
	var s0, s1, t0, t1 float64
	i := 0
	for ; i+2 <= len(x); i += 2 {
		xs := x[i : i+2 : i+2]
		a := y0[i : i+2 : i+2]
		b := y1[i : i+2 : i+2]
		s0 += xs[0] * a[0]
		s1 += xs[1] * a[1]
		t0 += xs[0] * b[0]
		t1 += xs[1] * b[1]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y0[i]
		t0 += x[i] * y1[i]
	}
	return s0 + s1, t0 + t1
}

func axpy2(a0, a1 float64, x, y0, y1 []float64) {
	y0 = y0[:len(x)]
	y1 = y1[:len(x)]
	for i, v := range x {
		y0[i] += a0 * v
		y1[i] += a1 * v
	}
}
