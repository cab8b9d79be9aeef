// Command leverage compares uniform and leverage-score centre sampling:
// test RMSE against the number of centres M, both schemes fitted on the
// same data with the same kernel, λ and iterations, mean over -seeds.
//
//	go run ./bench/leverage [-data mixture,ordinary] [-n 100000] [-dense 0.95]
//
// mixture (2-D): a fraction -dense of the rows sits in a tight blob at
// the origin, where the target is constant; the rest is spread uniformly
// over [-3, 3]², where y = sin(2x₁)cos(2x₂) varies on the kernel's scale.
// Uniform sampling spends most centres on the blob; leverage sampling
// spends them where the function needs them.
//
// ordinary (12-D, like a held-out table): six Gaussian columns, three
// uniform rounded to float32, one small integer, one log-normal and one
// pure-noise column; y smooth in most of them plus noise 0.3 (the
// generator of ooc.TestLeverageTiesUniformOnOrdinaryData). Standardised,
// Gaussian σ = √12, λ = 1e-6, as in issue #16. There is no region of
// uneven density to find: leverage sampling must tie.
//
// With -tune, σ and λ are not fixed: ooc.Tune (what `falkon-ooc tune`
// runs, with its default grid σ = √d × {1/4, 1/2, 1, 2, 4} and λ =
// 1e-8 … 1e-3, six values, log-spaced, ooc.DefaultValFraction of the rows
// held out) picks
// them on each data set's training rows at M = -tune-m with uniform
// sampling and seed 0, and both schemes are then compared at every M with
// the chosen σ and λ:
//
//	go run ./bench/leverage -tune -seeds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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

func ordinary(n int, seed uint64) (x, y []float64) {
	const d = 12
	rng := rand.New(rand.NewPCG(seed, 12))
	x = make([]float64, n*d)
	y = make([]float64, n)
	for i := range n {
		r := x[i*d : (i+1)*d]
		for j := range 6 {
			r[j] = rng.NormFloat64()
		}
		for j := 6; j < 9; j++ {
			r[j] = float64(float32(rng.Float64()))
		}
		r[9] = float64(rng.IntN(5))
		r[10] = math.Exp(rng.NormFloat64())
		r[11] = rng.NormFloat64()
		y[i] = math.Sin(r[0]) + 0.5*r[1]*r[2] + 0.3*r[3] - 0.4*r[4]*r[4] + math.Cos(3*r[6]) + r[7]*r[8] +
			0.2*r[9] + 0.5*math.Log1p(r[10]) + 0.3*rng.NormFloat64()
	}
	return x, y
}

func main() {
	sets := flag.String("data", "mixture,ordinary", "data sets, comma-separated: mixture, ordinary")
	n := flag.Int("n", 100000, "training rows")
	dense := flag.Float64("dense", 0.95, "mixture: fraction of rows in the dense blob")
	seeds := flag.Int("seeds", 3, "repetitions (different seeds) per point")
	ms := flag.String("m", "", "values of M, comma-separated (default: 50,…,1600 for mixture; 100,250,500,1000 for ordinary)")
	tune := flag.Bool("tune", false, "choose σ and λ with ooc.Tune (the CLI's default grid) instead of the fixed ones")
	tuneM := flag.Int("tune-m", 0, "with -tune: M of the search (0: 400 for mixture, 500 for ordinary)")
	flag.Parse()
	for _, set := range strings.Split(*sets, ",") {
		var x, y, xt, yt []float64
		var d int
		var cfg ooc.Config
		var header string
		mlist := []int{50, 100, 200, 400, 800, 1600}
		switch set {
		case "mixture":
			d = 2
			x, y = mixture(*n, *dense, 1)
			xt, yt = mixture(20000, *dense, 2)
			cfg = ooc.Config{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3}, Lambda: 1e-6, NoStandardize: true}
			header = fmt.Sprintf("mixture: n = %d, dense fraction %.2f, Gaussian σ = %%.4g, λ = %%g, 20 iterations, no standardisation, test RMSE (noise 0.05) on 20 000 rows, mean over %d seeds\n\n", *n, *dense, *seeds)
		case "ordinary":
			d = 12
			x, y = ordinary(*n, 1)
			xt, yt = ordinary(20000, 2)
			mlist = []int{100, 250, 500, 1000}
			cfg = ooc.Config{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(12)}, Lambda: 1e-6}
			header = fmt.Sprintf("ordinary: n = %d, d = 12, standardised, Gaussian σ = %%.4g, λ = %%g, 20 iterations, test RMSE (noise 0.3) on 20 000 rows, mean over %d seeds\n\n", *n, *seeds)
		default:
			log.Fatalf("unknown data set %q", set)
		}
		if *ms != "" {
			mlist = nil
			for _, v := range strings.Split(*ms, ",") {
				m, err := strconv.Atoi(v)
				if err != nil {
					log.Fatal(err)
				}
				mlist = append(mlist, m)
			}
		}
		if *tune {
			m := *tuneM
			if m == 0 {
				m = map[string]int{"mixture": 400, "ordinary": 500}[set]
			}
			cfg = tuned(x, y, d, cfg, m)
		}
		fmt.Printf(header, cfg.Kernel.Sigma, cfg.Lambda)
		run(x, y, xt, yt, d, cfg, mlist, *seeds)
	}
}

