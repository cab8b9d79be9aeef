package precond

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
)

// ErrNotPD is matched (errors.Is) by every *NotPDError.
var ErrNotPD = errors.New("precond: matrix is not positive definite")

// NotPDError reports that a factorisation failed because its matrix was
// not numerically positive definite.
type NotPDError struct {
	Matrix string  // which matrix: "K_MM + εMI" or "TTᵀ/M + λI"
	Column int     // the column at which the factorisation stopped
	Jitter float64 // ε in use
	Lambda float64 // λ in use
}

func (e *NotPDError) Error() string {
	switch e.Matrix {
	case matT:
		return fmt.Sprintf("precond: the kernel matrix of the centres (%s, ε = %g) is not positive definite at column %d: "+
			"the centres are (nearly) duplicated or the kernel is too wide for them; raise the jitter ε, "+
			"use fewer centres, or a smaller sigma", e.Matrix, e.Jitter, e.Column)
	default:
		return fmt.Sprintf("precond: %s (λ = %g) is not positive definite at column %d: raise lambda or the jitter ε",
			e.Matrix, e.Lambda, e.Column)
	}
}

// Is makes errors.Is(err, ErrNotPD) true.
func (e *NotPDError) Is(target error) bool { return target == ErrNotPD }

const (
	matT = "K_MM + εMI"
	matA = "TTᵀ/M + λI"
)

// DefaultJitter is the ε used when Options.Jitter is 0: the factorised
// matrix is K_MM + εMI. The same value as the Python falkon library's
// float64 default.
const DefaultJitter = 1e-13

// DefaultJitter32 is the ε used in float32 precision when Options.Jitter
// is 0: float32 rounding of K_MM and of the factorisation (about 6e-8
// relative per operation, growing with M) must stay below εM on the
// diagonal. The Python falkon library's float32 default.
const DefaultJitter32 = 1e-5

// Precision is the storage precision of the factors.
type Precision string

// Precisions of the M × M buffer. The vectors the factors are applied to,
// and all arithmetic, are float64 in both.
const (
	// Float64 stores T and A in 8M² bytes.
	Float64 Precision = "float64"
	// Float32 stores them in 4M² bytes: half the memory, so about 1.4
	// times the centres in the same RAM, for a factorisation rounded to
	// float32 (see DefaultJitter32).
	Float32 Precision = "float32"
)

// size is the bytes per element of the buffer.
func (p Precision) size() int64 {
	if p == Float32 {
		return 4
	}
	return 8
}

// Valid reports whether p is "" (Float64), Float64 or Float32.
func (p Precision) Valid() bool { return p == "" || p == Float64 || p == Float32 }

// PackBytes is the memory that the dense algebra of a preconditioner of
// m centres (or of a Nyström rank-m core) built on the given number of
// workers holds besides its buffers: the GEMM's packing buffers
// (internal/dense), up to 32 MiB of packed rows and 1 MiB per worker.
func PackBytes(m, workers int) int64 { return dense.PackBytes(m, workers) }

// Bytes is the memory a Cholesky preconditioner of m centres holds in
// precision p: one M × M buffer (T transposed in its lower triangle, A in
// its upper one) and three length-M float64 vectors (T's diagonal, D, and
// the diagonal of TTᵀ/M while A is formed). Build uses at most
// 32·M·8 bytes more per worker while it computes K_MM.
func Bytes(m int, p Precision) int64 {
	M := int64(m)
	return M*M*p.size() + 3*8*M
}

// MaxM is the largest M whose Bytes(M, p) is at most budget.
func MaxM(budget int64, p Precision) int {
	if budget <= 0 {
		return 0
	}
	m := int(math.Sqrt(float64(budget) / float64(p.size())))
	for m > 0 && Bytes(m, p) > budget {
		m--
	}
	for Bytes(m+1, p) <= budget {
		m++
	}
	return m
}

// Options configures New. The zero value means: jitter DefaultJitter, no
// weights.
type Options struct {
	// Jitter is ε in T = chol(D K_MM D + εMI). 0 means DefaultJitter, or
	// DefaultJitter32 in Float32 precision.
	Jitter float64
	// Precision is the storage of the factors (Cholesky method): Float64
	// (the zero value) or Float32.
	Precision Precision
	// Progress, if not nil, is called from one goroutine at a time during
	// the factorisations (O(M³), minutes at M = 5·10⁴) with the fraction
	// of their work done, from 0 to 1.
	Progress func(done float64)
	// Weights is the diagonal of D (length M), for centres drawn with
	// non-uniform probabilities p_j: D_jj = 1/√(n p_j). nil means D = I.
	Weights []float64
	// Workers bounds the goroutines of the factorisations and solves.
	// 0 means GOMAXPROCS.
	Workers int
	// Method is MethodCholesky (the zero value), MethodEigen or
	// MethodPivoted.
	Method Method
	// RankTol is, for MethodEigen, the relative threshold below which
	// eigenvalues of D K_MM D are dropped: λ_i ≤ RankTol·λ_max; for
	// MethodPivoted, pivots at or below RankTol times the largest diagonal
	// end the factorisation; for MethodNystrom, the factorisation ends
	// when the trace its basis misses falls to RankTol·tr(D K_MM D). 0
	// means DefaultRankTol.
	RankTol float64
	// Rank is MethodNystrom's rank r. 0 means DefaultNystromRank(M).
	Rank int
	// Seed seeds MethodNystrom's random pivots.
	Seed uint64
	// KMul, for MethodNystrom, sets dst = K_MM·src (M × k, row-major)
	// without storing K_MM. When set, BuildNystrom takes the complement's
	// eigenvalue μ from power steps on (I − QQᵀ) D K_MM D (I − QQᵀ)
	// (3 to 10 products, until the estimate rises by less than 1 %; μ
	// is needed to a few per cent, so KMul may compute in float32);
	// when nil, from the residual's largest diagonal entry (which needed
	// more iterations on bench/largem).
	KMul func(dst, src []float64, k int)
	// OutOfCore, when not nil, makes Build keep the Cholesky method's
	// factors on disk (OutOfCore): for an M whose M × M buffer does not
	// fit in memory.
	OutOfCore *OutOfCore
}

