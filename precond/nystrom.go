package precond

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
)

// MethodNystrom replaces K_MM inside the preconditioner with a rank-r
// approximation K' ≈ Q S Qᵀ of D K_MM D (Q M × r with orthonormal
// columns, S r × r), drawn by block randomly pivoted Cholesky (Chen,
// Epperly, Tropp, Webber 2023): K' ≈ FFᵀ, F = QR (Cholesky QR), S = RRᵀ.
// Its memory is 8·M·r bytes instead of 4–8·M², and its set-up costs r
// rows of K_MM and O(M·r²) flops instead of O(M³), all in GEMMs,
// triangular solves and Cholesky factorisations (no eigendecomposition).
//
// FALKON's preconditioner satisfies BBᵀ = (K'²/M + λK')⁻¹ (up to 1/n).
// MethodNystrom keeps that form on the span of Q and a constant on its
// complement:
//
//	B = D [Q R_G⁻¹ Qᵀ + c^{1/2} (I − QQᵀ)],   R_GᵀR_G = G = S²/M + λS,   c = 1/(μ²/M + λμ)
//
// with μ the largest eigenvalue of the residual D K_MM D − QSQᵀ on the
// complement of Q (Options.KMul; without it, the residual's largest
// diagonal entry, a lower bound). B is M × M (Rank() = M): the
// conjugate gradient still solves the exact M-centre system, but the
// identity Bᵀ λ K_MM B = λ A⁻ᵀA⁻¹ of the Cholesky method no longer
// holds, so the solver must compute the λ·K_MM·u term itself
// (ExplicitLambda). When r is below the number of eigenvalues of K_MM
// above λM the conjugate gradient needs more iterations (bench/RESULTS.md,
// "Beyond RAM"); with r = M the method gives the exact FALKON
// preconditioner's BBᵀ.
const MethodNystrom Method = "nystrom"

// DefaultNystromRank is the rank MethodNystrom uses when Options.Rank is
// 0: min(M, 2000).
func DefaultNystromRank(m int) int { return min(m, 2000) }

// NystromBytes is the peak memory of BuildNystrom at M centres and rank r:
// the M × r basis, six r × r matrices (at most that many are live at
// once: the Gram matrix, its factor, the product of the two rounds' factors
// and its predecessor, S, the core), two blocks of kernel rows (the
// pivots' rows of K_MM and the new columns) and the Cholesky QR's block
// of transposed rows.
func NystromBytes(m, r int) int64 {
	r = min(r, m)
	return 8 * (int64(m)*int64(r) + 6*int64(r)*int64(r) + 2*int64(nystromBlock)*int64(m) + int64(qrRows)*int64(r) + 4*int64(m))
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
	q []float64 // M × r, orthonormal columns
	s []float64 // r × r: D K D ≈ Q S Qᵀ
	r int
	// The core: B = D[Q R_G⁻¹ Qᵀ + √c (I − QQᵀ)], R_G upper triangular
	// (r × r, in the upper triangle of rg).
	rg  []float64
	sqc float64
	mu  float64 // the complement's eigenvalue (floored)
	// residual is tr(D K D) − tr(S), the trace the basis misses.
	residual, trace float64
	// floor is added to S's diagonal in the core: εM, as the Cholesky
	// method's T = chol(K + εMI) does, or RankTol·max S_ii if larger
	// (setFloor).
	floor float64
}

