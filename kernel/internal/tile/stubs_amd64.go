//go:build amd64 && !noasm

package tile

import (
	"golang.org/x/sys/cpu"
)

//go:generate sh -c "go run asmgen.go > tile_amd64.s"

var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F
)

func init() {
	switch {
	case hasAVX512:
		Use(AVX512)
	case hasAVX2:
		Use(AVX2)
	}
}

func available() []Variant {
	v := []Variant{Generic}
	if hasAVX2 {
		v = append(v, AVX2)
	}
	if hasAVX512 {
		v = append(v, AVX512)
	}
	return v
}

func variantImpl(v Variant) (impl, bool) {
	switch {
	case v == Generic:
		return generic, true
	case v == AVX2 && hasAVX2:
		return asmSet{
			gram64AVX2, gram32AVX2, kern64AVX2, kern32AVX2,
			applyDist64AVX2, applyDist32AVX2, applyDot64AVX2, applyDot32AVX2,
			dot64AVX2, dot32AVX2, axpy64AVX2, axpy32AVX2,
			dot4x64AVX2, dot4x32AVX2, axpy4x64AVX2, axpy4x32AVX2,
			gram1x64AVX2, gram1x32AVX2, dot1x64AVX2, dot1x32AVX2,
		}.impl(), true
	case v == AVX512 && hasAVX512:
		return asmSet{
			gram64AVX512, gram32AVX512, kern64AVX512, kern32AVX512,
			applyDist64AVX512, applyDist32AVX512, applyDot64AVX512, applyDot32AVX512,
			dot64AVX512, dot32AVX512, axpy64AVX512, axpy32AVX512,
			dot4x64AVX512, dot4x32AVX512, axpy4x64AVX512, axpy4x32AVX512,
			gram1x64AVX512, gram1x32AVX512, dot1x64AVX512, dot1x32AVX512,
		}.impl(), true
	}
	return impl{}, false
}

// asmSet is the assembly routines of one instruction set.
type asmSet struct {
	gram64      func(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int)
	gram32      func(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int)
	kern64      func(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int, xn, cn, pc *float64, mode int)
	kern32      func(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int, xn, cn, pc *float32, mode int)
	applyDist64 func(buf, cn *float64, n int, xn float64, pc *float64, mode int)
	applyDist32 func(buf, cn *float32, n int, xn float32, pc *float32, mode int)
	applyDot64  func(buf *float64, n int, gamma, coef0 float64, deg int)
	applyDot32  func(buf *float32, n int, gamma, coef0 float32, deg int)
	dot64       func(a, b *float64, n int) float64
	dot32       func(a *float32, b *float64, n int) float64
	axpy64      func(alpha float64, x, y *float64, n int)
	axpy32      func(alpha float64, x *float32, y *float64, n int)
	dot4x64     func(a *float64, lda int, b *float64, n int, out *float64)
	dot4x32     func(a *float32, lda int, b *float64, n int, out *float64)
	axpy4x64    func(alpha *float64, x *float64, ldx int, y *float64, n int)
	axpy4x32    func(alpha *float64, x *float32, ldx int, y *float64, n int)
	gram1x64    func(dst *float64, x *float64, d int, cp *float64, npanels int)
	gram1x32    func(dst *float32, x *float32, d int, cp *float32, npanels int)
	dot1x64     func(a, b *float64, n int) float64
	dot1x32     func(a *float32, b *float64, n int) float64
}

