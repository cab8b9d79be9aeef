package tile

import "math"

// Gram64Generic is the reference for Gram64:
//
//	for i := 0; i < rows; i++ {
//		for c := 0; c < ncols; c++ {
//			p, q := c/NR64, c%NR64
//			acc := 0.0
//			for j := 0; j < d; j++ {
//				acc = math.FMA(x[i*d+j], cp[p*NR64*d+j*NR64+q], acc)
//			}
//			dst[i*ldd+c] = acc
//		}
//	}
func Gram64Generic(dst []float64, ldd int, x []float64, rows, d int, cp []float64, ncols int) {
	// The loop above, blocked as 2 rows × 4 centres of scalar
	// accumulators (registers); each still sums feature 0 first.
	for p := 0; p < ncols/NR64; p++ {
		panel := cp[p*NR64*d : (p+1)*NR64*d]
		for i := 0; i+1 < rows; i += 2 {
			x0, x1 := x[i*d:i*d+d], x[(i+1)*d:(i+1)*d+d]
			o0, o1 := dst[i*ldd+p*NR64:], dst[(i+1)*ldd+p*NR64:]
			for q := 0; q < NR64; q += 4 {
				var a0, a1, a2, a3, b0, b1, b2, b3 float64
				for j, u := range x0 {
					v := x1[j]
					c := panel[j*NR64+q : j*NR64+q+4]
					a0 = math.FMA(u, c[0], a0)
					a1 = math.FMA(u, c[1], a1)
					a2 = math.FMA(u, c[2], a2)
					a3 = math.FMA(u, c[3], a3)
					b0 = math.FMA(v, c[0], b0)
					b1 = math.FMA(v, c[1], b1)
					b2 = math.FMA(v, c[2], b2)
					b3 = math.FMA(v, c[3], b3)
				}
				o0[q], o0[q+1], o0[q+2], o0[q+3] = a0, a1, a2, a3
				o1[q], o1[q+1], o1[q+2], o1[q+3] = b0, b1, b2, b3
			}
		}
	}
}

// Gram32Generic is the reference for Gram32: Gram64Generic in float32, each
// step rounded once, acc = float32(float64(x)*float64(c) + float64(acc)).
// (The product of two float32 is exact in float64; the sum is rounded twice,
// to float64 then float32, which can differ from a fused float32 FMA in the
// last bit.)
func Gram32Generic(dst []float32, ldd int, x []float32, rows, d int, cp []float32, ncols int) {
	for p := 0; p < ncols/NR32; p++ {
		panel := cp[p*NR32*d : (p+1)*NR32*d]
		for i := 0; i+1 < rows; i += 2 {
			x0, x1 := x[i*d:i*d+d], x[(i+1)*d:(i+1)*d+d]
			o0, o1 := dst[i*ldd+p*NR32:], dst[(i+1)*ldd+p*NR32:]
			for q := 0; q < NR32; q += 4 {
				var a0, a1, a2, a3, b0, b1, b2, b3 float32
				for j, u := range x0 {
					v := x1[j]
					c := panel[j*NR32+q : j*NR32+q+4]
					a0 = fma32(u, c[0], a0)
					a1 = fma32(u, c[1], a1)
					a2 = fma32(u, c[2], a2)
					a3 = fma32(u, c[3], a3)
					b0 = fma32(v, c[0], b0)
					b1 = fma32(v, c[1], b1)
					b2 = fma32(v, c[2], b2)
					b3 = fma32(v, c[3], b3)
				}
				o0[q], o0[q+1], o0[q+2], o0[q+3] = a0, a1, a2, a3
				o1[q], o1[q+1], o1[q+2], o1[q+3] = b0, b1, b2, b3
			}
		}
	}
}

func fma32(a, b, c float32) float32 {
	return float32(float64(a)*float64(b) + float64(c))
}

// KernelDist64Generic is the reference for KernelDist64: Gram64Generic,
// then ApplyDist64Generic on each row.
func KernelDist64Generic(dst []float64, ldd int, x, xn []float64, rows, d int, cp, cn []float64, ncols int, p *DistParams) {
	Gram64Generic(dst, ldd, x, rows, d, cp, ncols)
	for i := 0; i < rows; i++ {
		ApplyDist64Generic(dst[i*ldd:i*ldd+ncols], xn[i], cn, p)
	}
}

