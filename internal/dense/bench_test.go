package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

var benchSizes = []int{1000, 2000, 5000, 10000}

// kernelMatrix returns K + 1e-3·I in the upper triangle of a dense n×n
// slice, K the Gaussian kernel of n random points in 5 dimensions: an SPD
// matrix shaped like FALKON's K_MM + εM I.
func kernelMatrix(n int) []float64 {
	rnd := rand.New(rand.NewPCG(uint64(n), 1))
	const d = 5
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rnd.NormFloat64()
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			var s float64
			for p := 0; p < d; p++ {
				t := x[i*d+p] - x[j*d+p]
				s += t * t
			}
			a[i*n+j] = math.Exp(-s / (2 * d))
		}
		a[i*n+i] += 1e-3
	}
	return a
}

// gflops reports the rate against wall time and, because the benchmark
// machine is shared, against the CPU time the process used (summed over
// threads: with W busy workers, GFLOP/cpu-s × W ≈ GFLOP/s on an idle
// machine). Call startCPU before b.Loop.
func gflops(b *testing.B, flops float64, cpu0 time.Duration) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if d := cpuTime() - cpu0; d > 0 {
		b.ReportMetric(flops*float64(b.N)/d.Seconds()/1e9, "GFLOP/cpu-s")
	}
}

// BenchmarkKernel runs each micro-kernel on operands that stay in L1: the
// kernel's peak, the ceiling for everything else.
func BenchmarkKernel(b *testing.B) {
	for _, k := range kernels() {
		b.Run(k.name, func(b *testing.B) {
			const kc = 256
			rnd := rand.New(rand.NewPCG(1, 1))
			a := randMat(rnd, k.mr*kc, 1, 1)
			bb := randMat(rnd, k.nr*kc, 1, 1)
			c := make([]float64, k.mr*k.nr)
			cpu0 := cpuTime()
			for b.Loop() {
				k.fn(kc, a, bb, c, k.nr)
			}
			gflops(b, 2*kc*float64(k.mr*k.nr), cpu0)
		})
	}
}

// BenchmarkKernel32 is BenchmarkKernel for the float32 micro-kernels.
func BenchmarkKernel32(b *testing.B) {
	for _, k := range kernels32() {
		b.Run(k.name, func(b *testing.B) {
			const kc = 256
			rnd := rand.New(rand.NewPCG(1, 1))
			a := to32(randMat(rnd, k.mr*kc, 1, 1))
			bb := to32(randMat(rnd, k.nr*kc, 1, 1))
			c := make([]float32, k.mr*k.nr)
			cpu0 := cpuTime()
			for b.Loop() {
				k.fn(kc, a, bb, c, k.nr)
			}
			gflops(b, 2*kc*float64(k.mr*k.nr), cpu0)
		})
	}
}

// to32 rounds x to float32.
func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// BenchmarkCholesky compares Cholesky with gonum's mat.Cholesky (n³/3
// flops). gonum takes minutes at M = 10000; select it with -bench.
func BenchmarkCholesky(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range benchSizes {
		a := kernelMatrix(n)
		w := make([]float64, len(a))
		flops := float64(n) * float64(n) * float64(n) / 3
		b.Run(fmt.Sprintf("impl=dense/M=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				b.StopTimer()
				copy(w, a)
				b.StartTimer()
				if ok, _ := Cholesky(w, n, n, workers); !ok {
					b.Fatal("not PD")
				}
			}
			gflops(b, flops, cpu0)
		})
		b.Run(fmt.Sprintf("impl=gonum/M=%d", n), func(b *testing.B) {
			s := mat.NewSymDense(n, w)
			var ch mat.Cholesky
			cpu0 := cpuTime()
			for b.Loop() {
				b.StopTimer()
				copy(w, a)
				b.StartTimer()
				if !ch.Factorize(s) {
					b.Fatal("not PD")
				}
			}
			gflops(b, flops, cpu0)
		})
	}
}