// Method selects how T is built.
type Method string

// Preconditioner methods (FALKON appendix, Example 2).
const (
	// MethodCholesky: T = chol(D K_MM D + εMI). Fast; needs K_MM + εMI
	// numerically positive definite.
	MethodCholesky Method = "cholesky"
	// MethodEigen: D K_MM D = QΛQᵀ, T = Λ_r^{1/2} Q_rᵀ over the r
	// eigenvalues above RankTol·λ_max. Handles rank-deficient K_MM
	// (duplicate or nearly duplicate centres, low-rank kernels) exactly,
	// at the cost of a symmetric eigendecomposition (several times a
	// Cholesky). The system solved has dimension r.
	MethodEigen Method = "eigen"
	// MethodPivoted: the Cholesky factorisation with diagonal pivoting
	// (LAPACK dpstrf) of D K_MM D, stopped at the first pivot at or below
	// RankTol times the largest diagonal: Pᵀ D K_MM D P = UᵀU with U
	// r × M, and T = U Pᵀ. It handles a rank-deficient K_MM like
	// MethodEigen at the cost of about r/M of one Cholesky (GEMM speed,
	// no eigendecomposition), so it scales to M in the tens of thousands.
	// T⁻¹ is the right inverse P [U₁₁⁻¹; 0]: the model puts its weight on
	// the r pivot centres, which span the others. The system solved has
	// dimension r; the factors hold 16r² bytes (8r² when r = M) once the
	// factorisation, which needs K_MM whole in float64, is done.
	MethodPivoted Method = "pivoted"
)

// DefaultRankTol is the eigenvalue threshold of MethodEigen and the pivot
// threshold of MethodPivoted.
const DefaultRankTol = 1e-12

// Preconditioner holds FALKON's factors T and A for M centres. It is safe
// for concurrent use: its methods change only their arguments.
type Preconditioner struct {
	m       int
	f       factors // Cholesky method: T and A in one buffer
	prec    Precision
	d       []float64
	workers int
	// MethodEigen: T = Λ_r^{1/2} Q_rᵀ and A = diag((λ_i/M + λ)^{1/2}).
	q    []float64 // Q_rᵀ, r × M
	s    []float64 // λ_i^{1/2}
	sinv []float64 // λ_i^{-1/2}
	ainv []float64 // 1/A_ii
	// MethodPivoted: piv[i] is the centre of pivot i (f holds U₁₁ and A,
	// r × r).
	piv []int
	// MethodNystrom: the low-rank basis and its core (Rank() = M).
	ny     *nystrom
	jitter float64
	lambda float64
}

// New factorises the preconditioner of FALKON (Rudi, Carratino, Rosasco
// 2017, Alg. 1 and appendix Def. 3):
//
//	T = chol(D K_MM D + εMI),   A = chol(T Tᵀ / M + λI)
//
// both upper triangular. New takes over the storage of kmm and keeps both
// factors in it (T transposed in the lower triangle, A in the upper one,
// T's diagonal aside), so in Float64 precision the preconditioner adds
// only O(M) bytes to K_MM. kmm must not be used afterwards. Only kmm's
// upper triangle is read. In Float32 precision the factors go to a new
// 4M² buffer instead; Build avoids holding K_MM in float64 at all.
//
// It returns a *NotPDError (matching ErrNotPD) when a factorisation fails.
// New panics if λ ≤ 0, the weights have the wrong length or an option is
// unknown.
func New(kmm *mat.SymDense, lambda float64, opt Options) (*Preconditioner, error) {
	raw := kmm.RawSymmetric()
	p := newPrecond(raw.N, lambda, opt)
	switch p.method(opt) {
	case MethodEigen:
		return p, p.eigen(kmm, lambda, opt.RankTol)
	case MethodPivoted:
		return p, p.pivoted(context.Background(), raw.Data, raw.Stride, opt)
	case MethodNystrom:
		m, ld := raw.N, raw.Stride
		diag := make([]float64, m)
		for i := range m {
			diag[i] = raw.Data[i*ld+i]
		}
		if opt.KMul == nil {
			opt.KMul = func(dst, src []float64, k int) {
				clear(dst)
				for i := range m {
					for j := range m {
						a := raw.Data[min(i, j)*ld+max(i, j)]
						for c := range k {
							dst[i*k+c] += a * src[j*k+c]
						}
					}
				}
			}
		}
		return BuildNystrom(context.Background(), m, diag, func(dst []float64, idx []int) {
			for a, i := range idx {
				for j := range m {
					dst[a*m+j] = raw.Data[min(i, j)*ld+max(i, j)]
				}
			}
		}, lambda, opt)
	}
	if p.prec == Float32 {
		m := raw.N
		buf := make([]float32, m*m)
		for i := range m {
			src := raw.Data[i*raw.Stride+i : i*raw.Stride+m]
			dst := buf[i*m+i : i*m+m]
			for j, v := range src {
				dst[j] = float32(v)
			}
		}
		return p, p.factorise32(context.Background(), buf, m, opt.Progress)
	}
	return p, p.factorise64(context.Background(), raw.Data, raw.Stride, opt.Progress)
}

