package precond

import (
	"context"
	"fmt"
	"math"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
)

// WithLambda returns the preconditioner of the same centres, kernel,
// weights and jitter at another λ: it shares p's T (which neither changes)
// and factorises only its own A = chol(T Tᵀ / M + λI), so a search over L
// values of λ costs one factorisation of K_MM and L of A instead of 2L
// (DESIGN.md, "Choosing hyper-parameters"). The result's Bytes counts the
// shared T again. It returns a *NotPDError when A is not positive
// definite, and panics if λ ≤ 0.
func (p *Preconditioner) WithLambda(lambda float64) (*Preconditioner, error) {
	if !(lambda > 0) {
		panic(fmt.Sprintf("precond: lambda must be > 0, got %g", lambda))
	}
	q := *p
	q.lambda = lambda
	m := p.m
	if p.ny != nil {
		ny := *p.ny
		if err := ny.setCore(m, nil, lambda, p.workers); err != nil {
			return nil, err
		}
		q.ny = &ny
		return &q, nil
	}
	if p.q != nil {
		q.ainv = make([]float64, len(p.s))
		for i, s := range p.s {
			q.ainv[i] = 1 / math.Sqrt(s*s/float64(m)+lambda)
		}
		return &q, nil
	}
	f, err := p.f.withLambda(lambda, p.jitter, p.workers)
	if err != nil {
		return nil, err
	}
	q.f = f
	return &q, nil
}

// WithCenterWeights returns the preconditioner of a weighted system,
// K_nMᵀ W K_nM / n + λ K_MM with row weights W, whose weights at the
// centres are h (len M, ≥ 0): it shares p's T and factorises its own
// A = chol(T diag(h) Tᵀ / M + λI), the Nyström approximation of the
// weighted data term (FALKON's preconditioner is the case h = 1, up to
// rounding). A Newton step of the logistic loss uses it with h the
// Hessian weights at the centres (Meanti et al. 2020). Only the Cholesky
// method without pivoting has it; it returns a *NotPDError when A is not
// positive definite, and panics if λ ≤ 0 or h has the wrong length.
func (p *Preconditioner) WithCenterWeights(h []float64, lambda float64) (*Preconditioner, error) {
	if !(lambda > 0) || len(h) != p.m {
		panic(fmt.Sprintf("precond: WithCenterWeights: lambda %g, %d weights for %d centres", lambda, len(h), p.m))
	}
	if p.ny != nil {
		ny := *p.ny
		if err := ny.setCore(p.m, h, lambda, p.workers); err != nil {
			return nil, err
		}
		q := *p
		q.lambda, q.ny = lambda, &ny
		return &q, nil
	}
	if p.q != nil || p.piv != nil {
		return nil, fmt.Errorf("precond: centre weights need the Cholesky or Nyström method")
	}
	q := *p
	q.lambda = lambda
	f, err := p.f.withWeights(h, lambda, p.jitter, p.workers)
	if err != nil {
		return nil, err
	}
	q.f = f
	return &q, nil
}

// WithLambdas is WithLambda for several λ at once: the same results, bit
// for bit, but T Tᵀ/M (an O(M³/3) product that depends on T only) is
// formed once and copied into each result's buffer, so L values of λ cost
// one product and L factorisations of A instead of L of each. The
// returned slices have len(lambdas) entries; errs[i] is the *NotPDError
// of lambdas[i] (with out[i] nil). It panics if a λ ≤ 0.
func (p *Preconditioner) WithLambdas(lambdas []float64) (out []*Preconditioner, errs []error) {
	out, errs = make([]*Preconditioner, len(lambdas)), make([]error, len(lambdas))
	for _, l := range lambdas {
		if !(l > 0) {
			panic(fmt.Sprintf("precond: lambda must be > 0, got %g", l))
		}
	}
	if p.q != nil || p.ny != nil || len(lambdas) < 2 {
		for i, l := range lambdas {
			out[i], errs[i] = p.WithLambda(l)
		}
		return out, errs
	}
	fs, ferrs := p.f.withLambdas(lambdas, p.jitter, p.workers)
	for i, l := range lambdas {
		if ferrs[i] != nil {
			errs[i] = ferrs[i]
			continue
		}
		q := *p
		q.lambda, q.f = l, fs[i]
		out[i] = &q
	}
	return out, errs
}

// BuildLambdas is Build for several λ at once: K_MM, T and T Tᵀ/M are
// computed once and each λ factorises only its A (concurrently, one
// worker each), so L values of λ cost one Cholesky of K_MM, one product
// and L Cholesky factorisations of A, where Build and WithLambdas cost
// two products. With MethodCholesky out[i] is, bit for bit, what Build
// gives at lambdas[i], and every result shares the first one's T;
// MethodEigen and MethodPivoted give what Build at lambdas[0] and its
// WithLambdas give. errs[i] is the *NotPDError of lambdas[i] (with out[i]
// nil); err is Build's error (T not positive definite, ctx ended), with
// no results. It panics if lambdas is empty or a λ ≤ 0.
func BuildLambdas(ctx context.Context, m int, rows Rows, lambdas []float64, opt Options) (out []*Preconditioner, errs []error, err error) {
	if len(lambdas) == 0 {
		panic("precond: BuildLambdas needs at least one lambda")
	}
	for _, l := range lambdas {
		if !(l > 0) {
			panic(fmt.Sprintf("precond: lambda must be > 0, got %g", l))
		}
	}
	p := newPrecond(m, lambdas[0], opt)
	if p.method(opt) != MethodCholesky {
		first, err := Build(ctx, m, rows, lambdas[0], opt)
		if err != nil {
			return nil, nil, err
		}
		rest, restErrs := first.WithLambdas(lambdas[1:])
		return append([]*Preconditioner{first}, rest...), append([]error{nil}, restErrs...), nil
	}
	var fs []factors
	if p.prec == Float32 {
		fs, errs, err = buildLambdas[float32](ctx, m, rows, p, lambdas, opt.Progress)
	} else {
		fs, errs, err = buildLambdas[float64](ctx, m, rows, p, lambdas, opt.Progress)
	}
	if err != nil {
		return nil, nil, err
	}
	out = make([]*Preconditioner, len(lambdas))
	for i, l := range lambdas {
		if errs[i] == nil {
			q := *p
			q.lambda, q.f = l, fs[i]
			out[i] = &q
		}
	}
	return out, errs, nil
}

func buildLambdas[E dense.Float](ctx context.Context, m int, rows Rows, p *Preconditioner, lambdas []float64,
	progress func(float64)) ([]factors, []error, error) {
	buf, err := fillKMM[E](ctx, m, p.workers, rows)
	if err != nil {
		return nil, nil, err
	}
	f, err := formTS(ctx, buf, m, m, p.d, p.jitter, lambdas[0], p.workers, progress)
	if err != nil {
		return nil, nil, err
	}
	gs := make([]*packed[E], len(lambdas))
	gs[0] = f
	copiesOfS(gs, f.buf, f.ld, p.workers) // before gs[0]'s A overwrites S
	fs, errs := factoriseAs(ctx, gs, lambdas, p.jitter, p.workers)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if progress != nil {
		progress(1)
	}
	return fs, errs, nil
}
