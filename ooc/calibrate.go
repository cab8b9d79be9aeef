package ooc

import (
	"context"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Calibrate returns a copy of the classification model m whose
// probabilities are calibrated on val (one pass over it; its targets
// must be m's), as Fit does with RunOptions.Validation (see
// model.Calibration and model.Calibrate). It is an error for a
// regression model or a source without rows.
func Calibrate(ctx context.Context, m *Model, val stream.Source, opt PredictOptions) (*Model, error) {
	mm, err := model.Calibrate(ctx, m.Model, val, opt)
	if err != nil {
		return nil, err
	}
	return m.with(mm), nil
}

// calibrateFit returns the fit's model m calibrated on the validation
// rows of opts, reusing ev, the scores of the last validation pass, when
// it scored the same CG iterate (else nil: one more validation pass); m
// itself without validation rows or for regression.
func calibrateFit(ctx context.Context, m *Model, opts RunOptions, ev *Evaluator) (*Model, error) {
	if opts.Validation == nil || m.Task() == TaskRegression {
		return m, nil
	}
	if ev == nil {
		var err error
		if ev, err = m.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers}); err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
	}
	return m.with(m.CalibratedOn(ev)), nil
}