// setFloor sets floor = max(jm, tol·max S_ii): directions of S below
// tol times its largest diagonal entry (a lower bound on its largest
// eigenvalue) are numerical noise, and the core treats them as the
// eigendecomposition's rank tolerance (MethodEigen) would.
func (ny *nystrom) setFloor(jm, tol float64) {
	top := 0.0
	for i := range ny.r {
		top = max(top, ny.s[i*ny.r+i])
	}
	ny.floor = max(jm, tol*top)
}

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
	reclaim(NystromBytes(m, r))
	tol := opt.RankTol
	if tol <= 0 {
		tol = DefaultRankTol
	}
	progress := func(f float64) {
		if opt.Progress != nil {
			opt.Progress(f)
		}
	}
	// Progress by the phases' measured shares (M = 5·10⁴, r = 8000:
	// pivots 28 %, QR 61 %, μ and the core 11 %).
	f, rk, trace, residual, resMax, err := rpCholesky(ctx, m, r, diag, p.d, rows, opt.Seed, tol, p.workers, func(f float64) { progress(0.3 * f) })
	if err != nil {
		return nil, err
	}
	if rk == 0 {
		return nil, &NotPDError{Matrix: "D K_MM D (no positive diagonal)", Lambda: lambda}
	}
	ny, err := orthonormalise(ctx, f, m, rk, p.workers, func(f float64) { progress(0.3 + 0.6*f) })
	if err != nil {
		return nil, err
	}
	progress(0.9)
	ny.trace, ny.residual = trace, residual
	ny.setFloor(p.jitter*float64(m), tol)
	ny.mu = resMax
	if opt.KMul != nil && rk < m {
		rho, err := ny.complementTop(ctx, m, p.d, opt.KMul, opt.Seed, p.workers)
		if err != nil {
			return nil, err
		}
		// ρ, not max(ρ, resMax): on bench/largem at M = 10⁴, r = 4000,
		// test RMSE 0.071 against 0.088 after 30 iterations (and 0.196
		// with S's smallest eigenvalue).
		ny.mu = rho
	}
	ny.mu = max(ny.mu, ny.floor)
	if rk == m { // no complement: c is never used
		ny.mu = max(ny.mu, 1)
	}
	progress(0.95)
	if err := ny.setCore(m, nil, lambda, p.workers); err != nil {
		return nil, err
	}
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
	fnBuf := make([]float64, nystromBlock*m) // the new columns, q × M
	var fsBuf []float64                      // F's rows at the pivots, nb × rk
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
			fsBuf = slices.Grow(fsBuf[:0], nb*rk)[:nb*rk]
			fs := fsBuf
			for a, i := range idx {
				copy(fs[a*rk:a*rk+rk], f[i*r:i*r+rk])
			}
			// By column ranges: dense.Gemm splits its work by rows
			// of C, of which there are only nb.
			per := (m + workers - 1) / workers
			var wg sync.WaitGroup
			for lo := 0; lo < m; lo += per {
				hi := min(lo+per, m)
				wg.Go(func() { dense.Gemm(false, true, nb, hi-lo, rk, -1, fs, rk, f[lo*r:], r, gb[lo:], m, 1) })
			}
			wg.Wait()
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
		fn := fnBuf[:q*m]
		for a := range q {
			copy(fn[a*m:a*m+m], gb[perm[a]*m:perm[a]*m+m])
		}
		dense.SolveUpperT(bl, q, nb, fn, m, m, workers)
		for j := range m { // row by row of F: contiguous writes
			dst := f[j*r+rk : j*r+rk+q]
			for a := range q {
				v := fn[a*m+j]
				dst[a] = v
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

// orthonormalise turns F (M × rk, stride rk) into Q S Qᵀ = FFᵀ by
// Cholesky QR: FᵀF = RᵀR, Q = F R⁻¹ (in place, block of rows by block),
// twice (once when the first round's Q is already orthonormal to
// qr1Orth), and S = R Rᵀ. A Gram matrix too ill-conditioned for its Cholesky
// factorisation gets a shift of 1e-13·tr(FᵀF)·10^j until it factorises
// (shifted Cholesky QR): Q is then orthonormal only to about that
// relative accuracy, which changes how fast CG converges, never what it
// converges to (B stays nonsingular and Bᵀ its exact transpose).
func orthonormalise(ctx context.Context, f []float64, m, rk, workers int, progress func(float64)) (*nystrom, error) {
	// Two rounds (Cholesky QR2, Fukaya et al. 2014): the first leaves
	// Q's columns orthonormal to about κ(F D⁻¹)²·10⁻¹⁶ (D F's column
	// norms: Cholesky and the triangular solves are backward stable
	// column by column, so the column scaling does not count), the second
	// to rounding; F = Q R₂R₁. The second round is skipped when an
	// estimate of κ(F D⁻¹) = κ(R₁ D⁻¹) says the first already reached
	// qr1Orth: the randomly pivoted Cholesky's columns are nearly
	// independent once scaled (κ 15–110 on Gaussian kernels of random
	// 5-D points), and the skip halves the QR's flops.
	var rtot []float64
	norms := make([]float64, rk) // D
	gram := make([]float64, rk*rk)
	rf := make([]float64, rk*rk)
	t := make([]float64, rk*qrRows)
	// Progress: per round, the Gram matrix (Mr² flops, its upper
	// triangle) is half and the solve (Mr²) the other half of the work.
	const gramRows = 4096
	for round := range 2 {
		clear(gram)
		for lo := 0; lo < m; lo += gramRows { // in row blocks, to report
			n := min(gramRows, m-lo)
			dense.GramUpper(f[lo*rk:(lo+n)*rk], n, rk, rk, 1, gram, rk, workers)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			progress((float64(round) + 0.5*float64(lo+n)/float64(m)) / 2)
		}
		tr := 0.0
		for i := range rk {
			tr += gram[i*rk+i]
			norms[i] = math.Sqrt(gram[i*rk+i])
		}
		shifted := false
		for shift := 0.0; ; {
			shifted = shift > 0
			copy(rf, gram)
			for i := range rk {
				rf[i*rk+i] += shift
			}
			if ok, _ := dense.Cholesky(rf, rk, rk, workers); ok {
				break
			}
			if shift == 0 {
				shift = 1e-13 * tr
			} else if shift *= 10; shift > 1e-3*tr {
				return nil, &NotPDError{Matrix: "the Nyström basis's Gram matrix"}
			}
		}
		for i := range rk { // the strict lower triangle is not R's
			clear(rf[i*rk : i*rk+i])
		}
		// Q = F R⁻¹: Qᵀ = R⁻ᵀ Fᵀ, block of rows by block.
		for lo := 0; lo < m; lo += qrRows {
			n := min(qrRows, m-lo)
			blk := f[lo*rk : (lo+n)*rk]
			transpose(t[:rk*n], blk, n, rk)
			dense.SolveUpperT(rf, rk, rk, t[:rk*n], n, n, workers)
			transpose(blk, t[:rk*n], rk, n)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			progress((float64(round) + 0.5 + 0.5*float64(lo+n)/float64(m)) / 2)
		}
		if round == 0 {
			rtot = slices.Clone(rf)
			if !shifted && orthLoss(rf, norms, rk) <= qr1Orth {
				break
			}
		} else { // R = R₂R₁
			prod := make([]float64, rk*rk)
			dense.Gemm(false, false, rk, rk, rk, 1, rf, rk, rtot, rk, prod, rk, workers)
			rtot = prod
		}
	}
	// S = R Rᵀ (R upper triangular: r³/3 flops), mirrored to the lower
	// triangle.
	sm := make([]float64, rk*rk)
	dense.UUt(rtot, rk, rk, 1, sm, rk, workers)
	for i := range rk {
		for j := i + 1; j < rk; j++ {
			sm[j*rk+i] = sm[i*rk+j]
		}
	}
	return &nystrom{q: f[: m*rk : m*rk], s: sm, r: rk}, ctx.Err()
}

// qr1Orth is the loss of orthogonality, ε·κ², below which one Cholesky
// QR round is enough (κ up to about 300).
const qr1Orth = 1e-11

// orthLoss estimates the loss of orthogonality after one Cholesky QR
// round, ε·κ(R D⁻¹)², for R upper triangular (k × k in r, stride k) and
// D = norms (R's column norms): κ = ‖RD⁻¹‖·‖DR⁻¹‖, each norm by 12
// power steps (products with R and triangular solves, k² flops each).
// The power method approaches both norms from below; κ² carries a
// factor of 4 for that. A zero or non-finite norm gives +Inf.
func orthLoss(r, norms []float64, k int) float64 {
	for _, v := range norms {
		if !(v > 0) || math.IsInf(v, 0) {
			return math.Inf(1)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(k), 0x71))
	x, y := make([]float64, k), make([]float64, k)
	start := func() {
		for i := range x {
			x[i] = rng.NormFloat64()
		}
	}
	unit := func(v []float64) float64 {
		s := 0.0
		for _, e := range v {
			s += e * e
		}
		s = math.Sqrt(s)
		for i := range v {
			v[i] /= s
		}
		return s
	}
	// ‖RD⁻¹‖²: steps of x ← D⁻¹RᵀRD⁻¹x.
	start()
	unit(x)
	big := 0.0
	for range 12 {
		for i := range k { // y = R D⁻¹ x
			s := 0.0
			row := r[i*k : i*k+k]
			for j := i; j < k; j++ {
				s += row[j] * x[j] / norms[j]
			}
			y[i] = s
		}
		clear(x) // x = D⁻¹ Rᵀ y
		for i := range k {
			row := r[i*k : i*k+k]
			for j := i; j < k; j++ {
				x[j] += row[j] * y[i]
			}
		}
		for j := range k {
			x[j] /= norms[j]
		}
		big = unit(x)
	}
	// ‖DR⁻¹‖²: steps of x ← D R⁻¹R⁻ᵀ D x.
	start()
	unit(x)
	inv := 0.0
	for range 12 {
		for j := range k {
			x[j] *= norms[j]
		}
		dense.SolveUpperTVec(r, k, k, x) // Rᵀ z = D x
		dense.SolveUpperVec(r, k, k, x)  // R w = z
		for j := range k {
			x[j] *= norms[j]
		}
		inv = unit(x)
		if math.IsInf(inv, 0) || math.IsNaN(inv) {
			return math.Inf(1)
		}
	}
	const eps = 0x1p-52
	return 4 * eps * big * inv // big, inv: the squared norms
}

// qrRows is the rows of F per block of the Cholesky QR's solve: the
// triangular solve runs at about 90 GFLOP/s on two cores with 256
// right-hand sides and 105 with 1024 (r = 4000).
const qrRows = 1024

// transpose sets dst (cols × rows) to the transpose of src (rows × cols),
// both row-major and contiguous, in tiles small enough that a tile of
// each stays in L1 (element by element, one side strides through memory
// a cache line per element).
func transpose(dst, src []float64, rows, cols int) {
	const tile = 16
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			for i := i0; i < i1; i++ {
				row := src[i*cols+j0 : i*cols+j1]
				for j, v := range row {
					dst[(j0+j)*rows+i] = v
				}
			}
		}
	}
}