// impl wraps the routines in the bounds-checking slice API.
func (a asmSet) impl() impl {
	return impl{
		gram64: func(dst []float64, ldd int, x []float64, rows, d int, cp []float64, ncols int) {
			gram64Asm(a.gram64, dst, ldd, x, rows, d, cp, ncols)
		},
		gram32: func(dst []float32, ldd int, x []float32, rows, d int, cp []float32, ncols int) {
			gram32Asm(a.gram32, dst, ldd, x, rows, d, cp, ncols)
		},
		kern64: func(dst []float64, ldd int, x, xn []float64, rows, d int, cp, cn []float64, ncols int, p *DistParams) {
			kern64Asm(a.kern64, dst, ldd, x, xn, rows, d, cp, cn, ncols, p)
		},
		kern32: func(dst []float32, ldd int, x, xn []float32, rows, d int, cp, cn []float32, ncols int, p *DistParams) {
			kern32Asm(a.kern32, dst, ldd, x, xn, rows, d, cp, cn, ncols, p)
		},
		norms64: Norms64Generic, // math.FMA rounds like the assembly's VFMADD231SD
		norms32: norms32Asm,
		applyDist64: func(g []float64, xn float64, cn []float64, p *DistParams) {
			applyDist64Asm(a.applyDist64, g, xn, cn, p)
		},
		applyDist32: func(g []float32, xn float32, cn []float32, p *DistParams) {
			applyDist32Asm(a.applyDist32, g, xn, cn, p)
		},
		applyDot64: func(g []float64, p *DotParams) { applyDot64Asm(a.applyDot64, g, p) },
		applyDot32: func(g []float32, p *DotParams) { applyDot32Asm(a.applyDot32, g, p) },
		dot64:      func(x, y []float64) float64 { return dot64Asm(a.dot64, x, y) },
		dot32:      func(x []float32, y []float64) float64 { return dot32Asm(a.dot32, x, y) },
		axpy64:     func(alpha float64, x, y []float64) { axpy64Asm(a.axpy64, alpha, x, y) },
		axpy32:     func(alpha float64, x []float32, y []float64) { axpy32Asm(a.axpy32, alpha, x, y) },
		dot4x64:    func(x []float64, ld int, y []float64, out *[4]float64) { dot4x64Asm(a.dot4x64, x, ld, y, out) },
		dot4x32:    func(x []float32, ld int, y []float64, out *[4]float64) { dot4x32Asm(a.dot4x32, x, ld, y, out) },
		axpy4x64:   func(alpha *[4]float64, x []float64, ld int, y []float64) { axpy4x64Asm(a.axpy4x64, alpha, x, ld, y) },
		axpy4x32:   func(alpha *[4]float64, x []float32, ld int, y []float64) { axpy4x32Asm(a.axpy4x32, alpha, x, ld, y) },
		gram1x64: func(dst, x []float64, d int, cp []float64, ncols int) {
			checkGram1(len(dst), len(x), d, len(cp), ncols, NR64)
			if ncols > 0 {
				a.gram1x64(&dst[0], &x[0], d, &cp[0], ncols/NR64)
			}
		},
		gram1x32: func(dst, x []float32, d int, cp []float32, ncols int) {
			checkGram1(len(dst), len(x), d, len(cp), ncols, NR32)
			if ncols > 0 {
				a.gram1x32(&dst[0], &x[0], d, &cp[0], ncols/NR32)
			}
		},
		dot1x64: func(x, y []float64) float64 { return dot64Asm(a.dot1x64, x, y) },
		dot1x32: func(x []float32, y []float64) float64 { return dot1x32Asm(a.dot1x32, x, y) },
	}
}

func checkGram1(ndst, nx, d, ncp, ncols, nr int) {
	if ncols%nr != 0 || d < 1 || nx < d || ncp < ncols*d || ndst < ncols {
		panic("tile: Gram1: bad shape")
	}
}

// dot1x32Asm is dot32Asm for lengths that are a multiple of 16.
func dot1x32Asm(f func(a *float32, b *float64, n int) float64, a []float32, b []float64) float64 {
	n := len(a)
	if n%16 != 0 || len(b) < n {
		panic("tile: Dot1x32: bad shape")
	}
	if n == 0 {
		return 0
	}
	return f(&a[0], &b[0], n)
}

// Bounds are checked here, once per call, so that the assembly can trust
// its arguments.

func checkGram(ndst, ldd, nx, rows, d, ncp, ncols, nr int) {
	if rows%MR != 0 || ncols%nr != 0 || d < 1 || ldd < ncols || nx < rows*d || ncp < ncols*d ||
		(rows > 0 && ndst < (rows-1)*ldd+ncols) {
		panic("tile: Gram: bad shape")
	}
}

