package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel/internal/tile"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// benchRows is the chunk size passed per call, as the solver does.
const benchRows = 4096

var benchSizes = []struct{ m, d int }{{1000, 20}, {1000, 28}, {2000, 28}, {10000, 20}, {10000, 28}}

// reportElems reports kernel elements and flops per second of wall time
// and, as "cpu-Gelem/s", per second of process CPU time (cpu0 is
// cpuSeconds() before the loop), which on a busy shared machine is the
// steadier of the two.
func reportElems(b *testing.B, elems float64, flopsPerElem int, cpu0 float64) {
	sec := b.Elapsed().Seconds()
	if sec == 0 {
		return
	}
	ge := elems * float64(b.N) / sec / 1e9
	b.ReportMetric(ge, "Gelem/s")
	b.ReportMetric(ge*float64(flopsPerElem), "GFLOP/s")
	if cpu := cpuSeconds() - cpu0; cpu0 > 0 && cpu > 0 {
		b.ReportMetric(elems*float64(b.N)/cpu/1e9, "cpu-Gelem/s")
	}
}

// BenchmarkKtKvAdd measures the hot loop: w += Kᵀ(K u + v) for a chunk of
// benchRows rows, Gaussian kernel, k = 1, one goroutine.
func BenchmarkKtKvAdd(b *testing.B) {
	for _, p := range precisions {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("%v/M=%d/d=%d", p, sz.m, sz.d), func(b *testing.B) {
				benchKtKv(b, Kernel{Kind: Gaussian, Sigma: 3}, p, sz.m, sz.d, 1)
			})
		}
	}
}

// BenchmarkKinds measures every kind at M = 2000, d = 28.
func BenchmarkKinds(b *testing.B) {
	for _, p := range precisions {
		for _, k := range []Kernel{
			{Kind: Gaussian, Sigma: 3}, {Kind: Laplacian, Sigma: 3}, {Kind: Matern32, Sigma: 3},
			{Kind: Matern52, Sigma: 3}, {Kind: Linear}, {Kind: Polynomial, Degree: 3, Coef0: 1},
		} {
			b.Run(fmt.Sprintf("%v/%s", p, k.Kind), func(b *testing.B) {
				benchKtKv(b, k, p, 2000, 28, 1)
			})
		}
	}
}

// BenchmarkVariants measures KtKvAdd (Gaussian, M = 2000, d = 28) on each
// instruction-set variant this CPU can run, the pure-Go loops included.
func BenchmarkVariants(b *testing.B) {
	def := tile.Selected()
	defer tile.Use(def)
	for _, v := range tile.Available() {
		for _, p := range precisions {
			b.Run(fmt.Sprintf("%v/%v", v, p), func(b *testing.B) {
				tile.Use(v)
				benchKtKv(b, Kernel{Kind: Gaussian, Sigma: 3}, p, 2000, 28, 1)
			})
		}
	}
}

// BenchmarkParallel runs KtKvAdd on every core (GOMAXPROCS goroutines, one
// workspace and w each, shared Centers), M = 10⁴, d = 28: the aggregate
// rate of a CG pass. Gelem/s is the total over the goroutines.
func BenchmarkParallel(b *testing.B) {
	const m, d = 10000, 28
	for _, p := range precisions {
		b.Run(p.String(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			x, cen := randMat(rng, benchRows, d), randMat(rng, m, d)
			u := randMat(rng, m, 1)
			cs := NewCenters(Kernel{Kind: Gaussian, Sigma: 3}, cen, m, d, p)
			b.ReportAllocs()
			cpu0 := cpuSeconds()
			b.RunParallel(func(pb *testing.PB) {
				ws := cs.NewWorkspace()
				w := make([]float64, m)
				for pb.Next() {
					cs.KtKvAdd(ws, w, x, benchRows, u, nil, 1)
				}
			})
			reportElems(b, float64(benchRows*m), cs.Kernel().FlopsPerElement(d, 1), cpu0)
		})
	}
}

