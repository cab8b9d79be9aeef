package precond

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
)

// MethodNystrom replaces K_MM inside the preconditioner with a rank-r
// approximation K' ≈ U Λ Uᵀ of D K_MM D (U M × r with orthonormal
// columns), drawn by block randomly pivoted Cholesky (Chen, Epperly,
// Tropp, Webber 2023) and diagonalised. Its memory is 8·M·r bytes instead
// of 4–8·M², and its set-up costs r rows of K_MM and O(M·r²) flops
// instead of O(M³).
//
// FALKON's preconditioner satisfies BBᵀ = (K'²/M + λK')⁻¹ (up to 1/n).
// MethodNystrom keeps that form on the span of U and a constant on its
// complement:
//
//	B = D [U (Λ²/M + λΛ)^{-1/2} Uᵀ + c^{1/2} (I − UUᵀ)],   c = 1/(μ²/M + λμ)
//
// with μ the smallest eigenvalue kept. B is M × M (Rank() = M): the
// conjugate gradient still solves the exact M-centre system, but the
// identity Bᵀ λ K_MM B = λ A⁻ᵀA⁻¹ of the Cholesky method no longer
// holds, so the solver must compute the λ·K_MM·u term itself
// (ExplicitLambda). When r is below the effective dimension the
// conjugate gradient needs more iterations; with r = M the method gives
// the exact FALKON preconditioner's BBᵀ on the range of K_MM.
const MethodNystrom Method = "nystrom"

// DefaultNystromRank is the rank MethodNystrom uses when Options.Rank is
// 0: min(M, 2000).
func DefaultNystromRank(m int) int { return min(m, 2000) }

// NystromBytes is the peak memory of BuildNystrom at M centres and rank r:
// the M × r basis, its r × r Gram matrix and eigenvectors, and one
// block of kernel rows.
func NystromBytes(m, r int) int64 {
	r = min(r, m)
	return 8 * (int64(m)*int64(r) + 3*int64(r)*int64(r) + 2*int64(nystromBlock)*int64(m) + 4*int64(m))
}

// DefaultNystromJitter is MethodNystrom's ε when Options.Jitter is 0: the
// core's eigenvalue floor is εM, as in the Cholesky method's K + εMI.
// (Floors up to 1e-4·M were measured on a 2-D kernel whose K_MM has
// eigenvalues down to 1e-12·‖K‖: none let the conditioning reach the
// Cholesky method's 1e-12 residual, which the exact identity for the λ
// term gives it; all stalled near 1e-5, which is far below what a fit
// needs.)
const DefaultNystromJitter = 1e-13

// nystromBlock is the number of pivots drawn at once by the randomly
// pivoted Cholesky: large enough that the updates run as GEMMs, small
// enough that few pivots are wasted on one draw.
const nystromBlock = 128

// PickRows writes rows idx of K_MM (len(idx) × M, row-major, all M
// columns) into dst. BuildNystrom calls it from one goroutine at a time.
type PickRows func(dst []float64, idx []int)

// nystrom holds MethodNystrom's factors.
type nystrom struct {
	u    []float64 // M × r, orthonormal columns
	vals []float64 // Λ, descending, r
	r    int
	// The core: B = D[U C Uᵀ + √c (I − UUᵀ)], with C = diag(s) or, after
	// WithCenterWeights, C = L⁻ᵀ (L lower triangular r × r, stored as its
	// transpose Lᵀ in the upper triangle of lt).
	s   []float64
	lt  []float64
	sqc float64
	// residual is tr(D K D) − tr(UΛUᵀ), the trace the basis misses.
	residual, trace float64
	// resMax is the residual's largest diagonal entry, a lower bound on
	// its largest eigenvalue.
	resMax float64
	// floor is εM: the core sees max(λ_i, εM), as the Cholesky method's
	// T = chol(K + εMI) does, so that the rounding of the explicit
	// λ·K_MM·u term along K_MM's numerically null directions is not
	// amplified by 1/(λ·λ_i).
	floor float64
}

// val is λ_i as the core sees it.
func (ny *nystrom) val(i int) float64 { return max(ny.vals[i], ny.floor) }

