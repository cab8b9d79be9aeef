package dense

// A microKernel is the register-blocked inner loop that every O(n³) routine
// in this package funnels its flops through. For kc ≥ 1 it computes
//
//	c[i*ldc+j] += Σ_{p<kc} a[p*mr+i] * b[p*nr+j]   for i < mr, j < nr
//
// where a is a packed micro-panel of mr rows of op(A) (column by column) and
// b a packed micro-panel of nr columns of op(B) (row by row). The sum is
// accumulated from zero in registers, in precision P, and added to C once,
// so the result for an element does not depend on whether the driver hands
// the kernel C itself or a scratch tile.
type microKernel[P Float] struct {
	name   string
	mr, nr int
	fn     func(kc int, a, b, c []P, ldc int)
}

// refKernel is the reference loop for any mr·nr ≤ 1024; tests hold the
// fast kernels to it.
func refKernel[P Float](mr, nr int) func(kc int, a, b, c []P, ldc int) {
	return func(kc int, a, b, c []P, ldc int) {
		var buf [32 * 32]P
		acc := buf[:mr*nr]
		for p := 0; p < kc; p++ {
			ap := a[p*mr : p*mr+mr]
			bp := b[p*nr : p*nr+nr]
			for i, ai := range ap {
				row := acc[i*nr : i*nr+nr]
				for j, bj := range bp {
					row[j] += ai * bj
				}
			}
		}
		for i := 0; i < mr; i++ {
			ci := c[i*ldc : i*ldc+nr]
			for j := range ci {
				ci[j] += acc[i*nr+j]
			}
		}
	}
}

// goKernel and goKernel32 are the portable 4×4 kernels (kernel4x4), in
// float64 and float32 arithmetic.
var (
	goKernel   = microKernel[float64]{name: "go4x4", mr: 4, nr: 4, fn: kernel4x4[float64]}
	goKernel32 = microKernel[float32]{name: "go4x4-f32", mr: 4, nr: 4, fn: kernel4x4[float32]}
)

// kernel4x4 is refKernel(4, 4) with its 16 sums in scalar variables (in
// precision P), so that they stay in registers:
//
//	for p := 0; p < kc; p++ {
//		for i := 0; i < 4; i++ {
//			for j := 0; j < 4; j++ {
//				acc[i][j] += a[p*4+i] * b[p*4+j]
//			}
//		}
//	}
//	c[i*ldc+j] += acc[i][j]
func kernel4x4[P Float](kc int, a, b, c []P, ldc int) {
	var c00, c01, c02, c03 P
	var c10, c11, c12, c13 P
	var c20, c21, c22, c23 P
	var c30, c31, c32, c33 P
	a = a[:4*kc]
	b = b[:4*kc]
	for p := 0; p+4 <= len(a); p += 4 {
		ap := a[p : p+4 : p+4]
		bp := b[p : p+4 : p+4]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		a0 := ap[0]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := ap[1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := ap[2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := ap[3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	r := c[:3*ldc+4]
	r[0] += c00
	r[1] += c01
	r[2] += c02
	r[3] += c03
	r = r[ldc:]
	r[0] += c10
	r[1] += c11
	r[2] += c12
	r[3] += c13
	r = r[ldc:]
	r[0] += c20
	r[1] += c21
	r[2] += c22
	r[3] += c23
	r = r[ldc:]
	r[0] += c30
	r[1] += c31
	r[2] += c32
	r[3] += c33
}