func gram64Asm(f func(*float64, int, *float64, int, int, *float64, int), dst []float64, ldd int, x []float64, rows, d int, cp []float64, ncols int) {
	checkGram(len(dst), ldd, len(x), rows, d, len(cp), ncols, NR64)
	if rows == 0 || ncols == 0 {
		return
	}
	f(&dst[0], ldd, &x[0], rows, d, &cp[0], ncols/NR64)
}

func gram32Asm(f func(*float32, int, *float32, int, int, *float32, int), dst []float32, ldd int, x []float32, rows, d int, cp []float32, ncols int) {
	checkGram(len(dst), ldd, len(x), rows, d, len(cp), ncols, NR32)
	if rows == 0 || ncols == 0 {
		return
	}
	f(&dst[0], ldd, &x[0], rows, d, &cp[0], ncols/NR32)
}

func kern64Asm(f func(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int, xn, cn, pc *float64, mode int),
	dst []float64, ldd int, x, xn []float64, rows, d int, cp, cn []float64, ncols int, p *DistParams) {
	checkGram(len(dst), ldd, len(x), rows, d, len(cp), ncols, NR64)
	if len(xn) < rows || len(cn) < ncols {
		panic("tile: KernelDist64: bad shape")
	}
	mode := distMode(p)
	if mode < 0 {
		KernelDist64Generic(dst, ldd, x, xn, rows, d, cp, cn, ncols, p)
		return
	}
	if rows == 0 || ncols == 0 {
		return
	}
	f(&dst[0], ldd, &x[0], rows, d, &cp[0], ncols/NR64, &xn[0], &cn[0], &p.pc64[0], mode)
}

func kern32Asm(f func(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int, xn, cn, pc *float32, mode int),
	dst []float32, ldd int, x, xn []float32, rows, d int, cp, cn []float32, ncols int, p *DistParams) {
	checkGram(len(dst), ldd, len(x), rows, d, len(cp), ncols, NR32)
	if len(xn) < rows || len(cn) < ncols {
		panic("tile: KernelDist32: bad shape")
	}
	mode := distMode(p)
	if mode < 0 {
		KernelDist32Generic(dst, ldd, x, xn, rows, d, cp, cn, ncols, p)
		return
	}
	if rows == 0 || ncols == 0 {
		return
	}
	f(&dst[0], ldd, &x[0], rows, d, &cp[0], ncols/NR32, &xn[0], &cn[0], &p.pc32[0], mode)
}

func check4(nx, ld, ny int, n int) {
	if n%16 != 0 || ld < n || nx < 3*ld+n || ny < n {
		panic("tile: 4-row product: bad shape")
	}
}

func dot4x64Asm(f func(a *float64, lda int, b *float64, n int, out *float64), a []float64, lda int, b []float64, out *[4]float64) {
	n := len(b)
	check4(len(a), lda, len(b), n)
	if n == 0 {
		*out = [4]float64{}
		return
	}
	f(&a[0], lda, &b[0], n, &out[0])
}

func dot4x32Asm(f func(a *float32, lda int, b *float64, n int, out *float64), a []float32, lda int, b []float64, out *[4]float64) {
	n := len(b)
	check4(len(a), lda, len(b), n)
	if n == 0 {
		*out = [4]float64{}
		return
	}
	f(&a[0], lda, &b[0], n, &out[0])
}

func axpy4x64Asm(f func(alpha *float64, x *float64, ldx int, y *float64, n int), alpha *[4]float64, x []float64, ldx int, y []float64) {
	n := len(y)
	check4(len(x), ldx, len(y), n)
	if n == 0 {
		return
	}
	f(&alpha[0], &x[0], ldx, &y[0], n)
}

func axpy4x32Asm(f func(alpha *float64, x *float32, ldx int, y *float64, n int), alpha *[4]float64, x []float32, ldx int, y []float64) {
	n := len(y)
	check4(len(x), ldx, len(y), n)
	if n == 0 {
		return
	}
	f(&alpha[0], &x[0], ldx, &y[0], n)
}

