package dense_test

import (
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
	"gonum.org/v1/gonum/mat"
)

// The FALKON preconditioner on a small kernel matrix: T = chol(K), A =
// chol(T Tᵀ/M + λI), then apply A⁻ᵀ T⁻ᵀ to a vector. The matrices are gonum
// SymDense values; the package works on their raw row-major data.
func Example() {
	const m, lambda = 3, 0.5
	k := mat.NewSymDense(m, []float64{
		4, 2, 1,
		2, 5, 2,
		1, 2, 6,
	})
	t := mat.NewSymDense(m, nil)
	t.CopySym(k)
	raw := t.RawSymmetric()
	if ok, col := dense.Cholesky(raw.Data, m, raw.Stride, 2); !ok {
		fmt.Println("not positive definite at column", col)
		return
	}
	// S = T Tᵀ / M + λI, then A = chol(S).
	s := mat.NewSymDense(m, nil)
	rs := s.RawSymmetric()
	dense.UUt(raw.Data, m, raw.Stride, 1.0/m, rs.Data, rs.Stride, 2)
	for i := 0; i < m; i++ {
		rs.Data[i*rs.Stride+i] += lambda
	}
	if ok, _ := dense.Cholesky(rs.Data, m, rs.Stride, 2); !ok {
		return
	}
	x := []float64{1, 1, 1}
	dense.SolveUpperTVec(raw.Data, m, raw.Stride, x) // x = T⁻ᵀ x
	dense.SolveUpperTVec(rs.Data, m, rs.Stride, x)   // x = A⁻ᵀ x
	fmt.Printf("T₀₀ = %.4f, A₀₀ = %.4f\n", raw.Data[0], rs.Data[0])
	fmt.Printf("A⁻ᵀ T⁻ᵀ 1 = [%.4f %.4f %.4f]\n", x[0], x[1], x[2])
	// Output:
	// T₀₀ = 2.0000, A₀₀ = 1.5000
	// A⁻ᵀ T⁻ᵀ 1 = [0.3333 0.0561 0.1005]
}
