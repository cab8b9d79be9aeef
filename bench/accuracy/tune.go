package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The -tune mode (bench/TUNE.md): on each regression data set, ooc.Tune
// over a σ × λ grid against the same grid fitted one point at a time with
// ooc.Fit, on the same training rows, judged on the same validation rows
// (stream.Holdout of the training part, as Tune holds them out), and both
// evaluated on the test part.

type tuneEnv struct {
	*env
	m, iters int
	sigmas   []float64
	lambdas  []float64
	ard      bool
}

type tuneRow struct {
	data                 string
	n, nVal, nTest, d, m int
	// tune
	tuneSecs, tuneTest float64
	tuneSigma, tuneLam float64
	tuneIter, passes   int
	// separate fits
	fitSecs, fitMin       float64 // mean and fastest
	bestTest              float64 // lowest test RMSE of the separate fits
	bestSigma, bestLam    float64
	valPickTest           float64 // test RMSE of the separate fit best on validation
	valPickSig, valPickLm float64
}

func (r tuneRow) String() string {
	return fmt.Sprintf("| %s | %d / %d / %d | %d | %d | %.4f (σ %g, λ %.0e, it %d) | %.4f (σ %g, λ %.0e) | %.4f (σ %g, λ %.0e) | %+.2f %% | %.1f | %.1f (%.1f–) | %.2f | %d |",
		r.data, r.n, r.nVal, r.nTest, r.d, r.m, r.tuneTest, r.tuneSigma, r.tuneLam, r.tuneIter,
		r.bestTest, r.bestSigma, r.bestLam, r.valPickTest, r.valPickSig, r.valPickLm,
		100*(r.tuneTest/r.bestTest-1), r.tuneSecs, r.fitSecs, r.fitMin, r.tuneSecs/r.fitSecs, r.passes)
}

const tuneHeader = "| data | n train / val / test | d | M | tune: test RMSE (pick) | best of the separate fits on test | separate fit best on validation: test | tune vs best | tune s | one fit s (mean, fastest) | tune / one fit | tune passes |\n|---|---|---|---|---|---|---|---|---|---|---|---|"

func runTuneBench(ctx context.Context, te *tuneEnv, ds *dataset) (*tuneRow, error) {
	train, test, err := ds.load(te.env)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	dir, err := os.MkdirTemp("", "falkon-tune-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tk := ds.tasks(te.env)[0]
	if tk.fixed != nil && len(ds.tasks(te.env)) > 1 {
		tk = ds.tasks(te.env)[1]
	}
	trs, err := makeStore(ctx, te.env, dir, "train", train, &tk)
	if err != nil {
		return nil, err
	}
	defer trs.Close()
	tes, err := makeStore(ctx, te.env, dir, "test", test, &tk)
	if err != nil {
		return nil, err
	}
	defer tes.Close()
	const valFrac = 0.1
	base := ooc.Config{Centers: te.m, Iterations: te.iters, Seed: te.seed, Task: tk.kind}
	run := ooc.RunOptions{Workers: te.workers}
	row := &tuneRow{data: ds.name, d: train.d(), nTest: test.n()}

	// Tune.
	t0 := time.Now()
	res, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac}, run)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	row.tuneSecs = time.Since(t0).Seconds()
	best := res.Candidates[res.Best]
	met, err := res.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
	if err != nil {
		return nil, err
	}
	row.n, row.nVal, row.m, row.passes = int(res.N), int(res.ValRows), res.M, res.Passes
	row.tuneTest, row.tuneSigma, row.tuneLam, row.tuneIter = *met.RMSE, best.Sigma, best.Lambda, best.BestIteration
	logf("%s: tune %.1f s, %d passes, pick σ=%g λ=%.0e (validation %.4f, iteration %d), test RMSE %.4f",
		ds.name, row.tuneSecs, res.Passes, best.Sigma, best.Lambda, best.BestMetric, best.BestIteration, row.tuneTest)
	for _, c := range res.Candidates {
		logf("%s:   tune σ=%g λ=%.0e: validation %.4f at iteration %d of %d (%s)", ds.name, c.Sigma, c.Lambda,
			c.BestMetric, c.BestIteration, c.Iterations, c.Stop)
	}

	// The same grid, one fit per point, on the same training rows.
	rest, held := stream.Holdout(trs, valFrac, te.seed)
	row.bestTest, row.fitMin = math.Inf(1), math.Inf(1)
	bestVal := math.Inf(1)
	var total float64
	for _, s := range te.sigmas {
		for _, l := range te.lambdas {
			cfg := base
			cfg.Kernel = kernel.Kernel{Kind: kernel.Gaussian, Sigma: s}
			cfg.Lambda = l
			t1 := time.Now()
			mdl, err := ooc.Fit(ctx, rest, cfg, run)
			if err != nil {
				return nil, fmt.Errorf("fit σ=%g λ=%g: %w", s, l, err)
			}
			secs := time.Since(t1).Seconds()
			total += secs
			row.fitMin = min(row.fitMin, secs)
			vm, err := mdl.Evaluate(ctx, held, ooc.PredictOptions{Workers: te.workers})
			if err != nil {
				return nil, err
			}
			tm, err := mdl.Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
			if err != nil {
				return nil, err
			}
			logf("%s: fit σ=%g λ=%.0e: %.1f s, validation %.4f, test %.4f", ds.name, s, l, secs, *vm.RMSE, *tm.RMSE)
			if *tm.RMSE < row.bestTest {
				row.bestTest, row.bestSigma, row.bestLam = *tm.RMSE, s, l
			}
			if *vm.RMSE < bestVal {
				bestVal, row.valPickTest, row.valPickSig, row.valPickLm = *vm.RMSE, *tm.RMSE, s, l
			}
		}
	}
	row.fitSecs = total / float64(len(te.sigmas)*len(te.lambdas))
	return row, nil
}

// tuneMain runs the -tune mode on the regression data sets chosen.
func tuneMain(ctx context.Context, te *tuneEnv, want map[string]bool) bool {
	if len(want) == 0 {
		for _, n := range []string{"protein", "kin40k", "elevators", "bike", "california"} {
			want[n] = true
		}
	}
	var rows []*tuneRow
	failed := false
	for _, ds := range datasets {
		if !want[ds.name] {
			continue
		}
		if miss := ds.missing(te.env); miss != "" {
			fmt.Fprintf(os.Stderr, "accuracy -tune: skip %s: %s not found\n", ds.name, miss)
			continue
		}
		if ts := ds.tasks(te.env); ts[len(ts)-1].kind != ooc.TaskRegression {
			fmt.Fprintf(os.Stderr, "accuracy -tune: skip %s: not a regression data set\n", ds.name)
			continue
		}
		logf("=== %s (tune)", ds.name)
		r, err := runTuneBench(ctx, te, ds)
		if err != nil {
			fmt.Fprintf(os.Stderr, "accuracy -tune: %s: %v\n", ds.name, err)
			failed = true
			if ctx.Err() != nil {
				break
			}
			continue
		}
		logf("%s", r)
		rows = append(rows, r)
	}
	g := func(v []float64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ", ")
	}
	fmt.Printf("Grid σ ∈ {%s} × λ ∈ {%s}, M = %d, %d iterations, validation = 10 %% of the training part (hash holdout, seed %d)\n\n",
		g(te.sigmas), g(te.lambdas), te.m, te.iters, te.seed)
	fmt.Println(tuneHeader)
	for _, r := range rows {
		fmt.Println(r)
	}
	return !failed
}