// KernelDist32Generic is the reference for KernelDist32.
func KernelDist32Generic(dst []float32, ldd int, x, xn []float32, rows, d int, cp, cn []float32, ncols int, p *DistParams) {
	Gram32Generic(dst, ldd, x, rows, d, cp, ncols)
	for i := 0; i < rows; i++ {
		ApplyDist32Generic(dst[i*ldd:i*ldd+ncols], xn[i], cn, p)
	}
}

// Norms64Generic is the reference for Norms64.
func Norms64Generic(dst []float64, x []float64, rows, d int) {
	for i := 0; i < rows; i++ {
		acc := 0.0
		for _, v := range x[i*d : i*d+d] {
			acc = math.FMA(v, v, acc)
		}
		dst[i] = acc
	}
}

// Norms32Generic is the reference for Norms32.
func Norms32Generic(dst []float32, x []float32, rows, d int) {
	for i := 0; i < rows; i++ {
		var acc float32
		for _, v := range x[i*d : i*d+d] {
			acc = fma32(v, v, acc)
		}
		dst[i] = acc
	}
}

// ApplyDist64Generic is the reference for ApplyDist64:
//
//	for j := range g {
//		s := max(math.FMA(-2, g[j], xn+cn[j]), 0)
//		if p.Sqrt {
//			s = math.Sqrt(s)
//		}
//		g[j] = (1 + s*(p.C1+p.C2*s)) * math.Exp(-s) // just math.Exp(-s) if C1 = C2 = 0
//	}
func ApplyDist64Generic(g []float64, xn float64, cn []float64, p *DistParams) {
	cn = cn[:len(g)]
	for j, gv := range g {
		s := max(math.FMA(-2, gv, xn+cn[j]), 0)
		if p.Sqrt {
			s = math.Sqrt(s)
		}
		if p.C1 == 0 && p.C2 == 0 {
			g[j] = math.Exp(-s) // the factor is 1 (and 1 + ∞·0 is not)
			continue
		}
		g[j] = (1 + s*(p.C1+p.C2*s)) * math.Exp(-s)
	}
}

// ApplyDist32Generic is the reference for ApplyDist32: ApplyDist64Generic in
// float32 with the exponential computed in float64 and rounded.
func ApplyDist32Generic(g []float32, xn float32, cn []float32, p *DistParams) {
	cn = cn[:len(g)]
	c1, c2 := float32(p.C1), float32(p.C2)
	for j, gv := range g {
		s := max(fma32(-2, gv, xn+cn[j]), 0)
		if p.Sqrt {
			s = float32(math.Sqrt(float64(s)))
		}
		if c1 == 0 && c2 == 0 {
			g[j] = float32(math.Exp(-float64(s)))
			continue
		}
		g[j] = (1 + s*(c1+c2*s)) * float32(math.Exp(-float64(s)))
	}
}

// ApplyDot64Generic is the reference for ApplyDot64:
//
//	for j := range g {
//		g[j] = ipow(p.Gamma*g[j]+p.Coef0, p.Degree)
//	}
//
// where ipow multiplies by repeated squaring.
func ApplyDot64Generic(g []float64, p *DotParams) {
	for j, gv := range g {
		g[j] = ipow64(math.FMA(p.Gamma, gv, p.Coef0), p.Degree)
	}
}

// ApplyDot32Generic is the reference for ApplyDot32.
func ApplyDot32Generic(g []float32, p *DotParams) {
	gamma, c0 := float32(p.Gamma), float32(p.Coef0)
	for j, gv := range g {
		g[j] = ipow32(fma32(gamma, gv, c0), p.Degree)
	}
}

// ipow64 returns b^n for n ≥ 1 by binary powering: r = 1 is never formed,
// so n = 1 returns b exactly.
func ipow64(b float64, n int) float64 {
	r := b
	n--
	for n > 0 {
		if n&1 != 0 {
			r *= b
		}
		n >>= 1
		if n > 0 {
			b *= b
		}
	}
	return r
}

func ipow32(b float32, n int) float32 {
	r := b
	n--
	for n > 0 {
		if n&1 != 0 {
			r *= b
		}
		n >>= 1
		if n > 0 {
			b *= b
		}
	}
	return r
}

