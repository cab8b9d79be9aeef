package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Flags of the -stop mode.
var (
	stopFlag     = flag.Bool("stop", false, "instead: the stopping rules on every data set (bench/TUNE.md, \"Stopping\"): ooc.Tune's pick, ooc.Fit with patience at that pick and ooc.FitTuned, their iterations and test metrics")
	stopRowsFlag = flag.Int("stop-rows", 60000, "with -stop: at most this many training rows (and a third as many test rows)")
	stopMFlag    = flag.Int("stop-centers", 2000, "with -stop: centres M of the fits (the search's are 1000)")
	stopMinFlag  = flag.Float64("stop-min-improvement", 0, "with -stop: MinImprovement of the searches and the fits (0: the commands' own, 1e-4 in a search, ooc.DefaultMinImprovement in a fit)")
)

// The -stop mode: on each data set (the classification task where it has
// one), at most -stop-rows training rows, validation rows held out of
// them by stream.Holdout (10 %, -seed):
//   - ooc.Tune over the task's grid (the regression sets: σ ∈ {0.5, …, 8}
//     × λ ∈ {1e-8, …, 1e-3}) at M = 1000, 20 iterations, patience 3, the
//     commands' MinImprovement 1e-4 (or -stop-min-improvement), σ halving
//     by default;
//   - ooc.Fit at the pick's σ and λ at M = -stop-centers, at most 50
//     iterations, stopped by patience (Config.Patience 0: 3;
//     MinImprovement ooc's default, or -stop-min-improvement);
//   - ooc.FitTuned as fit --tune runs it (M = -stop-centers, 50
//     iterations, the same grid).
//
// One line each: the iterations run and the model's iteration, and the
// test metric (RMSE, or error rate and AUC).
func stopMain(ctx context.Context, e *env, want map[string]bool) bool {
	if len(want) == 0 {
		for _, n := range []string{"protein", "kin40k", "elevators", "bike", "california", "skin", "flights", "fashion-mnist"} {
			want[n] = true
		}
	}
	fmt.Println("| data | n train / test | step | pick σ, λ | iterations (model's) | candidate iterations | test metric | s |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	ok := true
	for _, ds := range datasets {
		if !want[ds.name] {
			continue
		}
		if miss := ds.missing(e); miss != "" {
			fmt.Fprintf(os.Stderr, "accuracy -stop: skip %s: %s not found\n", ds.name, miss)
			continue
		}
		if err := runStop(ctx, e, ds); err != nil {
			fmt.Fprintf(os.Stderr, "accuracy -stop: %s: %v\n", ds.name, err)
			ok = false
		}
	}
	return ok
}

func runStop(ctx context.Context, e *env, ds *dataset) error {
	tasks := ds.tasks(e)
	tk := tasks[len(tasks)-1]
	train, test, err := ds.load(e)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if n := *stopRowsFlag; train.n() > n {
		idx, _ := randomSplit(train.n(), 1-float64(n)/float64(train.n()), e.seed, 0x73746f70)
		train = train.subset(idx)
	}
	if n := *stopRowsFlag / 3; test.n() > n {
		idx, _ := randomSplit(test.n(), 1-float64(n)/float64(test.n()), e.seed, 0x74657374)
		test = test.subset(idx)
	}
	dir, err := os.MkdirTemp("", "falkon-stop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	trs, err := makeStore(ctx, e, dir, "train", train, &tk)
	if err != nil {
		return err
	}
	defer trs.Close()
	tes, err := makeStore(ctx, e, dir, "test", test, &tk)
	if err != nil {
		return err
	}
	defer tes.Close()
	sigmas, lambdas := tk.sigmas, tk.lambdas
	if !tk.classify {
		sigmas, lambdas = []float64{0.5, 1, 2, 4, 8}, []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3}
	}
	const valFrac = 0.1
	searchMin := 1e-4 // the commands' (cliflags.SearchMinImprovement)
	if *stopMinFlag > 0 {
		searchMin = *stopMinFlag
	}
	base := ooc.Config{Centers: 1000, Iterations: 20, Seed: e.seed, Task: tk.kind, Precision: tk.precision, NoStandardize: tk.noStandardize,
		MinImprovement: *stopMinFlag}
	run := ooc.RunOptions{Workers: e.workers}
	name := ds.name
	if tk.label != "" {
		name += " " + tk.label
	}
	sizes := fmt.Sprintf("%d / %d", train.n(), test.n())
	testMetric := func(m *ooc.Model) (string, error) {
		met, err := m.Evaluate(ctx, tes, ooc.PredictOptions{Workers: e.workers})
		if err != nil {
			return "", err
		}
		if met.RMSE != nil && tk.kind == ooc.TaskRegression {
			return fmt.Sprintf("RMSE %.4f", *met.RMSE), nil
		}
		auc := math.NaN()
		if met.AUC != nil {
			auc = *met.AUC
		}
		return fmt.Sprintf("error %.4f, AUC %.4f", *met.ErrorRate, auc), nil
	}

	t0 := time.Now()
	res, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: sigmas, Lambdas: lambdas, ValFraction: valFrac, MinImprovement: searchMin}, run)
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	secs := time.Since(t0).Seconds()
	pick := res.Candidates[res.Best]
	work := 0
	for _, c := range res.Candidates {
		work += c.Iterations
	}
	tm, err := testMetric(res.Model())
	if err != nil {
		return err
	}
	fmt.Printf("| %s | %s | Tune | %g, %.0e | %d (%d) | %d | %s | %.1f |\n", name, sizes, pick.Sigma, pick.Lambda, pick.Iterations, pick.BestIteration, work, tm, secs)

	rest, held := stream.Holdout(trs, valFrac, e.seed)
	cfg := base
	cfg.Centers, cfg.Iterations = *stopMFlag, 50
	cfg.Kernel, cfg.Lambda = pick.Kernel, pick.Lambda
	t0 = time.Now()
	m, err := ooc.Fit(ctx, rest, cfg, ooc.RunOptions{Workers: e.workers, Validation: held})
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	secs = time.Since(t0).Seconds()
	tr := m.Training()
	if tm, err = testMetric(m); err != nil {
		return err
	}
	fmt.Printf("| %s | %s | Fit (%s) | %g, %.0e | %d (%d) | | %s | %.1f |\n", name, sizes, tr.Status, pick.Sigma, pick.Lambda, tr.Iterations, tr.BestIteration, tm, secs)

	fcfg := base
	fcfg.Centers, fcfg.Iterations = *stopMFlag, 50
	t0 = time.Now()
	m, err = ooc.FitTuned(ctx, trs, ooc.FitTunedConfig{Fit: fcfg, Search: ooc.TuneConfig{Sigmas: sigmas, Lambdas: lambdas, ValFraction: valFrac, MinImprovement: searchMin}}, run)
	if err != nil {
		return fmt.Errorf("FitTuned: %w", err)
	}
	secs = time.Since(t0).Seconds()
	tr = m.Training()
	sp := tr.Search.Candidates[tr.Search.Best]
	work = 0
	for _, c := range tr.Search.Candidates {
		work += c.Iterations
	}
	if tm, err = testMetric(m); err != nil {
		return err
	}
	k := m.Config().Kernel
	fmt.Printf("| %s | %s | FitTuned (%s) | %g, %.0e | %d (%d) | %d (search pick it %d) | %s | %.1f |\n", name, sizes, tr.Status, k.Sigma, m.Config().Lambda,
		tr.Iterations, tr.BestIteration, work, sp.BestIteration, tm, secs)
	return nil
}
