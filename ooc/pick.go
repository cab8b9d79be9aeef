package ooc

import (
	"fmt"
	"math"
)

// PickRule is how a search picks its model among the candidates
// (TuneConfig.Pick).
type PickRule string

// Pick rules.
const (
	// PickBest takes the candidate with the lowest validation metric.
	PickBest PickRule = "best"
	// PickOneSE takes the most regularised candidate (the largest λ, then
	// the largest σ) whose validation metric is within one standard error
	// of the lowest (the standard error of the lowest candidate's metric
	// over the validation rows): the "one-standard-error rule" of glmnet's
	// lambda.1se. It trades a difference the validation rows cannot tell
	// from noise for a smoother model, which keeps predictions bounded
	// away from the data (bench/TUNE.md, "The one-standard-error rule").
	PickOneSE PickRule = "1se"
	// DefaultPick is TuneConfig.Pick when "". The lowest validation metric
	// stays the default: on the real sets of bench/TUNE.md the 1-SE pick
	// lost test RMSE on most of them.
	DefaultPick = PickBest
)

// ParsePickRule parses a pick rule ("" is DefaultPick).
func ParsePickRule(s string) (PickRule, error) {
	switch r := PickRule(s); r {
	case "":
		return DefaultPick, nil
	case PickBest, PickOneSE:
		return r, nil
	}
	return "", fmt.Errorf("unknown pick rule %q (want best or 1se)", s)
}

// rowSE accumulates, over the validation rows, the weighted sums that the
// standard error of a weighted mean of per-row errors x needs: Σw, Σw²
// and, for the spread of x, Σw²x and Σw²x² (with Σwx the mean).
type rowSE struct {
	sw, sw2, swx, sw2x, sw2x2 float64
}

// add adds a row of error x and weight w.
func (a *rowSE) add(x, w float64) {
	a.sw += w
	a.sw2 += w * w
	a.swx += w * x
	a.sw2x += w * w * x
	a.sw2x2 += w * w * x * x
}

// meanSE is the weighted mean x̄ = Σwx/Σw and its standard error
// √(Σw²(x − x̄)²)/Σw (for unit weights, the population standard
// deviation of x over √n).
func (a *rowSE) meanSE() (mean, se float64) {
	if !(a.sw > 0) {
		return 0, 0
	}
	mean = a.swx / a.sw
	v := a.sw2x2 - 2*mean*a.sw2x + mean*mean*a.sw2
	return mean, math.Sqrt(max(v, 0)) / a.sw
}

// regressionSE is the standard error of a validation RMSE from the rows'
// squared errors accumulated in a (x = the row's squared error, averaged
// over the outputs): the standard error of the MSE over 2·RMSE (the delta
// method). 0 for a perfect fit.
func regressionSE(a *rowSE) float64 {
	mse, se := a.meanSE()
	if !(mse > 0) {
		return 0
	}
	return se / (2 * math.Sqrt(mse))
}

// errorRateSE is the standard error of an error rate p over rows whose
// weights a holds: √(p(1 − p)·Σw²)/Σw, the binomial √(p(1 − p)/n) with
// the weights' effective number of rows (Σw)²/Σw² (it takes a row's
// error as independent of its weight).
func errorRateSE(p float64, a *rowSE) float64 {
	if !(a.sw > 0) || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0
	}
	return math.Sqrt(max(p*(1-p), 0)*a.sw2) / a.sw
}

// pickCandidates returns the candidate with the lowest BestMetric (the
// first in grid order; -1 when every candidate failed) and the one the
// one-standard-error rule takes: among the candidates whose BestMetric is
// at most the lowest's plus its BestSE, the largest λ, then the largest
// σ (a kernel without one σ, as ARD's, counts as the smallest), then the
// lowest BestMetric. Without a finite standard error it is the lowest.
func pickCandidates(cands []TuneCandidate) (lowest, oneSE int) {
	lowest = -1
	for i := range cands {
		if usable(&cands[i]) && (lowest < 0 || cands[i].BestMetric < cands[lowest].BestMetric) {
			lowest = i
		}
	}
	if lowest < 0 {
		return -1, -1
	}
	se := cands[lowest].BestSE
	if math.IsNaN(se) || math.IsInf(se, 0) || se < 0 {
		se = 0
	}
	limit := cands[lowest].BestMetric + se
	oneSE = lowest
	for i := range cands {
		c, o := &cands[i], &cands[oneSE]
		if !usable(c) || !(c.BestMetric <= limit) {
			continue
		}
		if c.Lambda > o.Lambda || (c.Lambda == o.Lambda && (c.Sigma > o.Sigma ||
			(c.Sigma == o.Sigma && c.BestMetric < o.BestMetric))) {
			oneSE = i
		}
	}
	return lowest, oneSE
}

// usable reports whether a candidate has a model and a finite metric.
func usable(c *TuneCandidate) bool {
	return c.Stop != StopFailed && c.BestIteration > 0 && !math.IsInf(c.BestMetric, 0) && !math.IsNaN(c.BestMetric)
}

// applyPick sets res.Lowest, res.OneSE, res.Pick and res.Best (the pick
// of rule, "" meaning DefaultPick) from its candidates. When no
// candidate has a finite metric, all three are the first candidate with a
// model (0 when none has).
func applyPick(res *TuneResult, rule PickRule) {
	if rule == "" {
		rule = DefaultPick
	}
	lowest, oneSE := pickCandidates(res.Candidates)
	if lowest < 0 {
		// No finite metric: the first candidate with a model, as before.
		lowest = 0
		for i := range res.Candidates {
			if c := &res.Candidates[i]; c.Stop != StopFailed && c.BestIteration > 0 {
				lowest = i
				break
			}
		}
		oneSE = lowest
	}
	res.Lowest, res.OneSE, res.Pick = lowest, oneSE, rule
	res.Best = lowest
	if rule == PickOneSE {
		res.Best = oneSE
	}
}

// candidateSE is the standard error of a candidate's validation metric v
// from the rows accumulated in a: regressionSE for RMSE, errorRateSE for
// an error rate; 0 when it is not finite.
func candidateSE(task Task, v float64, a *rowSE) float64 {
	se := errorRateSE(v, a)
	if task == TaskRegression {
		se = regressionSE(a)
	}
	if math.IsNaN(se) || math.IsInf(se, 0) {
		return 0
	}
	return se
}

// addRowErrors adds n validation rows to c's standard-error sums: scores
// sc (n × k, target means included), targets y (n × kt) and weights w
// (nil: 1 each). For regression a row's error is its squared error
// averaged over the k outputs; for classification only the weights are
// needed (errorRateSE).
func (c *tuneCand) addRowErrors(reg bool, sc, y, w []float64, n, k, kt int) {
	for r := range n {
		wr := 1.0
		if w != nil {
			wr = w[r]
		}
		x := 0.0
		if reg {
			for j := range k {
				d := sc[r*k+j] - y[r*kt+j]
				x += d * d
			}
			x /= float64(k)
		}
		c.rse.add(x, wr)
	}
}
