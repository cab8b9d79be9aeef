package tile

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Micro-benchmarks of the pieces on cache-resident data; "Gelem/s" counts
// kernel elements (one row × one centre).

func BenchmarkGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, m = 64, 256
	for _, d := range []int{20, 28} {
		x := randF64(rng, rows*d, -1, 1)
		c := randF64(rng, m*d, -1, 1)
		cp, mp := pack64(c, m, d)
		x32 := to32(x)
		cp32, mp32 := pack32(to32(c), m, d)
		forEach(b, func(v Variant) {
			b.Run(fmt.Sprintf("%v/f64/d=%d", v, d), func(b *testing.B) {
				ld := mp + 8 // avoid a power-of-two row stride (4K aliasing)
				dst := make([]float64, rows*ld)
				for b.Loop() {
					Gram64(dst, ld, x, rows, d, cp, mp)
				}
				b.ReportMetric(float64(rows*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
				b.ReportMetric(float64(2*d*rows*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run(fmt.Sprintf("%v/f32/d=%d", v, d), func(b *testing.B) {
				ld := mp32 + 16
				dst := make([]float32, rows*ld)
				for b.Loop() {
					Gram32(dst, ld, x32, rows, d, cp32, mp32)
				}
				b.ReportMetric(float64(rows*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
				b.ReportMetric(float64(2*d*rows*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

func BenchmarkApply(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 1024
	g := randF64(rng, n, -1, 1)
	cn := randF64(rng, n, 0, 4)
	g32, cn32 := to32(g), to32(cn)
	forEach(b, func(v Variant) {
		for _, name := range []string{"gaussian", "matern52"} {
			p := distParams[name]
			b.Run(fmt.Sprintf("%v/f64/%s", v, name), func(b *testing.B) {
				for b.Loop() {
					ApplyDist64(g, 3, cn, p)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
			b.Run(fmt.Sprintf("%v/f32/%s", v, name), func(b *testing.B) {
				for b.Loop() {
					ApplyDist32(g32, 3, cn32, p)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		}
	})
}

func BenchmarkProducts(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 1024
	a := randF64(rng, n, -1, 1)
	y := randF64(rng, n, -1, 1)
	a32 := to32(a)
	forEach(b, func(v Variant) {
		b.Run(fmt.Sprintf("%v/dot64", v), func(b *testing.B) {
			for b.Loop() {
				Dot64(a, y)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
		b.Run(fmt.Sprintf("%v/axpy64", v), func(b *testing.B) {
			for b.Loop() {
				Axpy64(1e-9, a, y)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
		b.Run(fmt.Sprintf("%v/dot32", v), func(b *testing.B) {
			for b.Loop() {
				Dot32(a32, y)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	})
}

// BenchmarkPeakFMA measures the float64 FMA throughput of each vector
// width (float32 doubles it): the FLOP limit the kernels are held to.
func BenchmarkPeakFMA(b *testing.B) {
	for _, v := range Available() {
		if v == Generic {
			continue
		}
		b.Run(v.String(), func(b *testing.B) {
			flops := 0
			for b.Loop() {
				flops += PeakFMA(v, 1000)
			}
			b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkKernelDist measures the fused Gram + Gaussian kernel on a
// 64 × 256 block (L2-resident output).
func BenchmarkKernelDist(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, m, d = 64, 256, 28
	x := randF64(rng, rows*d, -1, 1)
	c := randF64(rng, m*d, -1, 1)
	xn := make([]float64, rows)
	Norms64Generic(xn, x, rows, d)
	cp, mp := pack64(c, m, d)
	cn := make([]float64, mp)
	Norms64Generic(cn, c, m, d)
	x32, c32 := to32(x), to32(c)
	xn32 := make([]float32, rows)
	Norms32Generic(xn32, x32, rows, d)
	cp32, mp32 := pack32(c32, m, d)
	cn32 := make([]float32, mp32)
	Norms32Generic(cn32, c32, m, d)
	forEach(b, func(v Variant) {
		for _, name := range []string{"gaussian", "matern52"} {
			p := distParams[name]
			b.Run(fmt.Sprintf("%v/f64/%s", v, name), func(b *testing.B) {
				dst := make([]float64, rows*mp)
				for b.Loop() {
					KernelDist64(dst, mp, x, xn, rows, d, cp, cn, mp, p)
				}
				b.ReportMetric(float64(rows*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
			b.Run(fmt.Sprintf("%v/f32/%s", v, name), func(b *testing.B) {
				dst := make([]float32, rows*mp32)
				for b.Loop() {
					KernelDist32(dst, mp32, x32, xn32, rows, d, cp32, cn32, mp32, p)
				}
				b.ReportMetric(float64(rows*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		}
	})
}