// tuned returns base with the σ and λ that ooc.Tune chooses on (x, y) at
// M = m, over the CLI's default grid, uniform sampling, seed 0.
func tuned(x, y []float64, d int, base ooc.Config, m int) ooc.Config {
	src := stream.NewMemSource(x, d, y, 1, 8192)
	s := math.Sqrt(float64(d))
	tc := ooc.TuneConfig{Base: base, Sigmas: []float64{s / 4, s / 2, s, 2 * s, 4 * s}}
	for i := range 6 { // the CLI's --lambda 1e-8:1e-3:6
		tc.Lambdas = append(tc.Lambdas, math.Pow(10, -8+float64(i)))
	}
	tc.Base.Centers, tc.Base.Seed, tc.Base.Sampling = m, 0, ooc.SamplingUniform
	start := time.Now()
	res, err := ooc.Tune(context.Background(), src, tc, ooc.RunOptions{})
	if err != nil {
		log.Fatal(err)
	}
	best := res.Candidates[res.Best]
	fmt.Printf("tune (M = %d, uniform, seed 0, σ ∈ √%d × {1/4, 1/2, 1, 2, 4}, λ ∈ 1e-8 … 1e-3, %d %% held out, %.0f s): σ = %.4g, λ = %g, validation RMSE %.4f at iteration %d\n\n",
		m, d, int(math.Round(100*ooc.DefaultValFraction)), time.Since(start).Seconds(), best.Kernel.Sigma, best.Lambda, best.BestMetric, best.BestIteration)
	base.Kernel = best.Kernel
	base.Lambda = best.Lambda
	return base
}

func run(x, y, xt, yt []float64, d int, base ooc.Config, mlist []int, seeds int) {
	src := stream.NewMemSource(x, d, y, 1, 8192)
	test := stream.NewMemSource(xt, d, yt, 1, 8192)
	fmt.Println("| M | uniform RMSE | leverage RMSE | leverage ÷ uniform | worst seed ratio | λ_lev | uniform fit s | leverage fit s |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, m := range mlist {
		var ru, rl, lam, su, sl float64
		worst := 0.0
		for s := range seeds {
			cfg := base
			cfg.Centers, cfg.Seed = m, uint64(s)
			rmse := func(c ooc.Config) (float64, *ooc.Model, float64) {
				start := time.Now()
				mdl, err := ooc.Fit(context.Background(), src, c, ooc.RunOptions{})
				if err != nil {
					log.Fatal(err)
				}
				secs := time.Since(start).Seconds()
				ev, err := mdl.Evaluate(context.Background(), test, ooc.PredictOptions{})
				if err != nil {
					log.Fatal(err)
				}
				return *ev.RMSE, mdl, secs
			}
			u, _, tu := rmse(cfg)
			cfg.Sampling = ooc.SamplingLeverage
			l, mdl, tl := rmse(cfg)
			if mdl.M() != m {
				log.Fatalf("leverage drew %d distinct centres, want %d", mdl.M(), m)
			}
			ru += u
			rl += l
			su += tu
			sl += tl
			lam += mdl.Training().LambdaLeverage
			worst = max(worst, l/u)
		}
		k := float64(seeds)
		fmt.Printf("| %d | %.4f | %.4f | %.4f | %.4f | %.3g | %.2f | %.2f |\n", m, ru/k, rl/k, rl/ru, worst, lam/k, su/k, sl/k)
	}
	fmt.Println()
}