// Rows writes rows lo to hi−1 of K_MM, all M columns, into dst
// ((hi−lo) × M, row-major). Build calls it concurrently on disjoint row
// ranges.
type Rows func(dst []float64, lo, hi int)

// Build is New for a K_MM computed block by block by rows directly into
// the preconditioner's buffer: the peak memory is Bytes(m, opt.Precision)
// plus 32 rows of K_MM per worker, never a float64 K_MM beside a float32
// buffer. ctx is checked between row blocks and between the panels of the
// factorisations; its error is returned if it ends. (MethodEigen needs
// K_MM whole in float64: Build allocates it.)
//
// Before it allocates an M × M buffer of 16 MiB or more, Build runs a
// garbage collection (reclaim).
func Build(ctx context.Context, m int, rows Rows, lambda float64, opt Options) (*Preconditioner, error) {
	p := newPrecond(m, lambda, opt)
	if opt.OutOfCore != nil {
		if p.method(opt) != MethodCholesky {
			return nil, errDiskMethod
		}
		if err := p.buildDisk(ctx, rows, opt); err != nil {
			return nil, err
		}
		return p, nil
	}
	reclaim(int64(m) * int64(m) * p.prec.size())
	if meth := p.method(opt); meth == MethodNystrom {
		panic("precond: Build cannot build MethodNystrom, which needs rows picked by index: use BuildNystrom")
	} else if meth != MethodCholesky {
		kmm := make([]float64, m*m)
		if err := fillRows(ctx, kmm, m, p.workers, rows, func(dst []float64, lo, hi int, tmp []float64) { rows(dst[lo*m:hi*m], lo, hi) }); err != nil {
			return nil, err
		}
		if meth == MethodPivoted {
			return p, p.pivoted(ctx, kmm, m, opt)
		}
		return p, p.eigen(mat.NewSymDense(m, kmm), lambda, opt.RankTol)
	}
	if p.prec == Float32 {
		buf, err := fillKMM[float32](ctx, m, p.workers, rows)
		if err != nil {
			return nil, err
		}
		return p, p.factorise32(ctx, buf, m, opt.Progress)
	}
	buf, err := fillKMM[float64](ctx, m, p.workers, rows)
	if err != nil {
		return nil, err
	}
	return p, p.factorise64(ctx, buf, m, opt.Progress)
}

// reclaimBytes is the smallest buffer that Build (an M × M buffer) and
// BuildNystrom (its peak, NystromBytes) collect garbage for.
const reclaimBytes = 16 << 20

// reclaim runs a garbage collection before a buffer of n bytes is
// allocated, if n ≥ reclaimBytes, so that the buffer reuses the memory
// of buffers that are garbage now: an earlier fit's factor, or a
// search's candidates (ooc.FitTuned). Without it the Go heap's goal,
// twice the heap that was live at the last collection, often lets the
// allocation take fresh pages. The process then holds both, and on a VM
// that reports free memory to its host, fresh huge pages cost the
// host's faults. Three fits in a row at M = 10⁴ in float64 (800 MiB)
// through the Go API: peak RSS 0.85, 1.64, 2.42 GB and K_MM 1.0–2.1 s
// each without it; 0.85 GB and 0.86–1.24 GB after, K_MM 0.11–0.15 s
// from the second fit on (round 13). With the Nyström preconditioner
// (M = 10⁴, r = 2000, 0.36 GB by NystromBytes): peak RSS 0.64–0.73 GB
// after three fits without it, 0.46–0.48 GB with it. The collection
// costs milliseconds beside the factorisation that follows.
func reclaim(n int64) {
	if n >= reclaimBytes {
		runtime.GC()
	}
}