// BuildNystrom builds the preconditioner of MethodNystrom from the
// diagonal of K_MM (len m) and rows of K_MM picked by index. opt.Rank
// is r (0: DefaultNystromRank), opt.Seed seeds the pivots' draw,
// opt.Weights is D, opt.RankTol ends the factorisation early when the
// trace the basis misses falls to RankTol times tr(D K_MM D) (the rank
// then comes out below r). opt.Progress sees the fraction of the set-up
// done. It returns a *NotPDError when K_MM has no positive diagonal, and
// ctx's error if it ends.
func BuildNystrom(ctx context.Context, m int, diag []float64, rows PickRows, lambda float64, opt Options) (*Preconditioner, error) {
	p := newPrecond(m, lambda, opt)
	p.prec = Float64
	if opt.Jitter == 0 {
		p.jitter = DefaultNystromJitter
	}
	if len(diag) != m {
		panic(fmt.Sprintf("precond: BuildNystrom: %d diagonal entries for %d centres", len(diag), m))
	}
	r := opt.Rank
	if r <= 0 {
		r = DefaultNystromRank(m)
	}
	r = min(r, m)
	tol := opt.RankTol
	if tol <= 0 {
		tol = DefaultRankTol
	}
	progress := func(f float64) {
		if opt.Progress != nil {
			opt.Progress(f)
		}
	}
	f, rk, trace, residual, resMax, err := rpCholesky(ctx, m, r, diag, p.d, rows, opt.Seed, tol, p.workers, func(f float64) { progress(0.6 * f) })
	if err != nil {
		return nil, err
	}
	if rk == 0 {
		return nil, &NotPDError{Matrix: "D K_MM D (no positive diagonal)", Lambda: lambda}
	}
	ny, err := diagonalise(ctx, f, m, rk, tol, p.workers)
	if err != nil {
		return nil, err
	}
	ny.trace, ny.residual, ny.resMax, ny.floor = trace, residual, resMax, p.jitter*float64(m)
	ny.setLambda(m, lambda)
	p.ny = ny
	progress(1)
	return p, nil
}

// rpCholesky draws the rank-r randomly pivoted Cholesky factor F (M × rk,
// row-major, stride rk) of D K D, nystromBlock pivots at a time: each
// block is drawn with probabilities proportional to the diagonal of the
// residual D K D − FFᵀ, its rows of the residual are formed with one
// GEMM, and a pivoted Cholesky of their r × r block drops pivots that add
// nothing (duplicates, numerically dependent centres). It stops early
// when the residual's trace is at most tol times the initial one.
func rpCholesky(ctx context.Context, m, r int, diag, d []float64, rows PickRows, seed uint64, tol float64, workers int, progress func(float64)) (f []float64, rk int, trace, residual, resMax float64, err error) {
	res := make([]float64, m) // the residual's diagonal
	for i, v := range diag {
		if d != nil {
			v *= d[i] * d[i]
		}
		if !(v > 0) { // NaN or ≤ 0: never a pivot
			v = 0
		}
		res[i] = v
		trace += v
	}
	if trace == 0 {
		return nil, 0, 0, 0, 0, nil
	}
	f = make([]float64, m*r) // stride r while building
	g := make([]float64, nystromBlock*m)
	blk := make([]float64, nystromBlock*nystromBlock)
	cum := make([]float64, m)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	idx := make([]int, 0, nystromBlock)
	residual = trace
	for rk < r && residual > tol*trace {
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, 0, 0, err
		}
		b := min(nystromBlock, r-rk)
		// Draw b pivots i.i.d. ∝ res, keep the distinct ones.
		s := 0.0
		for i, v := range res {
			s += v
			cum[i] = s
		}
		idx = idx[:0]
		for range b {
			j := sort.SearchFloat64s(cum, rng.Float64()*s)
			for j < m-1 && res[j] == 0 { // skip zero-width entries
				j++
			}
			if res[j] > 0 && !slices.Contains(idx, j) {
				idx = append(idx, j)
			}
		}
		if len(idx) == 0 {
			break
		}
		slices.Sort(idx)
		nb := len(idx)
		gb := g[:nb*m]
		rows(gb, idx)
		if d != nil {
			for a, i := range idx {
				row := gb[a*m : a*m+m]
				for j := range row {
					row[j] *= d[i] * d[j]
				}
			}
		}
		// G ← G − F[idx, :rk] F[:, :rk]ᵀ: the residual's rows.
		if rk > 0 {
			fs := make([]float64, nb*rk)
			for a, i := range idx {
				copy(fs[a*rk:a*rk+rk], f[i*r:i*r+rk])
			}
			dense.Gemm(false, true, nb, m, rk, -1, fs, rk, f, r, gb, m, workers)
		}
		// The nb × nb block of the residual at the pivots, factorised
		// with pivoting: Pᵀ G_S P = UᵀU, rank q.
		bl := blk[:nb*nb]
		for a := range nb {
			for c := range nb {
				bl[a*nb+c] = gb[a*m+idx[c]]
			}
		}
		perm, q := dense.PivotedCholesky(bl, nb, nb, 1e-10, 1, nil)
		if q <= 0 {
			// Every drawn pivot's residual is numerical noise: zero
			// them and draw again.
			for _, i := range idx {
				residual -= res[i]
				res[i] = 0
			}
			continue
		}
		// New columns: F_new = U₁₁⁻ᵀ G[perm[:q], :] (q × M).
		fn := make([]float64, q*m)
		for a := range q {
			copy(fn[a*m:a*m+m], gb[perm[a]*m:perm[a]*m+m])
		}
		dense.SolveUpperT(bl, q, nb, fn, m, m, workers)
		for a := range q {
			row := fn[a*m : a*m+m]
			for j, v := range row {
				f[j*r+rk+a] = v
				res[j] -= v * v
			}
		}
		for a := range q {
			res[idx[perm[a]]] = 0
		}
		residual = 0
		for j, v := range res {
			if v < 0 {
				v, res[j] = 0, 0
			}
			residual += v
		}
		rk += q
		progress(float64(rk) / float64(r))
	}
	for _, v := range res {
		resMax = max(resMax, v)
	}
	if rk < r { // compact to stride rk
		for j := 1; j < m; j++ {
			copy(f[j*rk:j*rk+rk], f[j*r:j*r+rk])
		}
		f = f[: m*rk : m*rk]
	}
	return f, rk, trace, residual, resMax, nil
}

