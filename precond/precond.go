package precond

import (
	"errors"
	"fmt"
	"runtime"

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
}

// Preconditioner holds FALKON's factors T and A for M centres. It is safe
// for concurrent use: its methods change only their arguments.
type Preconditioner struct {
	m       int
	t, a    factor // upper triangular
	d       []float64
	workers int
	jitter  float64
	lambda  float64
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
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
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
	p.workers = w
	return p, nil
}

// factor is an upper-triangular matrix in the upper triangle of a
// row-major slice.
type factor struct {
	data   []float64
	stride int
}

// M reports the number of centres.
func (p *Preconditioner) M() int { return p.m }

// Jitter reports the ε in use.
func (p *Preconditioner) Jitter() float64 { return p.jitter }

// Bytes reports the memory the factors hold.
func (p *Preconditioner) Bytes() int64 {
	return int64(len(p.t.data)+len(p.a.data)+len(p.d)) * 8
}

func (p *Preconditioner) check(x []float64, k int) {
	if k <= 0 || len(x) != p.m*k {
		panic(fmt.Sprintf("precond: len(x) = %d, want M×k = %d×%d", len(x), p.m, k))
	}
}

func (p *Preconditioner) solve(f factor, trans bool, x []float64, k int) {
	p.check(x, k)
	if trans {
		dense.SolveUpperT(f.data, p.m, f.stride, x, k, k, p.workers)
	} else {
		dense.SolveUpper(f.data, p.m, f.stride, x, k, k, p.workers)
	}
}

// SolveA sets x ← A⁻¹ x for x M × k, row-major.
func (p *Preconditioner) SolveA(x []float64, k int) { p.solve(p.a, false, x, k) }

// SolveAT sets x ← A⁻ᵀ x.
func (p *Preconditioner) SolveAT(x []float64, k int) { p.solve(p.a, true, x, k) }

// SolveT sets x ← D T⁻¹ x: the step from A⁻¹β to the coefficients of
// the kernel columns.
func (p *Preconditioner) SolveT(x []float64, k int) {
	p.solve(p.t, false, x, k)
	p.scaleD(x, k)
}

// SolveTT sets x ← T⁻ᵀ D x: the adjoint of SolveT.
func (p *Preconditioner) SolveTT(x []float64, k int) {
	p.check(x, k)
	p.scaleD(x, k)
	p.solve(p.t, true, x, k)
}

func (p *Preconditioner) scaleD(x []float64, k int) {
	if p.d == nil {
		return
	}
	for i, w := range p.d {
		row := x[i*k : i*k+k]
		for j := range row {
			row[j] *= w
		}
	}
}

// ApplyB sets x ← B x = D T⁻¹ A⁻¹ x.
func (p *Preconditioner) ApplyB(x []float64, k int) {
	p.SolveA(x, k)
	p.SolveT(x, k)
}

// ApplyBT sets x ← Bᵀ x = A⁻ᵀ T⁻ᵀ D x.
func (p *Preconditioner) ApplyBT(x []float64, k int) {
	p.SolveTT(x, k)
	p.SolveAT(x, k)
}