// fillKMM allocates the M × M buffer (pre-faulted) and fills its upper
// triangle with K_MM from rows, on workers goroutines.
func fillKMM[E dense.Float](ctx context.Context, m, workers int, rows Rows) ([]E, error) {
	buf := make([]E, m*m)
	prefault(buf, workers)
	err := fillRows(ctx, buf, m, workers, rows, func(dst []E, lo, hi int, tmp []float64) {
		if d64 := as64(dst); d64 != nil {
			rows(d64[lo*m:hi*m], lo, hi)
			return
		}
		rows(tmp[:(hi-lo)*m], lo, hi)
		for i := lo; i < hi; i++ {
			src := tmp[(i-lo)*m+i : (i-lo)*m+m]
			out := dst[i*m+i : i*m+m]
			for j, v := range src {
				out[j] = E(v)
			}
		}
	})
	return buf, err
}

// fillRows runs fill over blocks of 32 rows on workers goroutines, each
// with its own 32 × M float64 scratch (allocated only for float32).
func fillRows[E dense.Float](ctx context.Context, buf []E, m, workers int, rows Rows, fill func(dst []E, lo, hi int, tmp []float64)) error {
	const block = 32
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, (m+block-1)/block) {
		wg.Go(func() {
			var tmp []float64
			if len(as64(buf)) == 0 {
				tmp = make([]float64, block*m)
			}
			for ctx.Err() == nil {
				lo := int(next.Add(1)-1) * block
				if lo >= m {
					return
				}
				fill(buf, lo, min(m, lo+block), tmp)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// as64 is buf when it is a []float64.
func as64[E dense.Float](buf []E) []float64 {
	if b, ok := any(buf).([]float64); ok {
		return b
	}
	return nil
}

// newPrecond checks the arguments and resolves the options.
func newPrecond(m int, lambda float64, opt Options) *Preconditioner {
	if !(lambda > 0) {
		panic(fmt.Sprintf("precond: lambda must be > 0, got %g", lambda))
	}
	if opt.Weights != nil && len(opt.Weights) != m {
		panic(fmt.Sprintf("precond: %d weights for %d centres", len(opt.Weights), m))
	}
	if !opt.Precision.Valid() {
		panic(fmt.Sprintf("precond: unknown precision %q", opt.Precision))
	}
	p := &Preconditioner{m: m, lambda: lambda, prec: opt.Precision}
	if p.prec == "" {
		p.prec = Float64
	}
	p.jitter = opt.Jitter
	if p.jitter == 0 {
		p.jitter = DefaultJitter
		if p.prec == Float32 {
			p.jitter = DefaultJitter32
		}
	}
	if opt.Weights != nil {
		p.d = append([]float64(nil), opt.Weights...)
	}
	p.workers = opt.Workers
	if p.workers <= 0 {
		p.workers = runtime.GOMAXPROCS(0)
	}
	return p
}

func (p *Preconditioner) method(opt Options) Method {
	switch opt.Method {
	case "", MethodCholesky:
		return MethodCholesky
	case MethodEigen, MethodPivoted, MethodNystrom:
		return opt.Method
	}
	panic(fmt.Sprintf("precond: unknown method %q", opt.Method))
}

func (p *Preconditioner) factorise64(ctx context.Context, buf []float64, ld int, progress func(float64)) error {
	f, err := factorise(ctx, buf, p.m, ld, p.d, p.jitter, p.lambda, p.workers, progress)
	if err == nil {
		p.f = f
	}
	return err
}

func (p *Preconditioner) factorise32(ctx context.Context, buf []float32, ld int, progress func(float64)) error {
	f, err := factorise(ctx, buf, p.m, ld, p.d, p.jitter, p.lambda, p.workers, progress)
	if err == nil {
		p.f = f
	}
	return err
}

// factorise builds T and A in buf, whose upper triangle holds K_MM:
// T = chol(D K D + εMI) in the upper triangle, moved to the lower one
// (its diagonal to tdiag), S = TTᵀ/M + λI formed in the upper triangle,
// A = chol(S) there. The three O(M³/3) steps share the progress range in
// thirds.
func factorise[E dense.Float](ctx context.Context, buf []E, m, ld int, d []float64, eps, lambda float64, workers int, progress func(float64)) (*packed[E], error) {
	f, err := formTS(ctx, buf, m, ld, d, eps, lambda, workers, progress)
	if err != nil {
		return nil, err
	}
	if err := f.factoriseA(ctx, lambda, eps, workers, phaseMonitor(ctx, progress, 2)); err != nil {
		return nil, err
	}
	return f, nil
}

// phaseMonitor reports the progress of step k of factorise's three and
// stops the factorisation when ctx ends.
func phaseMonitor(ctx context.Context, progress func(float64), k int) dense.Monitor {
	return func(done float64) bool {
		if progress != nil {
			progress((float64(k) + done) / 3)
		}
		return ctx.Err() == nil
	}
}

// formTS is factorise's first two steps: T in the lower triangle and
// tdiag, the strict upper triangle of S = TTᵀ/M above it (its diagonal in
// sdiag); A is not factorised yet. lambda only names the setting in a
// *NotPDError.
func formTS[E dense.Float](ctx context.Context, buf []E, m, ld int, d []float64, eps, lambda float64, workers int, progress func(float64)) (*packed[E], error) {
	for i := range m {
		row := buf[i*ld+i : i*ld+m]
		if d != nil {
			for j := range row {
				row[j] = E(float64(row[j]) * d[i] * d[i+j])
			}
		}
		row[0] = E(float64(row[0]) + eps*float64(m))
	}
	if ok, col := dense.CholeskyMon(buf, m, ld, workers, phaseMonitor(ctx, progress, 0)); !ok {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, &NotPDError{Matrix: matT, Column: col, Jitter: eps, Lambda: lambda}
	}
	sdiag := make([]float64, m)
	dense.RowNorms2(buf, m, ld, 1/float64(m), sdiag)
	dense.TransposeUpper(buf, m, ld)
	if !dense.UUtPacked(buf, m, ld, 1/float64(m), workers, phaseMonitor(ctx, progress, 1)) {
		return nil, ctx.Err()
	}
	tdiag := make([]float64, m)
	for i := range m {
		tdiag[i] = float64(buf[i*ld+i])
	}
	return &packed[E]{buf: buf, m: m, ld: ld, tdiag: tdiag, sdiag: sdiag}, nil
}

// factoriseA sets the diagonal of S = TTᵀ/M + λI (the rest of S is in
// the upper triangle) and factorises A = chol(S) there.
func (f *packed[E]) factoriseA(ctx context.Context, lambda, eps float64, workers int, mon dense.Monitor) error {
	m, ld, buf := f.m, f.ld, f.buf
	for i := range m {
		buf[i*ld+i] = E(f.sdiag[i] + lambda)
	}
	if ok, col := dense.CholeskyMon(buf, m, ld, workers, mon); !ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		return &NotPDError{Matrix: matA, Column: col, Jitter: eps, Lambda: lambda}
	}
	return nil
}

// factors applies T⁻¹, T⁻ᵀ, A⁻¹ and A⁻ᵀ.
type factors interface {
	solveT(trans bool, x []float64, k, workers int)
	solveA(trans bool, x []float64, k, workers int)
	bytes() int64
	// withLambda returns the factors at another λ: a copy of T and a new A.
	withLambda(lambda, eps float64, workers int) (factors, error)
	// withLambdas is withLambda for several λ, forming TTᵀ/M once.
	withLambdas(lambdas []float64, eps float64, workers int) ([]factors, []error)
	// withWeights returns the factors sharing T with a new A =
	// chol(T diag(h) Tᵀ/M + λI).
	withWeights(h []float64, lambda, eps float64, workers int) (factors, error)
}

// packed holds T transposed in the strict lower triangle of buf (its
// diagonal in tdiag) and A in the upper triangle: the layout of the
// paper's code and of the Python falkon library.
type packed[E dense.Float] struct {
	buf   []E
	m, ld int
	tdiag []float64
	sdiag []float64 // the diagonal of TTᵀ/M, for withLambda
	// t, when not nil, holds T (strict lower triangle, stride tld) in
	// place of buf: WithLambdas shares the original's T, so its results
	// touch only the upper triangle of their own buffers.
	t   []E
	tld int
	// s12 is, for MethodPivoted with r < M, U₁₂U₁₂ᵀ/M in its strict
	// upper triangle (r × r): the part of TTᵀ/M that U₁₁ does not give.
	s12 []E
}

// addS12 adds f.s12's strict upper triangle to buf's.
func (f *packed[E]) addS12(buf []E) {
	for i := range f.m {
		src := f.s12[i*f.m+i+1 : i*f.m+f.m]
		dst := buf[i*f.ld+i+1 : i*f.ld+f.m]
		for j, v := range src {
			dst[j] += v
		}
	}
}

// withLambda copies T (lower triangle and diagonal) into a new buffer,
// forms TTᵀ/M there and factorises A at λ: the same operations on the
// same T as factorise, so the same bits, without the Cholesky of K_MM.
func (f *packed[E]) withLambda(lambda, eps float64, workers int) (factors, error) {
	g := f.formS(workers)
	if err := g.factoriseA(context.Background(), lambda, eps, workers, nil); err != nil {
		return nil, err
	}
	return g, nil
}

// formS copies T (lower triangle and diagonal) into a new buffer and forms
// the strict upper triangle of TTᵀ/M there.
func (f *packed[E]) formS(workers int) *packed[E] {
	m := f.m
	g := &packed[E]{buf: make([]E, m*m), m: m, ld: m, tdiag: f.tdiag, sdiag: f.sdiag, s12: f.s12}
	prefault(g.buf, workers)
	t, tld := f.tri()
	for i := range m {
		copy(g.buf[i*m:i*m+i], t[i*tld:i*tld+i])
		g.buf[i*m+i] = E(f.tdiag[i])
	}
	dense.UUtPacked(g.buf, m, m, 1/float64(m), workers, nil)
	if g.s12 != nil {
		g.addS12(g.buf)
	}
	return g
}

// withWeights forms T diag(h) Tᵀ/M in a new buffer (sharing f's T, as
// WithLambdas' results do) and factorises A at λ there.
func (f *packed[E]) withWeights(h []float64, lambda, eps float64, workers int) (factors, error) {
	m := f.m
	t, tld := f.tri()
	g := &packed[E]{buf: make([]E, m*m), m: m, ld: m, tdiag: f.tdiag, t: t, tld: tld, sdiag: make([]float64, m)}
	prefault(g.buf, workers)
	// U = T diag(√h): T's column j scaled (row j of the stored Tᵀ), and
	// the diagonal of U Uᵀ/M, which UUtPacked leaves out.
	for j := range m {
		sj := math.Sqrt(h[j])
		row := g.buf[j*m : j*m+j+1]
		for i := range j {
			v := float64(t[j*tld+i])
			row[i] = E(v * sj)
			g.sdiag[i] += v * v * h[j] / float64(m)
		}
		row[j] = E(f.tdiag[j] * sj)
		g.sdiag[j] += f.tdiag[j] * f.tdiag[j] * h[j] / float64(m)
	}
	dense.UUtPacked(g.buf, m, m, 1/float64(m), workers, nil)
	if err := g.factoriseA(context.Background(), lambda, eps, workers, nil); err != nil {
		return nil, err
	}
	return g, nil
}

// withLambdas forms TTᵀ/M once (formS), copies it into one buffer per
// further λ (sharing f's T), then factorises each A: the same operations
// on the same values as withLambda, so the same bits.
func (f *packed[E]) withLambdas(lambdas []float64, eps float64, workers int) ([]factors, []error) {
	gs := make([]*packed[E], len(lambdas))
	gs[0] = f.formS(workers)
	t, tld := f.tri()
	copiesOfS(gs, t, tld, workers)
	return factoriseAs(context.Background(), gs, lambdas, eps, workers)
}

// copiesOfS fills gs[1:] with factors sharing the T at t (stride tld),
// each in a fresh buffer into which only the strict upper triangle of S
// (gs[0]'s, not yet overwritten by its A) is copied. The copies are
// memory- and page-fault-bound, so they are spread over the workers.
//
// Their buffers are not prefaulted: only their upper triangles are ever
// written (T is shared), and first touch of small pages costs little
// where populating huge pages costs the host's faults after a pause
// (prefault). A tune at M = 2000 (kin40k, 30 candidates, CLI after 30 s
// idle) spent 3.4–3.6 s in precond_rhs with prefaulted copies and
// 1.8–2.4 s without, its peak RSS 991 → 781 MiB; its iterations and the
// factorisations in the copies were no slower (round 12).
func copiesOfS[E dense.Float](gs []*packed[E], t []E, tld, workers int) {
	m, src := gs[0].m, gs[0]
	var next atomic.Int64
	next.Store(1)
	var wg sync.WaitGroup
	for range min(workers, len(gs)-1) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(gs); i = int(next.Add(1) - 1) {
				g := *src
				g.buf, g.ld, g.t, g.tld = make([]E, m*m), m, t, tld
				for r := range m {
					copy(g.buf[r*m+r+1:r*m+m], src.buf[r*src.ld+r+1:r*src.ld+m])
				}
				gs[i] = &g
			}
		})
	}
	wg.Wait()
}

