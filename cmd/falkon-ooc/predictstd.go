package main

import (
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// checkStd refuses --std and --interval for a model without predictive
// standard deviations, and an interval level outside (0, 1).
func checkStd(o *predictOpts, m *ooc.Model) error {
	if _, err := ooc.ParseIntervalMethod(o.intervalMethod); err != nil {
		return usagef("--interval-method: %v", err)
	}
	if o.intervalMethod != "" && o.interval == 0 {
		return usagef("--interval-method %s needs --interval", o.intervalMethod)
	}
	if !o.std && o.interval == 0 {
		return nil
	}
	flag := "--std"
	if !o.std {
		flag = "--interval"
	}
	switch {
	case o.interval != 0 && !(o.interval > 0 && o.interval < 1):
		return usagef("--interval must be a level in (0, 1) such as 0.9, got %g", o.interval)
	case m.Task() != ooc.TaskRegression:
		return fmt.Errorf("%s: %s is a %s model; predictive standard deviations are for regression (--proba gives a classifier's calibrated probabilities)", flag, o.model, m.Task())
	case m.Uncertainty() == nil:
		return fmt.Errorf("%s: model %s has no predictive standard deviations: it was fitted without --uncertainty; refit with fit --uncertainty", flag, o.model)
	case o.intervalMethod == string(ooc.IntervalConformal):
		if _, _, err := m.IntervalMultipliers(o.interval, ooc.IntervalConformal); err != nil {
			return fmt.Errorf("--interval-method conformal: model %s: %v; fit it again with --uncertainty and more validation rows, or use --interval-method gaussian", o.model, err)
		}
	}
	return nil
}
