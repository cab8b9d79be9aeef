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