// factoriseAs factorises gs[i]'s A at lambdas[i], concurrently: at the M
// a search uses (10³ or so) one Cholesky per worker keeps the cores
// busier than every worker on one Cholesky, whose parallel GEMM updates
// are small. It stops early when ctx ends (the caller checks ctx).
func factoriseAs[E dense.Float](ctx context.Context, gs []*packed[E], lambdas []float64, eps float64, workers int) ([]factors, []error) {
	out, errs := make([]factors, len(gs)), make([]error, len(gs))
	conc := min(workers, len(gs))
	each := max(1, workers/conc)
	mon := func(float64) bool { return ctx.Err() == nil }
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(gs); i = int(next.Add(1) - 1) {
				if err := gs[i].factoriseA(ctx, lambdas[i], eps, each, mon); err != nil {
					errs[i] = err
					continue
				}
				out[i] = gs[i]
			}
		})
	}
	wg.Wait()
	return out, errs
}

// tri is where T's strict lower triangle lives, and its stride.
func (f *packed[E]) tri() ([]E, int) {
	if f.t != nil {
		return f.t, f.tld
	}
	return f.buf, f.ld
}

func (f *packed[E]) solveT(trans bool, x []float64, k, workers int) {
	t, tld := f.tri()
	dense.SolveTri(dense.Tri[E]{Data: t, N: f.m, Stride: tld, Lower: true, Diag: f.tdiag}, trans, x, k, k, workers)
}

