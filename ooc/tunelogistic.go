package ooc

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// tuneLogistic is Tune for the logistic loss (Base.Loss): every (σ, λ)
// of the grid is one logistic Fit (Newton steps, its own passes) on the
// training rows, validated once at its end on the validation rows, and
// the lowest error rate wins. The candidates do not share passes yet (the
// squared loss's search shares every pass); Patience, Halving and σ
// halving do not apply (each candidate runs its NewtonSteps), and a
// candidate's BestIteration is its CG iterations in all.
func tuneLogistic(ctx context.Context, src stream.Source, tc TuneConfig, opts RunOptions) (*TuneResult, error) {
	start := time.Now()
	if err := ValidateTune(tc, opts); err != nil {
		return nil, err
	}
	base := tc.Base
	train, val := src, opts.Validation
	var err error
	if val == nil {
		frac := tc.ValFraction
		if frac == 0 {
			frac = DefaultValFraction
		}
		train, val = stream.Holdout(src, frac, base.Seed)
		if train.NumChunks() == 0 || val.NumChunks() == 0 {
			return nil, configErr("TuneConfig.ValFraction", "holding out %g of %d rows leaves no training or no validation rows", frac, stream.Rows(src))
		}
	} else if val, err = AlignLabels(src, val); err != nil {
		return nil, err
	}
	plan, err := Plan(train, base, RunOptions{Workers: opts.Workers})
	if err != nil {
		return nil, err
	}
	kernels := []kernel.Kernel{plan.Config.Kernel}
	if tc.Sigmas != nil {
		kernels = kernels[:0]
		for _, s := range tc.Sigmas {
			kn := plan.Config.Kernel
			kn.Sigma, kn.Sigmas = s, nil
			kernels = append(kernels, kn)
		}
	}
	lambdas := tc.Lambdas
	if lambdas == nil {
		lambdas = []float64{plan.Config.Lambda}
	}
	res := &TuneResult{N: plan.N, ValRows: stream.Rows(val), M: plan.Config.Centers, Metric: "error_rate", Best: -1}
	live := len(kernels) * len(lambdas)
	for _, kn := range kernels {
		for _, l := range lambdas {
			cfg := base
			cfg.Kernel, cfg.Lambda = kn, l
			c := TuneCandidate{Lambda: l, Kernel: kn, BestMetric: math.Inf(1), Stop: StopIterations}
			if kn.Sigmas == nil && kn.Kind.IsDistance() {
				c.Sigma = kn.Sigma
			}
			m, err := Fit(ctx, train, cfg, RunOptions{Workers: opts.Workers, Executor: opts.Executor, Validation: val,
				Progress: func(p Progress) {
					if tc.Progress != nil {
						p.Elapsed = time.Since(start)
						tc.Progress(TuneProgress{Progress: p, Live: live})
					}
				}})
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				c.Stop, c.Err = StopFailed, err.Error()
			} else {
				tr := m.Training()
				c.Validation, c.Residuals = tr.Validation, tr.Residuals
				c.Iterations, c.BestIteration = tr.Iterations, tr.Iterations
				if n := len(tr.Validation); n > 0 {
					c.BestMetric = selectionMetric(m.Task(), &tr.Validation[n-1].Metrics)
				}
				c.model = m
				res.Passes += 1 + len(tr.NewtonSteps) + tr.Iterations // sampling, gradients, CG
				if res.Best < 0 || c.BestMetric < res.Candidates[res.Best].BestMetric {
					res.Best = len(res.Candidates)
				}
			}
			c.Seconds = time.Since(start).Seconds()
			live--
			res.Candidates = append(res.Candidates, c)
		}
	}
	if res.Best < 0 {
		return nil, fmt.Errorf("every candidate failed: %s", res.Candidates[0].Err)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
