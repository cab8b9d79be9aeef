package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestToBF16 checks rounding to nearest, ties to even, and that the
// three-term split represents v to 2⁻¹⁶ relative.
func TestToBF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want float32
	}{
		{1, 1},
		{-2.5, -2.5},
		{1 + 1.0/256, 1},                       // tie, even stays
		{1 + 3.0/256, 1 + 4.0/256},             // tie, odd rounds up
		{1 + 1.0/256 + 1.0/65536, 1 + 2.0/256}, // above the tie
		{0, 0},
	} {
		if got := FromBF16(ToBF16(c.in)); got != c.want {
			t.Errorf("bf16(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		v := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
		hi, lo := split(v)
		r := math.Abs(float64(FromBF16(hi)+FromBF16(lo)-v)) / math.Abs(float64(v))
		if r > math.Exp2(-16) {
			t.Fatalf("split(%v): hi+lo off by %.3g relative", v, r)
		}
	}
}

// bf16Ref returns the float64 dot products of the packed operands (the
// exact value the float32 accumulation rounds).
func bf16Ref(a []uint16, rows, kc int, b []uint16, np, p0, ncols int) []float64 {
	out := make([]float64, rows*ncols)
	for i := 0; i < rows; i++ {
		for c := 0; c < ncols; c++ {
			p, q := p0+c/NRB, c%NRB
			s := 0.0
			for k := 0; k < kc; k++ {
				blk := b[(p*kc+k)*NRB*KB:]
				for e := 0; e < KB; e++ {
					s += float64(FromBF16(a[i*kc*KB+k*KB+e])) * float64(FromBF16(blk[(e/2)*2*NRB+2*q+e%2]))
				}
			}
			out[i*ncols+c] = s
		}
	}
	return out
}

// TestGramBF16 holds GramBF16 (AMX when the CPU has it, and the generic
// loop) to the float64 sums of the same bfloat16 operands, within the
// float32 accumulation's rounding (kc·KB terms, each step rounded:
// 2·kc·KB·2⁻²⁴·Σ|aᵢbᵢ|), and the three-term product to the float32 dot
// product of x and c within 2⁻¹⁵·Σ|xⱼcⱼ|. Shapes cover one and several
// chunks, a column window (p0 > 0) and a pair of panels after the groups
// of four.
func TestGramBF16(t *testing.T) {
	t.Logf("HasAMX = %v", HasAMX())
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range []struct{ rows, m, d, p0, ncols int }{
		{16, 32, 1, 0, 32}, {16, 64, 18, 0, 64}, {32, 96, 18, 2, 64}, {48, 200, 90, 0, 96}, {16, 160, 28, 4, 96},
	} {
		x := to32(randF64(rng, sz.rows*sz.d, -2, 2))
		c := to32(randF64(rng, sz.m*sz.d, -2, 2))
		mpad := (sz.m + 2*NRB - 1) / (2 * NRB) * (2 * NRB)
		np := mpad / NRB
		for _, terms := range []BF16Terms{1, 3} {
			kc := terms.Chunks(sz.d)
			a := make([]uint16, sz.rows*kc*KB)
			PackRowsBF16(a, x, sz.rows, sz.d, terms)
			b := make([]uint16, kc*np*NRB*KB)
			PackCentersBF16(b, c, sz.m, mpad, sz.d, terms)
			ref := bf16Ref(a, sz.rows, kc, b, np, sz.p0, sz.ncols)
			for _, amx := range []bool{false, true} {
				if !UseAMX(amx) {
					continue
				}
				name := fmt.Sprintf("amx=%v/terms=%d/%dx%dx%d+%d", amx, terms, sz.rows, sz.m, sz.d, sz.p0)
				ldd := sz.ncols + 8
				dst := make([]float32, sz.rows*ldd)
				for i := range dst {
					dst[i] = float32(math.NaN()) // every output element is written
				}
				GramBF16(dst, ldd, a, sz.rows, kc, b, np, sz.p0, sz.ncols)
				for i := 0; i < sz.rows; i++ {
					for cc := 0; cc < sz.ncols; cc++ {
						got := float64(dst[i*ldd+cc])
						want := ref[i*sz.ncols+cc]
						q := sz.p0*NRB + cc
						abs := 0.0
						for j := 0; j < sz.d; j++ {
							if q < sz.m {
								abs += math.Abs(float64(x[i*sz.d+j]) * float64(c[q*sz.d+j]))
							}
						}
						if math.Abs(got-want) > 2*float64(kc*KB)*math.Exp2(-24)*(1.5*abs)+1e-30 {
							t.Fatalf("%s: [%d,%d] = %v, want %v (float64 sum of the bfloat16 terms)", name, i, cc, got, want)
						}
						exact := 0.0
						if q < sz.m {
							for j := 0; j < sz.d; j++ {
								exact += float64(x[i*sz.d+j]) * float64(c[q*sz.d+j])
							}
						}
						tol := math.Exp2(-15) * abs
						if terms == 1 {
							tol = math.Exp2(-7) * abs
						}
						if math.Abs(got-exact) > tol+1e-30 {
							t.Fatalf("%s: [%d,%d] = %v, want x·c = %v within %.3g", name, i, cc, got, exact, tol)
						}
					}
				}
			}
			UseAMX(HasAMX())
		}
	}
}

// TestGramBF16Shape checks the shape guard.
func TestGramBF16Shape(t *testing.T) {
	defer func() {
		if r := recover(); r != "tile: GramBF16: bad shape" {
			t.Fatalf("recover() = %v, want the shape panic", r)
		}
	}()
	GramBF16(make([]float32, 15*32), 32, make([]uint16, 15*KB), 15, 1, make([]uint16, 2*NRB*KB), 2, 0, 32)
}

// TestKernelDistBF16 holds KernelDistBF16 to GramBF16 followed by
// ApplyDist32 (the AVX512 variant where it runs) bit for bit, for every
// kind of distance kernel, on shapes with one and several chunks, a
// column window (p0 > 0), one and several pairs of panels, and row counts
// that end on a single 16-row block (16, 48); every output element is
// written, and none outside the block. With AMX the fused loop is the
// one tested; GramBF16 there runs the same loop in its dot-product mode,
// so the test also compares that mode with the Go loops' sums through
// TestGramBF16's bounds.
func TestKernelDistBF16(t *testing.T) {
	defer Use(Selected())
	if Available()[len(Available())-1] == AVX512 {
		Use(AVX512)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range []struct{ rows, m, d, p0, ncols int }{
		{16, 32, 1, 0, 32}, {32, 64, 18, 0, 64}, {48, 128, 18, 2, 64}, {64, 96, 90, 0, 96}, {16, 160, 28, 4, 96}, {80, 256, 28, 2, 224},
	} {
		x := to32(randF64(rng, sz.rows*sz.d, -1, 1))
		c := to32(randF64(rng, sz.m*sz.d, -1, 1))
		xn, cn := make([]float32, sz.rows), make([]float32, sz.m+2*NRB)
		Norms32Generic(xn, x, sz.rows, sz.d)
		Norms32Generic(cn, c, sz.m, sz.d)
		mpad := (sz.m + 2*NRB - 1) / (2 * NRB) * (2 * NRB)
		np := mpad / NRB
		for _, terms := range []BF16Terms{1, 3} {
			kc := terms.Chunks(sz.d)
			a := make([]uint16, sz.rows*kc*KB)
			PackRowsBF16(a, x, sz.rows, sz.d, terms)
			b := make([]uint16, kc*np*NRB*KB)
			PackCentersBF16(b, c, sz.m, mpad, sz.d, terms)
			for _, kind := range []string{"gaussian", "laplacian", "matern32", "matern52", "other"} {
				p := distParams[kind]
				for _, amx := range []bool{false, true} {
					if !UseAMX(amx) {
						continue
					}
					name := fmt.Sprintf("amx=%v/terms=%d/%s/%dx%dx%d+%d", amx, terms, kind, sz.rows, sz.m, sz.d, sz.p0)
					ldd := sz.ncols + 40
					want := make([]float32, sz.rows*ldd)
					GramBF16(want, ldd, a, sz.rows, kc, b, np, sz.p0, sz.ncols)
					cw := cn[sz.p0*NRB : sz.p0*NRB+sz.ncols]
					for i := 0; i < sz.rows; i++ {
						ApplyDist32(want[i*ldd:i*ldd+sz.ncols], xn[i], cw, p)
					}
					got := make([]float32, sz.rows*ldd)
					for i := range got {
						got[i] = float32(math.NaN())
					}
					KernelDistBF16(got, ldd, a, sz.rows, kc, b, np, sz.p0, sz.ncols, xn, cw, p)
					for i := 0; i < sz.rows; i++ {
						for j := 0; j < ldd; j++ {
							g, w := got[i*ldd+j], want[i*ldd+j]
							if j >= sz.ncols {
								if !math.IsNaN(float64(g)) {
									t.Fatalf("%s: [%d,%d] = %v written outside the block", name, i, j, g)
								}
								continue
							}
							if math.Float32bits(g) != math.Float32bits(w) {
								t.Fatalf("%s: [%d,%d] = %v, GramBF16 + ApplyDist32 give %v", name, i, j, g, w)
							}
						}
					}
				}
				UseAMX(HasAMX())
			}
		}
	}
}

// TestKernelDistBF16Allocs checks that the fused call allocates nothing
// (its scratch block lives on the stack).
func TestKernelDistBF16Allocs(t *testing.T) {
	const rows, m, d = 64, 128, 18
	rng := rand.New(rand.NewPCG(9, 10))
	x, c := to32(randF64(rng, rows*d, -1, 1)), to32(randF64(rng, m*d, -1, 1))
	kc := BF16Terms(3).Chunks(d)
	a, b := make([]uint16, rows*kc*KB), make([]uint16, kc*m*KB)
	PackRowsBF16(a, x, rows, d, 3)
	PackCentersBF16(b, c, m, m, d, 3)
	xn, cn := make([]float32, rows), make([]float32, m)
	Norms32Generic(xn, x, rows, d)
	Norms32Generic(cn, c, m, d)
	dst := make([]float32, rows*m)
	p := distParams["gaussian"]
	if n := testing.AllocsPerRun(10, func() {
		KernelDistBF16(dst, m, a, rows, kc, b, m/NRB, 0, m, xn, cn, p)
		GramBF16(dst, m, a, rows, kc, b, m/NRB, 0, m)
	}); n != 0 {
		t.Errorf("KernelDistBF16 and GramBF16: %v allocations per call, want 0", n)
	}
}

// TestKernelDistBF16Shape checks the norms' length guard.
func TestKernelDistBF16Shape(t *testing.T) {
	defer func() {
		if r := recover(); r != "tile: KernelDistBF16: bad shape" {
			t.Fatalf("recover() = %v, want the shape panic", r)
		}
	}()
	KernelDistBF16(make([]float32, 16*32), 32, make([]uint16, 16*KB), 16, 1, make([]uint16, 2*NRB*KB), 2, 0, 32,
		make([]float32, 15), make([]float32, 32), distParams["gaussian"])
}