func (f *packed[E]) solveA(trans bool, x []float64, k, workers int) {
	dense.SolveTri(dense.Tri[E]{Data: f.buf, N: f.m, Stride: f.ld}, trans, x, k, k, workers)
}

func (f *packed[E]) bytes() int64 {
	var z E
	return int64(len(f.buf)+len(f.s12))*int64(unsafe.Sizeof(z)) + int64(len(f.tdiag)+len(f.sdiag))*8
}

// pivoted builds the factors of MethodPivoted from K_MM in the upper
// triangle of kmm (overwritten): U by pivoted Cholesky, then U₁₁ and
// A = chol(UUᵀ/M + λI) in one new r × r buffer in the packed layout
// (U₁₁ transposed in the lower triangle, A in the upper one).
func (p *Preconditioner) pivoted(ctx context.Context, kmm []float64, ld int, opt Options) error {
	m, d := p.m, p.d
	tol := opt.RankTol
	if tol <= 0 {
		tol = DefaultRankTol
	}
	for i := range m {
		if d != nil {
			row := kmm[i*ld+i : i*ld+m]
			for j := range row {
				row[j] *= d[i] * d[i+j]
			}
		}
	}
	mon := func(done float64) bool {
		if opt.Progress != nil {
			opt.Progress(done * 0.9)
		}
		return ctx.Err() == nil
	}
	perm, r := dense.PivotedCholesky(kmm, m, ld, tol, p.workers, mon)
	if r < 0 {
		return ctx.Err()
	}
	if r == 0 {
		return &NotPDError{Matrix: "D K_MM D (no pivot above the rank tolerance)", Lambda: p.lambda}
	}
	// S = UUᵀ/M + λI: its diagonal from whole rows of U, its strict upper
	// triangle as U₁₁U₁₁ᵀ/M (UUtPacked on the r × r buffer) plus
	// U₁₂U₁₂ᵀ/M.
	f := &packed[float64]{buf: make([]float64, r*r), m: r, ld: r, tdiag: make([]float64, r), sdiag: make([]float64, r)}
	for i := range r {
		row := kmm[i*ld+i : i*ld+m]
		s := 0.0
		for _, v := range row {
			s += v * v
		}
		f.sdiag[i] = s / float64(m)
		f.tdiag[i] = row[0]
		for j := i; j < r; j++ {
			f.buf[j*r+i] = kmm[i*ld+j] // U₁₁ transposed, diagonal included
		}
	}
	dense.UUtPacked(f.buf, r, r, 1/float64(m), p.workers, nil)
	if r < m {
		// Kept for WithLambda, which cannot rebuild it from U₁₁.
		f.s12 = make([]float64, r*r)
		dense.SyrkStrictUpper(kmm[r:], r, m-r, ld, 1/float64(m), f.s12, r, p.workers)
		f.addS12(f.buf)
	}
	if err := f.factoriseA(ctx, p.lambda, p.jitter, p.workers, nil); err != nil {
		return err
	}
	if opt.Progress != nil {
		opt.Progress(1)
	}
	p.f, p.piv, p.prec = f, perm[:r:r], Float64
	return nil
}

