package precond_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// TestBInvertsApproximationFloat32 is TestBInvertsApproximation at an M
// past two of the factorisations' 256-wide panels, so that the float32
// preconditioner's trailing updates, panel solves and T Tᵀ run in float32
// arithmetic (internal/dense doc.go), against float64 on the same K_MM.
func TestBInvertsApproximationFloat32(t *testing.T) {
	m := 700
	if testing.Short() {
		m = 300
	}
	const lambda = 1e-3
	kmm := gaussKMM(m, 5)
	// Both precisions with float32's jitter: with float64's (1e-13) this
	// K_MM is too ill-conditioned for BᵀHB to be near I in either.
	for _, c := range []struct {
		prec precond.Precision
		tol  float64
	}{
		// Measured 7.9e-11 at M = 700.
		{precond.Float64, 1e-9},
		// float32 arithmetic: the factors' backward error is ≈ 10
		// float32 units (1.3e-6 of max|K| at M = 1000–3000, measured in
		// internal/dense; float64 sums rounded to float32 gave one unit),
		// and BᵀHB inherits it times κ(T) ≤ √(1/ε) = 316 (see
		// TestBInvertsApproximation) times a growth of a few: ≲ 1e-3.
		// Measured 1.5e-4 at M = 700 (1.0e-5 with the float64 sums of
		// round 4).
		{precond.Float32, 1e-3},
	} {
		t.Run(string(c.prec), func(t *testing.T) {
			p, err := precond.New(mat.NewSymDense(m, append([]float64(nil), kmm.RawSymmetric().Data...)), lambda, precond.Options{Precision: c.prec, Jitter: precond.DefaultJitter32})
			if err != nil {
				t.Fatal(err)
			}
			kt := mat.NewDense(m, m, nil)
			for i := range m {
				for j := range m {
					kt.Set(i, j, kmm.At(i, j))
				}
				kt.Set(i, i, kt.At(i, i)+p.Jitter()*float64(m))
			}
			var h, lk mat.Dense
			h.Mul(kt, kt)
			h.Scale(1/float64(m), &h)
			lk.Scale(lambda, kt)
			h.Add(&h, &lk)
			// B = [B e_1 … B e_M], applied to all columns at once.
			eye := make([]float64, m*m)
			for i := range m {
				eye[i*m+i] = 1
			}
			bd := make([]float64, m*m)
			p.ApplyBTo(bd, eye, m)
			bm := mat.NewDense(m, m, bd)
			var bh, g mat.Dense
			bh.Mul(bm.T(), &h)
			g.Mul(&bh, bm)
			worst := 0.0
			for i := range m {
				for j := range m {
					want := 0.0
					if i == j {
						want = 1
					}
					worst = max(worst, math.Abs(g.At(i, j)-want))
				}
			}
			t.Logf("M = %d: max |BᵀHB − I| = %.2g", m, worst)
			if worst > c.tol {
				t.Errorf("max |BᵀHB − I| = %.2g > %.2g", worst, c.tol)
			}
		})
	}
}
