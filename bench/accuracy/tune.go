package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
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
	mode     string // grid, timing or ard
	halving  int
	reps     int
	// uncTiming adds Predict's timing to -tune-mode uncertainty, and
	// uncVariants lists its METHOD:RANK fits.
	uncTiming   bool
	uncVariants string
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
	switch te.mode {
	case "timing":
		return row, tuneTiming(ctx, te, ds.name, trs, tes, base, valFrac)
	case "ard":
		return row, tuneARD(ctx, te, ds.name, trs, tes, base, valFrac)
	case "curves":
		return row, tuneCurves(ctx, te, ds.name, trs, tes, base, valFrac)
	case "handoff":
		return row, tuneHandoff(ctx, te, ds.name, trs, tes, base, valFrac)
	case "tuned-timing":
		return row, tunedTiming(ctx, te, ds.name, trs, tes, base, valFrac)
	case "uncertainty":
		return row, tuneUncertainty(ctx, te, ds.name, trs, tes, base, valFrac)
	case "lowrank":
		return row, tuneLowrank(ctx, te, ds.name, trs, tes, base, valFrac)
	case "pick":
		return row, tunePick(ctx, te, ds.name, trs, tes, base, valFrac)
	}

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

// tuneTiming times, interleaved, te.reps times each: one Fit (at the grid's
// middle point) on the training rows and Tune over the grid with its
// defaults (patience 3, σ halving after ooc.DefaultSigmaSteps);
// with te.halving > 0 also Tune with candidate halving. It prints the
// minimum of each, the ratios and the pick's test RMSE.
func tuneTiming(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	rest, _ := stream.Holdout(trs, valFrac, te.seed)
	fitMin, tuneMin, halvMin := math.Inf(1), math.Inf(1), math.Inf(1)
	// CPU seconds (user + system of the process) are less disturbed by
	// other work on the machine than wall time: printed beside it.
	fitCPU, tuneCPU, halvCPU := math.Inf(1), math.Inf(1), math.Inf(1)
	var passes, passesH int
	var pick, pickH string
	for rep := range te.reps {
		cfg := base
		cfg.Kernel = kernel.Kernel{Kind: kernel.Gaussian, Sigma: te.sigmas[len(te.sigmas)/2]}
		cfg.Lambda = te.lambdas[len(te.lambdas)/2]
		t0, c0 := time.Now(), cpuSeconds()
		// The pprof labels let -cpuprofile split fit from tune
		// (go tool pprof -tagfocus phase=tune); goroutines inherit them.
		var err error
		pprof.Do(ctx, pprof.Labels("phase", "fit"), func(ctx context.Context) {
			_, err = ooc.Fit(ctx, rest, cfg, ooc.RunOptions{Workers: te.workers})
		})
		if err != nil {
			return err
		}
		fs := time.Since(t0).Seconds()
		fitMin, fitCPU = min(fitMin, fs), min(fitCPU, cpuSeconds()-c0)
		logf("%s: timing rep %d: fit %.2f s", name, rep, fs)
		modes := []int{0}
		if te.halving > 0 {
			modes = append(modes, te.halving)
		}
		for _, h := range modes {
			t1, c1 := time.Now(), cpuSeconds()
			var res *ooc.TuneResult
			var err error
			pprof.Do(ctx, pprof.Labels("phase", "tune"), func(ctx context.Context) {
				res, err = ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: te.sigmas, Lambdas: te.lambdas,
					ValFraction: valFrac, Halving: h}, ooc.RunOptions{Workers: te.workers})
			})
			if err != nil {
				return err
			}
			s, cs := time.Since(t1).Seconds(), cpuSeconds()-c1
			best := res.Candidates[res.Best]
			met, err := res.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
			if err != nil {
				return err
			}
			p := fmt.Sprintf("σ %g λ %.0e it %d, val %.4f, test %.4f", best.Sigma, best.Lambda, best.BestIteration,
				best.BestMetric, *met.RMSE)
			logf("%s: timing rep %d: halving %d: %.2f s, %d passes, pick %s", name, rep, h, s, res.Passes, p)
			if h == 0 {
				tuneMin, tuneCPU, passes, pick = min(tuneMin, s), min(tuneCPU, cs), res.Passes, p
			} else {
				halvMin, halvCPU, passesH, pickH = min(halvMin, s), min(halvCPU, cs), res.Passes, p
			}
		}
	}
	fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %s |\n", name, fitMin, tuneMin, tuneMin/fitMin,
		fitCPU, tuneCPU, tuneCPU/fitCPU, passes, pick)
	if te.halving > 0 {
		fmt.Printf("| %s (--halving %d) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %s |\n", name, te.halving, fitMin, halvMin,
			halvMin/fitMin, fitCPU, halvCPU, halvCPU/fitCPU, passesH, pickH)
	}
	return nil
}