// eigen builds the factors of MethodEigen from kmm (overwritten).
func (p *Preconditioner) eigen(kmm *mat.SymDense, lambda, tol float64) error {
	m := p.m
	if tol <= 0 {
		tol = DefaultRankTol
	}
	if p.d != nil {
		raw := kmm.RawSymmetric()
		for i := range m {
			for j := i; j < m; j++ {
				raw.Data[i*raw.Stride+j] *= p.d[i] * p.d[j]
			}
		}
	}
	var es mat.EigenSym
	if !es.Factorize(kmm, true) {
		return &NotPDError{Matrix: "D K_MM D (eigendecomposition did not converge)", Lambda: lambda}
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := vals[len(vals)-1]
	if !(top > 0) {
		return &NotPDError{Matrix: "D K_MM D (no positive eigenvalue)", Lambda: lambda}
	}
	for i := len(vals) - 1; i >= 0 && vals[i] > tol*top; i-- {
		p.s = append(p.s, math.Sqrt(vals[i]))
		p.sinv = append(p.sinv, 1/math.Sqrt(vals[i]))
		p.ainv = append(p.ainv, 1/math.Sqrt(vals[i]/float64(m)+lambda))
		for j := range m {
			p.q = append(p.q, vecs.At(j, i))
		}
	}
	return nil
}

// M reports the number of centres.
func (p *Preconditioner) M() int { return p.m }

// Rank reports r, the dimension of the preconditioned system: M for the
// Cholesky method, the number of eigenvalues kept for MethodEigen.
func (p *Preconditioner) Rank() int {
	switch {
	case p.ny != nil:
		return p.m
	case p.q != nil:
		return len(p.s)
	case p.piv != nil:
		return len(p.piv)
	}
	return p.m
}

// Jitter reports the ε in use.
func (p *Preconditioner) Jitter() float64 { return p.jitter }

// Precision reports the storage precision of the factors (Float64 for
// MethodEigen).
func (p *Preconditioner) Precision() Precision {
	if p.f == nil {
		return Float64
	}
	return p.prec
}

// Bytes reports the memory the factors hold.
func (p *Preconditioner) Bytes() int64 {
	n := int64(len(p.d)+len(p.q)+3*len(p.s)+len(p.piv)) * 8
	if p.ny != nil {
		n += int64(len(p.ny.q)+len(p.ny.s)+len(p.ny.rg)) * 8
	}
	if p.f != nil {
		n += p.f.bytes()
	}
	return n
}

func (p *Preconditioner) check(x []float64, rows, k int, what string) {
	if k <= 0 || len(x) != rows*k {
		panic(fmt.Sprintf("precond: len(%s) = %d, want %d×%d", what, len(x), rows, k))
	}
}

// SolveA sets x ← A⁻¹ x for x r × k, row-major.
func (p *Preconditioner) SolveA(x []float64, k int) {
	p.check(x, p.Rank(), k, "x")
	if p.ny != nil { // A = I
		return
	}
	if p.q != nil {
		p.scaleRows(x, k, p.ainv)
		return
	}
	p.f.solveA(false, x, k, p.workers)
}

// SolveAT sets x ← A⁻ᵀ x for x r × k.
func (p *Preconditioner) SolveAT(x []float64, k int) {
	p.check(x, p.Rank(), k, "x")
	if p.ny != nil {
		return
	}
	if p.q != nil {
		p.scaleRows(x, k, p.ainv)
		return
	}
	p.f.solveA(true, x, k, p.workers)
}

// SolveTTo sets dst (M × k) ← D T⁻¹ src (src r × k; T⁻¹ is the
// pseudo-inverse Q_r Λ_r^{-1/2} for MethodEigen): the step from A⁻¹β to
// the coefficients of the kernel columns. dst may be src when r = M.
func (p *Preconditioner) SolveTTo(dst, src []float64, k int) {
	p.check(dst, p.m, k, "dst")
	p.check(src, p.Rank(), k, "src")
	if p.ny != nil {
		p.ny.apply(false, dst, src, p.m, k, p.workers)
	} else if p.q != nil {
		r := len(p.s)
		v := make([]float64, len(src))
		copy(v, src)
		p.scaleRows(v, k, p.sinv)
		// dst = Q_r v, with Q_rᵀ stored r × M.
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: r, Cols: p.m, Stride: p.m, Data: p.q},
			blas64.General{Rows: r, Cols: k, Stride: k, Data: v},
			0, blas64.General{Rows: p.m, Cols: k, Stride: k, Data: dst})
	} else if p.piv != nil {
		// dst = P [U₁₁⁻¹ src; 0].
		v := append([]float64(nil), src...)
		p.f.solveT(false, v, k, p.workers)
		clear(dst)
		for i, c := range p.piv {
			copy(dst[c*k:c*k+k], v[i*k:i*k+k])
		}
	} else {
		copy(dst, src)
		p.f.solveT(false, dst, k, p.workers)
	}
	p.scaleRows(dst, k, p.d)
}

