package tile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// forEach runs f with every available variant selected, restoring the
// default afterwards.
func forEach(t testing.TB, f func(v Variant)) {
	def := Selected()
	defer Use(def)
	for _, v := range Available() {
		if !Use(v) {
			t.Fatalf("Use(%v) = false for an available variant", v)
		}
		f(v)
	}
}

func randF64(rng *rand.Rand, n int, lo, hi float64) []float64 {
	a := make([]float64, n)
	for i := range a {
		a[i] = lo + (hi-lo)*rng.Float64()
	}
	return a
}

func to32(a []float64) []float32 {
	b := make([]float32, len(a))
	for i, v := range a {
		b[i] = float32(v)
	}
	return b
}

func pack64(c []float64, m, d int) ([]float64, int) {
	mp := (m + NR64 - 1) / NR64 * NR64
	p := make([]float64, mp*d)
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			p[i/NR64*NR64*d+j*NR64+i%NR64] = c[i*d+j]
		}
	}
	return p, mp
}

func pack32(c []float32, m, d int) ([]float32, int) {
	mp := (m + NR32 - 1) / NR32 * NR32
	p := make([]float32, mp*d)
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			p[i/NR32*NR32*d+j*NR32+i%NR32] = c[i*d+j]
		}
	}
	return p, mp
}

// TestGram checks every variant against the generic loop: bit for bit in
// float64 (both accumulate with a fused multiply-add in the same order),
// within 4 ulp of Σ|x_j c_j| in float32 (the generic float32 FMA rounds
// twice), and checks that the diagonal of X·Xᵀ equals Norms exactly.
func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range []struct{ rows, m, d int }{{4, 1, 1}, {8, 33, 3}, {12, 70, 28}, {64, 100, 20}} {
		x := randF64(rng, sz.rows*sz.d, -2, 2)
		c := randF64(rng, sz.m*sz.d, -2, 2)
		cp64, mp64 := pack64(c, sz.m, sz.d)
		want64 := make([]float64, sz.rows*mp64)
		Gram64Generic(want64, mp64, x, sz.rows, sz.d, cp64, mp64)
		x32, c32 := to32(x), to32(c)
		cp32, mp32 := pack32(c32, sz.m, sz.d)
		want32 := make([]float32, sz.rows*mp32)
		Gram32Generic(want32, mp32, x32, sz.rows, sz.d, cp32, mp32)
		forEach(t, func(v Variant) {
			name := fmt.Sprintf("%v/%dx%dx%d", v, sz.rows, sz.m, sz.d)
			got64 := make([]float64, sz.rows*mp64)
			Gram64(got64, mp64, x, sz.rows, sz.d, cp64, mp64)
			for i := range got64 {
				if math.Float64bits(got64[i]) != math.Float64bits(want64[i]) {
					t.Fatalf("%s: Gram64[%d] = %v, want %v", name, i, got64[i], want64[i])
				}
			}
			got32 := make([]float32, sz.rows*mp32)
			Gram32(got32, mp32, x32, sz.rows, sz.d, cp32, mp32)
			for i := 0; i < sz.rows; i++ {
				for j := 0; j < sz.m; j++ {
					s := 0.0
					for l := 0; l < sz.d; l++ {
						s += math.Abs(float64(x32[i*sz.d+l] * c32[j*sz.d+l]))
					}
					if d := math.Abs(float64(got32[i*mp32+j] - want32[i*mp32+j])); d > 4*0x1p-24*s {
						t.Fatalf("%s: Gram32[%d,%d] = %v, want %v", name, i, j, got32[i*mp32+j], want32[i*mp32+j])
					}
				}
			}
			// Diagonal of X·Xᵀ against Norms, bit for bit.
			xp64, xmp := pack64(x, sz.rows, sz.d)
			g := make([]float64, sz.rows*xmp)
			Gram64(g, xmp, x, sz.rows, sz.d, xp64, xmp)
			n := make([]float64, sz.rows)
			Norms64(n, x, sz.rows, sz.d)
			xp32, xmp32 := pack32(x32, sz.rows, sz.d)
			g32 := make([]float32, sz.rows*xmp32)
			Gram32(g32, xmp32, x32, sz.rows, sz.d, xp32, xmp32)
			n32 := make([]float32, sz.rows)
			Norms32(n32, x32, sz.rows, sz.d)
			for i := 0; i < sz.rows; i++ {
				if g[i*xmp+i] != n[i] || g32[i*xmp32+i] != n32[i] {
					t.Fatalf("%s: row %d: x·x = %v, %v; norms %v, %v", name, i, g[i*xmp+i], g32[i*xmp32+i], n[i], n32[i])
				}
			}
		})
	}
}

