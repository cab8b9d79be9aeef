package ooc

import (
	"context"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Calibrate returns a copy of the classification model m whose
// probabilities are calibrated on val (one pass over it; its targets
// must be m's), as Fit does with RunOptions.Validation (see
// model.Calibration and model.Calibrate). It is an error for a
// regression model or a source without rows. A model whose
// Config.Threshold is set (a search's pick: TuneResult.Model) gets its
// decision threshold in the same pass, as Fit gives it: the number, or the
// threshold its rule chooses on val's rows.
func Calibrate(ctx context.Context, m *Model, val stream.Source, opt PredictOptions) (*Model, error) {
	if m.cfg.Threshold == "" || m.Task() == TaskRegression {
		mm, err := model.Calibrate(ctx, m.Model, val, opt)
		if err != nil {
			return nil, err
		}
		return m.with(mm), nil
	}
	val, err := m.Relabel(val)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	ev, err := m.evaluate(ctx, val, opt)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	return decideFit(m.with(m.CalibratedOn(ev)), ev)
}

// CalibrateWith is Calibrate on the validation rows opts.Validation, with
// the passes of opts: rows held out of the data that opts.Executor reads
// (a side of HoldOut) are scored where the data is, in a pass.Scores
// pass, so that the calling process of a remote executor (package
// beam's) reads none of them; other validation rows are read here, as
// Calibrate reads them. The model is Calibrate's to the bit: a search's
// pick (TuneResult.Model) gets its calibration and, with
// Config.Threshold, its decision threshold.
func CalibrateWith(ctx context.Context, m *Model, opts RunOptions) (*Model, error) {
	if opts.Validation == nil {
		return nil, configErr("RunOptions.Validation", "calibration needs validation rows")
	}
	if m.Task() == TaskRegression {
		return nil, fmt.Errorf("calibrate: a regression model has no probabilities")
	}
	val, err := m.Relabel(opts.Validation)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	if stream.Rows(val) == 0 {
		return nil, fmt.Errorf("calibrate: the validation data has no rows")
	}
	opts.Validation = val
	ev, err := m.evaluateVal(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	cm := m.with(m.CalibratedOn(ev))
	if m.cfg.Threshold == "" {
		return cm, nil
	}
	return decideFit(cm, ev)
}

// calibrateFit returns the fit's model m calibrated on the validation
// rows of opts, reusing ev, the scores of the last validation pass, when
// it scored the same CG iterate (else nil: one more validation pass); m
// itself without validation rows or for regression.
func calibrateFit(ctx context.Context, m *Model, opts RunOptions, ev *Evaluator) (*Model, error) {
	if opts.Validation == nil || m.Task() == TaskRegression {
		return decideFit(m, nil)
	}
	if ev == nil {
		var err error
		if ev, err = m.evaluateVal(ctx, opts); err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
	}
	return decideFit(m.with(m.CalibratedOn(ev)), ev)
}

// decideFit gives the fit's classifier m its decision threshold
// (Config.Threshold: a number, or a rule chosen on ev, the validation
// rows' scores) and records its metrics on ev (Training.ValidationFinal).
// m itself for regression or without validation rows (ev nil), unless a
// rule needs them.
func decideFit(m *Model, ev *Evaluator) (*Model, error) {
	if m.Task() == TaskRegression {
		return m, nil
	}
	if s := m.cfg.Threshold; s != "" {
		if m.Task() != TaskBinary {
			return nil, configErr("Config.Threshold", "a decision threshold is for binary classification, not %s", m.Task())
		}
		th, rule, err := model.ParseThreshold(s)
		if err != nil {
			return nil, configErr("Config.Threshold", "%v", err)
		}
		var mm *model.Model
		switch {
		case rule == nil:
			mm, err = m.Model.WithDecision(model.Decision{Threshold: th})
		case ev == nil:
			return nil, configErr("Config.Threshold", "the rule %s chooses the threshold on validation rows, and the fit has none", rule)
		default:
			mm, err = m.Model.DecidedOn(ev.Rescored(m.Model), *rule)
		}
		if err != nil {
			return nil, configErr("Config.Threshold", "%v", err)
		}
		m = m.with(mm)
	}
	if ev != nil {
		m.training.ValidationFinal = ev.Rescored(m.Model).Metrics()
	}
	return m, nil
}

// evaluateVal scores the fit's validation rows (opts.Validation) with m
// into an Evaluator. Rows held out of the data the fit reads (a side of
// stream.Holdout) are scored by a pass.Scores pass over the whole data
// through opts' executor, with m's kernel, centres, coefficients and
// standardisation: the scores m.evaluate gives them, bit for bit, and
// the calling process of a remote executor (package beam's) reads none
// of them. Other validation rows are read here (m.evaluate).
func (m *Model) evaluateVal(ctx context.Context, opts RunOptions) (*Evaluator, error) {
	val := opts.Validation
	root, frac, seed, held, ok := stream.HoldoutOf(val)
	if !ok || !held {
		return m.evaluate(ctx, val, PredictOptions{Workers: opts.Workers})
	}
	targets := m.Targets()
	if val.NumTargets() != len(targets) {
		return nil, fmt.Errorf("the data has %d target columns, the model has %d", val.NumTargets(), len(targets))
	}
	job := &pass.Job{Kind: pass.Scores, Kernel: m.Kernel(), Precision: m.Precision(), M: m.M(), D: m.D(), K: m.K(),
		Centers: m.Centers(), Alpha: m.Alpha(), Task: m.Task(), Classes: m.Classes(), Features: m.Features(), Targets: targets,
		Weight: stream.WeightColumn(val), Holdout: &pass.Holdout{Fraction: frac, Seed: seed}, ScoreRows: stream.Rows(val)}
	if std := m.FeatureStd(); std != nil {
		job.Mean, job.InvStd = m.FeatureMean(), invStdOf(std)
	}
	out, err := passOver(spread(root), opts)(ctx, job, func(int, int, int64) {})
	if err != nil {
		return nil, err
	}
	// Each row: k scores without the target mean, the targets, the weight.
	k, kt, rowLen := job.K, len(targets), job.RowLen()
	n := int(job.ScoreRows)
	scores, truth := make([]float64, n*k), make([]float64, n*kt)
	var w []float64
	if job.Weight != "" {
		w = make([]float64, n)
	}
	ymean := m.TargetMean()
	for r := range n {
		row := out[r*rowLen : (r+1)*rowLen]
		for j := range k {
			scores[r*k+j] = row[j] + ymean[j]
		}
		copy(truth[r*kt:(r+1)*kt], row[k:k+kt])
		if w != nil {
			w[r] = row[rowLen-1]
		}
	}
	ev := m.NewEvaluator()
	if err := ev.AddWeighted(scores, truth, w, n); err != nil {
		return nil, err
	}
	return ev, nil
}
