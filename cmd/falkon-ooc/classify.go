package main

import (
	"fmt"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// taskNote tells, on stderr, which task --task auto chose and why.
func taskNote(pr *progress, cmd string, asked ooc.Task, plan *ooc.FitPlan) {
	if asked != ooc.TaskAuto {
		return
	}
	if plan.Task == ooc.TaskAuto {
		pr.printf("%s: --task auto: the task is decided from the target values in the sampling pass", cmd)
		return
	}
	pr.printf("%s: --task auto: %s (%s)", cmd, plan.Task, taskReason(plan))
}

// taskReason says why AutoTask chose plan.Task.
func taskReason(plan *ooc.FitPlan) string {
	target := ""
	if len(plan.Targets) > 0 {
		target = fmt.Sprintf("target %q ", plan.Targets[0])
	}
	kind := "integer"
	if plan.ClassNames != nil {
		kind = "string"
	}
	switch plan.Task {
	case ooc.TaskBinary:
		return fmt.Sprintf("%shas 2 distinct values: %s", target, classList(plan))
	case ooc.TaskMulticlass:
		return fmt.Sprintf("%shas %d distinct %s values", target, len(plan.Classes), kind)
	}
	if plan.TargetColumns > 1 {
		return fmt.Sprintf("%d target columns", plan.TargetColumns)
	}
	return fmt.Sprintf("%shas more than %d distinct values or a fractional value", target, ooc.MaxAutoClasses)
}

func classList(plan *ooc.FitPlan) string {
	if plan.ClassNames != nil {
		return strings.Join(plan.ClassNames, ", ")
	}
	s := make([]string, len(plan.Classes))
	for i, c := range plan.Classes {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ", ")
}

// calibrationLine describes how a model's probabilities are calibrated.
func calibrationLine(m *ooc.Model) string {
	c := m.Calibration()
	switch {
	case c == nil && m.HasProba():
		return "the model's own σ(f) (logistic loss; not calibrated)"
	case c == nil && len(m.Training().Validation) > 0:
		return "not calibrated (the model file predates calibration: refit to use predict --proba)"
	case c == nil:
		return "not calibrated (fitted without validation rows: predict --proba needs --val-fraction or --val at fit)"
	}
	what := fmt.Sprintf("Platt scaling σ(%.4g·s %+.4g)", c.A, c.B)
	if c.Method == ooc.CalibrationTemperature {
		what = fmt.Sprintf("softmax temperature %.4g", c.Temperature)
	}
	return fmt.Sprintf("%s on %d validation rows: log-loss %.4g → %.4g, ECE %.4f → %.4f",
		what, c.Rows, c.LogLossBefore, c.LogLossAfter, c.ECEBefore, c.ECEAfter)
}
