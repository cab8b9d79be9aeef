package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel/internal/tile"
)

// withBF16 runs f with BF16's cross term on the AMX unit (when the CPU
// has it), on the Go loops (tile.GramBF16Generic; the path of the noasm
// build, forced here on any CPU), and off (BF16 = Float32), restoring
// the defaults afterwards.
func withBF16(t *testing.T, f func(mode string)) {
	defer func(c bool) { bf16Cross = c; tile.UseAMX(tile.HasAMX()) }(bf16Cross)
	for _, mode := range []string{"amx", "go", "off"} {
		switch mode {
		case "amx":
			if !tile.HasAMX() {
				continue
			}
			bf16Cross = true
			tile.UseAMX(true)
		case "go":
			bf16Cross = true
			tile.UseAMX(false)
		case "off":
			bf16Cross = false
		}
		f(mode)
	}
}

// TestBF16 holds BF16's products to Eval (KtKvAdd and KvTo within
// tolBF16 of the dense reference, every kind) and checks that without the
// cross term they equal Float32's bit for bit, that BlockTo is Float32's
// in every mode (K_MM keeps its exact symmetry), and that rows that are
// not a multiple of the AMX row block (16) are handled. It logs the
// largest error of the Gaussian kernel values against float64.
func TestBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, sz := range []struct{ rows, m, d int }{{5, 7, 2}, {37, 70, 18}, {70, 100, 28}, {40, 33, 90}} {
		x, cen := randMat(rng, sz.rows, sz.d), randMat(rng, sz.m, sz.d)
		for _, k := range testKernels(sz.d, rng) {
			K := naive(k, x, cen, sz.rows, sz.m, sz.d)
			withBF16(t, func(mode string) {
				name := fmt.Sprintf("%s/%v/%dx%dx%d", mode, k, sz.rows, sz.m, sz.d)
				cb := NewCenters(k, cen, sz.m, sz.d, BF16)
				c32 := NewCenters(k, cen, sz.m, sz.d, Float32)
				wsb, ws32 := cb.NewWorkspace(), c32.NewWorkspace()
				u, v := randMat(rng, sz.m, 2), randMat(rng, sz.rows, 2)
				w0 := randMat(rng, sz.m, 2)
				wb, w32 := append([]float64(nil), w0...), append([]float64(nil), w0...)
				cb.KtKvAdd(wsb, wb, x, sz.rows, u, v, 2)
				c32.KtKvAdd(ws32, w32, x, sz.rows, u, v, 2)
				want, scale := dense(K, w0, u, v, sz.rows, sz.m, 2)
				for i := range wb {
					if math.Abs(wb[i]-want[i]) > tolBF16*scale[i] {
						t.Fatalf("%s: w[%d] = %v, want %v (scale %v)", name, i, wb[i], want[i], scale[i])
					}
					if mode == "off" && wb[i] != w32[i] {
						t.Fatalf("%s: w[%d] = %v, Float32 gives %v", name, i, wb[i], w32[i])
					}
				}
				// KvTo with u = e_j gives column j of K(X, C).
				maxErr := 0.0
				for j := 0; j < sz.m; j++ {
					e := make([]float64, sz.m)
					e[j] = 1
					col := make([]float64, sz.rows)
					cb.KvTo(wsb, col, x, sz.rows, e, 1)
					for i, got := range col {
						d := math.Abs(got - K[i*sz.m+j])
						if d > tolBF16*max(1, math.Abs(K[i*sz.m+j])) {
							t.Fatalf("%s: K[%d,%d] = %v, want %v", name, i, j, got, K[i*sz.m+j])
						}
						maxErr = max(maxErr, d)
					}
				}
				if k.Kind == Gaussian {
					t.Logf("%s/%v/%d: max |K − Eval| = %.2g", mode, k.Kind, sz.d, maxErr)
				}
				b1, b2 := make([]float64, sz.rows*sz.m), make([]float64, sz.rows*sz.m)
				cb.BlockTo(wsb, b1, x, sz.rows)
				c32.BlockTo(ws32, b2, x, sz.rows)
				for i := range b1 {
					if b1[i] != b2[i] {
						t.Fatalf("%s: BlockTo[%d] = %v, Float32 gives %v", name, i, b1[i], b2[i])
					}
				}
			})
		}
	}
}

