//go:build amd64 && !noasm

package dense

import "golang.org/x/sys/cpu"

//go:generate go run asmgen.go

// kernAVX512 is the 12×16 micro-kernel: 24 zmm accumulators, each A
// element broadcast once per k-step into a register for its two FMAs
// (AVX-512F).
//
//go:noescape
func kernAVX512(kc int, a, b, c *float64, ldc int)

// kernAVX2 is the 6×8 micro-kernel: 12 ymm accumulators (AVX2 + FMA).
//
//go:noescape
func kernAVX2(kc int, a, b, c *float64, ldc int)

// kern32AVX512 is the float32 12×32 micro-kernel: 24 zmm accumulators of
// 16 floats, each A element broadcast once per k-step into a register
// for the two FMAs that use it (AVX-512F).
//
//go:noescape
func kern32AVX512(kc int, a, b, c *float32, ldc int)

// kern32AVX512x14 is the float32 14×32 micro-kernel: 28 zmm accumulators.
//
//go:noescape
func kern32AVX512x14(kc int, a, b, c *float32, ldc int)

// kern32AVX2 is the float32 6×16 micro-kernel: 12 ymm accumulators of 8
// floats (AVX2 + FMA).
//
//go:noescape
func kern32AVX2(kc int, a, b, c *float32, ldc int)

var (
	avx512Kernel = microKernel[float64]{name: "avx512-12x16", mr: 12, nr: 16, fn: func(kc int, a, b, c []float64, ldc int) {
		_, _, _ = a[12*kc-1], b[16*kc-1], c[11*ldc+15]
		kernAVX512(kc, &a[0], &b[0], &c[0], ldc)
	}}
	avx2Kernel = microKernel[float64]{name: "avx2-6x8", mr: 6, nr: 8, fn: func(kc int, a, b, c []float64, ldc int) {
		_, _, _ = a[6*kc-1], b[8*kc-1], c[5*ldc+7]
		kernAVX2(kc, &a[0], &b[0], &c[0], ldc)
	}}
	avx512Kernel32 = microKernel[float32]{name: "avx512-f32-12x32", mr: 12, nr: 32, fn: func(kc int, a, b, c []float32, ldc int) {
		_, _, _ = a[12*kc-1], b[32*kc-1], c[11*ldc+31]
		kern32AVX512(kc, &a[0], &b[0], &c[0], ldc)
	}}
	avx512Kernel32x14 = microKernel[float32]{name: "avx512-f32-14x32", mr: 14, nr: 32, fn: func(kc int, a, b, c []float32, ldc int) {
		_, _, _ = a[14*kc-1], b[32*kc-1], c[13*ldc+31]
		kern32AVX512x14(kc, &a[0], &b[0], &c[0], ldc)
	}}
	avx2Kernel32 = microKernel[float32]{name: "avx2-f32-6x16", mr: 6, nr: 16, fn: func(kc int, a, b, c []float32, ldc int) {
		_, _, _ = a[6*kc-1], b[16*kc-1], c[5*ldc+15]
		kern32AVX2(kc, &a[0], &b[0], &c[0], ldc)
	}}
)

// kernels lists the micro-kernels usable on this CPU, fastest first.
func kernels() []microKernel[float64] {
	var ks []microKernel[float64]
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, goKernel)
}

// kernels32 lists the float32 micro-kernels usable on this CPU, fastest
// first.
func kernels32() []microKernel[float32] {
	var ks []microKernel[float32]
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel32, avx512Kernel32x14)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel32)
	}
	return append(ks, goKernel32)
}