// projector returns a function that sets x ← (I − QQᵀ) x (x of length
// M): t = Qᵀx and x −= Qt, two reads of Q by rows split over workers.
// (Through the GEMM, with one column, each product packed all of Q
// first: 2 of the 3 s of the power steps at M = 10⁴, r = 4000.)
func (ny *nystrom) projector(m, workers int) func(x []float64) {
	r := ny.r
	workers = max(1, min(workers, m/1024))
	parts := make([][]float64, workers)
	for w := range parts {
		parts[w] = make([]float64, r)
	}
	t := parts[0]
	split := func(fn func(w, lo, hi int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { fn(w, w*m/workers, (w+1)*m/workers) })
		}
		wg.Wait()
	}
	return func(x []float64) {
		split(func(w, lo, hi int) { // parts[w] = Σ_{i ∈ [lo, hi)} x_i Q_i
			p := parts[w]
			clear(p)
			for i := lo; i < hi; i++ {
				xi := x[i]
				q := ny.q[i*r : i*r+r]
				for j, v := range q {
					p[j] += xi * v
				}
			}
		})
		for _, p := range parts[1:] {
			for j, v := range p {
				t[j] += v
			}
		}
		split(func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				q := ny.q[i*r : i*r+r]
				var s0, s1, s2, s3 float64
				j := 0
				for ; j+4 <= r; j += 4 {
					s0 += q[j] * t[j]
					s1 += q[j+1] * t[j+1]
					s2 += q[j+2] * t[j+2]
					s3 += q[j+3] * t[j+3]
				}
				for ; j < r; j++ {
					s0 += q[j] * t[j]
				}
				x[i] -= (s0 + s1) + (s2 + s3)
			}
		})
	}
}

