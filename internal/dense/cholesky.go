package dense

import (
	"math"
	"sync"
)

const (
	cholBlock = 256 // panel width of the blocked right-looking factorisation
	cholLeaf  = 32  // below this the recursion factors with plain loops
	trsmLeaf  = 32  // below this triangular solves use row operations
)

// Cholesky computes the upper Cholesky factor U of the symmetric positive
// definite n×n matrix A in place: A is read from the upper triangle (j ≥ i)
// of a (row-major, stride lda) and on return that triangle holds U with
// UᵀU = A. The strict lower triangle is neither read nor written, so it may
// hold anything (for example another factor). This is the layout of
// gonum's mat.SymDense (RawSymmetric().Data, Stride) and of LAPACK's dpotrf
// with uplo = 'L' on the same memory read column-major.
//
// If A is not positive definite (a pivot is ≤ 0, NaN or +Inf), Cholesky
// returns ok = false and col, the column whose pivot failed; the upper
// triangle then holds a partial factor and is not usable. On success col is
// -1. At most workers goroutines run (workers < 1 means 1); the result is the
// same, bit for bit, for any number of workers.
//
// The algorithm is blocked right-looking (LAPACK dpotrf): for each panel of
// 256 rows, factor the diagonal block recursively, solve the panel
// U₁₁ᵀ U₁₂ = A₁₂ in parallel over column blocks, and update the trailing
// upper triangle A₂₂ −= U₁₂ᵀ U₁₂ with the parallel GEMM.
//
// a may be float32: the panel solves and the trailing updates then run in
// float32 arithmetic (the float32 micro-kernel), while each 256 × 256
// diagonal block is factored with float64 sums (see doc.go).
func Cholesky[E Float](a []E, n, lda int, workers int) (ok bool, col int) {
	return choleskyWith(bestSet, a, n, lda, workers, nil)
}

// Monitor is called by the long routines (CholeskyMon, UUtLower) between
// panels with the fraction of the call's flops done so far, from one
// goroutine at a time. Returning false abandons the call: its output is
// then unusable.
type Monitor func(done float64) bool

// CholeskyMon is Cholesky with a Monitor (nil means none). If mon
// abandons the factorisation, CholeskyMon returns ok = false and col = -1.
func CholeskyMon[E Float](a []E, n, lda int, workers int, mon Monitor) (ok bool, col int) {
	return choleskyWith(bestSet, a, n, lda, workers, mon)
}

// cubeDone is the fraction of the n³ flops of a right-looking
// factorisation done once the first k columns are finished.
func cubeDone(k, n int) float64 {
	r := float64(n-k) / float64(n)
	return 1 - r*r*r
}

func choleskyWith[E Float](ks kernelSet, a []E, n, lda int, workers int, mon Monitor) (bool, int) {
	checkMat("Cholesky", a, n, n, lda)
	if n == 0 {
		return true, -1
	}
	if a32, ok := as32(ks, a); ok {
		return choleskyP(ks.k32, ks.k64, a32, n, lda, workers, mon)
	}
	return choleskyP(ks.k64, ks.k64, a, n, lda, workers, mon)
}

// choleskyP is the blocked factorisation with the panel solves and
// trailing updates in precision P (kernel kern) and the diagonal blocks in
// float64 (kernel kd).
func choleskyP[E, P Float](kern microKernel[P], kd microKernel[float64], a []E, n, lda int, workers int, mon Monitor) (bool, int) {
	ws := newWorkspace(kern, workers)
	defer ws.release()
	wd, ok := any(ws).(*workspace[float64])
	if !ok {
		wd = newWorkspace(kd, 1)
		defer wd.release()
	}
	workers = len(ws.s)
	for k := 0; k < n; k += cholBlock {
		if mon != nil && !mon(cubeDone(k, n)) {
			return false, -1
		}
		kb := min(cholBlock, n-k)
		a11 := a[k*lda+k:]
		if f := potrfRec(wd, wd.s[0], a11, kb, lda); f >= 0 {
			return false, k + f
		}
		rest := n - k - kb
		if rest == 0 {
			break
		}
		a12 := a[k*lda+k+kb:]
		trsmPar(ws, true, a11, kb, lda, a12, rest, lda, workers)
		gemm(ws, &gemmArgs[E]{
			m: rest, n: rest, k: kb, alpha: -1,
			a: a12, lda: lda, tA: true,
			b: a12, ldb: lda,
			c: a[(k+kb)*lda+k+kb:], ldc: lda,
			upper: true,
		}, ws.s)
	}
	if mon != nil {
		mon(1)
	}
	return true, -1
}