// Dot64Generic is the reference for Dot64.
func Dot64Generic(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	for j := 0; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for j := len(a) &^ 3; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// Dot32Generic is the reference for Dot32.
func Dot32Generic(a []float32, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	for j := 0; j+4 <= len(a); j += 4 {
		s0 += float64(a[j]) * b[j]
		s1 += float64(a[j+1]) * b[j+1]
		s2 += float64(a[j+2]) * b[j+2]
		s3 += float64(a[j+3]) * b[j+3]
	}
	for j := len(a) &^ 3; j < len(a); j++ {
		s0 += float64(a[j]) * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy64Generic is the reference for Axpy64.
func Axpy64Generic(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * v
	}
}

// Axpy32Generic is the reference for Axpy32.
func Axpy32Generic(alpha float64, x []float32, y []float64) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * float64(v)
	}
}

// Dot4x64Generic is the reference for Dot4x64: Dot64Generic on each row.
func Dot4x64Generic(a []float64, lda int, b []float64, out *[4]float64) {
	for r := range out {
		out[r] = Dot64Generic(a[r*lda:r*lda+len(b)], b)
	}
}

// Dot4x32Generic is the reference for Dot4x32.
func Dot4x32Generic(a []float32, lda int, b []float64, out *[4]float64) {
	for r := range out {
		out[r] = Dot32Generic(a[r*lda:r*lda+len(b)], b)
	}
}

// Axpy4x64Generic is the reference for Axpy4x64:
//
//	for j := range y {
//		for r := 0; r < 4; r++ {
//			y[j] += alpha[r] * x[r*ldx+j]
//		}
//	}
func Axpy4x64Generic(alpha *[4]float64, x []float64, ldx int, y []float64) {
	for r, a := range alpha {
		Axpy64Generic(a, x[r*ldx:r*ldx+len(y)], y)
	}
}

// Axpy4x32Generic is the reference for Axpy4x32.
func Axpy4x32Generic(alpha *[4]float64, x []float32, ldx int, y []float64) {
	for r, a := range alpha {
		Axpy32Generic(a, x[r*ldx:r*ldx+len(y)], y)
	}
}

// Gram1x64Generic is the reference for Gram1x64, the loop of
// Gram64Generic for one row:
//
//	for c := 0; c < ncols; c++ {
//		p, q := c/NR64, c%NR64
//		acc := 0.0
//		for j := 0; j < d; j++ {
//			acc = math.FMA(x[j], cp[p*NR64*d+j*NR64+q], acc)
//		}
//		dst[c] = acc
//	}
func Gram1x64Generic(dst, x []float64, d int, cp []float64, ncols int) {
	x = x[:d]
	for p := 0; p < ncols/NR64; p++ {
		panel := cp[p*NR64*d : (p+1)*NR64*d]
		o := dst[p*NR64 : (p+1)*NR64]
		for q := 0; q < NR64; q += 4 {
			var a0, a1, a2, a3 float64
			for j, u := range x {
				c := panel[j*NR64+q : j*NR64+q+4]
				a0 = math.FMA(u, c[0], a0)
				a1 = math.FMA(u, c[1], a1)
				a2 = math.FMA(u, c[2], a2)
				a3 = math.FMA(u, c[3], a3)
			}
			o[q], o[q+1], o[q+2], o[q+3] = a0, a1, a2, a3
		}
	}
}

// Gram1x32Generic is the reference for Gram1x32: Gram32Generic's loop
// for one row.
func Gram1x32Generic(dst, x []float32, d int, cp []float32, ncols int) {
	x = x[:d]
	for p := 0; p < ncols/NR32; p++ {
		panel := cp[p*NR32*d : (p+1)*NR32*d]
		o := dst[p*NR32 : (p+1)*NR32]
		for q := 0; q < NR32; q += 4 {
			var a0, a1, a2, a3 float32
			for j, u := range x {
				c := panel[j*NR32+q : j*NR32+q+4]
				a0 = fma32(u, c[0], a0)
				a1 = fma32(u, c[1], a1)
				a2 = fma32(u, c[2], a2)
				a3 = fma32(u, c[3], a3)
			}
			o[q], o[q+1], o[q+2], o[q+3] = a0, a1, a2, a3
		}
	}
}

// Dot1x64Generic is the reference for Dot1x64: Dot64Generic, as
// Dot4x64Generic is on each row.
func Dot1x64Generic(a, b []float64) float64 { return Dot64Generic(a, b) }

// Dot1x32Generic is the reference for Dot1x32.
func Dot1x32Generic(a []float32, b []float64) float64 { return Dot32Generic(a, b) }
