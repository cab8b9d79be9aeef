package tile

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Micro-benchmarks of the pieces on cache-resident data; "Gelem/s" counts
// kernel elements (one row × one centre), "cpu-" metrics divide by process
// CPU time rather than wall time (steadier on a shared machine).

// rate reports count/s of wall time as unit and of CPU time as "cpu-"+unit;
// cpu0 is cpuSeconds() before the loop.
func rate(b *testing.B, count float64, unit string, cpu0 float64) {
	n := count * float64(b.N)
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(n/sec, unit)
	}
	if cpu := cpuSeconds() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(n/cpu, "cpu-"+unit)
	}
}

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
				cpu0 := cpuSeconds()
				for b.Loop() {
					Gram64(dst, ld, x, rows, d, cp, mp)
				}
				rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
				rate(b, float64(2*d*rows*m)/1e9, "GFLOP/s", cpu0)
			})
			b.Run(fmt.Sprintf("%v/f32/d=%d", v, d), func(b *testing.B) {
				ld := mp32 + 16
				dst := make([]float32, rows*ld)
				cpu0 := cpuSeconds()
				for b.Loop() {
					Gram32(dst, ld, x32, rows, d, cp32, mp32)
				}
				rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
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
				cpu0 := cpuSeconds()
				for b.Loop() {
					ApplyDist64(g, 3, cn, p)
				}
				rate(b, float64(n)/1e9, "Gelem/s", cpu0)
			})
			b.Run(fmt.Sprintf("%v/f32/%s", v, name), func(b *testing.B) {
				cpu0 := cpuSeconds()
				for b.Loop() {
					ApplyDist32(g32, 3, cn32, p)
				}
				rate(b, float64(n)/1e9, "Gelem/s", cpu0)
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
			cpu0 := cpuSeconds()
			for b.Loop() {
				Dot64(a, y)
			}
			rate(b, float64(n)/1e9, "Gelem/s", cpu0)
		})
		b.Run(fmt.Sprintf("%v/axpy64", v), func(b *testing.B) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				Axpy64(1e-9, a, y)
			}
			rate(b, float64(n)/1e9, "Gelem/s", cpu0)
		})
		b.Run(fmt.Sprintf("%v/dot32", v), func(b *testing.B) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				Dot32(a32, y)
			}
			rate(b, float64(n)/1e9, "Gelem/s", cpu0)
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
			flops := PeakFMA(v, 1000)
			cpu0 := cpuSeconds()
			for b.Loop() {
				PeakFMA(v, 1000)
			}
			rate(b, float64(flops)/1e9, "GFLOP/s", cpu0)
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
				cpu0 := cpuSeconds()
				for b.Loop() {
					KernelDist64(dst, mp, x, xn, rows, d, cp, cn, mp, p)
				}
				rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
			})
			b.Run(fmt.Sprintf("%v/f32/%s", v, name), func(b *testing.B) {
				dst := make([]float32, rows*mp32)
				cpu0 := cpuSeconds()
				for b.Loop() {
					KernelDist32(dst, mp32, x32, xn32, rows, d, cp32, cn32, mp32, p)
				}
				rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
			})
		}
	})
}

// BenchmarkGramBF16 measures the bfloat16 cross term alone (AMX when the
// CPU has it) on a 64-row × 512-centre block of kc chunks, against Gram32
// on the same block: Gelem/s counts dot products, GFLOP/s 2 flops per
// bfloat16 product (kc·32 a dot product) or per float32 feature.
func BenchmarkGramBF16(b *testing.B) {
	const rows, m = 64, 512
	for _, d := range []int{18, 28, 90} {
		rng := rand.New(rand.NewPCG(1, 2))
		x, c := to32(randF64(rng, rows*d, -1, 1)), to32(randF64(rng, m*d, -1, 1))
		for _, terms := range []BF16Terms{1, 3} {
			kc := terms.Chunks(d)
			a, pb := make([]uint16, rows*kc*KB), make([]uint16, kc*m*KB)
			PackRowsBF16(a, x, rows, d, terms)
			PackCentersBF16(pb, c, m, m, d, terms)
			dst := make([]float32, rows*m)
			b.Run(fmt.Sprintf("bf16x%d/d=%d", terms, d), func(b *testing.B) {
				cpu0 := cpuSeconds()
				for b.Loop() {
					GramBF16(dst, m, a, rows, kc, pb, m/NRB, 0, m)
				}
				rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
				rate(b, float64(rows*m*kc*KB*2)/1e9, "GFLOP/s", cpu0)
			})
		}
		cp, _ := pack32(c, m, d)
		dst := make([]float32, rows*m)
		b.Run(fmt.Sprintf("float32/d=%d", d), func(b *testing.B) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				Gram32(dst, m, x, rows, d, cp, m)
			}
			rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
			rate(b, float64(rows*m*d*2)/1e9, "GFLOP/s", cpu0)
		})
	}
}

// BenchmarkKernelDistBF16 measures the Gaussian kernel block from the
// three-term bfloat16 cross term, fused on the AMX unit (KernelDistBF16)
// and unfused (GramBF16, then ApplyDist32 row by row: the loop before
// the fusion), against the float32 fused kernel (KernelDist32), on a
// 64-row × 512-centre block (128 KiB of output, L2).
func BenchmarkKernelDistBF16(b *testing.B) {
	const rows, m = 64, 512
	p := distParams["gaussian"]
	for _, d := range []int{18, 28, 90} {
		rng := rand.New(rand.NewPCG(1, 2))
		x, c := to32(randF64(rng, rows*d, -1, 1)), to32(randF64(rng, m*d, -1, 1))
		xn, cn := make([]float32, rows), make([]float32, m)
		Norms32Generic(xn, x, rows, d)
		Norms32Generic(cn, c, m, d)
		kc := BF16Terms(3).Chunks(d)
		a, pb := make([]uint16, rows*kc*KB), make([]uint16, kc*m*KB)
		PackRowsBF16(a, x, rows, d, 3)
		PackCentersBF16(pb, c, m, m, d, 3)
		dst := make([]float32, rows*m)
		cp, _ := pack32(c, m, d)
		for _, name := range []string{"float32", "bf16", "bf16-unfused"} {
			b.Run(fmt.Sprintf("%s/d=%d", name, d), func(b *testing.B) {
				cpu0 := cpuSeconds()
				for b.Loop() {
					switch name {
					case "float32":
						KernelDist32(dst, m, x, xn, rows, d, cp, cn, m, p)
					case "bf16":
						KernelDistBF16(dst, m, a, rows, kc, pb, m/NRB, 0, m, xn, cn, p)
					default:
						GramBF16(dst, m, a, rows, kc, pb, m/NRB, 0, m)
						for i := 0; i < rows; i++ {
							ApplyDist32(dst[i*m:(i+1)*m], xn[i], cn, p)
						}
					}
				}
				rate(b, float64(rows*m)/1e9, "Gelem/s", cpu0)
			})
		}
	}
}