func norms32Asm(dst []float32, x []float32, rows, d int) {
	if d < 1 || len(dst) < rows || len(x) < rows*d {
		panic("tile: Norms32: bad shape")
	}
	if rows == 0 {
		return
	}
	norms32FMA(&dst[0], &x[0], rows, d)
}

func applyDist64Asm(f func(g, cn *float64, n int, xn float64, pc *float64, mode int), g []float64, xn float64, cn []float64, p *DistParams) {
	n := len(g)
	if n%16 != 0 || len(cn) < n {
		panic("tile: ApplyDist64: bad shape")
	}
	mode := distMode(p)
	if mode < 0 {
		ApplyDist64Generic(g, xn, cn, p)
		return
	}
	if n == 0 {
		return
	}
	f(&g[0], &cn[0], n, xn, &p.pc64[0], mode)
}

func applyDist32Asm(f func(g, cn *float32, n int, xn float32, pc *float32, mode int), g []float32, xn float32, cn []float32, p *DistParams) {
	n := len(g)
	if n%32 != 0 || len(cn) < n {
		panic("tile: ApplyDist32: bad shape")
	}
	mode := distMode(p)
	if mode < 0 {
		ApplyDist32Generic(g, xn, cn, p)
		return
	}
	if n == 0 {
		return
	}
	f(&g[0], &cn[0], n, xn, &p.pc32[0], mode)
}

func applyDot64Asm(f func(g *float64, n int, gamma, coef0 float64, deg int), g []float64, p *DotParams) {
	n := len(g)
	if n%16 != 0 || p.Degree < 1 {
		panic("tile: ApplyDot64: bad shape")
	}
	if n == 0 {
		return
	}
	f(&g[0], n, p.Gamma, p.Coef0, p.Degree)
}

func applyDot32Asm(f func(g *float32, n int, gamma, coef0 float32, deg int), g []float32, p *DotParams) {
	n := len(g)
	if n%32 != 0 || p.Degree < 1 {
		panic("tile: ApplyDot32: bad shape")
	}
	if n == 0 {
		return
	}
	f(&g[0], n, float32(p.Gamma), float32(p.Coef0), p.Degree)
}

func dot64Asm(f func(a, b *float64, n int) float64, a, b []float64) float64 {
	n := len(a)
	if n%16 != 0 || len(b) < n {
		panic("tile: Dot64: bad shape")
	}
	if n == 0 {
		return 0
	}
	return f(&a[0], &b[0], n)
}

func dot32Asm(f func(a *float32, b *float64, n int) float64, a []float32, b []float64) float64 {
	n := len(a)
	if n%32 != 0 || len(b) < n {
		panic("tile: Dot32: bad shape")
	}
	if n == 0 {
		return 0
	}
	return f(&a[0], &b[0], n)
}

func axpy64Asm(f func(alpha float64, x, y *float64, n int), alpha float64, x, y []float64) {
	n := len(x)
	if n%16 != 0 || len(y) < n {
		panic("tile: Axpy64: bad shape")
	}
	if n == 0 {
		return
	}
	f(alpha, &x[0], &y[0], n)
}

func axpy32Asm(f func(alpha float64, x *float32, y *float64, n int), alpha float64, x []float32, y []float64) {
	n := len(x)
	if n%32 != 0 || len(y) < n {
		panic("tile: Axpy32: bad shape")
	}
	if n == 0 {
		return
	}
	f(alpha, &x[0], &y[0], n)
}

// Assembly routines (tile_amd64.s, generated by asmgen.go).

//go:noescape
func gram64AVX512(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int)

//go:noescape
func gram32AVX512(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int)

//go:noescape
func gram64AVX2(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int)

//go:noescape
func gram32AVX2(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int)

//go:noescape
func norms32FMA(dst, x *float32, rows, d int)

//go:noescape
func applyDist64AVX512(buf, cn *float64, n int, xn float64, pc *float64, mode int)

//go:noescape
func applyDist32AVX512(buf, cn *float32, n int, xn float32, pc *float32, mode int)

