package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

type denseOp struct{ a *mat.SymDense }

func (d denseOp) MulTo(_ context.Context, dst, src []float64) error {
	n := d.a.SymmetricDim()
	k := len(src) / n
	var out mat.Dense
	out.Mul(d.a, mat.NewDense(n, k, src))
	copy(dst, out.RawMatrix().Data)
	return nil
}

func spd(n int, seed uint64) *mat.SymDense {
	rng := rand.New(rand.NewPCG(seed, 5))
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var a mat.SymDense
	a.SymOuterK(1, g)
	for i := range n {
		a.SetSym(i, i, a.At(i, i)+float64(n))
	}
	return &a
}

func TestConjugateGradientSolves(t *testing.T) {
	const n, k = 30, 3
	a := spd(n, 1)
	rng := rand.New(rand.NewPCG(2, 2))
	b := make([]float64, n*k)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	// Column 1 all zero: must stay exactly zero.
	for i := range n {
		b[i*k+1] = 0
	}
	st := NewState(b, k)
	converged, err := CG(context.Background(), denseOp{a}, st, k, 200, 1e-13, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !converged {
		t.Fatalf("CG did not converge in %d iterations", st.Iter)
	}
	var want mat.Dense
	if err := want.Solve(a, mat.NewDense(n, k, b)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for j := range k {
			if got := st.Beta[i*k+j]; math.Abs(got-want.At(i, j)) > 1e-10 {
				t.Fatalf("β[%d,%d] = %v, want %v", i, j, got, want.At(i, j))
			}
		}
	}
}

// Stopping at iteration 4 and resuming from the state gives the same β
// as running 9 iterations at once, bit for bit.
func TestConjugateGradientResume(t *testing.T) {
	const n, k = 25, 2
	a := spd(n, 3)
	b := make([]float64, n*k)
	for i := range b {
		b[i] = float64(i%7) - 3
	}
	full := NewState(b, k)
	if _, err := CG(context.Background(), denseOp{a}, full, k, 9, 0, nil); err != nil {
		t.Fatal(err)
	}
	part := NewState(b, k)
	if _, err := CG(context.Background(), denseOp{a}, part, k, 4, 0, nil); err != nil {
		t.Fatal(err)
	}
	if conv, err := CG(context.Background(), denseOp{a}, part, k, 9, 0, nil); err != nil || conv {
		t.Fatal(err, conv)
	}
	for i := range full.Beta {
		if full.Beta[i] != part.Beta[i] {
			t.Fatalf("β[%d] resumed %v, uninterrupted %v", i, part.Beta[i], full.Beta[i])
		}
	}
}
