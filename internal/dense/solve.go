package dense

import "sync"

// smallK is the number of right-hand sides below which the solves run as
// dot products and axpys over a transposed copy of B instead of through the
// GEMM, which would copy (pack) U for only a few flops per element.
const smallK = 32

// SolveUpper solves U X = B in place, where U is the n×n upper triangular
// matrix in the upper triangle of u (row-major, stride ldu; the strict lower
// triangle is not read) and B is n×k in b (row-major, stride ldb). It is
// BLAS dtrsm (left, upper, no transpose, non-unit). U must be nonsingular;
// a zero diagonal gives Inf or NaN. At most min(workers, k) goroutines run;
// the result does not depend on workers.
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
	if k == 1 && ldb == 1 {
		// B is a contiguous vector already: no copy, no allocation.
		if trans {
			forwSubst(u, n, ldu, [][]float64{b[:n]})
		} else {
			backSubst(u, n, ldu, [][]float64{b[:n]})
		}
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
	subst := backSubst
	if trans {
		subst = forwSubst
	}
	// Split the right-hand sides among workers; each reads all of U.
	w := max(1, min(workers, k))
	if w == 1 || n < 256 {
		subst(u, n, ldu, xs)
	} else {
		var wg sync.WaitGroup
		per := (k + w - 1) / w
		for c0 := 0; c0 < k; c0 += per {
			group := xs[c0:min(k, c0+per)]
			wg.Go(func() { subst(u, n, ldu, group) })
		}
		wg.Wait()
	}
	for i := 0; i < n; i++ {
		for c := range xs {
			b[i*ldb+c] = xs[c][i]
		}
	}
}

// backSubst solves U x = b for each x in xs, four rows at a time: the
// solved part below a block enters through dot4 (one pass over the block's
// rows of U per right-hand side, the block staying in cache across them),
// then the 4×4 triangle is solved directly.
func backSubst(u []float64, n, ldu int, xs [][]float64) {
	i1 := n - n%4
	for i := n - 1; i >= i1; i-- {
		row := u[i*ldu+i+1 : i*ldu+n]
		for _, x := range xs {
			x[i] = (x[i] - dot(row, x[i+1:n])) / u[i*ldu+i]
		}
	}
	for ; i1 >= 4; i1 -= 4 {
		i0 := i1 - 4
		for _, x := range xs {
			if i1 < n {
				s := dot4(u[i0*ldu+i1:], ldu, x[i1:n])
				for r, v := range s {
					x[i0+r] -= v
				}
			}
			for i := i1 - 1; i >= i0; i-- {
				t := x[i]
				for j := i + 1; j < i1; j++ {
					t -= u[i*ldu+j] * x[j]
				}
				x[i] = t / u[i*ldu+i]
			}
		}
	}
}

// forwSubst solves Uᵀ x = b for each x in xs, four rows at a time: the 4×4
// triangle is solved directly, then its four unknowns are eliminated from
// the rest of x with axpy4.
func forwSubst(u []float64, n, ldu int, xs [][]float64) {
	i0 := 0
	for ; i0+4 <= n; i0 += 4 {
		rest := i0 + 4
		for _, x := range xs {
			for i := i0; i < rest; i++ {
				x[i] /= u[i*ldu+i]
				for r := i + 1; r < rest; r++ {
					x[r] -= x[i] * u[i*ldu+r]
				}
			}
			if rest < n {
				a := [4]float64{x[i0], x[i0+1], x[i0+2], x[i0+3]}
				axpy4(&a, u[i0*ldu+rest:], ldu, x[rest:n])
			}
		}
	}
	for i := i0; i < n; i++ {
		for _, x := range xs {
			x[i] /= u[i*ldu+i]
			axpy(-x[i], u[i*ldu+i+1:i*ldu+n], x[i+1:n])
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
