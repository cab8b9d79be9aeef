package precond_test

import (
	"context"
	"errors"
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
	src, w := testInputs(m, k, 7)
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
	src, w := testInputs(m, k, 8)
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
	src, _ := testInputs(m, k, 9)
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

// TestBuildLambdas checks that BuildLambdas gives, for every λ, the bits
// Build gives at that λ with Cholesky (weights, both precisions, an M past
// two Cholesky panels, more λ than workers); that eigen and pivoted give
// what Build and WithLambdas give, a λ whose A is not positive definite
// failing alone; and that an ended context is its error.
func TestBuildLambdas(t *testing.T) {
	const m, k = 600, 2
	ref := gaussKMM(m, 6)
	rows := func(dst []float64, lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range m {
				dst[(i-lo)*m+j] = ref.At(i, j)
			}
		}
	}
	src, w := testInputs(m, k, 4)
	lambdas := []float64{1e-6, 1e-8, 1e-4, 1e-2, 1}
	same := func(what string, lambda float64, got, want *precond.Preconditioner) {
		t.Helper()
		if got.Rank() != want.Rank() || got.Precision() != want.Precision() {
			t.Fatalf("%s λ = %g: rank/precision %d/%s, want %d/%s", what, lambda, got.Rank(), got.Precision(), want.Rank(), want.Precision())
		}
		if got.Rank() != m {
			return // apply needs full rank
		}
		g, h := apply(got, src, k), apply(want, src, k)
		for j := range g {
			if g[j] != h[j] {
				t.Fatalf("%s λ = %g: entry %d: %v, want %v", what, lambda, j, g[j], h[j])
			}
		}
	}
	for _, prec := range []precond.Precision{precond.Float64, precond.Float32} {
		opt := precond.Options{Jitter: 1e-6, Weights: w, Workers: 2, Precision: prec}
		got, errs, err := precond.BuildLambdas(context.Background(), m, rows, lambdas, opt)
		if err != nil {
			t.Fatalf("%s: %v", prec, err)
		}
		if len(got) != len(lambdas) || len(errs) != len(lambdas) {
			t.Fatalf("%s: %d results, %d errors for %d λ", prec, len(got), len(errs), len(lambdas))
		}
		for i, lambda := range lambdas {
			if errs[i] != nil {
				t.Fatalf("%s λ = %g: %v", prec, lambda, errs[i])
			}
			want, err := precond.Build(context.Background(), m, rows, lambda, opt)
			if err != nil {
				t.Fatal(err)
			}
			same("cholesky "+string(prec), lambda, got[i], want)
		}
	}
	for _, method := range []precond.Method{precond.MethodPivoted, precond.MethodEigen} {
		opt := precond.Options{Jitter: 1e-6, Weights: w, Workers: 2, Method: method}
		got, errs, err := precond.BuildLambdas(context.Background(), m, rows, lambdas, opt)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		first, err := precond.Build(context.Background(), m, rows, lambdas[0], opt)
		if err != nil {
			t.Fatal(err)
		}
		rest, restErrs := first.WithLambdas(lambdas[1:])
		for i, lambda := range lambdas {
			want, werr := first, error(nil)
			if i > 0 {
				want, werr = rest[i-1], restErrs[i-1]
			}
			if (werr == nil) != (errs[i] == nil) {
				t.Fatalf("%s λ = %g: error %v, want %v", method, lambda, errs[i], werr)
			}
			if werr != nil {
				var npd *precond.NotPDError
				if !errors.As(errs[i], &npd) || got[i] != nil {
					t.Fatalf("%s λ = %g: %v (result %v), want a *NotPDError and no result", method, lambda, errs[i], got[i])
				}
				continue
			}
			same(string(method), lambda, got[i], want)
		}
		if method == precond.MethodPivoted && errs[1] == nil {
			t.Fatal("pivoted at λ = 1e-8 succeeded: the per-λ error path is not exercised")
		}
	}

	// A NaN in K_MM's last row: T fails, which is err, with no results.
	bad := func(dst []float64, lo, hi int) {
		rows(dst, lo, hi)
		if hi == m {
			dst[(m-1-lo)*m+m-1] = math.NaN()
		}
	}
	if out, _, err := precond.BuildLambdas(context.Background(), m, bad, lambdas, precond.Options{}); err == nil || out != nil {
		t.Fatalf("a NaN in K_MM: %v, %d results", err, len(out))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := precond.BuildLambdas(ctx, m, rows, lambdas, precond.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v, want context.Canceled", err)
	}
}

// testInputs returns k right-hand sides (m × k) and m centre weights in
// [0.5, 1.5), drawn from the seed.
func testInputs(m, k int, seed uint64) (src, w []float64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	src = make([]float64, m*k)
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	w = make([]float64, m)
	for i := range w {
		w[i] = 0.5 + rng.Float64()
	}
	return src, w
}
