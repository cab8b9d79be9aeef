package precond

import (
	"fmt"
	"math"
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
	if p.q != nil || len(lambdas) < 2 {
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
