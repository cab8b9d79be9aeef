package precond

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
)

// TestOrthonormaliseRounds: the Cholesky QR skips its second round only
// when orthLoss says the first is enough, and Q comes out orthonormal to
// rounding, with QSQᵀ = FFᵀ, either way. Columns scaled over eight
// decades but independent take one round; two nearly parallel columns
// (κ of the scaled F ≈ 10⁶, one round leaving ≈ 10⁻⁴) take two.
func TestOrthonormaliseRounds(t *testing.T) {
	const m, k = 700, 60
	for _, c := range []struct {
		name     string
		parallel bool
		oneRound bool
	}{{"scaled columns", false, true}, {"nearly parallel columns", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			f := make([]float64, m*k)
			for i := range m {
				for j := range k {
					f[i*k+j] = rng.NormFloat64() * math.Pow(10, -8*float64(j)/(k-1))
				}
				if c.parallel { // column 1 ≈ column 0
					f[i*k+1] = f[i*k] + 1e-6*rng.NormFloat64()
				}
			}
			g := make([]float64, k*k)
			dense.GramUpper(f, m, k, k, 1, g, k, 1)
			norms := make([]float64, k)
			for i := range k {
				norms[i] = math.Sqrt(g[i*k+i])
			}
			if ok, _ := dense.Cholesky(g, k, k, 1); !ok {
				t.Fatal("Gram matrix not positive definite")
			}
			for i := range k {
				clear(g[i*k : i*k+i])
			}
			loss := orthLoss(g, norms, k)
			if one := loss <= qr1Orth; one != c.oneRound {
				t.Fatalf("orthLoss %.3g: one round %v, want %v", loss, one, c.oneRound)
			}
			f0 := slices.Clone(f)
			ny, err := orthonormalise(context.Background(), f, m, k, 2, func(float64) {})
			if err != nil {
				t.Fatal(err)
			}
			qq := make([]float64, k*k)
			dense.GramUpper(ny.q, m, k, k, 1, qq, k, 1)
			worst := 0.0
			for i := range k {
				for j := i; j < k; j++ {
					v := qq[i*k+j]
					if i == j {
						v--
					}
					worst = max(worst, math.Abs(v))
				}
			}
			rec, scale := 0.0, 0.0
			for i := 0; i < m; i += 37 {
				for j := 0; j < m; j += 53 {
					want, got := 0.0, 0.0
					for l := range k {
						want += f0[i*k+l] * f0[j*k+l]
					}
					for a := range k {
						for b := range k {
							got += ny.q[i*k+a] * ny.s[a*k+b] * ny.q[j*k+b]
						}
					}
					rec, scale = max(rec, math.Abs(got-want)), max(scale, math.Abs(want))
				}
			}
			t.Logf("orthLoss %.3g; ‖QᵀQ − I‖max %.3g; QSQᵀ against FFᵀ %.3g relative", loss, worst, rec/scale)
			if worst > 1e-12 || rec > 1e-12*scale {
				t.Errorf("‖QᵀQ − I‖max %.3g, QSQᵀ − FFᵀ %.3g relative; want both ≤ 1e-12", worst, rec/scale)
			}
		})
	}
}
