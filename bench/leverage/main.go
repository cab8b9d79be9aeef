// Command leverage compares uniform and leverage-score centre sampling on
// data of strongly non-uniform density: test RMSE against the number of
// centres M, both schemes fitted on the same data with the same kernel,
// λ and iterations.
//
//	go run ./bench/leverage [-n 100000] [-dense 0.95]
//
// The data (2-D): a fraction -dense of the rows sits in a tight blob at
// the origin, where the target is constant; the rest is spread uniformly
// over [-3, 3]², where y = sin(2x₁)cos(2x₂) varies on the kernel's scale.
// Uniform sampling spends most centres on the blob; leverage sampling
// spends them where the function needs them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

func mixture(n int, dense float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x = make([]float64, 2*n)
	y = make([]float64, n)
	for i := range n {
		if rng.Float64() < dense {
			x[2*i], x[2*i+1] = 0.05*rng.NormFloat64(), 0.05*rng.NormFloat64()
			y[i] = 1
		} else {
			a, b := 6*rng.Float64()-3, 6*rng.Float64()-3
			x[2*i], x[2*i+1] = a, b
			y[i] = math.Sin(2*a) * math.Cos(2*b)
		}
		y[i] += 0.05 * rng.NormFloat64()
	}
	return x, y
}

func main() {
	n := flag.Int("n", 100000, "training rows")
	dense := flag.Float64("dense", 0.95, "fraction of rows in the dense blob")
	seeds := flag.Int("seeds", 3, "repetitions (different seeds) per point")
	flag.Parse()
	x, y := mixture(*n, *dense, 1)
	xt, yt := mixture(20000, *dense, 2)
	src := stream.NewMemSource(x, 2, y, 1, 8192)
	test := stream.NewMemSource(xt, 2, yt, 1, 8192)
	fmt.Printf("n = %d, dense fraction %.2f, Gaussian σ = 0.3, λ = 1e-6, 20 iterations, test RMSE (noise 0.05) mean over %d seeds\n\n", *n, *dense, *seeds)
	fmt.Println("| M | uniform RMSE | leverage RMSE | leverage distinct centres | leverage fit s |")
	fmt.Println("|---|---|---|---|---|")
	for _, m := range []int{50, 100, 200, 400, 800, 1600} {
		var ru, rl, dist, secs float64
		for s := range *seeds {
			cfg := ooc.Config{Centers: m, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3}, Lambda: 1e-6,
				Seed: uint64(s), NoStandardize: true}
			rmse := func(c ooc.Config) (float64, *ooc.Model) {
				mdl, err := ooc.Fit(context.Background(), src, c, ooc.RunOptions{})
				if err != nil {
					log.Fatal(err)
				}
				ev, err := mdl.Evaluate(context.Background(), test, ooc.PredictOptions{})
				if err != nil {
					log.Fatal(err)
				}
				return *ev.RMSE, mdl
			}
			u, _ := rmse(cfg)
			cfg.Sampling = ooc.SamplingLeverage
			start := time.Now()
			l, mdl := rmse(cfg)
			secs += time.Since(start).Seconds()
			ru += u
			rl += l
			dist += float64(mdl.M())
		}
		k := float64(*seeds)
		fmt.Printf("| %d | %.4f | %.4f | %.0f | %.2f |\n", m, ru/k, rl/k, dist/k, secs/k)
	}
}