// BenchmarkUUt compares UUt (n³/3 flops) with gonum's Dtrmm on a copy of U,
// the cheapest way to form U Uᵀ through gonum.
func BenchmarkUUt(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range benchSizes {
		u := kernelMatrix(n)
		Cholesky(u, n, n, workers)
		c := make([]float64, n*n)
		flops := float64(n) * float64(n) * float64(n) / 3
		b.Run(fmt.Sprintf("impl=dense/M=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				UUt(u, n, n, 1, c, n, workers)
			}
			gflops(b, flops, cpu0)
		})
		b.Run(fmt.Sprintf("impl=gonum/M=%d", n), func(b *testing.B) {
			if n > 5000 {
				b.Skip("gonum's Dtrmm runs below 1 GFLOP/s here: about 8 minutes at M = 10000")
			}
			cpu0 := cpuTime()
			for b.Loop() {
				b.StopTimer()
				for i := 0; i < n; i++ {
					clear(c[i*n : i*n+i])
					copy(c[i*n+i:i*n+n], u[i*n+i:i*n+n])
				}
				b.StartTimer()
				// C = U, then C = C·Uᵀ: full n×n result, n³/3 flops.
				blas64.Implementation().Dtrmm(blas.Right, blas.Upper, blas.Trans, blas.NonUnit, n, n, 1, u, n, c, n)
			}
			gflops(b, flops, cpu0)
		})
	}
}

// BenchmarkSolveUpper times U X = B and Uᵀ X = B (n²·k flops) for k = 1 and
// 10 right-hand sides against gonum's Dtrsm.
func BenchmarkSolveUpper(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range benchSizes {
		u := kernelMatrix(n)
		Cholesky(u, n, n, workers)
		for _, k := range []int{1, 10} {
			rhs := make([]float64, n*k)
			for i := range rhs {
				rhs[i] = 1
			}
			x := make([]float64, n*k)
			flops := float64(n) * float64(n) * float64(k)
			for _, tr := range []bool{false, true} {
				b.Run(fmt.Sprintf("impl=dense/T=%v/k=%d/M=%d", tr, k, n), func(b *testing.B) {
					cpu0 := cpuTime()
					for b.Loop() {
						copy(x, rhs)
						if tr {
							SolveUpperT(u, n, n, x, k, k, workers)
						} else {
							SolveUpper(u, n, n, x, k, k, workers)
						}
					}
					gflops(b, flops, cpu0)
				})
				b.Run(fmt.Sprintf("impl=gonum/T=%v/k=%d/M=%d", tr, k, n), func(b *testing.B) {
					cpu0 := cpuTime()
					for b.Loop() {
						copy(x, rhs)
						blas64.Implementation().Dtrsm(blas.Left, blas.Upper, trans(tr), blas.NonUnit, n, k, 1, u, n, x, k)
					}
					gflops(b, flops, cpu0)
				})
			}
		}
	}
}

// BenchmarkGemm times the square GEMM at the micro-kernel's full speed.
func BenchmarkGemm(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range []int{512, 2048} {
		rnd := rand.New(rand.NewPCG(1, 1))
		a := randMat(rnd, n, n, n)
		bm := randMat(rnd, n, n, n)
		c := make([]float64, n*n)
		for _, w := range []int{1, workers} {
			b.Run(fmt.Sprintf("kernel=%s/workers=%d/n=%d", Kernel(), w, n), func(b *testing.B) {
				cpu0 := cpuTime()
				for b.Loop() {
					Gemm(true, false, n, n, n, 1, a, n, bm, n, c, n, w)
				}
				gflops(b, 2*float64(n)*float64(n)*float64(n), cpu0)
			})
		}
	}
}

// BenchmarkGemm32 is BenchmarkGemm for the float32 driver and kernel
// (C += AᵀB, as in Cholesky's trailing update).
func BenchmarkGemm32(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range []int{512, 2048, 4096} {
		rnd := rand.New(rand.NewPCG(1, 1))
		a := to32(randMat(rnd, n, n, n))
		bm := to32(randMat(rnd, n, n, n))
		c := make([]float32, n*n)
		hugePages(c)
		for _, w := range []int{1, workers} {
			b.Run(fmt.Sprintf("kernel=%s/workers=%d/n=%d", Kernel32(), w, n), func(b *testing.B) {
				ws := newWorkspace(best32, w)
				defer ws.release()
				cpu0 := cpuTime()
				for b.Loop() {
					gemm(ws, &gemmArgs[float32]{m: n, n: n, k: n, alpha: 1, a: a, lda: n, tA: true, b: bm, ldb: n, c: c, ldc: n}, ws.s)
				}
				gflops(b, 2*float64(n)*float64(n)*float64(n), cpu0)
			})
		}
	}
}

// BenchmarkPreconditioner times FALKON's set-up, the target of this
// package: T = chol(K), S = T Tᵀ/M + λI, A = chol(S) (n³ flops in all).
func BenchmarkPreconditioner(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range benchSizes {
		k := kernelMatrix(n)
		t := make([]float64, len(k))
		s := make([]float64, len(k))
		b.Run(fmt.Sprintf("impl=dense/M=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				b.StopTimer()
				copy(t, k)
				b.StartTimer()
				if ok, _ := Cholesky(t, n, n, workers); !ok {
					b.Fatal("K not PD")
				}
				UUt(t, n, n, 1/float64(n), s, n, workers)
				for i := 0; i < n; i++ {
					s[i*n+i] += 1e-6
				}
				if ok, _ := Cholesky(s, n, n, workers); !ok {
					b.Fatal("S not PD")
				}
			}
			gflops(b, float64(n)*float64(n)*float64(n), cpu0)
		})
	}
}

