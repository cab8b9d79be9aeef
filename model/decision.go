package model

import (
	"fmt"
	"math"
	"strconv"

	"github.com/falkon-ooc/falkon-ooc/internal/loss"
	"github.com/falkon-ooc/falkon-ooc/metrics"
)

// DefaultThreshold is the decision threshold of a binary model without
// a Decision: the label is Classes[1] when its probability is ≥ ½.
const DefaultThreshold = 0.5

// Decision is how a binary classifier turns the probability p of
// Classes[1] (ProbaTo's second column) into its label: Classes[1] when
// p ≥ Threshold, else Classes[0]. Labels therefore never disagree with
// the probabilities printed beside them. A multiclass model's label is
// the class of the largest probability (equally, of the largest score:
// its probabilities are increasing in the scores); it has no Decision.
type Decision struct {
	// Threshold is in (0, 1].
	Threshold float64 `json:"threshold"`
	// Rule is how Threshold was chosen on validation rows
	// (metrics.ParseThresholdRule: "f1", "balanced", "cost:FP:FN"), or ""
	// when it was given as a number.
	Rule string `json:"rule,omitempty"`
	// Rows is the number of validation rows the rule was applied to (0
	// for a number).
	Rows int64 `json:"rows,omitempty"`
}

func (d *Decision) validate(task Task) error {
	if d == nil {
		return nil
	}
	if task != TaskBinary {
		return fmt.Errorf("a decision threshold in a %s model", task)
	}
	if !(d.Threshold > 0 && d.Threshold <= 1) {
		return fmt.Errorf("decision threshold %v outside (0, 1]", d.Threshold)
	}
	if d.Rule != "" {
		if _, err := metrics.ParseThresholdRule(d.Rule); err != nil {
			return fmt.Errorf("decision rule: %v", err)
		}
	}
	return nil
}

// Decision returns the decision rule of a binary model: the one stored,
// else DefaultThreshold. ok is false for regression and multiclass.
func (m *Model) Decision() (d Decision, ok bool) {
	if m.task != TaskBinary {
		return Decision{}, false
	}
	if m.decision != nil {
		return *m.decision, true
	}
	return Decision{Threshold: DefaultThreshold}, true
}

// WithDecision returns a copy of the binary model m that labels rows by
// d. It is an error for another task or a threshold outside (0, 1].
func (m *Model) WithDecision(d Decision) (*Model, error) {
	if err := d.validate(m.task); err != nil {
		return nil, err
	}
	cp := *m
	cp.decision = &d
	return &cp, nil
}

// ParseThreshold reads what a user gives as the decision threshold: a
// number in (0, 1) (Decision.Threshold), or a rule that chooses it on
// validation rows (metrics.ParseThresholdRule). The error says which
// forms are accepted.
func ParseThreshold(s string) (threshold float64, rule *metrics.ThresholdRule, err error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if !(v > 0 && v < 1) {
			return 0, nil, fmt.Errorf("threshold %v: a number must be in (0, 1), the probability of the second class from which rows are labelled with it", v)
		}
		return v, nil, nil
	}
	r, err := metrics.ParseThresholdRule(s)
	if err != nil {
		return 0, nil, fmt.Errorf("threshold: a number in (0, 1), or a rule chosen on the validation rows: %w", err)
	}
	return 0, &r, nil
}

// DecidedOn returns a copy of the binary model m whose threshold rule
// chooses its Decision on the rows ev accumulated (an Evaluator of m's
// scores, such as the validation rows of its fit), by m's probabilities
// and ev's row weights (metrics.ChooseThreshold). It is an error for
// another task, or rows that do not hold both classes.
func (m *Model) DecidedOn(ev *Evaluator, rule metrics.ThresholdRule) (*Model, error) {
	if m.task != TaskBinary {
		return nil, fmt.Errorf("threshold %s: a decision threshold is for binary classification, not %s", rule, m.task)
	}
	n := len(ev.truth)
	p := make([]float64, n)
	pos := make([]bool, n)
	for i, t := range ev.truth {
		p[i] = m.proba1(ev.scores[i])
		pos[i] = t == 1
	}
	th := metrics.ChooseThreshold(p, pos, ev.w, rule)
	if math.IsNaN(th) {
		return nil, fmt.Errorf("threshold %s: the %d validation rows do not hold both classes", rule, n)
	}
	// Above every probability (no row labelled Classes[1]) is 1 at most.
	return m.WithDecision(Decision{Threshold: min(th, 1), Rule: rule.String(), Rows: int64(n)})
}

// proba1 is a binary model's probability of Classes[1] at score s, as
// ProbaTo computes it.
func (m *Model) proba1(s float64) float64 {
	switch {
	case m.calibration != nil:
		return binaryProba(m.calibration, s)
	case m.loss == LossLogistic:
		return loss.Sigmoid(s)
	}
	return binaryProba(nil, s)
}

// threshold is the binary decision threshold.
func (m *Model) threshold() float64 {
	if m.decision != nil {
		return m.decision.Threshold
	}
	return DefaultThreshold
}

// ScoreBoundary is, for a binary model, the probability of Classes[1]
// at score 0: where the raw scores change sign, which is the boundary
// the fit's loss (and its class weights) drew, before calibration
// mapped the scores to probabilities. NaN for other tasks.
func (m *Model) ScoreBoundary() float64 {
	if m.task != TaskBinary {
		return math.NaN()
	}
	return m.proba1(0)
}
