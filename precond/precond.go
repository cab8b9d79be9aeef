package precond

import (
	"errors"
	"fmt"
	"math"
	"runtime"

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

// Options configures New. The zero value means: jitter DefaultJitter, no
// weights.
type Options struct {
	// Jitter is ε in T = chol(D K_MM D + εMI). 0 means DefaultJitter.
	Jitter float64
	// Weights is the diagonal of D (length M), for centres drawn with
	// non-uniform probabilities p_j: D_jj = 1/√(n p_j). nil means D = I.
	Weights []float64
	// Workers bounds the goroutines of the factorisations and solves.
	// 0 means GOMAXPROCS.
	Workers int
	// Method is MethodCholesky (the zero value) or MethodEigen.
	Method Method
	// RankTol is, for MethodEigen, the relative threshold below which
	// eigenvalues of D K_MM D are dropped: λ_i ≤ RankTol·λ_max. 0 means
	// DefaultRankTol.
	RankTol float64
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
)

// DefaultRankTol is the eigenvalue threshold of MethodEigen.
const DefaultRankTol = 1e-12

// Preconditioner holds FALKON's factors T and A for M centres. It is safe
// for concurrent use: its methods change only their arguments.
type Preconditioner struct {
	m       int
	t, a    factor // upper triangular (Cholesky method)
	d       []float64
	workers int
	// MethodEigen: T = Λ_r^{1/2} Q_rᵀ and A = diag((λ_i/M + λ)^{1/2}).
	q      []float64 // Q_rᵀ, r × M
	s      []float64 // λ_i^{1/2}
	sinv   []float64 // λ_i^{-1/2}
	ainv   []float64 // 1/A_ii
	jitter float64
	lambda float64
}

// New factorises the preconditioner of FALKON (Rudi, Carratino, Rosasco
// 2017, Alg. 1 and appendix Def. 3):
//
//	T = chol(D K_MM D + εMI),   A = chol(T Tᵀ / M + λI)
//
// both upper triangular, in float64. New takes over the storage of kmm,
// which it overwrites with T: this saves 8M² bytes, the size of the
// largest object of a fit. kmm must not be used afterwards.
//
// It returns a *NotPDError (matching ErrNotPD) when a factorisation fails.
// New panics if λ ≤ 0 or the weights have the wrong length.
func New(kmm *mat.SymDense, lambda float64, opt Options) (*Preconditioner, error) {
	if !(lambda > 0) {
		panic(fmt.Sprintf("precond: lambda must be > 0, got %g", lambda))
	}
	raw := kmm.RawSymmetric()
	m := raw.N
	if opt.Weights != nil && len(opt.Weights) != m {
		panic(fmt.Sprintf("precond: %d weights for %d centres", len(opt.Weights), m))
	}
	eps := opt.Jitter
	if eps == 0 {
		eps = DefaultJitter
	}
	p := &Preconditioner{m: m, jitter: eps, lambda: lambda}
	if opt.Weights != nil {
		p.d = append([]float64(nil), opt.Weights...)
	}
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	p.workers = w
	switch opt.Method {
	case "", MethodCholesky:
	case MethodEigen:
		return p, p.eigen(kmm, lambda, opt.RankTol)
	default:
		panic(fmt.Sprintf("precond: unknown method %q", opt.Method))
	}
	// T: in place in kmm's upper triangle.
	tdata := raw.Data
	st := raw.Stride
	for i := range m {
		row := tdata[i*st : i*st+m]
		if p.d != nil {
			for j := i; j < m; j++ {
				row[j] *= p.d[i] * p.d[j]
			}
		}
		row[i] += eps * float64(m)
	}
	if ok, col := dense.Cholesky(tdata, m, st, w); !ok {
		return nil, &NotPDError{Matrix: matT, Column: col, Jitter: eps, Lambda: lambda}
	}
	p.t = factor{data: tdata, stride: st}
	// A: S = T Tᵀ / M + λI (upper triangle), then chol(S) in place.
	adata := make([]float64, m*m)
	dense.UUt(tdata, m, st, 1/float64(m), adata, m, w)
	for i := range m {
		adata[i*m+i] += lambda
	}
	if ok, col := dense.Cholesky(adata, m, m, w); !ok {
		return nil, &NotPDError{Matrix: matA, Column: col, Jitter: eps, Lambda: lambda}
	}
	p.a = factor{data: adata, stride: m}
	return p, nil
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

// factor is an upper-triangular matrix in the upper triangle of a
// row-major slice.
type factor struct {
	data   []float64
	stride int
}

// M reports the number of centres.
func (p *Preconditioner) M() int { return p.m }

// Rank reports r, the dimension of the preconditioned system: M for the
// Cholesky method, the number of eigenvalues kept for MethodEigen.
func (p *Preconditioner) Rank() int {
	if p.q != nil {
		return len(p.s)
	}
	return p.m
}

// Jitter reports the ε in use.
func (p *Preconditioner) Jitter() float64 { return p.jitter }

// Bytes reports the memory the factors hold.
func (p *Preconditioner) Bytes() int64 {
	return int64(len(p.t.data)+len(p.a.data)+len(p.d)+len(p.q)+2*len(p.s)) * 8
}

func (p *Preconditioner) check(x []float64, rows, k int, what string) {
	if k <= 0 || len(x) != rows*k {
		panic(fmt.Sprintf("precond: len(%s) = %d, want %d×%d", what, len(x), rows, k))
	}
}

func (p *Preconditioner) solve(f factor, trans bool, x []float64, k int) {
	if trans {
		dense.SolveUpperT(f.data, p.m, f.stride, x, k, k, p.workers)
	} else {
		dense.SolveUpper(f.data, p.m, f.stride, x, k, k, p.workers)
	}
}

// SolveA sets x ← A⁻¹ x for x r × k, row-major.
func (p *Preconditioner) SolveA(x []float64, k int) {
	p.check(x, p.Rank(), k, "x")
	if p.q != nil {
		p.scaleRows(x, k, p.ainv)
		return
	}
	p.solve(p.a, false, x, k)
}

// SolveAT sets x ← A⁻ᵀ x for x r × k.
func (p *Preconditioner) SolveAT(x []float64, k int) {
	p.check(x, p.Rank(), k, "x")
	if p.q != nil {
		p.scaleRows(x, k, p.ainv)
		return
	}
	p.solve(p.a, true, x, k)
}

// SolveTTo sets dst (M × k) ← D T⁻¹ src (src r × k; T⁻¹ is the
// pseudo-inverse Q_r Λ_r^{-1/2} for MethodEigen): the step from A⁻¹β to
// the coefficients of the kernel columns. dst may be src when r = M.
func (p *Preconditioner) SolveTTo(dst, src []float64, k int) {
	p.check(dst, p.m, k, "dst")
	p.check(src, p.Rank(), k, "src")
	if p.q != nil {
		r := len(p.s)
		v := make([]float64, len(src))
		copy(v, src)
		p.scaleRows(v, k, p.sinv)
		// dst = Q_r v, with Q_rᵀ stored r × M.
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: r, Cols: p.m, Stride: p.m, Data: p.q},
			blas64.General{Rows: r, Cols: k, Stride: k, Data: v},
			0, blas64.General{Rows: p.m, Cols: k, Stride: k, Data: dst})
	} else {
		copy(dst, src)
		p.solve(p.t, false, dst, k)
	}
	p.scaleRows(dst, k, p.d)
}

// SolveTTTo sets dst (r × k) ← T⁻ᵀ D src (src M × k), the adjoint of
// SolveTTo. src is not changed; dst may be src when r = M.
func (p *Preconditioner) SolveTTTo(dst, src []float64, k int) {
	p.check(dst, p.Rank(), k, "dst")
	p.check(src, p.m, k, "src")
	if p.q == nil {
		copy(dst, src)
		p.scaleRows(dst, k, p.d)
		p.solve(p.t, true, dst, k)
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
