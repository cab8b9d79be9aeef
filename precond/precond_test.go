package precond_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// gaussKMM returns the Gaussian kernel matrix of m random points in 3-D.
func gaussKMM(m int, seed uint64) *mat.SymDense {
	rng := rand.New(rand.NewPCG(seed, 2))
	pts := make([][3]float64, m)
	for i := range pts {
		for j := range 3 {
			pts[i][j] = rng.NormFloat64()
		}
	}
	k := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			s := 0.0
			for l := range 3 {
				d := pts[i][l] - pts[j][l]
				s += d * d
			}
			k.SetSym(i, j, math.Exp(-s/2))
		}
	}
	return k
}

func TestFactorsAndApplications(t *testing.T) {
	const m, k, lambda = 40, 3, 1e-3
	for _, weighted := range []bool{false, true} {
		kmm := gaussKMM(m, 1)
		orig := mat.NewSymDense(m, nil)
		orig.CopySym(kmm)
		var w []float64
		if weighted {
			rng := rand.New(rand.NewPCG(3, 3))
			w = make([]float64, m)
			for i := range w {
				w[i] = 0.5 + rng.Float64()
			}
		}
		const eps = 1e-10
		p, err := precond.New(kmm, lambda, precond.Options{Jitter: eps, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		// Reference: Dense D, K̃ = D K D + εMI, T = chol(K̃), A = chol(TTᵀ/M + λI).
		d := mat.NewDiagDense(m, nil)
		for i := range m {
			d.SetDiag(i, 1)
			if w != nil {
				d.SetDiag(i, w[i])
			}
		}
		var kt mat.Dense
		kt.Mul(d, orig)
		kt.Mul(&kt, d)
		for i := range m {
			kt.Set(i, i, kt.At(i, i)+eps*m)
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(m, kt.RawMatrix().Data)) {
			t.Fatal("reference Cholesky failed")
		}
		var tu mat.TriDense
		ch.UTo(&tu)
		var s mat.Dense
		s.Mul(&tu, tu.T())
		s.Scale(1.0/m, &s)
		for i := range m {
			s.Set(i, i, s.At(i, i)+lambda)
		}
		var ca mat.Cholesky
		if !ca.Factorize(mat.NewSymDense(m, s.RawMatrix().Data)) {
			t.Fatal("reference Cholesky of A failed")
		}
		var au mat.TriDense
		ca.UTo(&au)
		// B = D T⁻¹ A⁻¹.
		var ti, ai, b mat.Dense
		if err := ti.Inverse(&tu); err != nil {
			t.Fatal(err)
		}
		if err := ai.Inverse(&au); err != nil {
			t.Fatal(err)
		}
		b.Mul(d, &ti)
		b.Mul(&b, &ai)

		rng := rand.New(rand.NewPCG(4, 4))
		x := make([]float64, m*k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		xm := mat.NewDense(m, k, append([]float64(nil), x...))
		for _, c := range []struct {
			name  string
			apply func([]float64, int)
			ref   mat.Matrix
		}{
			{"B", p.ApplyB, &b},
			{"Bᵀ", p.ApplyBT, b.T()},
		} {
			got := append([]float64(nil), x...)
			c.apply(got, k)
			var want mat.Dense
			want.Mul(c.ref, xm)
			// Tolerance: both sides solve with condition numbers of
			// about 1e6 here; 1e-8 relative leaves a wide margin.
			if !mat.EqualApprox(mat.NewDense(m, k, got), &want, 1e-8*mat.Norm(&want, math.Inf(1))) {
				t.Errorf("weighted=%v: %s x differs from the dense reference", weighted, c.name)
			}
		}
		if got, want := p.Bytes(), int64(2*m*m+len(w))*8; got != want {
			t.Errorf("Bytes() = %d, want %d", got, want)
		}
	}
}

func TestNotPositiveDefinite(t *testing.T) {
	kmm := mat.NewSymDense(3, []float64{1, 2, 0, 2, 1, 0, 0, 0, 1}) // eigenvalue -1
	_, err := precond.New(kmm, 1e-3, precond.Options{})
	if !errors.Is(err, precond.ErrNotPD) {
		t.Fatalf("err = %v, want ErrNotPD", err)
	}
	var e *precond.NotPDError
	if !errors.As(err, &e) || e.Column != 1 {
		t.Fatalf("err = %#v, want a *NotPDError at column 1", err)
	}
	want := "precond: the kernel matrix of the centres (K_MM + εMI, ε = 1e-13) is not positive definite at column 1: " +
		"the centres are (nearly) duplicated or the kernel is too wide for them; raise the jitter ε, use fewer centres, or a smaller sigma"
	if err.Error() != want {
		t.Errorf("message:\n got %q\nwant %q", err.Error(), want)
	}
	if !strings.Contains((&precond.NotPDError{Matrix: "TTᵀ/M + λI", Lambda: 1e-9}).Error(), "raise lambda") {
		t.Error("A's message does not say to raise lambda")
	}
}