// potrfRec factors the n×n upper triangle of a in place, recursively, its
// products in precision P
// (Gustavson, "Recursive leads to automatic variable blocking for dense
// linear-algebra algorithms", IBM J. Res. Dev. 41(6), 1997). It returns the
// failing column or -1.
func potrfRec[E, P Float](ws *workspace[P], s *scratch[P], a []E, n, lda int) int {
	if n <= cholLeaf {
		return potrfLeaf(a, n, lda)
	}
	n1 := n / 2
	n2 := n - n1
	if f := potrfRec(ws, s, a, n1, lda); f >= 0 {
		return f
	}
	a12 := a[n1:]
	trsmUT(ws, s, a, n1, lda, a12, n2, lda)
	gemm(ws, &gemmArgs[E]{
		m: n2, n: n2, k: n1, alpha: -1,
		a: a12, lda: lda, tA: true,
		b: a12, ldb: lda,
		c: a[n1*lda+n1:], ldc: lda,
		upper: true,
	}, []*scratch[P]{s})
	if f := potrfRec(ws, s, a[n1*lda+n1:], n2, lda); f >= 0 {
		return n1 + f
	}
	return -1
}

// potrfLeaf is the unblocked right-looking factorisation (LAPACK dpotf2 on
// the transposed layout); every inner loop runs along a row.
func potrfLeaf[E Float](a []E, n, lda int) int {
	for j := 0; j < n; j++ {
		rj := a[j*lda : j*lda+n]
		d := float64(rj[j])
		if !(d > 0) || math.IsInf(d, 1) {
			return j
		}
		d = math.Sqrt(d)
		rj[j] = E(d)
		inv := 1 / float64(rj[j])
		for c := j + 1; c < n; c++ {
			rj[c] = E(float64(rj[c]) * inv)
		}
		for i := j + 1; i < n; i++ {
			s := float64(rj[i])
			ri := a[i*lda+i : i*lda+n]
			rs := rj[i:n]
			for c := range ri {
				ri[c] = E(float64(ri[c]) - s*float64(rs[c]))
			}
		}
	}
	return -1
}

// trsmPar solves Uᵀ X = B (trans) or U X = B in place for B n×m, splitting
// the columns of B among workers; each worker runs the serial recursive
// solve on its own scratch.
func trsmPar[E, P Float](ws *workspace[P], trans bool, u []E, n, ldu int, b []E, m, ldb int, workers int) {
	solve := trsmUN[E, P]
	if trans {
		solve = trsmUT[E, P]
	}
	const minCols = 64
	w := min(workers, len(ws.s), m/minCols)
	if w <= 1 || n*n*m < 1<<20 {
		solve(ws, ws.s[0], u, n, ldu, b, m, ldb)
		return
	}
	nr := ws.k.nr
	chunk := ((m+w-1)/w + nr - 1) / nr * nr
	var wg sync.WaitGroup
	for t := 0; t < w; t++ {
		c0 := t * chunk
		if c0 >= m {
			break
		}
		mc := min(chunk, m-c0)
		s := ws.s[t]
		wg.Go(func() { solve(ws, s, u, n, ldu, b[c0:], mc, ldb) })
	}
	wg.Wait()
}

// trsmUT solves Uᵀ X = B in place (B n×m), recursively: X₁ = U₁₁⁻ᵀ B₁,
// B₂ −= U₁₂ᵀ X₁, X₂ = U₂₂⁻ᵀ B₂.
func trsmUT[E, P Float](ws *workspace[P], s *scratch[P], u []E, n, ldu int, b []E, m, ldb int) {
	if n <= trsmLeaf {
		trsmUTLeaf(u, n, ldu, b, m, ldb)
		return
	}
	// The GEMM's rows (n2) a multiple of the tile height when possible,
	// so that none of them go through the edge-tile path.
	n2 := splitTile(n, ws.k.mr)
	n1 := n - n2
	trsmUT(ws, s, u, n1, ldu, b, m, ldb)
	gemm(ws, &gemmArgs[E]{
		m: n2, n: m, k: n1, alpha: -1,
		a: u[n1:], lda: ldu, tA: true,
		b: b, ldb: ldb,
		c: b[n1*ldb:], ldc: ldb,
	}, []*scratch[P]{s})
	trsmUT(ws, s, u[n1*ldu+n1:], n2, ldu, b[n1*ldb:], m, ldb)
}

