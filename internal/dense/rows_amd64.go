//go:build amd64 && !noasm

package dense

import "golang.org/x/sys/cpu"

//go:noescape
func axpy4AVX2(n int, a *[4]float64, u *float64, ldu int, y *float64)

//go:noescape
func dot4AVX2(n int, u *float64, ldu int, x *float64, s *[16]float64)

//go:noescape
func axpy4F32AVX2(n int, a *[4]float32, u *float32, ldu int, y *float32)

//go:noescape
func axpyF32AVX2(n int, a float32, x, y *float32)

//go:noescape
func scaleF32AVX2(n int, s float32, x *float32)

//go:noescape
func packT12F32AVX512(kb int, alpha float32, src *float32, lds, npan int, dst *float32)

var rowsAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// packT12 is packT12F32 where AVX-512 is there, else nil.
var packT12 = func() func(kb int, alpha float32, src []float32, lds, npan int, dst []float32) {
	if !cpu.X86.HasAVX512F {
		return nil
	}
	return packT12F32
}()

// packT12F32 sets dst[i*12*kb + p*12 + r] = alpha src[p*lds + 12*i + r]
// for p < kb, i < npan, r < 12: npan float32 micro-panels of 12 rows
// packed from a transposed A, as packA's loop does element by element.
func packT12F32(kb int, alpha float32, src []float32, lds, npan int, dst []float32) {
	if kb <= 0 || npan <= 0 {
		return
	}
	_, _ = src[(kb-1)*lds+12*npan-1], dst[npan*12*kb-1]
	packT12F32AVX512(kb, alpha, &src[0], lds, npan, &dst[0])
}

// axpy4 computes y[j] −= Σ_{r<4} a[r] u[r*ldu+j] for j < len(y).
func axpy4(a *[4]float64, u []float64, ldu int, y []float64) {
	n := len(y)
	m := n &^ 7
	if !rowsAsm || m == 0 {
		axpy4Go(a, u, ldu, y)
		return
	}
	_ = u[3*ldu+n-1]
	axpy4AVX2(m, a, &u[0], ldu, &y[0])
	axpy4Go(a, u[m:], ldu, y[m:])
}

// dot4 returns s[r] = Σ_j u[r*ldu+j] x[j], r < 4.
func dot4(u []float64, ldu int, x []float64) [4]float64 {
	n := len(x)
	m := n &^ 7
	if !rowsAsm || m == 0 {
		return dot4Go(u, ldu, x)
	}
	_ = u[3*ldu+n-1]
	var lanes [16]float64
	dot4AVX2(m, &u[0], ldu, &x[0], &lanes)
	t := dot4Go(u[m:], ldu, x[m:])
	for r := range t {
		l := lanes[4*r : 4*r+4]
		t[r] += (l[0] + l[1]) + (l[2] + l[3])
	}
	return t
}

// axpy4F32 computes y[j] −= Σ_{r<4} a[r] u[r*ldu+j] for j < len(y), in
// float32 arithmetic.
func axpy4F32(a *[4]float32, u []float32, ldu int, y []float32) {
	n := len(y)
	m := n &^ 15
	if !rowsAsm || m == 0 {
		axpy4F32Go(a, u, ldu, y)
		return
	}
	_ = u[3*ldu+n-1]
	axpy4F32AVX2(m, a, &u[0], ldu, &y[0])
	axpy4F32Go(a, u[m:], ldu, y[m:])
}

// axpyF32 computes y[j] += a x[j] for j < len(x), in float32.
func axpyF32(a float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	m := n &^ 15
	if !rowsAsm || m == 0 {
		axpyF32Go(a, x, y)
		return
	}
	axpyF32AVX2(m, a, &x[0], &y[0])
	axpyF32Go(a, x[m:], y[m:])
}

// scaleF32 computes x[j] *= s, in float32.
func scaleF32(s float32, x []float32) {
	n := len(x)
	m := n &^ 15
	if !rowsAsm || m == 0 {
		scaleF32Go(s, x)
		return
	}
	scaleF32AVX2(m, s, &x[0])
	scaleF32Go(s, x[m:])
}