// tuneARD runs Tune with ARD beside the σ grid and Tune with the grid
// alone, over the same λ and validation rows, and reports both test
// RMSEs and the ARD step's share of the --ard run (every candidate's test
// RMSE is logged).
func tuneARD(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	t0 := time.Now()
	var ardStart, ardEnd time.Duration
	ac := &ooc.ARDConfig{Rows: *ardRowsFlag, Centers: *ardCentersFlag, Steps: *ardStepsFlag}
	res, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac, ARD: ac},
		ooc.RunOptions{Workers: te.workers, SearchProgress: func(p ooc.TuneProgress) {
			switch {
			case p.Stage == ooc.StageARD && ardStart == 0:
				ardStart = time.Since(t0)
			case p.Stage == ooc.StageARD:
				ardEnd = time.Since(t0)
			}
		}})
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	for _, c := range res.Candidates {
		if c.Model() == nil {
			logf("%s:   λ=%.0e: %s %s", name, c.Lambda, c.Stop, c.Err)
			continue
		}
		cm, err := c.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
		if err != nil {
			return err
		}
		logf("%s:   %s λ=%.0e: validation %.4f at iteration %d of %d (%s), test %.4f", name, c.Kernel, c.Lambda, c.BestMetric,
			c.BestIteration, c.Iterations, c.Stop, *cm.RMSE)
	}
	met, err := res.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
	if err != nil {
		return err
	}
	t1 := time.Now()
	gres, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac},
		ooc.RunOptions{Workers: te.workers})
	if err != nil {
		return err
	}
	gsecs := time.Since(t1).Seconds()
	gmet, err := gres.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
	if err != nil {
		return err
	}
	best := res.Candidates[res.Best]
	pick := fmt.Sprintf("grid σ %g", best.Sigma)
	if best.Kernel.Sigmas != nil {
		pick = "ARD"
	}
	sig := make([]string, len(res.ARD.Sigmas))
	for j, s := range res.ARD.Sigmas {
		sig[j] = fmt.Sprintf("%.2f", s)
	}
	ard := (ardEnd - ardStart).Seconds()
	fmt.Printf("| %s | %d | %.4f | %.4f | %+.2f %% | %s, λ %.0e, it %d | %s (λ %.1e) | %.4g → %.4g | %.1f | %.1f | %.0f %% | %.1f |\n", name, res.M,
		*met.RMSE, *gmet.RMSE, 100*(*met.RMSE / *gmet.RMSE - 1), pick, best.Lambda, best.BestIteration, strings.Join(sig, " "),
		res.ARD.Lambda, res.ARD.Start, res.ARD.Loss, ard, secs, 100*ard/secs, gsecs)
	return nil
}

// tuneMain runs the -tune mode on the regression data sets chosen.
func tuneMain(ctx context.Context, te *tuneEnv, want map[string]bool) bool {
	if err := applyTuneFlags(te); err != nil {
		fmt.Fprintf(os.Stderr, "accuracy -tune: %v\n", err)
		return false
	}
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
		logf("=== %s (tune, %s)", ds.name, te.mode)
		switch te.mode {
		case "timing":
			fmt.Println("| data | one fit s | tune s | tune / fit | fit CPU s | tune CPU s | CPU tune / fit | tune passes | pick |")
		case "ard":
			fmt.Println("| data | M | --ard test RMSE | grid test RMSE | --ard vs grid | pick | learned σⱼ | subsample hold-out MSE | ARD s | --ard s | ARD share | grid s |")
		case "tuned-timing":
			fmt.Println("| data | M | one fit s | fit --tune s | ratio | fit CPU s | fit --tune CPU s | search s | iterations | fit --tune test RMSE | one fit test RMSE |")
		case "uncertainty":
			fmt.Println("| data | n train | M | pick | method | rank | variance λ | effective dim | rank error (median / max) | test RMSE | coverage 50 / 90 / 95 % | 90 % width / constant width | test NLPD | constant NLPD | uncertainty s of fit s |")
		case "pick":
			fmt.Println("| data | pick | search's pick: validation RMSE ± SE | final fit | test RMSE | largest test abs error | search candidates at the cap | final fit at the cap | Gaussian coverage 50 / 90 / 95 % | conformal coverage 50 / 90 / 95 % | s |")
		case "lowrank":
			fmt.Println("| data | n train | kernel, λ (search at M = 1000) | preconditioner | bytes | set-up s | s/iteration | iterations to 1e-3 / 1e-5 | final residual | test RMSE | load |")
		case "handoff":
			fmt.Print("| data | n train | M | best of the grid at M, on test | grid at M, best on validation: test | fit --tune, search on all rows |")
			for _, r := range strings.Split(*handoffRulesFlag, ",") {
				fmt.Printf(" n/%d, %s |", *handoffDivFlag, strings.TrimSpace(r))
			}
			fmt.Println(" grid s |")
		}
		r, err := runTuneBench(ctx, te, ds)
		if err != nil {
			fmt.Fprintf(os.Stderr, "accuracy -tune: %s: %v\n", ds.name, err)
			failed = true
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if te.mode == "grid" {
			logf("%s", r)
		}
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
	if te.mode == "grid" {
		fmt.Println(tuneHeader)
		for _, r := range rows {
			fmt.Println(r)
		}
	}
	return !failed
}

// cpuSeconds is the process's user + system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