// BenchmarkOutputs measures k = 3 outputs.
func BenchmarkOutputs(b *testing.B) {
	for _, p := range precisions {
		b.Run(fmt.Sprintf("%v/M=2000/d=28/k=3", p), func(b *testing.B) {
			benchKtKv(b, Kernel{Kind: Gaussian, Sigma: 3}, p, 2000, 28, 3)
		})
	}
}

func benchKtKv(b *testing.B, k Kernel, p Precision, m, d, nk int) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, cen := randMat(rng, benchRows, d), randMat(rng, m, d)
	u, v, w := randMat(rng, m, nk), randMat(rng, benchRows, nk), make([]float64, m*nk)
	cs := NewCenters(k, cen, m, d, p)
	ws := cs.NewWorkspace()
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	for b.Loop() {
		cs.KtKvAdd(ws, w, x, benchRows, u, v, nk)
	}
	reportElems(b, float64(benchRows*m), k.FlopsPerElement(d, nk), cpu0)
}

// BenchmarkReference measures the unfused reference the fast path
// replaces: per 64-row block, gonum's Dgemm for X_b Cᵀ, math.Exp, and two
// gonum Dgemv. Its Gelem/s divides the fused path's for the speed-up.
func BenchmarkReference(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("gonum/M=%d/d=%d", sz.m, sz.d), func(b *testing.B) {
			const blk = 64
			m, d := sz.m, sz.d
			rng := rand.New(rand.NewPCG(1, 1))
			x, cen := randMat(rng, benchRows, d), randMat(rng, m, d)
			u, v, w := randMat(rng, m, 1), randMat(rng, benchRows, 1), make([]float64, m)
			cn := make([]float64, m)
			for j := range cn {
				for _, c := range cen[j*d : (j+1)*d] {
					cn[j] += c * c
				}
			}
			kb := make([]float64, blk*m)
			s := make([]float64, blk)
			const sigma = 3.0
			g := -1 / (2 * sigma * sigma)
			b.ReportAllocs()
			cpu0 := cpuSeconds()
			for b.Loop() {
				for r0 := 0; r0 < benchRows; r0 += blk {
					xb := blas64.General{Rows: blk, Cols: d, Stride: d, Data: x[r0*d : (r0+blk)*d]}
					cm := blas64.General{Rows: m, Cols: d, Stride: d, Data: cen}
					kg := blas64.General{Rows: blk, Cols: m, Stride: m, Data: kb}
					blas64.Gemm(blas.NoTrans, blas.Trans, 1, xb, cm, 0, kg)
					for i := 0; i < blk; i++ {
						xn := 0.0
						for _, xv := range x[(r0+i)*d : (r0+i+1)*d] {
							xn += xv * xv
						}
						row := kb[i*m : (i+1)*m]
						for j, dot := range row {
							row[j] = math.Exp(g * max(xn+cn[j]-2*dot, 0))
						}
					}
					copy(s, v[r0:r0+blk])
					blas64.Gemv(blas.NoTrans, 1, kg, blas64.Vector{N: m, Inc: 1, Data: u}, 1, blas64.Vector{N: blk, Inc: 1, Data: s})
					blas64.Gemv(blas.Trans, 1, kg, blas64.Vector{N: blk, Inc: 1, Data: s}, 1, blas64.Vector{N: m, Inc: 1, Data: w})
				}
			}
			reportElems(b, float64(benchRows*m), Kernel{Kind: Gaussian, Sigma: 1}.FlopsPerElement(d, 1), cpu0)
		})
	}
}

// BenchmarkTileShape sweeps the cache budgets that choose the tile shape
// (BENCH_TILE=1 to run; it is for tuning, not for the record).
func BenchmarkTileShape(b *testing.B) {
	if os.Getenv("BENCH_TILE") == "" {
		b.Skip("set BENCH_TILE=1")
	}
	defer func(a, c, d, e int) { tileBudget, blockBudget, minTileRows, maxTileRows = a, c, d, e }(tileBudget, blockBudget, minTileRows, maxTileRows)
	for _, p := range precisions {
		for _, m := range []int{1000, 10000} {
			for _, rows := range []int{8, 16, 32, 64} {
				for _, blk := range []int{32 << 10, 128 << 10, 512 << 10} {
					minTileRows, maxTileRows, tileBudget, blockBudget = rows, rows, 0, blk
					b.Run(fmt.Sprintf("%v/M=%d/rows=%d/block=%dK", p, m, rows, blk>>10), func(b *testing.B) {
						benchKtKv(b, Kernel{Kind: Gaussian, Sigma: 3}, p, m, 28, 1)
					})
				}
			}
		}
	}
}

