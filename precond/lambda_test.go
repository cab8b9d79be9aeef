package precond_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// TestWithLambda checks that WithLambda gives the preconditioner New
// builds at that λ — bit for bit with Cholesky, to rounding with eigen —
// and leaves the original unchanged.
func TestWithLambda(t *testing.T) {
	const m, k = 30, 2
	rng := rand.New(rand.NewPCG(7, 7))
	src := make([]float64, m*k)
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	w := make([]float64, m)
	for i := range w {
		w[i] = 0.5 + rng.Float64()
	}
	for _, c := range []struct {
		method precond.Method
		prec   precond.Precision
	}{{precond.MethodCholesky, precond.Float64}, {precond.MethodEigen, precond.Float64}, {precond.MethodCholesky, precond.Float32}, {precond.MethodPivoted, precond.Float64}} {
		method := c.method
		opt := precond.Options{Jitter: 1e-10, Weights: w, Method: method, Precision: c.prec}
		if c.prec == precond.Float32 {
			opt.Jitter = 0 // DefaultJitter32
		}
		base, err := precond.New(gaussKMM(m, 4), 1e-2, opt)
		if err != nil {
			t.Fatal(err)
		}
		before := apply(base, src, k)
		for _, lambda := range []float64{1e-6, 1e-3, 0.5} {
			want, err := precond.New(gaussKMM(m, 4), lambda, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := base.WithLambda(lambda)
			if err != nil {
				t.Fatal(err)
			}
			g, h := apply(got, src, k), apply(want, src, k)
			for i := range g {
				// Cholesky: the same operations, so the same bits. Eigen:
				// A's diagonal comes from λᵢ = sᵢ², rounded once more.
				tol := 0.0
				if method == precond.MethodEigen {
					tol = 1e-12 * math.Abs(h[i])
				}
				if math.Abs(g[i]-h[i]) > tol {
					t.Fatalf("%s λ = %g: entry %d: WithLambda %v, New %v", method, lambda, i, g[i], h[i])
				}
			}
		}
		after := apply(base, src, k)
		for i := range after {
			if after[i] != before[i] {
				t.Fatalf("%s: WithLambda changed the original preconditioner", method)
			}
		}
	}
}

// apply returns B src and Bᵀ src side by side.
func apply(p *precond.Preconditioner, src []float64, k int) []float64 {
	b := make([]float64, p.M()*k)
	p.ApplyBTo(b, src, k)
	bt := make([]float64, p.Rank()*k)
	p.ApplyBTTo(bt, src, k)
	return append(b, bt...)
}

// TestWithLambdas checks that WithLambdas gives, for every λ, the
// preconditioner WithLambda gives, bit for bit, for every method and
// precision, and leaves the original unchanged.
func TestWithLambdas(t *testing.T) {
	const m, k = 30, 2
	rng := rand.New(rand.NewPCG(8, 8))
	src := make([]float64, m*k)
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	w := make([]float64, m)
	for i := range w {
		w[i] = 0.5 + rng.Float64()
	}
	lambdas := []float64{1e-6, 1e-3, 0.5, 1e-3}
	for _, c := range []struct {
		method precond.Method
		prec   precond.Precision
	}{{precond.MethodCholesky, precond.Float64}, {precond.MethodEigen, precond.Float64}, {precond.MethodCholesky, precond.Float32}, {precond.MethodPivoted, precond.Float64}} {
		opt := precond.Options{Jitter: 1e-10, Weights: w, Method: c.method, Precision: c.prec}
		if c.prec == precond.Float32 {
			opt.Jitter = 0
		}
		base, err := precond.New(gaussKMM(m, 4), 1e-2, opt)
		if err != nil {
			t.Fatal(err)
		}
		before := apply(base, src, k)
		got, errs := base.WithLambdas(lambdas)
		if len(got) != len(lambdas) || len(errs) != len(lambdas) {
			t.Fatalf("%s %s: %d results, %d errors for %d λ", c.method, c.prec, len(got), len(errs), len(lambdas))
		}
		for i, lambda := range lambdas {
			if errs[i] != nil {
				t.Fatalf("%s %s λ = %g: %v", c.method, c.prec, lambda, errs[i])
			}
			want, err := base.WithLambda(lambda)
			if err != nil {
				t.Fatal(err)
			}
			if got[i].Precision() != want.Precision() || got[i].Rank() != want.Rank() {
				t.Fatalf("%s λ = %g: precision/rank %s/%d, want %s/%d", c.method, lambda, got[i].Precision(), got[i].Rank(), want.Precision(), want.Rank())
			}
			g, h := apply(got[i], src, k), apply(want, src, k)
			for j := range g {
				if g[j] != h[j] {
					t.Fatalf("%s %s λ = %g: entry %d: WithLambdas %v, WithLambda %v", c.method, c.prec, lambda, j, g[j], h[j])
				}
			}
		}
		after := apply(base, src, k)
		for i := range after {
			if after[i] != before[i] {
				t.Fatalf("%s: WithLambdas changed the original preconditioner", c.method)
			}
		}
	}
}

// TestWithLambdasConcurrent checks, at an M past two Cholesky panels and
// with more λ than workers, that WithLambdas (which factorises its A
// matrices concurrently, one worker each) gives the bits WithLambda
// (every worker on one A) gives.
func TestWithLambdasConcurrent(t *testing.T) {
	const m, k = 600, 3
	rng := rand.New(rand.NewPCG(9, 9))
	src := make([]float64, m*k)
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	lambdas := []float64{1e-8, 1e-6, 1e-4, 1e-2, 1}
	for _, prec := range []precond.Precision{precond.Float64, precond.Float32} {
		base, err := precond.New(gaussKMM(m, 5), 1e-3, precond.Options{Workers: 2, Precision: prec})
		if err != nil {
			t.Fatal(err)
		}
		got, errs := base.WithLambdas(lambdas)
		for i, lambda := range lambdas {
			if errs[i] != nil {
				t.Fatalf("%s λ = %g: %v", prec, lambda, errs[i])
			}
			want, err := base.WithLambda(lambda)
			if err != nil {
				t.Fatal(err)
			}
			g, h := apply(got[i], src, k), apply(want, src, k)
			for j := range g {
				if g[j] != h[j] {
					t.Fatalf("%s λ = %g: entry %d: WithLambdas %v, WithLambda %v", prec, lambda, j, g[j], h[j])
				}
			}
		}
	}
}