var distParams = map[string]*DistParams{
	"gaussian":  NewDistParams(false, 0, 0),
	"laplacian": NewDistParams(true, 0, 0),
	"matern32":  NewDistParams(true, 1, 0),
	"matern52":  NewDistParams(true, 1, 1.0/3),
	"other":     NewDistParams(false, 0.5, 0), // no assembly mode: generic
}

// Tolerances of the element-wise functions against the generic loop:
// the vectorised exp is within expTol64 / expTol32 relative of math.Exp
// (TestExpAccuracy), the Matérn factor is computed with fused
// multiply-adds (a few ulp), and results below the flush threshold are
// zero (absolute tolerance).
const (
	applyTol64 = 5e-16 * 4
	applyTol32 = 2e-7 * 4
)

func TestApplyDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 256
	g := randF64(rng, n, -3, 3)
	cn := randF64(rng, n, 0, 20)
	xn := 7.5
	for name, p := range distParams {
		want := append([]float64(nil), g...)
		ApplyDist64Generic(want, xn, cn, p)
		want32 := to32(g)
		ApplyDist32Generic(want32, float32(xn), to32(cn), p)
		forEach(t, func(v Variant) {
			got := append([]float64(nil), g...)
			ApplyDist64(got, xn, cn, p)
			for i := range got {
				if !close(got[i], want[i], applyTol64, 1e-300) {
					t.Fatalf("%s/%v: ApplyDist64[%d] = %v, want %v", name, v, i, got[i], want[i])
				}
			}
			got32 := to32(g)
			ApplyDist32(got32, float32(xn), to32(cn), p)
			for i := range got32 {
				if !close(float64(got32[i]), float64(want32[i]), applyTol32, 1e-37) {
					t.Fatalf("%s/%v: ApplyDist32[%d] = %v, want %v", name, v, i, got32[i], want32[i])
				}
			}
		})
	}
}

func close(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= max(rel*math.Abs(want), abs)
}

// Stated accuracy of the vectorised exp(−s), s ≥ 0, relative to math.Exp
// (itself within 1 ulp): float64 ≤ expTol64, float32 ≤ expTol32. Results
// for s > 707 (float64; < 1e-307) and s > 86 (float32; < 5e-38) are
// flushed to zero.
const (
	expTol64 = 5e-16 // about 2.3 ulp; measured max 3.3e-16 AVX-512 (table), 2.2e-16 AVX2 (see the test log)
	expTol32 = 2e-7  // about 3.4 ulp; measured max 1.1e-7 AVX-512 (table), 7.2e-8 AVX2
)

func TestExpAccuracy(t *testing.T) {
	const n = 1 << 16
	rng := rand.New(rand.NewPCG(5, 6))
	s := make([]float64, n)
	for i := range s {
		switch i % 4 {
		case 0:
			s[i] = 707 * float64(i) / n
		case 1:
			s[i] = rng.Float64()
		case 2:
			s[i] = 707 * rng.Float64()
		default:
			s[i] = float64(i%1024) * math.Ln2 / 2 // reduction boundaries
		}
	}
	s[0], s[1] = 0, 707
	zero := make([]float64, n)
	p := distParams["gaussian"]
	forEach(t, func(v Variant) {
		got := make([]float64, n)
		ApplyDist64(got, 0, s, p)
		var worst, at float64
		for i, sv := range s {
			want := math.Exp(-sv)
			e := math.Abs(got[i]-want) / want
			if e > worst {
				worst, at = e, sv
			}
		}
		flush := []float64{707.5, 710, 745, 1e300, math.Inf(1)}
		fl := make([]float64, 16)
		ApplyDist64(fl, 0, append(flush, make([]float64, 16)...), p)
		for i := range flush {
			if fl[i] != 0 && fl[i] != math.Exp(-flush[i]) {
				t.Errorf("%v: exp(-%v) = %v, want 0 (flushed) or math.Exp", v, flush[i], fl[i])
			}
		}
		if s0 := got[0]; s0 != 1 {
			t.Errorf("%v: exp(0) = %v, want exactly 1", v, s0)
		}
		t.Logf("%v: float64 exp max relative error %.3g at s = %v", v, worst, at)
		if worst > expTol64 {
			t.Errorf("%v: float64 exp max relative error %.3g > %g", v, worst, expTol64)
		}

		s32 := to32(s)
		got32 := make([]float32, n)
		for i := range s32 {
			s32[i] = min(s32[i], 86)
		}
		ApplyDist32(got32, 0, s32, p)
		worst = 0
		for i, sv := range s32 {
			want := math.Exp(-float64(sv))
			e := math.Abs(float64(got32[i])-want) / want
			if e > worst {
				worst, at = e, float64(sv)
			}
		}
		if got32[0] != 1 {
			t.Errorf("%v: float32 exp(0) = %v, want exactly 1", v, got32[0])
		}
		t.Logf("%v: float32 exp max relative error %.3g at s = %v", v, worst, at)
		if worst > expTol32 {
			t.Errorf("%v: float32 exp max relative error %.3g > %g", v, worst, expTol32)
		}
		_ = zero
	})
}

func TestApplyDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g := randF64(rng, 96, -3, 3)
	for _, p := range []DotParams{{1, 0, 1}, {0.5, 1, 2}, {0.3, 1, 3}, {1, 0.5, 7}, {2, 1, 8}} {
		want := append([]float64(nil), g...)
		ApplyDot64Generic(want, &p)
		want32 := to32(g)
		ApplyDot32Generic(want32, &p)
		forEach(t, func(v Variant) {
			got := append([]float64(nil), g...)
			ApplyDot64(got, &p)
			for i := range got {
				if got[i] != want[i] { // same operations in the same order
					t.Fatalf("%v/%+v: ApplyDot64[%d] = %v, want %v", v, p, i, got[i], want[i])
				}
			}
			got32 := to32(g)
			ApplyDot32(got32, &p)
			for i := range got32 {
				// the generic float32 FMA rounds twice: ≤ 1 ulp of the base,
				// amplified by the degree.
				if !close(float64(got32[i]), float64(want32[i]), float64(p.Degree+1)*2*0x1p-24, 1e-30) {
					t.Fatalf("%v/%+v: ApplyDot32[%d] = %v, want %v", v, p, i, got32[i], want32[i])
				}
			}
		})
	}
}

func TestDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 32, 64, 96, 1024} {
		a := randF64(rng, n, -1, 1)
		b := randF64(rng, n, -1, 1)
		a32 := to32(a)
		sum := 0.0
		for i := range a {
			sum += math.Abs(a[i] * b[i])
		}
		w64 := Dot64Generic(a, b)
		w32 := Dot32Generic(a32, b)
		y0 := randF64(rng, n, -1, 1)
		ya := append([]float64(nil), y0...)
		Axpy64Generic(0.7, a, ya)
		yb := append([]float64(nil), y0...)
		Axpy32Generic(0.7, a32, yb)
		forEach(t, func(v Variant) {
			// Sums in a different order: n ε Σ|a b| (Higham 3.1).
			tol := float64(n) * 0x1p-53 * sum
			if g := Dot64(a, b); math.Abs(g-w64) > tol {
				t.Errorf("%v: Dot64 = %v, want %v", v, g, w64)
			}
			if g := Dot32(a32, b); math.Abs(g-w32) > tol {
				t.Errorf("%v: Dot32 = %v, want %v", v, g, w32)
			}
			y := append([]float64(nil), y0...)
			Axpy64(0.7, a, y)
			y2 := append([]float64(nil), y0...)
			Axpy32(0.7, a32, y2)
			for i := range y {
				if math.Abs(y[i]-ya[i]) > 0x1p-52 || math.Abs(y2[i]-yb[i]) > 0x1p-52 {
					t.Fatalf("%v: Axpy[%d] = %v, %v; want %v, %v", v, i, y[i], y2[i], ya[i], yb[i])
				}
			}
		})
	}
}

