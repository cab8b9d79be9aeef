//go:build amd64 && !noasm

package dense

import "golang.org/x/sys/cpu"

//go:generate go run asmgen.go

// kernAVX512 is the 12×16 micro-kernel: 24 zmm accumulators, A broadcast
// from memory into the FMAs (AVX-512F).
//
//go:noescape
func kernAVX512(kc int, a, b, c *float64, ldc int)

// kernAVX2 is the 6×8 micro-kernel: 12 ymm accumulators (AVX2 + FMA).
//
//go:noescape
func kernAVX2(kc int, a, b, c *float64, ldc int)

var (
	avx512Kernel = microKernel{name: "avx512-12x16", mr: 12, nr: 16, fn: func(kc int, a, b, c []float64, ldc int) {
		_, _, _ = a[12*kc-1], b[16*kc-1], c[11*ldc+15]
		kernAVX512(kc, &a[0], &b[0], &c[0], ldc)
	}}
	avx2Kernel = microKernel{name: "avx2-6x8", mr: 6, nr: 8, fn: func(kc int, a, b, c []float64, ldc int) {
		_, _, _ = a[6*kc-1], b[8*kc-1], c[5*ldc+7]
		kernAVX2(kc, &a[0], &b[0], &c[0], ldc)
	}}
)

// kernels lists the micro-kernels usable on this CPU, fastest first.
func kernels() []microKernel {
	var ks []microKernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, goKernel)
}