// diagonalise turns F (M × rk, stride rk) into U Λ Uᵀ = FFᵀ: Λ and V from
// the eigendecomposition of FᵀF, then U = F V Λ^{-1/2} in place, block
// of rows by block. Eigenvalues at or below tol·λ_max are dropped.
func diagonalise(ctx context.Context, f []float64, m, rk int, tol float64, workers int) (*nystrom, error) {
	gram := make([]float64, rk*rk)
	dense.Gemm(true, false, rk, rk, m, 1, f, rk, f, rk, gram, rk, workers)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(rk, gram), true) {
		return nil, &NotPDError{Matrix: "the Nyström basis's Gram matrix (eigendecomposition did not converge)"}
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := vals[rk-1]
	r := 0
	for i := rk - 1; i >= 0 && vals[i] > tol*top; i-- {
		r++
	}
	// W = V_r Λ_r^{-1/2}, rk × r, columns in descending order.
	w := make([]float64, rk*r)
	ny := &nystrom{r: r, vals: make([]float64, r)}
	for c := range r {
		i := rk - 1 - c
		ny.vals[c] = vals[i]
		sc := 1 / math.Sqrt(vals[i])
		for a := range rk {
			w[a*r+c] = vecs.At(a, i) * sc
		}
	}
	// U = F W in place (r ≤ rk, so writing block b of U never reaches
	// rows of F not yet read).
	const rowsPer = 256
	tmp := make([]float64, rowsPer*r)
	for lo := 0; lo < m; lo += rowsPer {
		n := min(rowsPer, m-lo)
		t := tmp[:n*r]
		clear(t)
		dense.Gemm(false, false, n, r, rk, 1, f[lo*rk:(lo+n)*rk], rk, w, r, t, r, workers)
		copy(f[lo*r:(lo+n)*r], t)
	}
	ny.u = f[: m*r : m*r]
	return ny, nil
}

// setLambda sets the diagonal core for λ: s_i = (λ_i²/M + λλ_i)^{-1/2}
// and c from the smallest kept eigenvalue.
func (ny *nystrom) setLambda(m int, lambda float64) {
	ny.s, ny.lt = make([]float64, ny.r), nil
	for i := range ny.vals {
		v := ny.val(i)
		ny.s[i] = 1 / math.Sqrt(v*v/float64(m)+lambda*v)
	}
	mu := ny.mu()
	ny.sqc = 1 / math.Sqrt(mu*mu/float64(m)+lambda*mu)
}

// mu is the complement's eigenvalue: the smallest kept one. (Measured
// against the residual's largest diagonal and its trace, which bound the
// residual's top eigenvalue from below and above: the smallest kept one
// needed the fewest iterations.)
func (ny *nystrom) mu() float64 { return ny.val(ny.r - 1) }

// withWeights sets the dense core for centre weights h:
// G = Λ Uᵀdiag(h)U Λ/M + λΛ = LLᵀ, and c = 1/(h̄μ²/M + λμ).
func (ny *nystrom) withWeights(m int, h []float64, lambda float64, workers int) (*nystrom, error) {
	r := ny.r
	hu := make([]float64, m*r)
	mean := 0.0
	for j := range m {
		mean += h[j]
		for c := range r {
			hu[j*r+c] = h[j] * ny.u[j*r+c]
		}
	}
	mean /= float64(m)
	g := make([]float64, r*r)
	dense.Gemm(true, false, r, r, m, 1/float64(m), ny.u, r, hu, r, g, r, workers)
	for a := range r {
		for c := range r {
			g[a*r+c] *= ny.val(a) * ny.val(c)
		}
		g[a*r+a] += lambda * ny.val(a)
	}
	// Upper Cholesky: G = RᵀR with R = Lᵀ.
	if ok, col := dense.Cholesky(g, r, r, workers); !ok {
		return nil, &NotPDError{Matrix: fmt.Sprintf("the weighted Nyström core (column %d)", col), Lambda: lambda}
	}
	q := *ny
	q.s, q.lt = nil, g
	mu := ny.mu()
	q.sqc = 1 / math.Sqrt(mean*mu*mu/float64(m)+lambda*mu)
	return &q, nil
}