// FuzzApplyDist64 holds the assembly kernel functions to the generic loop
// on arbitrary inputs.
func FuzzApplyDist64(f *testing.F) {
	f.Add(0.0, 1.0, 2.0, 0.5, uint8(0))
	f.Add(1e-3, 5.0, 100.0, 3.0, uint8(2))
	f.Add(-4.0, 0.0, 1e3, 1.0, uint8(1))
	f.Fuzz(func(t *testing.T, g0, xn, cn0, a float64, kind uint8) {
		if !(xn >= 0 && xn < 1e6 && cn0 >= 0 && cn0 < 1e6 && a > 0 && a < 1e3 && math.Abs(g0) < 1e6) {
			t.Skip()
		}
		params := []*DistParams{distParams["gaussian"], distParams["laplacian"], distParams["matern32"], distParams["matern52"]}
		p := params[int(kind)%len(params)]
		xn *= a
		cn0 *= a
		g0 *= a
		const n = 32
		g, cn := make([]float64, n), make([]float64, n)
		for i := range g {
			g[i] = g0 * float64(i) / n
			cn[i] = cn0 + float64(i)
		}
		want := append([]float64(nil), g...)
		ApplyDist64Generic(want, xn, cn, p)
		forEach(t, func(v Variant) {
			got := append([]float64(nil), g...)
			ApplyDist64(got, xn, cn, p)
			for i := range got {
				// 1e-300: values flushed to zero below 2^-1021.
				if !close(got[i], want[i], applyTol64, 1e-300) {
					t.Fatalf("%v: [%d] = %v, want %v (g %v, cn %v, xn %v, %+v)", v, i, got[i], want[i], g[i], cn[i], xn, p)
				}
			}
		})
	})
}

// FuzzGram64 holds the assembly Gram kernel to the generic loop, bit for
// bit.
func FuzzGram64(f *testing.F) {
	f.Add(uint64(1), uint8(4), uint8(17), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, rows, m, d uint8) {
		r, mm, dd := (int(rows)%32+1)*MR, int(m)%80+1, int(d)%40+1
		rng := rand.New(rand.NewPCG(seed, 0))
		x := randF64(rng, r*dd, -10, 10)
		c := randF64(rng, mm*dd, -10, 10)
		cp, mp := pack64(c, mm, dd)
		want := make([]float64, r*mp)
		Gram64Generic(want, mp, x, r, dd, cp, mp)
		forEach(t, func(v Variant) {
			got := make([]float64, r*mp)
			Gram64(got, mp, x, r, dd, cp, mp)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v: [%d] = %v, want %v", v, i, got[i], want[i])
				}
			}
		})
	})
}

// TestKernelDist checks the fused kernel: bit for bit equal to Gram
// followed by ApplyDist of the same variant (the same instructions), and
// within the apply tolerances of the generic loops.
func TestKernelDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sz := range []struct{ rows, m, d int }{{4, 1, 1}, {8, 40, 3}, {12, 70, 28}, {20, 33, 18}, {64, 100, 20}} {
		x := randF64(rng, sz.rows*sz.d, -1, 1)
		c := randF64(rng, sz.m*sz.d, -1, 1)
		xn := make([]float64, sz.rows)
		Norms64Generic(xn, x, sz.rows, sz.d)
		cp, mp := pack64(c, sz.m, sz.d)
		cn := make([]float64, mp)
		Norms64Generic(cn, c, sz.m, sz.d)
		x32, c32 := to32(x), to32(c)
		xn32 := make([]float32, sz.rows)
		Norms32Generic(xn32, x32, sz.rows, sz.d)
		cp32, mp32 := pack32(c32, sz.m, sz.d)
		cn32 := make([]float32, mp32)
		Norms32Generic(cn32, c32, sz.m, sz.d)
		for name, p := range distParams {
			want := make([]float64, sz.rows*mp)
			KernelDist64Generic(want, mp, x, xn, sz.rows, sz.d, cp, cn, mp, p)
			want32 := make([]float32, sz.rows*mp32)
			KernelDist32Generic(want32, mp32, x32, xn32, sz.rows, sz.d, cp32, cn32, mp32, p)
			forEach(t, func(v Variant) {
				tag := fmt.Sprintf("%s/%v/%dx%dx%d", name, v, sz.rows, sz.m, sz.d)
				got := make([]float64, sz.rows*mp)
				KernelDist64(got, mp, x, xn, sz.rows, sz.d, cp, cn, mp, p)
				ref := make([]float64, sz.rows*mp)
				Gram64(ref, mp, x, sz.rows, sz.d, cp, mp)
				for i := 0; i < sz.rows; i++ {
					ApplyDist64(ref[i*mp:(i+1)*mp], xn[i], cn, p)
				}
				got32 := make([]float32, sz.rows*mp32)
				KernelDist32(got32, mp32, x32, xn32, sz.rows, sz.d, cp32, cn32, mp32, p)
				ref32 := make([]float32, sz.rows*mp32)
				Gram32(ref32, mp32, x32, sz.rows, sz.d, cp32, mp32)
				for i := 0; i < sz.rows; i++ {
					ApplyDist32(ref32[i*mp32:(i+1)*mp32], xn32[i], cn32, p)
				}
				for i := range got {
					if got[i] != ref[i] {
						t.Fatalf("%s: KernelDist64[%d] = %v, Gram+Apply %v", tag, i, got[i], ref[i])
					}
					// The r² of near points loses accuracy in the
					// generic loop too; 1e-13 absolute covers both.
					if !close(got[i], want[i], applyTol64, 1e-13) {
						t.Fatalf("%s: KernelDist64[%d] = %v, generic %v", tag, i, got[i], want[i])
					}
				}
				for i := range got32 {
					if got32[i] != ref32[i] {
						t.Fatalf("%s: KernelDist32[%d] = %v, Gram+Apply %v", tag, i, got32[i], ref32[i])
					}
					if !close(float64(got32[i]), float64(want32[i]), applyTol32, 1e-5) {
						t.Fatalf("%s: KernelDist32[%d] = %v, generic %v", tag, i, got32[i], want32[i])
					}
				}
			})
		}
	}
}