// complementSteps caps complementTop's power steps; complementTol ends
// them once a step raises the estimate by less than this fraction.
const (
	complementSteps = 10
	complementTol   = 0.01
)

// complementTop estimates the largest eigenvalue of the residual on the
// complement of Q, (I − QQᵀ) D K D (I − QQᵀ), by the power method from a
// seeded random start: at least 3 and at most complementSteps products
// with K_MM (kmul, M² kernel entries each), ending when the estimate
// rises by less than complementTol.
func (ny *nystrom) complementTop(ctx context.Context, m int, d []float64, kmul func(dst, src []float64, k int), seed uint64, workers int) (float64, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	v := make([]float64, m)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	w := make([]float64, m)
	project := ny.projector(m, workers)
	rho := 0.0
	for step := range complementSteps {
		prev := rho
		project(v)
		nrm := 0.0
		for _, x := range v {
			nrm += x * x
		}
		nrm = math.Sqrt(nrm)
		if nrm == 0 {
			return 0, nil
		}
		for i := range v {
			v[i] /= nrm
			if d != nil {
				v[i] *= d[i]
			}
		}
		kmul(w, v, 1)
		if d != nil {
			for i := range w {
				w[i] *= d[i]
				v[i] /= d[i]
			}
		}
		project(w)
		rho = 0
		for i := range v {
			rho += v[i] * w[i] // Rayleigh quotient, ‖v‖ = 1
		}
		v, w = w, v
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		// The Rayleigh quotient rises to the top eigenvalue; the core
		// needs it to a few per cent (c = 1/(μ²/M + λμ)), and each step
		// costs M² kernel entries.
		if step >= 2 && rho-prev <= complementTol*rho {
			break
		}
	}
	return rho, nil
}

