package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestF32Products holds Dot4x32F and Axpy8x32F to their stated error
// against the exact (float64) sums, in every variant, and the assembly
// to the generic loops (the same operations in the same order; they may
// differ where the generic loop's float64 rounding decides a tie, so
// within a few float32 roundings of the sum's magnitude).
func TestF32Products(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const eps = 0x1p-24
	for _, n := range []int{0, 32, 256, 288, 1344, 10016} {
		ld := n + 64
		a := to32(randF64(rng, 8*ld, 0, 1)) // kernel values are in [0, 1]
		b := to32(randF64(rng, n, -3, 3))
		var alpha [8]float32
		for r := range alpha {
			alpha[r] = float32(rng.Float64()*4 - 2)
		}
		alpha[5] = 0 // a zero weight, as padding rows have
		y0 := randF64(rng, n, -10, 10)

		// Exact sums and their magnitudes.
		var dot, dotAbs [4]float64
		for r := range dot {
			for j := 0; j < n; j++ {
				v := float64(a[r*ld+j]) * float64(b[j])
				dot[r] += v
				dotAbs[r] += math.Abs(v)
			}
		}
		axpy, axpyAbs := make([]float64, n), make([]float64, n)
		for j := range axpy {
			axpy[j] = y0[j]
			for r, al := range alpha {
				v := float64(al) * float64(a[r*ld+j])
				axpy[j] += v
				axpyAbs[j] += math.Abs(v)
			}
		}
		var gen [4]float64
		Dot4x32FGeneric(a, ld, b, &gen)
		ygen := append([]float64(nil), y0...)
		Axpy8x32FGeneric(&alpha, a, ld, ygen)

		forEach(t, func(v Variant) {
			tag := fmt.Sprintf("%v/n=%d", v, n)
			var out [4]float64
			Dot4x32F(a, ld, b, &out)
			for r := range out {
				// F32Run/32 float32 additions per lane, one pair sum,
				// then float64.
				tol := eps*(F32Run/32+2)*dotAbs[r] + 1e-12
				if d := math.Abs(out[r] - dot[r]); d > tol {
					t.Errorf("%s: Dot4x32F row %d = %v, exact %v (error %.3g > %.3g)", tag, r, out[r], dot[r], d, tol)
				}
				if d := math.Abs(out[r] - gen[r]); d > 4*eps*dotAbs[r] {
					t.Errorf("%s: Dot4x32F row %d = %v, generic %v", tag, r, out[r], gen[r])
				}
			}
			y := append([]float64(nil), y0...)
			Axpy8x32F(&alpha, a, ld, y)
			for j := range y {
				tol := eps*6*axpyAbs[j] + 1e-12
				if d := math.Abs(y[j] - axpy[j]); d > tol {
					t.Fatalf("%s: Axpy8x32F[%d] = %v, exact %v (error %.3g > %.3g)", tag, j, y[j], axpy[j], d, tol)
				}
				if d := math.Abs(y[j] - ygen[j]); d > 4*eps*axpyAbs[j]+1e-12 {
					t.Fatalf("%s: Axpy8x32F[%d] = %v, generic %v", tag, j, y[j], ygen[j])
				}
			}
		})
	}
}

// TestF32ProductsShape: lengths that are not a multiple of 32, or rows
// shorter than the stride says, panic (a programmer error).
func TestF32ProductsShape(t *testing.T) {
	forEach(t, func(v Variant) {
		for name, f := range map[string]func(){
			"dot n":     func() { var o [4]float64; Dot4x32F(make([]float32, 4*48), 48, make([]float32, 16), &o) },
			"dot rows":  func() { var o [4]float64; Dot4x32F(make([]float32, 3*32), 32, make([]float32, 32), &o) },
			"axpy n":    func() { var al [8]float32; Axpy8x32F(&al, make([]float32, 8*48), 48, make([]float64, 16)) },
			"axpy rows": func() { var al [8]float32; Axpy8x32F(&al, make([]float32, 7*32), 32, make([]float64, 32)) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%v: %s: no panic", v, name)
					}
				}()
				f()
			}()
		}
	})
}
