package dense

import (
	"fmt"
	"sync"
)

// smallK is the number of right-hand sides below which the solves run as
// dot products and axpys over a transposed copy of B instead of through the
// GEMM, which would copy (pack) U for only a few flops per element.
const smallK = 32

// SolveUpper solves U X = B in place, where U is the n×n upper triangular
// matrix in the upper triangle of u (row-major, stride ldu; the strict lower
// triangle is not read) and B is n×k in b (row-major, stride ldb). It is
// BLAS dtrsm (left, upper, no transpose, non-unit). U must be nonsingular;
// a zero diagonal gives Inf or NaN. At most min(workers, k) goroutines run;
// the result does not depend on workers. u may be float32; B is float64
// and the arithmetic is float64 either way.
func SolveUpper[E Float](u []E, n, ldu int, b []float64, k, ldb int, workers int) {
	solveTri(bestSet.k64, Tri[E]{Data: u, N: n, Stride: ldu}, false, b, k, ldb, workers)
}

// SolveUpperT solves Uᵀ X = B in place, with U and B as for SolveUpper
// (dtrsm left, upper, transpose, non-unit).
func SolveUpperT[E Float](u []E, n, ldu int, b []float64, k, ldb int, workers int) {
	solveTri(bestSet.k64, Tri[E]{Data: u, N: n, Stride: ldu}, true, b, k, ldb, workers)
}

// SolveUpperVec solves U x = b in place for a contiguous vector x of
// length n (dtrsv), with U as for SolveUpper.
func SolveUpperVec(u []float64, n, ldu int, x []float64) {
	checkMat("SolveUpperVec U", u, n, n, ldu)
	checkMat("SolveUpperVec x", x, n, 1, 1)
	backSubst(Tri[float64]{Data: u, N: n, Stride: ldu}, n, [][]float64{x})
}

// SolveUpperTVec solves Uᵀ x = b in place for a contiguous vector x of
// length n (dtrsv, transpose).
func SolveUpperTVec(u []float64, n, ldu int, x []float64) {
	checkMat("SolveUpperTVec U", u, n, n, ldu)
	checkMat("SolveUpperTVec x", x, n, 1, 1)
	forwSubst(Tri[float64]{Data: u, N: n, Stride: ldu}, n, [][]float64{x})
}

// Tri is an n×n upper triangular matrix U in a row-major slice, in one of
// the two halves of a packed M × M buffer (FALKON keeps T and A in one):
//
//   - Lower false: U in the upper triangle, U[i][j] = Data[i*Stride+j];
//   - Lower true: U transposed in the lower triangle,
//     U[i][j] = Data[j*Stride+i] (j ≥ i).
//
// When Diag is not nil it holds U's diagonal and the buffer's diagonal is
// not read (the other triangle's factor may own it).
type Tri[E Float] struct {
	Data      []E
	N, Stride int
	Lower     bool
	Diag      []float64
}

func (u Tri[E]) diag(i int) float64 {
	if u.Diag != nil {
		return u.Diag[i]
	}
	return float64(u.Data[i*u.Stride+i])
}

// SolveTri solves U X = B (trans false) or Uᵀ X = B (trans true) in place
// for U as described by u and B n×k (row-major, stride ldb), like
// SolveUpper. Every form reads U row by row of its storage, four rows at
// a time; with Lower, Diag or E = float32 the right-hand sides always go
// through the row kernels (k ≥ 32 included), otherwise as in SolveUpper.
func SolveTri[E Float](u Tri[E], trans bool, b []float64, k, ldb int, workers int) {
	solveTri(bestSet.k64, u, trans, b, k, ldb, workers)
}

func solveWith(kern microKernel[float64], trans bool, u []float64, n, ldu int, b []float64, k, ldb int, workers int) {
	solveTri(kern, Tri[float64]{Data: u, N: n, Stride: ldu}, trans, b, k, ldb, workers)
}

