package ooc

import (
	"cmp"
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
	// PickTol takes the largest λ that the fit's own stopping rule could
	// not tell from the lowest: among the candidates whose stopping metric
	// (RMSE, or 1 − AUC for classification, at each candidate's kept
	// iterate) is within a relative Base.MinImprovement (default
	// DefaultMinImprovement, 0.1 %) of the lowest, the largest λ, then the
	// lower metric. A smaller λ costs CG iterations in the big fit; it must
	// earn them by the same relative gain that keeps one iteration going.
	// 1 − AUC moves with every score where the error rate moves in steps
	// of one row (bench/TUNE.md, "The tolerance pick").
	PickTol PickRule = "tol"
	// DefaultPick is TuneConfig.Pick when "": on the susy shape it carried
	// λ 1e-6 where the lowest error rate's 1e-7 needed 21 CG iterations
	// against 14, for a higher test AUC; on the UCI regression sets it
	// picks as PickBest does.
	DefaultPick = PickTol
)

// ParsePickRule parses a pick rule ("" is DefaultPick).
func ParsePickRule(s string) (PickRule, error) {
	switch r := PickRule(s); r {
	case "":
		return DefaultPick, nil
	case PickBest, PickOneSE, PickTol:
		return r, nil
	}
	return "", fmt.Errorf("unknown pick rule %q (want tol, best or 1se)", s)
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
	m := func(i int) float64 { return cands[i].BestMetric }
	lowest = lowestBy(cands, m)
	if lowest < 0 {
		return -1, -1
	}
	se := cands[lowest].BestSE
	if math.IsNaN(se) || math.IsInf(se, 0) || se < 0 {
		se = 0
	}
	return lowest, largestLambda(cands, m, lowest, cands[lowest].BestMetric+se, true)
}

// lowestBy returns the usable candidate with the lowest m (the first in
// grid order), -1 when none has one.
func lowestBy(cands []TuneCandidate, m func(int) float64) int {
	lowest := -1
	for i := range cands {
		if usable(&cands[i]) && !math.IsNaN(m(i)) && (lowest < 0 || m(i) < m(lowest)) {
			lowest = i
		}
	}
	return lowest
}

// largestLambda returns, among the usable candidates whose m is at most
// limit, the one with the largest λ, then (bySigma) the largest σ, then
// the lowest m, then the first in grid order; from (within the limit)
// when no other is.
func largestLambda(cands []TuneCandidate, m func(int) float64, from int, limit float64, bySigma bool) int {
	pick := from
	for i := range cands {
		c, p := &cands[i], &cands[pick]
		if !usable(c) || !(m(i) <= limit) {
			continue
		}
		if c.Lambda > p.Lambda || (c.Lambda == p.Lambda && ((bySigma && c.Sigma > p.Sigma) ||
			((!bySigma || c.Sigma == p.Sigma) && m(i) < m(pick)))) {
			pick = i
		}
	}
	return pick
}

// usable reports whether a candidate has a model and a finite metric.
func usable(c *TuneCandidate) bool {
	return c.Stop != StopFailed && c.BestIteration > 0 && !math.IsInf(c.BestMetric, 0) && !math.IsNaN(c.BestMetric)
}

// tolMetric returns the metric PickTol compares the candidates by and its
// name: the stopping metric at each candidate's kept iterate, 1 − AUC
// when every candidate with a model has an AUC there, else BestMetric
// (RMSE, or the error rate) for all, so that no two candidates are
// compared on different metrics.
func tolMetric(cands []TuneCandidate, metric string) (func(i int) float64, string) {
	auc := make([]float64, len(cands))
	all, seen := true, false
	for i := range cands {
		c := &cands[i]
		if !usable(c) {
			continue
		}
		a := math.NaN()
		if k := c.bestPoint(); k >= 0 {
			if p := c.Validation[k]; p.Iteration == c.BestIteration && p.AUC != nil {
				a = *p.AUC
			}
		}
		if math.IsNaN(a) {
			all = false
			break
		}
		auc[i], seen = 1-a, true
	}
	if all && seen {
		return func(i int) float64 { return auc[i] }, "1-auc"
	}
	return func(i int) float64 { return cands[i].BestMetric }, metric
}

// pickTolerance returns the candidate PickTol takes with the relative
// tolerance tol, comparing the candidates by m, and ref, the candidate
// with the lowest m (the first in grid order): among the candidates whose
// m is at most m(ref)·(1 + tol), the largest λ, then the lowest m, then
// the first in grid order. -1, -1 when no candidate has a finite metric.
func pickTolerance(cands []TuneCandidate, m func(int) float64, tol float64) (pick, ref int) {
	ref = lowestBy(cands, m)
	if ref < 0 {
		return -1, -1
	}
	return largestLambda(cands, m, ref, m(ref)+math.Abs(m(ref))*tol, false), ref
}

// applyPick sets res.Lowest, res.OneSE, res.Tol (with res.Tolerance
// and res.TolMetric), res.Pick and res.Best (the pick of rule, ""
// meaning DefaultPick) from its candidates; minImp is the fit's relative
// improvement (Config.MinImprovement, 0: DefaultMinImprovement), PickTol's
// tolerance. When no candidate has a finite metric, all the picks are the
// first candidate with a model (0 when none has).
func applyPick(res *TuneResult, rule PickRule, minImp float64) {
	rule = cmp.Or(rule, DefaultPick)
	lowest, oneSE := pickCandidates(res.Candidates)
	res.Tolerance = cmp.Or(minImp, DefaultMinImprovement)
	m, name := tolMetric(res.Candidates, res.Metric)
	res.TolMetric = name
	tol, _ := pickTolerance(res.Candidates, m, res.Tolerance)
	if lowest < 0 || tol < 0 {
		// No finite metric: the first candidate with a model, as before.
		lowest = 0
		for i := range res.Candidates {
			if c := &res.Candidates[i]; c.Stop != StopFailed && c.BestIteration > 0 {
				lowest = i
				break
			}
		}
		oneSE, tol = lowest, lowest
	}
	res.Lowest, res.OneSE, res.Tol, res.Pick = lowest, oneSE, tol, rule
	switch rule {
	case PickOneSE:
		res.Best = oneSE
	case PickTol:
		res.Best = tol
	default:
		res.Best = lowest
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
