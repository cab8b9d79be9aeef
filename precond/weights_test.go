package precond_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// TestWithCenterWeights: B = T⁻¹A⁻¹ with A = chol(T diag(h) Tᵀ/M + λI)
// inverts the weighted Nyström approximation exactly:
// Bᵀ(K̃ diag(h) K̃/M + λK̃)B = I with K̃ = K_MM + εMI (1e-9); with h = 1 it
// is FALKON's preconditioner at λ (to rounding); float32 factors too.
func TestWithCenterWeights(t *testing.T) {
	const m, eps, lambda = 25, 1e-8, 1e-3
	rng := rand.New(rand.NewPCG(3, 3))
	h := make([]float64, m)
	for i := range h {
		h[i] = 0.25 * rng.Float64() * rng.Float64()
	}
	for _, prec := range []precond.Precision{precond.Float64, precond.Float32} {
		opt := precond.Options{Jitter: eps, Precision: prec}
		base, err := precond.New(gaussKMM(m, 4), 0.5, opt)
		if err != nil {
			t.Fatal(err)
		}
		p, err := base.WithCenterWeights(h, lambda)
		if err != nil {
			t.Fatal(err)
		}
		// B, column by column.
		b := mat.NewDense(m, m, nil)
		for j := range m {
			e, col := make([]float64, m), make([]float64, m)
			e[j] = 1
			p.ApplyBTo(col, e, 1)
			for i := range m {
				b.Set(i, j, col[i])
			}
		}
		kt := mat.NewDense(m, m, nil)
		kmm := gaussKMM(m, 4)
		for i := range m {
			for j := range m {
				kt.Set(i, j, kmm.At(i, j))
			}
			kt.Set(i, i, kt.At(i, i)+eps*m)
		}
		var khk, sys, tmp, out mat.Dense
		hk := mat.DenseCopyOf(kt)
		for i := range m {
			for j := range m {
				hk.Set(i, j, h[i]*hk.At(i, j))
			}
		}
		khk.Mul(kt, hk)
		khk.Scale(1/float64(m), &khk)
		sys.Scale(lambda, kt)
		sys.Add(&sys, &khk)
		tmp.Mul(&sys, b)
		out.Mul(b.T(), &tmp)
		tol := 1e-9
		if prec == precond.Float32 {
			tol = 1e-3
		}
		for i := range m {
			for j := range m {
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(out.At(i, j)-want) > tol {
					t.Fatalf("%s: Bᵀ(K̃HK̃/M + λK̃)B[%d][%d] = %v, want %v", prec, i, j, out.At(i, j), want)
				}
			}
		}
		ones := make([]float64, m)
		for i := range ones {
			ones[i] = 1
		}
		p1, err := base.WithCenterWeights(ones, lambda)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := base.WithLambda(lambda)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]float64, m)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		g, w := apply(p1, src, 1), apply(pl, src, 1)
		for i := range g {
			if math.Abs(g[i]-w[i]) > 1e-9*(1+math.Abs(w[i])) {
				t.Fatalf("%s: h = 1 differs from WithLambda at entry %d: %v, %v", prec, i, g[i], w[i])
			}
		}
	}
}