func solveTri[E Float](kern microKernel[float64], u Tri[E], trans bool, b []float64, k, ldb int, workers int) {
	n := u.N
	checkMat("SolveUpper U", u.Data, n, n, u.Stride)
	checkMat("SolveUpper B", b, n, k, ldb)
	if u.Diag != nil && len(u.Diag) < n {
		panic("dense: SolveTri: diagonal shorter than n")
	}
	if n == 0 || k == 0 {
		return
	}
	if u64 := as64(u.Data); k >= smallK && u64 != nil && !u.Lower && u.Diag == nil {
		ws := newWorkspace(kern, workers)
		defer ws.release()
		trsmPar(ws, trans, u64, n, u.Stride, b, k, ldb, len(ws.s))
		return
	}
	if k == 1 && ldb == 1 {
		// B is a contiguous vector already: no copy, no allocation.
		x := [1][]float64{b[:n]}
		substitute(u, trans, x[:])
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
	// Split the right-hand sides among workers; each reads all of U.
	w := max(1, min(workers, k))
	if w == 1 || n < 256 {
		substitute(u, trans, xs)
	} else {
		var wg sync.WaitGroup
		per := (k + w - 1) / w
		for c0 := 0; c0 < k; c0 += per {
			group := xs[c0:min(k, c0+per)]
			wg.Go(func() { substitute(u, trans, group) })
		}
		wg.Wait()
	}
	for i := 0; i < n; i++ {
		for c := range xs {
			b[i*ldb+c] = xs[c][i]
		}
	}
}

// substitute solves U x = b (or Uᵀ x = b when trans) for each x in xs.
func substitute[E Float](u Tri[E], trans bool, xs [][]float64) {
	switch {
	case trans && u.Lower:
		forwSubstL(u, xs)
	case trans:
		forwSubst(u, u.N, xs)
	case u.Lower:
		backSubstL(u, xs)
	default:
		backSubst(u, u.N, xs)
	}
}

// SolvePanel is one row panel's step of a solve with an n × n upper
// triangular U kept in row panels (an out-of-core factor): p holds rows
// r0 to r0+h−1 of U, columns r0 to n−1, as h × w (w = n − r0, stride
// ld ≥ w; entries left of the diagonal are not read), and each x in xs
// is the solution's rows r0 to n−1 (length w).
//
//   - trans false (U x = b, panels taken bottom up): x[h:w] is solved;
//     SolvePanel solves x[0:h].
//   - trans true (Uᵀ x = b, panels taken top down): x[0:h] holds b with
//     the panels above eliminated; SolvePanel solves x[0:h] and
//     eliminates them from x[h:w].
//
// The arithmetic is that of SolveTri's row kernels on the same rows, in
// the same order, so a factor solved panel by panel gives SolveTri's
// bits on the whole factor. It allocates nothing.
func SolvePanel[E Float](p []E, h, w, ld int, trans bool, xs [][]float64) {
	checkMat("SolvePanel U", p, h, w, ld)
	if h > w {
		panic(fmt.Sprintf("dense: SolvePanel: %d rows, more than its %d columns", h, w))
	}
	u := Tri[E]{Data: p, N: w, Stride: ld}
	for _, x := range xs {
		if len(x) < w {
			panic(fmt.Sprintf("dense: SolvePanel: x of length %d < %d", len(x), w))
		}
	}
	if trans {
		forwSubst(u, h, xs)
	} else {
		backSubst(u, h, xs)
	}
}

// backSubst solves U x = b for each x in xs (U in the upper triangle),
// its rows below h already solved (h = n: none), four rows at a time: the solved part below a block enters through dot4
// (one pass over the block's rows of U per right-hand side, the block
// staying in cache across them), then the 4×4 triangle is solved directly.
func backSubst[E Float](ut Tri[E], h int, xs [][]float64) {
	u, n, ldu := ut.Data, ut.N, ut.Stride
	i1 := h - h%4
	for i := h - 1; i >= i1; i-- {
		row := u[i*ldu+i+1 : i*ldu+n]
		d := ut.diag(i)
		for _, x := range xs {
			x[i] = (x[i] - dotG(row, x[i+1:n])) / d
		}
	}
	for ; i1 >= 4; i1 -= 4 {
		i0 := i1 - 4
		for _, x := range xs {
			if i1 < n {
				s := dot4G(u[i0*ldu+i1:], ldu, x[i1:n])
				for r, v := range s {
					x[i0+r] -= v
				}
			}
			for i := i1 - 1; i >= i0; i-- {
				t := x[i]
				for j := i + 1; j < i1; j++ {
					t -= float64(u[i*ldu+j]) * x[j]
				}
				x[i] = t / ut.diag(i)
			}
		}
	}
}

// forwSubst solves Uᵀ x = b for each x in xs (U in the upper triangle)
// in its first h rows (h = n: all), eliminating them from the rest, four
// rows at a time: the 4×4 triangle is solved directly, then its four
// unknowns are eliminated from the rest of x with axpy4.
func forwSubst[E Float](ut Tri[E], h int, xs [][]float64) {
	u, n, ldu := ut.Data, ut.N, ut.Stride
	i0 := 0
	for ; i0+4 <= h; i0 += 4 {
		rest := i0 + 4
		for _, x := range xs {
			for i := i0; i < rest; i++ {
				x[i] /= ut.diag(i)
				for r := i + 1; r < rest; r++ {
					x[r] -= x[i] * float64(u[i*ldu+r])
				}
			}
			if rest < n {
				a := [4]float64{x[i0], x[i0+1], x[i0+2], x[i0+3]}
				axpy4G(&a, u[i0*ldu+rest:], ldu, x[rest:n])
			}
		}
	}
	for i := i0; i < h; i++ {
		for _, x := range xs {
			x[i] /= ut.diag(i)
			axpyG(-x[i], u[i*ldu+i+1:i*ldu+n], x[i+1:n])
		}
	}
}

// backSubstL solves U x = b for each x in xs with U transposed in the
// lower triangle (L = Uᵀ, row i of L is column i of U): bottom up, four
// unknowns at a time, which are then eliminated from the unknowns above
// them with axpy4 along four rows of L.
func backSubstL[E Float](ut Tri[E], xs [][]float64) {
	l, n, ld := ut.Data, ut.N, ut.Stride
	for i1 := n; i1 > 0; i1 -= 4 {
		i0 := max(0, i1-4)
		for _, x := range xs {
			for i := i1 - 1; i >= i0; i-- {
				x[i] /= ut.diag(i)
				for r := i0; r < i; r++ {
					x[r] -= float64(l[i*ld+r]) * x[i] // U[r][i]
				}
			}
			if i0 == 0 {
				continue
			}
			if i1-i0 < 4 {
				for i := i0; i < i1; i++ {
					axpyG(-x[i], l[i*ld:i*ld+i0], x[:i0])
				}
				continue
			}
			a := [4]float64{x[i0], x[i0+1], x[i0+2], x[i0+3]}
			axpy4G(&a, l[i0*ld:], ld, x[:i0])
		}
	}
}

// forwSubstL solves Uᵀ x = b for each x in xs with U transposed in the
// lower triangle: Uᵀ = L is lower triangular, so this is forward
// substitution along the rows of L, four at a time through dot4.
func forwSubstL[E Float](ut Tri[E], xs [][]float64) {
	l, n, ld := ut.Data, ut.N, ut.Stride
	for i0 := 0; i0 < n; i0 += 4 {
		i1 := min(n, i0+4)
		for _, x := range xs {
			if i0 > 0 {
				if i1-i0 == 4 {
					s := dot4G(l[i0*ld:], ld, x[:i0])
					for r, v := range s {
						x[i0+r] -= v
					}
				} else {
					for i := i0; i < i1; i++ {
						x[i] -= dotG(l[i*ld:i*ld+i0], x[:i0])
					}
				}
			}
			for i := i0; i < i1; i++ {
				t := x[i]
				for j := i0; j < i; j++ {
					t -= float64(l[i*ld+j]) * x[j]
				}
				x[i] = t / ut.diag(i)
			}
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