// BenchmarkShapes measures KtKvAdd (Gaussian, k = 1, one goroutine) at
// M = 10⁴ and the feature counts of the paper's shapes (susy d = 18, higgs
// 28, msd 90) in float32 and BF16 (three-term split, and one term for
// comparison; BF16 is Float32 where the CPU has no AMX).
func BenchmarkShapes(b *testing.B) {
	defer func(t tile.BF16Terms) { bf16Terms = t }(bf16Terms)
	for _, d := range []int{18, 28, 90} {
		for _, c := range []struct {
			name  string
			p     Precision
			terms tile.BF16Terms
		}{{"float32", Float32, 3}, {"bf16", BF16, 3}, {"bf16x1", BF16, 1}} {
			b.Run(fmt.Sprintf("%s/M=10000/d=%d", c.name, d), func(b *testing.B) {
				bf16Terms = c.terms
				benchKtKv(b, Kernel{Kind: Gaussian, Sigma: 0.5 * math.Sqrt(float64(d))}, c.p, 10000, d, 1)
			})
		}
	}
}

// BenchmarkKvToRows: a prediction call of 1 to 4 rows at M = 10⁴, d =
// 28 (KvWeightsTo, the model's path), with a tail of 1 to 3 rows taken
// row by row (tail=3) or padded to the micro-tile (tail=0): the
// measurement behind rowTail. ns/row shows what a row costs.
func BenchmarkKvToRows(b *testing.B) {
	defer func(r int) { rowTail = r }(rowTail)
	const m, d = 10000, 28
	rng := rand.New(rand.NewPCG(1, 1))
	x, cen, u := randMat(rng, 4, d), randMat(rng, m, d), randMat(rng, m, 1)
	for _, p := range []Precision{Float64, Float32} {
		cs := NewCenters(Kernel{Kind: Gaussian, Sigma: 3}, cen, m, d, p)
		w := cs.NewWeights(u, 1)
		ws := cs.NewWorkspace()
		out := make([]float64, 4)
		for _, rows := range []int{1, 2, 3, 4} {
			for _, tail := range []int{0, tile.MR - 1} {
				if rows == tile.MR && tail > 0 {
					continue
				}
				b.Run(fmt.Sprintf("%v/rows=%d/tail=%d", p, rows, tail), func(b *testing.B) {
					rowTail = tail
					b.ReportAllocs()
					for b.Loop() {
						cs.KvWeightsTo(ws, out, x, rows, w)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
				})
			}
		}
	}
}

// BenchmarkTileShapeBF16 sweeps BF16's tile rows and column blocks at
// M = 10⁴, d = 18 and 90 (BENCH_TILE=1 to run; the measurement behind
// bf16TileRows).
func BenchmarkTileShapeBF16(b *testing.B) {
	if os.Getenv("BENCH_TILE") == "" {
		b.Skip("set BENCH_TILE=1")
	}
	defer func(a, c, d, e, f int) {
		tileBudget, blockBudget, bf16TileRows, maxTileRows, minTileRows = a, c, d, e, f
	}(tileBudget, blockBudget, bf16TileRows, maxTileRows, minTileRows)
	for _, d := range []int{18, 90} {
		for _, rows := range []int{16, 32, 48, 64} {
			for _, blk := range []int{32 << 10, 64 << 10, 128 << 10} {
				minTileRows, maxTileRows, bf16TileRows, tileBudget, blockBudget = rows, rows, rows, 0, blk
				b.Run(fmt.Sprintf("d=%d/rows=%d/block=%dK", d, rows, blk>>10), func(b *testing.B) {
					benchKtKv(b, Kernel{Kind: Gaussian, Sigma: 0.5 * math.Sqrt(float64(d))}, BF16, 10000, d, 1)
				})
			}
		}
	}
}