// setCore factorises the core for λ and centre weights h (nil: h = 1):
// G = S_f QᵀHQ S_f/M + λS_f with S_f = S + εMI, G = R_GᵀR_G, and
// c = 1/(h̄μ²/M + λμ).
func (ny *nystrom) setCore(m int, h []float64, lambda float64, workers int) error {
	r := ny.r
	sf := make([]float64, r*r)
	copy(sf, ny.s)
	for i := range r {
		sf[i*r+i] += ny.floor
	}
	mean := 1.0
	var mid []float64 // S_f QᵀHQ, or S_f
	if h == nil {
		mid = sf
	} else {
		// QᵀHQ, block of rows by block.
		qhq := make([]float64, r*r)
		const rowsPer = 256
		hq := make([]float64, rowsPer*r)
		mean = 0
		for lo := 0; lo < m; lo += rowsPer {
			n := min(rowsPer, m-lo)
			for i := range n {
				mean += h[lo+i]
				for j := range r {
					hq[i*r+j] = h[lo+i] * ny.q[(lo+i)*r+j]
				}
			}
			dense.Gemm(true, false, r, r, n, 1, ny.q[lo*r:(lo+n)*r], r, hq[:n*r], r, qhq, r, workers)
		}
		mean /= float64(m)
		mid = make([]float64, r*r)
		dense.Gemm(false, false, r, r, r, 1, sf, r, qhq, r, mid, r, workers)
	}
	g := make([]float64, r*r)
	dense.Gemm(false, false, r, r, r, 1/float64(m), mid, r, sf, r, g, r, workers)
	for i := range r {
		for j := range r {
			g[i*r+j] += lambda * sf[i*r+j]
		}
	}
	// Symmetrise (rounding) and factorise.
	for i := range r {
		for j := i + 1; j < r; j++ {
			v := (g[i*r+j] + g[j*r+i]) / 2
			g[i*r+j], g[j*r+i] = v, v
		}
	}
	if ok, col := dense.Cholesky(g, r, r, workers); !ok {
		return &NotPDError{Matrix: fmt.Sprintf("the Nyström core (column %d)", col), Lambda: lambda}
	}
	ny.rg = g
	ny.sqc = 1 / math.Sqrt(mean*ny.mu*ny.mu/float64(m)+lambda*ny.mu)
	return nil
}