// trsmUN solves U X = B in place (B n×m), recursively: X₂ = U₂₂⁻¹ B₂,
// B₁ −= U₁₂ X₂, X₁ = U₁₁⁻¹ B₁.
func trsmUN[E, P Float](ws *workspace[P], s *scratch[P], u []E, n, ldu int, b []E, m, ldb int) {
	if n <= trsmLeaf {
		trsmUNLeaf(u, n, ldu, b, m, ldb)
		return
	}
	n1 := splitTile(n, ws.k.mr) // the GEMM's rows, as in trsmUT
	n2 := n - n1
	trsmUN(ws, s, u[n1*ldu+n1:], n2, ldu, b[n1*ldb:], m, ldb)
	gemm(ws, &gemmArgs[E]{
		m: n1, n: m, k: n2, alpha: -1,
		a: u[n1:], lda: ldu,
		b: b[n1*ldb:], ldb: ldb,
		c: b, ldc: ldb,
	}, []*scratch[P]{s})
	trsmUN(ws, s, u, n1, ldu, b, m, ldb)
}

// splitTile returns about half of n, rounded up to a multiple of mr when
// that leaves a positive rest.
func splitTile(n, mr int) int {
	h := (n/2 + mr - 1) / mr * mr
	if h >= n || h == 0 {
		return n / 2
	}
	return h
}

// trsmUTLeaf solves Uᵀ X = B in place for a small n: four rows of X at a
// time are solved with row operations and then eliminated from the rows
// below with axpy4, which reads them once for all of those rows.
func trsmUTLeaf[E Float](u []E, n, ldu int, b []E, m, ldb int) {
	for i0 := 0; i0 < n; i0 += 4 {
		i1 := min(n, i0+4)
		for i := i0; i < i1; i++ {
			bi := b[i*ldb : i*ldb+m]
			scaleG(1/float64(u[i*ldu+i]), bi)
			for r := i + 1; r < i1; r++ {
				axpyG(-float64(u[i*ldu+r]), bi, b[r*ldb:r*ldb+m])
			}
		}
		if i1-i0 < 4 {
			for i := i0; i < i1; i++ {
				for r := i1; r < n; r++ {
					axpyG(-float64(u[i*ldu+r]), b[i*ldb:i*ldb+m], b[r*ldb:r*ldb+m])
				}
			}
			continue
		}
		for r := i1; r < n; r++ {
			a := [4]float64{float64(u[i0*ldu+r]), float64(u[(i0+1)*ldu+r]), float64(u[(i0+2)*ldu+r]), float64(u[(i0+3)*ldu+r])}
			axpy4G(&a, b[i0*ldb:], ldb, b[r*ldb:r*ldb+m])
		}
	}
}

// trsmUNLeaf solves U X = B in place for a small n, bottom up, four rows
// at a time as in trsmUTLeaf.
func trsmUNLeaf[E Float](u []E, n, ldu int, b []E, m, ldb int) {
	for i1 := n; i1 > 0; i1 -= 4 {
		i0 := max(0, i1-4)
		for i := i1 - 1; i >= i0; i-- {
			bi := b[i*ldb : i*ldb+m]
			inv := 1 / float64(u[i*ldu+i])
			for c := range bi {
				bi[c] = E(float64(bi[c]) * inv)
			}
			for r := i0; r < i; r++ {
				axpyG(-float64(u[r*ldu+i]), bi, b[r*ldb:r*ldb+m])
			}
		}
		if i1-i0 < 4 {
			for i := i0; i < i1; i++ {
				for r := 0; r < i0; r++ {
					axpyG(-float64(u[r*ldu+i]), b[i*ldb:i*ldb+m], b[r*ldb:r*ldb+m])
				}
			}
			continue
		}
		for r := 0; r < i0; r++ {
			a := [4]float64{float64(u[r*ldu+i0]), float64(u[r*ldu+i0+1]), float64(u[r*ldu+i0+2]), float64(u[r*ldu+i0+3])}
			axpy4G(&a, b[i0*ldb:], ldb, b[r*ldb:r*ldb+m])
		}
	}
}

// axpy computes y += alpha x.
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		ys[0] += alpha * xs[0]
		ys[1] += alpha * xs[1]
		ys[2] += alpha * xs[2]
		ys[3] += alpha * xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}