// TestParsePrecision checks the names and the error.
func TestParsePrecision(t *testing.T) {
	for _, p := range []Precision{Float64, Float32, BF16} {
		b, err := p.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var q Precision
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Errorf("round trip of %v: %v, %v", p, q, err)
		}
	}
	_, err := ParsePrecision("float16")
	if err == nil || err.Error() != `kernel: unknown precision "float16" (want float64, float32 or bf16)` {
		t.Errorf("ParsePrecision(float16): %v", err)
	}
	if _, err := Precision(7).MarshalText(); err == nil {
		t.Error("MarshalText(7): no error")
	}
}

// TestBF16Error measures the kernel values of the block products against
// float64 on data like the paper's shapes (standard normal features with
// neighbour correlation 0.6, Gaussian kernel; susy d = 18, msd d = 90 with
// σ as their searches chose it): max and RMS of K − K₆₄ for Float32 and
// BF16 with three and one bfloat16 terms. It holds the three-term split
// within 2e-5 of float64 and logs the table (go test -run BF16Error -v).
func TestBF16Error(t *testing.T) {
	defer func(c bool, tt tile.BF16Terms) { bf16Cross, bf16Terms = c, tt }(bf16Cross, bf16Terms)
	bf16Cross = true // the Go loops where the CPU has no AMX
	rng := rand.New(rand.NewPCG(23, 24))
	const rows, m = 64, 512
	for _, c := range []struct {
		shape string
		d     int
		sigma float64
	}{{"susy", 18, 4}, {"msd", 90, 19}, {"msd σ=6", 90, 6}} {
		ar := func(n int) []float64 {
			x := make([]float64, n*c.d)
			for i := 0; i < n; i++ {
				z := rng.NormFloat64()
				for j := 0; j < c.d; j++ {
					x[i*c.d+j] = z
					z = 0.6*z + 0.8*rng.NormFloat64()
				}
			}
			return x
		}
		x, cen := ar(rows), ar(m)
		k := Kernel{Kind: Gaussian, Sigma: c.sigma}
		c64 := NewCenters(k, cen, m, c.d, Float64)
		ref := make([]float64, rows*m)
		c64.BlockTo(c64.NewWorkspace(), ref, x, rows)
		for _, v := range []struct {
			name  string
			p     Precision
			terms tile.BF16Terms
		}{{"float32", Float32, 3}, {"bf16", BF16, 3}, {"bf16x1", BF16, 1}} {
			bf16Terms = v.terms
			cs := NewCenters(k, cen, m, c.d, v.p)
			ws := cs.NewWorkspace()
			cs.ktile(ws, x, 0, rows, 0, false, true, false) // the products' kernel values
			maxErr, sq, mean := 0.0, 0.0, 0.0
			for i := 0; i < rows; i++ {
				for j := 0; j < m; j++ {
					e := math.Abs(float64(ws.t32[i*cs.mpad+j]) - ref[i*m+j])
					maxErr, sq, mean = max(maxErr, e), sq+e*e, mean+ref[i*m+j]
				}
			}
			t.Logf("%-8s d=%-3d σ=%-3g %-8s max %.2g  RMS %.2g  (mean K %.3f)", c.shape, c.d, c.sigma, v.name, maxErr, math.Sqrt(sq/(rows*m)), mean/(rows*m))
			if v.terms == 3 && maxErr > 2e-5 {
				t.Errorf("%s %s: max |K − K₆₄| = %.2g > 2e-5", c.shape, v.name, maxErr)
			}
		}
	}
}
