package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Flags of -tune-mode pick.
var (
	pickRulesFlag = flag.String("pick-rules", "best,1se", "with -tune-mode pick: the TuneConfig.Pick rules to run")
	pickARDFlag   = flag.Bool("pick-ard", false, "with -tune-mode pick: the search learns ARD length scales beside the σ grid (fit --tune --ard)")
	pickItersFlag = flag.Int("pick-iters", 50, "with -tune-mode pick: Config.Iterations (fit --tune's default --iters), past which the search's candidates and the final fit continue by patience within the budget of passes")
)

// The -tune-mode pick (bench/TUNE.md, "The one-standard-error rule";
// bench/ACCURACY.md, "Intervals on real sets"): ooc.FitTuned as
// fit --tune --uncertainty runs it, at M = -tune-centers, once per pick
// rule. Each model predicts the test part with standard deviations. One
// row per rule: the search's pick (σ, λ, its validation RMSE ± SE), the
// final fit's λ and iterations, the test RMSE and the largest |error|,
// the candidates that stopped at the cap and whether the final fit did
// (with its last improvement), and the test coverage at 50/90/95 % of
// the Gaussian and the conformal intervals.
func tunePick(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	run := ooc.RunOptions{Workers: te.workers}
	cfg := base
	cfg.Iterations = *pickItersFlag
	cfg.Uncertainty = ooc.UncertaintyPrecond
	for _, r := range strings.Split(*pickRulesFlag, ",") {
		rule, err := ooc.ParsePickRule(strings.TrimSpace(r))
		if err != nil {
			return err
		}
		search := ooc.TuneConfig{Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac, Pick: rule}
		if *pickARDFlag {
			search.ARD = &ooc.ARDConfig{}
		}
		t0 := time.Now()
		m, err := ooc.FitTuned(ctx, trs, ooc.FitTunedConfig{Fit: cfg, Search: search}, run)
		if err != nil {
			return err
		}
		secs := time.Since(t0).Seconds()
		tr := m.Training()
		res := tr.Search
		pick := res.Candidates[res.Best]
		capped := 0
		for _, c := range res.Candidates {
			if c.Stop == ooc.StopIterations || c.Stop == ooc.StopBudget {
				capped++
			}
		}
		final := "no"
		if tr.Status != ooc.StatusPatience && tr.Iterations >= m.Config().Iterations { // the cap its budget of passes gave
			final = "yes"
			if n := len(tr.Validation); n >= 2 {
				last := tr.Validation[n-1].Metrics.RMSE
				prev := tr.Validation[n-2].Metrics.RMSE
				if last != nil && prev != nil {
					final = fmt.Sprintf("yes (%.4f → %.4f)", *prev, *last)
				}
			}
		}
		var e, sd []float64
		err = m.Predict(ctx, tes, ooc.PredictOptions{Workers: te.workers, Std: true}, true, func(b ooc.Batch) error {
			for i := range b.Rows {
				e = append(e, b.Targets[i]-b.Scores[i])
				sd = append(sd, b.Std[i])
			}
			return nil
		})
		if err != nil {
			return err
		}
		rmse, worst := 0.0, 0.0
		for _, x := range e {
			rmse += x * x
			worst = max(worst, math.Abs(x))
		}
		rmse = math.Sqrt(rmse / float64(len(e)))
		var cov [2][3]float64
		for j, l := range []float64{0.5, 0.9, 0.95} {
			zc, used, err := m.IntervalMultiplier(l, ooc.IntervalConformal)
			if err != nil || used != ooc.IntervalConformal {
				return fmt.Errorf("conformal multiplier at %g: %v", l, err)
			}
			zg := ooc.IntervalZ(l)
			for i, x := range e {
				if math.Abs(x) <= zg*sd[i] {
					cov[0][j]++
				}
				if math.Abs(x) <= zc*sd[i] {
					cov[1][j]++
				}
			}
			cov[0][j] /= float64(len(e))
			cov[1][j] /= float64(len(e))
		}
		kern := fmt.Sprintf("σ %g", pick.Sigma)
		if pick.Kernel.Sigmas != nil {
			kern = "ARD"
		}
		fmt.Printf("| %s | %s | %s, λ %.0e: %.4f ± %.4f | λ %.2g, %d it. | %.4f | %.2f | %d of %d | %s | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | %.0f |\n",
			name, rule, kern, pick.Lambda, pick.BestMetric, pick.BestSE, m.Config().Lambda, tr.Iterations, rmse, worst,
			capped, len(res.Candidates), final, 100*cov[0][0], 100*cov[0][1], 100*cov[0][2],
			100*cov[1][0], 100*cov[1][1], 100*cov[1][2], secs)
	}
	return nil
}