// BenchmarkPacked times FALKON's set-up on the one-buffer layout of
// package precond (T = chol(K) upper, moved to the lower triangle,
// S = T Tᵀ/M + λI upper, A = chol(S) upper; n³ flops), in float64 and in
// float32 storage. Compare with BenchmarkPreconditioner (two buffers) and
// testdata/lapack_bench.py.
func BenchmarkPacked(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range benchSizes {
		k := kernelMatrix(n)
		b.Run(fmt.Sprintf("prec=float64/M=%d", n), func(b *testing.B) {
			a := make([]float64, len(k))
			hugePages(a)
			benchPacked(b, k, a, n, workers)
		})
		b.Run(fmt.Sprintf("prec=float32/M=%d", n), func(b *testing.B) {
			a := make([]float32, len(k))
			hugePages(a)
			benchPacked(b, k, a, n, workers)
		})
	}
}

// BenchmarkOps32 times the float32 building blocks against LAPACK's
// single-precision routines in testdata/lapack_bench.py (--ops
// chol,lauum,syrk,trsmk --dtype float32): op=potrf Cholesky (spotrf, n³/3
// flops), op=lauum U Uᵀ (slauum, n³/3), op=syrk the strict upper triangle
// of X Xᵀ for X n × n/4 (ssyrk, n²·n/4), op=trsm Uᵀ X = B for B
// n × n/4 (strsm, n²·n/4; the recursive float32 solve of Cholesky's
// panels). Matrices are backed by huge pages, as package precond's are.
func BenchmarkOps32(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for _, n := range benchSizes {
		k := to32(kernelMatrix(n))
		a := make([]float32, n*n)
		hugePages(a)
		u := append([]float32(nil), k...)
		if ok, _ := Cholesky(u, n, n, workers); !ok {
			b.Fatal("not PD")
		}
		nf := float64(n)
		b.Run(fmt.Sprintf("op=potrf/M=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				b.StopTimer()
				copy(a, k)
				b.StartTimer()
				if ok, _ := Cholesky(a, n, n, workers); !ok {
					b.Fatal("not PD")
				}
			}
			gflops(b, nf*nf*nf/3, cpu0)
		})
		b.Run(fmt.Sprintf("op=lauum/M=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				UUt(u, n, n, 1, a, n, workers)
			}
			gflops(b, nf*nf*nf/3, cpu0)
		})
		q := n / 4
		b.Run(fmt.Sprintf("op=syrk/M=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				SyrkStrictUpper(k, n, q, n, 1, a, n, workers)
			}
			gflops(b, nf*nf*float64(q), cpu0)
		})
		b.Run(fmt.Sprintf("op=trsm/M=%d", n), func(b *testing.B) {
			ws := newWorkspace(best32, workers)
			defer ws.release()
			cpu0 := cpuTime()
			for b.Loop() {
				b.StopTimer()
				for i := range n {
					copy(a[i*n:i*n+q], k[i*n:i*n+q])
				}
				b.StartTimer()
				trsmPar(ws, true, u, n, n, a, q, n, workers)
			}
			gflops(b, nf*nf*float64(q), cpu0)
		})
	}
}

func benchPacked[E Float](b *testing.B, k []float64, a []E, n, workers int) {
	cpu0 := cpuTime()
	for b.Loop() {
		b.StopTimer()
		for i, v := range k {
			a[i] = E(v)
		}
		b.StartTimer()
		if _, ok := packedPrecond(bestSet, a, n, n, 1/float64(n), 1e-6, workers); !ok {
			b.Fatal("not PD")
		}
	}
	gflops(b, float64(n)*float64(n)*float64(n), cpu0)
}

// BenchmarkTransposeUpper times the move of T to the lower triangle in
// float32 (n²/2 elements), on huge pages.
func BenchmarkTransposeUpper(b *testing.B) {
	for _, n := range []int{2000, 10000} {
		a := make([]float32, n*n)
		hugePages(a)
		b.Run(fmt.Sprintf("M=%d", n), func(b *testing.B) {
			for b.Loop() {
				TransposeUpper(a, n, n)
			}
			b.ReportMetric(float64(n)*float64(n)/2*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	}
}