// SolveTTTo sets dst (r × k) ← T⁻ᵀ D src (src M × k), the adjoint of
// SolveTTo. src is not changed; dst may be src when r = M.
func (p *Preconditioner) SolveTTTo(dst, src []float64, k int) {
	p.check(dst, p.Rank(), k, "dst")
	p.check(src, p.m, k, "src")
	if p.ny != nil {
		w := src
		if p.d != nil {
			w = append([]float64(nil), src...)
			p.scaleRows(w, k, p.d)
		}
		p.ny.apply(true, dst, w, p.m, k, p.workers)
		return
	}
	if p.piv != nil {
		// dst = [U₁₁⁻ᵀ 0] Pᵀ D src.
		for i, c := range p.piv {
			row := dst[i*k : i*k+k]
			copy(row, src[c*k:c*k+k])
			if p.d != nil {
				for j := range row {
					row[j] *= p.d[c]
				}
			}
		}
		p.f.solveT(true, dst, k, p.workers)
		return
	}
	if p.q == nil {
		copy(dst, src)
		p.scaleRows(dst, k, p.d)
		p.f.solveT(true, dst, k, p.workers)
		return
	}
	w := src
	if p.d != nil {
		w = append([]float64(nil), src...)
		p.scaleRows(w, k, p.d)
	}
	r := len(p.s)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: r, Cols: p.m, Stride: p.m, Data: p.q},
		blas64.General{Rows: p.m, Cols: k, Stride: k, Data: w},
		0, blas64.General{Rows: r, Cols: k, Stride: k, Data: dst})
	p.scaleRows(dst, k, p.sinv)
}

// scaleRows multiplies row i of x (rows × k) by f[i]; nil f is a no-op.
func (p *Preconditioner) scaleRows(x []float64, k int, f []float64) {
	if f == nil {
		return
	}
	for i, w := range f {
		row := x[i*k : i*k+k]
		for j := range row {
			row[j] *= w
		}
	}
}

// ApplyBTo sets dst (M × k) ← B src = D T⁻¹ A⁻¹ src (src r × k, not
// changed).
func (p *Preconditioner) ApplyBTo(dst, src []float64, k int) {
	v := append([]float64(nil), src...)
	p.SolveA(v, k)
	p.SolveTTo(dst, v, k)
}

// ApplyBTTo sets dst (r × k) ← Bᵀ src = A⁻ᵀ T⁻ᵀ D src (src M × k, not
// changed).
func (p *Preconditioner) ApplyBTTo(dst, src []float64, k int) {
	p.SolveTTTo(dst, src, k)
	p.SolveAT(dst, k)
}