// apply sets dst (M × k) = [U C Uᵀ + √c (I − UUᵀ)] src, with C the core
// (trans: its transpose). src may be dst.
func (ny *nystrom) apply(trans bool, dst, src []float64, m, k, workers int) {
	r := ny.r
	t := make([]float64, r*k)
	dense.Gemm(true, false, r, k, m, 1, ny.u, r, src, k, t, k, workers) // t = Uᵀ src
	ct := make([]float64, r*k)
	copy(ct, t)
	if ny.lt == nil {
		for i, s := range ny.s {
			row := ct[i*k : i*k+k]
			for j := range row {
				row[j] *= s
			}
		}
	} else if trans { // Cᵀ = L⁻¹ = R⁻ᵀ
		dense.SolveUpperT(ny.lt, r, r, ct, k, k, workers)
	} else { // C = L⁻ᵀ = R⁻¹
		dense.SolveUpper(ny.lt, r, r, ct, k, k, workers)
	}
	for i := range ct {
		ct[i] -= ny.sqc * t[i]
	}
	if &dst[0] != &src[0] {
		copy(dst, src)
	}
	for i := range dst {
		dst[i] *= ny.sqc
	}
	dense.Gemm(false, false, m, k, r, 1, ny.u, r, ct, k, dst, k, workers)
}

// NystromRank reports the rank r of MethodNystrom's basis (0 for the
// other methods).
func (p *Preconditioner) NystromRank() int {
	if p.ny == nil {
		return 0
	}
	return p.ny.r
}

// NystromResidual reports, for MethodNystrom, the fraction of
// tr(D K_MM D) its basis misses (0 for the other methods).
func (p *Preconditioner) NystromResidual() float64 {
	if p.ny == nil || p.ny.trace == 0 {
		return 0
	}
	return p.ny.residual / p.ny.trace
}

// NystromEigen returns, for MethodNystrom, the basis U (M × r, row-major,
// orthonormal columns) and Λ (descending) of D K_MM D ≈ UΛUᵀ, shared
// with the preconditioner (do not change them); nil for the others.
func (p *Preconditioner) NystromEigen() (u, vals []float64) {
	if p.ny == nil {
		return nil, nil
	}
	return p.ny.u, p.ny.vals
}

// ExplicitLambda reports whether the solver must add the λ·K_MM term to
// the data term itself before Bᵀ (MethodNystrom), instead of adding
// λ·A⁻¹p after T⁻ᵀ (the other methods, where T⁻ᵀ D K_MM D T⁻¹ = I).
func (p *Preconditioner) ExplicitLambda() bool { return p.ny != nil }

// NystromBasis returns MethodNystrom's basis for storing it: U (M × r,
// row-major), Λ (descending), tr(D K_MM D) and the trace U Λ Uᵀ misses
// (shared with the preconditioner: do not change them); nil slices for
// the other methods. NewNystrom rebuilds the preconditioner from them.
func (p *Preconditioner) NystromBasis() (u, vals []float64, trace, residual float64) {
	if p.ny == nil {
		return nil, nil, 0, 0
	}
	return p.ny.u, p.ny.vals, p.ny.trace, p.ny.residual
}

// NewNystrom is BuildNystrom from a basis NystromBasis returned (for
// the same centres, weights and options): no kernel entry is computed.
// It takes over u and vals. It panics if their lengths disagree with m,
// and returns a *NotPDError when vals is not positive and descending.
func NewNystrom(m int, u, vals []float64, trace, residual, lambda float64, opt Options) (*Preconditioner, error) {
	r := len(vals)
	if r == 0 || len(u) != m*r {
		panic(fmt.Sprintf("precond: NewNystrom: %d basis entries and %d eigenvalues for %d centres", len(u), r, m))
	}
	for i, v := range vals {
		if !(v > 0) || (i > 0 && v > vals[i-1]) {
			return nil, &NotPDError{Matrix: fmt.Sprintf("the stored Nyström basis (eigenvalue %d is %g)", i, v), Lambda: lambda}
		}
	}
	p := newPrecond(m, lambda, opt)
	p.prec = Float64
	if opt.Jitter == 0 {
		p.jitter = DefaultNystromJitter
	}
	ny := &nystrom{u: u, vals: vals, r: r, trace: trace, residual: residual, floor: p.jitter * float64(m)}
	ny.setLambda(m, lambda)
	p.ny = ny
	return p, nil
}