func TestDot4Axpy4(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 16, 48, 1024} {
		ld := n + 16
		a := randF64(rng, 4*ld, -1, 1)
		a32 := to32(a)
		b := randF64(rng, n, -1, 1)
		alpha := [4]float64{0.5, -1.5, 2, 0}
		var w64, w32 [4]float64
		Dot4x64Generic(a, ld, b, &w64)
		Dot4x32Generic(a32, ld, b, &w32)
		y0 := randF64(rng, n, -1, 1)
		ya := append([]float64(nil), y0...)
		Axpy4x64Generic(&alpha, a, ld, ya)
		yb := append([]float64(nil), y0...)
		Axpy4x32Generic(&alpha, a32, ld, yb)
		forEach(t, func(v Variant) {
			var g64, g32 [4]float64
			Dot4x64(a, ld, b, &g64)
			Dot4x32(a32, ld, b, &g32)
			for r := 0; r < 4; r++ {
				// Sums in a different order: n ε Σ|a b| ≤ n² ε here.
				tol := float64(n*n) * 0x1p-53
				if math.Abs(g64[r]-w64[r]) > tol || math.Abs(g32[r]-w32[r]) > tol {
					t.Errorf("%v/n=%d: Dot4 row %d = %v, %v; want %v, %v", v, n, r, g64[r], g32[r], w64[r], w32[r])
				}
			}
			y := append([]float64(nil), y0...)
			Axpy4x64(&alpha, a, ld, y)
			y2 := append([]float64(nil), y0...)
			Axpy4x32(&alpha, a32, ld, y2)
			for i := range y {
				// fused vs separate multiply-add: a few ulp of Σ|α x| ≤ 4.
				if math.Abs(y[i]-ya[i]) > 16*0x1p-52 || math.Abs(y2[i]-yb[i]) > 16*0x1p-52 {
					t.Fatalf("%v/n=%d: Axpy4[%d] = %v, %v; want %v, %v", v, n, i, y[i], y2[i], ya[i], yb[i])
				}
			}
		})
	}
}