//go:noescape
func applyDist64AVX2(buf, cn *float64, n int, xn float64, pc *float64, mode int)

//go:noescape
func applyDist32AVX2(buf, cn *float32, n int, xn float32, pc *float32, mode int)

//go:noescape
func applyDot64AVX512(buf *float64, n int, gamma, coef0 float64, deg int)

//go:noescape
func applyDot32AVX512(buf *float32, n int, gamma, coef0 float32, deg int)

//go:noescape
func applyDot64AVX2(buf *float64, n int, gamma, coef0 float64, deg int)

//go:noescape
func applyDot32AVX2(buf *float32, n int, gamma, coef0 float32, deg int)

//go:noescape
func dot64AVX512(a, b *float64, n int) float64

//go:noescape
func dot32AVX512(a *float32, b *float64, n int) float64

//go:noescape
func dot64AVX2(a, b *float64, n int) float64

//go:noescape
func dot32AVX2(a *float32, b *float64, n int) float64

//go:noescape
func axpy64AVX512(alpha float64, x, y *float64, n int)

//go:noescape
func axpy32AVX512(alpha float64, x *float32, y *float64, n int)

//go:noescape
func axpy64AVX2(alpha float64, x, y *float64, n int)

//go:noescape
func axpy32AVX2(alpha float64, x *float32, y *float64, n int)

//go:noescape
func kern64AVX512(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int, xn, cn, pc *float64, mode int)

//go:noescape
func kern32AVX512(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int, xn, cn, pc *float32, mode int)

//go:noescape
func kern64AVX2(dst *float64, ldd int, x *float64, rows, d int, cp *float64, npanels int, xn, cn, pc *float64, mode int)

//go:noescape
func kern32AVX2(dst *float32, ldd int, x *float32, rows, d int, cp *float32, npanels int, xn, cn, pc *float32, mode int)

//go:noescape
func peakFMAAVX512(n int)

//go:noescape
func peakFMAAVX2(n int)

// PeakFMA runs n × 12 independent float64 fused multiply-adds of the
// variant's vector width and returns the flops done (0 for Generic): a
// yardstick for benchmarks.
func PeakFMA(v Variant, n int) int {
	switch {
	case v == AVX512 && hasAVX512:
		peakFMAAVX512(n)
		return n * 12 * 16
	case v == AVX2 && hasAVX2:
		peakFMAAVX2(n)
		return n * 12 * 8
	}
	return 0
}

//go:noescape
func dot4x64AVX512(a *float64, lda int, b *float64, n int, out *float64)

//go:noescape
func axpy4x64AVX512(alpha *float64, x *float64, ldx int, y *float64, n int)

//go:noescape
func dot4x32AVX512(a *float32, lda int, b *float64, n int, out *float64)

//go:noescape
func axpy4x32AVX512(alpha *float64, x *float32, ldx int, y *float64, n int)

//go:noescape
func dot4x64AVX2(a *float64, lda int, b *float64, n int, out *float64)

//go:noescape
func axpy4x64AVX2(alpha *float64, x *float64, ldx int, y *float64, n int)

//go:noescape
func dot4x32AVX2(a *float32, lda int, b *float64, n int, out *float64)

//go:noescape
func axpy4x32AVX2(alpha *float64, x *float32, ldx int, y *float64, n int)

//go:noescape
func gram1x64AVX512(dst *float64, x *float64, d int, cp *float64, npanels int)

//go:noescape
func gram1x32AVX512(dst *float32, x *float32, d int, cp *float32, npanels int)

//go:noescape
func gram1x64AVX2(dst *float64, x *float64, d int, cp *float64, npanels int)

//go:noescape
func gram1x32AVX2(dst *float32, x *float32, d int, cp *float32, npanels int)

//go:noescape
func dot1x64AVX512(a, b *float64, n int) float64

//go:noescape
func dot1x32AVX512(a *float32, b *float64, n int) float64

//go:noescape
func dot1x64AVX2(a, b *float64, n int) float64

//go:noescape
func dot1x32AVX2(a *float32, b *float64, n int) float64
