package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The -tune-mode uncertainty (bench/ACCURACY.md, "Predictive
// uncertainty"): σ and λ picked by ooc.FitTuned at M = -tune-centers
// (the project's whole job), then, on the same training rows and the same
// validation hold-out, one ooc.Fit per uncertainty method and rank at
// the picked σ, λ and iteration. Each model predicts the test part with
// standard deviations; the table gives the coverage of the 50, 90 and
// 95 % intervals, the mean width of the 90 % interval against the
// constant width that covers as much, and the test NLPD against the
// constant variance fitted on the same validation rows. -unc-timing adds
// Predict with and without Std, interleaved, minimum of -tune-reps.
func tuneUncertainty(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	run := ooc.RunOptions{Workers: te.workers}
	cfg := base
	cfg.Iterations = 50
	t0 := time.Now()
	tuned, err := ooc.FitTuned(ctx, trs, ooc.FitTunedConfig{Fit: cfg,
		Search: ooc.TuneConfig{Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac}}, run)
	if err != nil {
		return err
	}
	tuneSecs := time.Since(t0).Seconds()
	pick := tuned.Config()
	tr := tuned.Training()
	iters := tr.Iterations
	if tr.BestIteration > 0 {
		iters = tr.BestIteration
	}
	logf("%s: fit --tune %.1f s: σ = %g, λ = %g, %d iterations", name, tuneSecs, pick.Kernel.Sigma, pick.Lambda, iters)
	train, held := stream.Holdout(trs, valFrac, base.Seed)
	type variant struct {
		method ooc.UncertaintyMethod
		rank   int
	}
	var variants []variant
	for _, f := range strings.Split(te.uncVariants, ",") {
		method, rank, _ := strings.Cut(strings.TrimSpace(f), ":")
		r := te.m
		if rank != "full" {
			var err error
			if r, err = strconv.Atoi(rank); err != nil {
				return fmt.Errorf("-unc-variants: %q is not METHOD:RANK", f)
			}
		} else if te.m > 3000 {
			continue // full rank: the eigendecomposition of an M × M matrix
		}
		variants = append(variants, variant{ooc.UncertaintyMethod(method), r})
	}
	for _, v := range variants {
		c := pick
		c.Iterations, c.Patience, c.Uncertainty, c.UncertaintyRank = iters, 0, v.method, v.rank
		t1 := time.Now()
		m, err := ooc.Fit(ctx, train, c, ooc.RunOptions{Workers: te.workers, Validation: held})
		if err != nil {
			return fmt.Errorf("%s rank %d: %w", v.method, v.rank, err)
		}
		fitSecs := time.Since(t1).Seconds()
		u := m.Uncertainty()
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
		q := uncQuality(e, sd, u.ResidualVar[0])
		rankErr := "full"
		switch {
		case u.RankError < 0:
			rankErr = "—"
		case u.Rank < m.M():
			rankErr = fmt.Sprintf("%.2g / %.2g", u.RankError, u.RankErrorMax)
		}
		fmt.Printf("| %s | %d | %d | σ %g, λ %.0e | %s | %d | %.2g | %.3g | %s | %.4f | %.3f / %.3f / %.3f | %.3f / %.3f | %.3f | %.3f | %.1f of %.1f |\n",
			name, stream.Rows(train), m.M(), pick.Kernel.Sigma, pick.Lambda, v.method, u.Rank, u.Lambda, u.EffectiveDim, rankErr, q.rmse,
			q.cov[0], q.cov[1], q.cov[2], q.width90, q.constWidth90, q.nlpd, q.nlpdConst, u.Seconds, fitSecs)
		if te.uncTiming {
			uncTiming(ctx, te, name, m, tes)
		}
	}
	return nil
}

type uncQ struct {
	rmse, width90, constWidth90, nlpd, nlpdConst float64
	cov                                          [3]float64
}

// uncQuality scores residuals e with standard deviations sd; resVar is
// the constant baseline's variance (the validation residuals').
func uncQuality(e, sd []float64, resVar float64) uncQ {
	var q uncQ
	n := float64(len(e))
	abs := make([]float64, len(e))
	z90 := ooc.IntervalZ(0.9)
	for i, x := range e {
		q.rmse += x * x
		abs[i] = math.Abs(x)
		for j, l := range []float64{0.5, 0.9, 0.95} {
			if math.Abs(x) <= ooc.IntervalZ(l)*sd[i] {
				q.cov[j]++
			}
		}
		q.width90 += 2 * z90 * sd[i]
		v := sd[i] * sd[i]
		q.nlpd += 0.5*math.Log(2*math.Pi*v) + x*x/(2*v)
		q.nlpdConst += 0.5*math.Log(2*math.Pi*resVar) + x*x/(2*resVar)
	}
	q.rmse = math.Sqrt(q.rmse / n)
	for j := range q.cov {
		q.cov[j] /= n
	}
	q.width90 /= n
	q.nlpd /= n
	q.nlpdConst /= n
	slices.Sort(abs)
	q.constWidth90 = 2 * abs[min(max(int(math.Ceil(q.cov[1]*n))-1, 0), len(abs)-1)]
	return q
}

// uncTiming prints Predict's time with and without Std on tes,
// interleaved, minimum of te.reps.
func uncTiming(ctx context.Context, te *tuneEnv, name string, m *ooc.Model, tes stream.Source) {
	best := [2]float64{math.Inf(1), math.Inf(1)}
	for range te.reps {
		for i, std := range []bool{false, true} {
			t0 := time.Now()
			err := m.Predict(ctx, tes, ooc.PredictOptions{Workers: te.workers, Std: std}, false, func(ooc.Batch) error { return nil })
			if err != nil {
				logf("%s: timing: %v", name, err)
				return
			}
			best[i] = min(best[i], time.Since(t0).Seconds())
		}
	}
	fmt.Printf("|   %s timing | M = %d, rank %d | predict %.3f s | with std %.3f s | ratio %.2f | load %s |\n",
		name, m.M(), m.Uncertainty().Rank, best[0], best[1], best[1]/best[0], loadavg())
}