// apply sets dst (M × k) = [Q C Qᵀ + √c (I − QQᵀ)] src with C = R_G⁻¹
// (trans: C = R_G⁻ᵀ). src may be dst.
func (ny *nystrom) apply(trans bool, dst, src []float64, m, k, workers int) {
	r := ny.r
	t := make([]float64, r*k)
	dense.Gemm(true, false, r, k, m, 1, ny.q, r, src, k, t, k, workers) // t = Qᵀ src
	ct := make([]float64, r*k)
	copy(ct, t)
	if trans {
		dense.SolveUpperT(ny.rg, r, r, ct, k, k, workers)
	} else {
		dense.SolveUpper(ny.rg, r, r, ct, k, k, workers)
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
	dense.Gemm(false, false, m, k, r, 1, ny.q, r, ct, k, dst, k, workers)
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

// ExplicitLambda reports whether the solver must add the λ·K_MM term to
// the data term itself before Bᵀ (MethodNystrom), instead of adding
// λ·A⁻¹p after T⁻ᵀ (the other methods, where T⁻ᵀ D K_MM D T⁻¹ = I).
func (p *Preconditioner) ExplicitLambda() bool { return p.ny != nil }

// NystromBasis returns MethodNystrom's basis for storing it: Q (M × r,
// row-major, orthonormal columns) and S (r × r) with D K_MM D ≈ Q S Qᵀ,
// tr(D K_MM D), the trace Q S Qᵀ misses and the complement's eigenvalue
// μ (shared with the
// preconditioner: do not change them); nil slices for the other
// methods. NewNystrom rebuilds the preconditioner from them.
func (p *Preconditioner) NystromBasis() (q, s []float64, trace, residual, mu float64) {
	if p.ny == nil {
		return nil, nil, 0, 0, 0
	}
	return p.ny.q, p.ny.s, p.ny.trace, p.ny.residual, p.ny.mu
}

// NewNystrom is BuildNystrom from a basis NystromBasis returned (for
// the same centres, weights and options): no kernel entry is computed.
// It takes over q and s. It panics if their lengths disagree with m,
// and returns a *NotPDError when S + εMI or the core is not positive
// definite.
func NewNystrom(m int, q, s []float64, trace, residual, mu, lambda float64, opt Options) (*Preconditioner, error) {
	r := int(math.Sqrt(float64(len(s))))
	if r == 0 || r*r != len(s) || len(q) != m*r {
		panic(fmt.Sprintf("precond: NewNystrom: %d basis entries and a core of %d for %d centres", len(q), len(s), m))
	}
	p := newPrecond(m, lambda, opt)
	p.prec = Float64
	if opt.Jitter == 0 {
		p.jitter = DefaultNystromJitter
	}
	ny := &nystrom{q: q, s: s, r: r, trace: trace, residual: residual}
	tol := opt.RankTol
	if tol <= 0 {
		tol = DefaultRankTol
	}
	ny.setFloor(p.jitter*float64(m), tol)
	ny.mu = max(mu, ny.floor)
	if err := ny.setCore(m, nil, lambda, p.workers); err != nil {
		return nil, err
	}
	p.ny = ny
	return p, nil
}