// TestGram1Dot1: the one-row routines give, in every variant, the bits
// of the same row in the 4-row routines of that variant (Gram64, Gram32,
// Dot4x64, Dot4x32), for panel counts that cover the routines' groups
// of panels and their remainders; and the generic twins match the
// generic 4-row loops.
func TestGram1Dot1(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, sz := range []struct{ m, d int }{{1, 1}, {16, 3}, {40, 28}, {70, 7}, {130, 28}, {200, 90}} {
		const rows = MR
		x := randF64(rng, rows*sz.d, -1, 1)
		c := randF64(rng, sz.m*sz.d, -1, 1)
		cp, mp := pack64(c, sz.m, sz.d)
		x32, c32 := to32(x), to32(c)
		cp32, mp32 := pack32(c32, sz.m, sz.d)
		u := randF64(rng, mp32, -1, 1)
		forEach(t, func(v Variant) {
			tag := fmt.Sprintf("%v/m=%d/d=%d", v, sz.m, sz.d)
			g4 := make([]float64, rows*mp)
			Gram64(g4, mp, x, rows, sz.d, cp, mp)
			g432 := make([]float32, rows*mp32)
			Gram32(g432, mp32, x32, rows, sz.d, cp32, mp32)
			var d4, d432 [4]float64
			Dot4x64(g4, mp, u[:mp], &d4)
			Dot4x32(g432, mp32, u[:mp32], &d432)
			for r := range rows {
				g1 := make([]float64, mp)
				Gram1x64(g1, x[r*sz.d:(r+1)*sz.d], sz.d, cp, mp)
				for i, g := range g1 {
					if math.Float64bits(g) != math.Float64bits(g4[r*mp+i]) {
						t.Fatalf("%s: Gram1x64 row %d [%d] = %v, Gram64 %v", tag, r, i, g, g4[r*mp+i])
					}
				}
				g132 := make([]float32, mp32)
				Gram1x32(g132, x32[r*sz.d:(r+1)*sz.d], sz.d, cp32, mp32)
				for i, g := range g132 {
					if math.Float32bits(g) != math.Float32bits(g432[r*mp32+i]) {
						t.Fatalf("%s: Gram1x32 row %d [%d] = %v, Gram32 %v", tag, r, i, g, g432[r*mp32+i])
					}
				}
				if got := Dot1x64(g4[r*mp:(r+1)*mp], u); math.Float64bits(got) != math.Float64bits(d4[r]) {
					t.Fatalf("%s: Dot1x64 row %d = %v, Dot4x64 %v", tag, r, got, d4[r])
				}
				if got := Dot1x32(g432[r*mp32:(r+1)*mp32], u); math.Float64bits(got) != math.Float64bits(d432[r]) {
					t.Fatalf("%s: Dot1x32 row %d = %v, Dot4x32 %v", tag, r, got, d432[r])
				}
			}
		})
		// The twins against the generic 4-row loops.
		want := make([]float64, rows*mp)
		Gram64Generic(want, mp, x, rows, sz.d, cp, mp)
		want32 := make([]float32, rows*mp32)
		Gram32Generic(want32, mp32, x32, rows, sz.d, cp32, mp32)
		for r := range rows {
			g1 := make([]float64, mp)
			Gram1x64Generic(g1, x[r*sz.d:(r+1)*sz.d], sz.d, cp, mp)
			g132 := make([]float32, mp32)
			Gram1x32Generic(g132, x32[r*sz.d:(r+1)*sz.d], sz.d, cp32, mp32)
			for i := range g1 {
				if g1[i] != want[r*mp+i] {
					t.Fatalf("m=%d d=%d: Gram1x64Generic row %d [%d] = %v, Gram64Generic %v", sz.m, sz.d, r, i, g1[i], want[r*mp+i])
				}
			}
			for i := range g132 {
				if g132[i] != want32[r*mp32+i] {
					t.Fatalf("m=%d d=%d: Gram1x32Generic row %d [%d] = %v, Gram32Generic %v", sz.m, sz.d, r, i, g132[i], want32[r*mp32+i])
				}
			}
		}
	}
}

// FuzzGram1x64 holds the one-row assembly Gram kernel to the generic
// loop, bit for bit.
func FuzzGram1x64(f *testing.F) {
	f.Add(uint64(1), uint8(17), uint8(3))
	f.Add(uint64(2), uint8(79), uint8(28))
	f.Fuzz(func(t *testing.T, seed uint64, m, d uint8) {
		mm, dd := int(m)%200+1, int(d)%40+1
		rng := rand.New(rand.NewPCG(seed, 0))
		x := randF64(rng, dd, -10, 10)
		c := randF64(rng, mm*dd, -10, 10)
		cp, mp := pack64(c, mm, dd)
		want := make([]float64, mp)
		Gram1x64Generic(want, x, dd, cp, mp)
		forEach(t, func(v Variant) {
			got := make([]float64, mp)
			Gram1x64(got, x, dd, cp, mp)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v: [%d] = %v, want %v", v, i, got[i], want[i])
				}
			}
		})
	})
}
