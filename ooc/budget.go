package ooc

import "math"

// Improvement is a candidate's (or a fit's) last improvement of its
// validation metric: at Iteration it fell from From (the best before) to
// To. Still says whether that was the last validation, so that the
// candidate stopped while its validation was still improving.
type Improvement struct {
	Iteration int     `json:"iteration"`
	From      float64 `json:"from"`
	To        float64 `json:"to"`
	Still     bool    `json:"still_improving"`
}

// DefaultMaxPasses is TuneConfig.MaxPasses when 0, for a search whose
// candidates stop by patience when patience > 0 and whose Base.Iterations
// is iters, with the validation rows held out of the training data
// (heldOut) or a source of their own: the centre sampling, the
// right-hand side, 2·iters CG iterations and (held out) the final
// validation, so that a candidate whose validation still improves at
// iters continues by the patience rule for as many again. Without
// patience nothing would stop a candidate before the budget: iters CG
// iterations, as each candidate's cap.
func DefaultMaxPasses(iters, patience int, heldOut bool) int {
	n := 2 + iters
	if patience > 0 {
		n += iters
	}
	if heldOut {
		n++
	}
	return n
}

// maxPasses is the search's budget of passes (TuneConfig.MaxPasses or
// its default).
func (t *tuner) maxPasses() int {
	if t.tc.MaxPasses > 0 {
		return t.tc.MaxPasses
	}
	return DefaultMaxPasses(t.plan.Config.Iterations, t.tc.Patience, t.val == nil)
}

// cgBudget is the most CG iterations the search's budget of passes
// allows after the passes made so far (the centre sampling and the
// right-hand side), keeping one for the final validation over held-out
// rows (a validation source is not counted: it is not the training
// data). At least 1.
func (t *tuner) cgBudget() int {
	final := 0
	if t.val == nil {
		final = 1
	}
	return max(t.maxPasses()-t.passes-final, 1)
}

// capStop is the stop reason of a candidate still live when CG ended
// after iters iterations of the budget's most: StopBudget when the
// budget ran out beyond baseIters (Base.Iterations), else StopIterations
// (the cap was Base.Iterations, or CG reached its tolerance).
func capStop(iters, budget, baseIters int) string {
	if iters >= budget && budget > baseIters {
		return StopBudget
	}
	return StopIterations
}

// lastImprovement returns the last improvement of the metric the
// stopping rules watch (stoppingMetric) of task in vals (the validation history, best at iteration best): the
// metric at best against the best before it. nil without an earlier
// finite metric to compare with.
func lastImprovement(task Task, vals []ValPoint, best int) *Improvement {
	prev, at := math.Inf(1), math.NaN()
	for i := range vals {
		v := stoppingMetric(task, &vals[i].Metrics)
		switch {
		case vals[i].Iteration < best:
			prev = min(prev, v)
		case vals[i].Iteration == best:
			at = v
		}
	}
	if math.IsInf(prev, 1) || math.IsNaN(at) {
		return nil
	}
	return &Improvement{Iteration: best, From: prev, To: at, Still: len(vals) > 0 && vals[len(vals)-1].Iteration == best}
}

// StoppedAtCap returns, for a model whose fit ran all its
// Config.Iterations (Status StatusIterationLimit) while validating every
// iteration, the last improvement of its validation metric as the
// stopping rules watch it (RMSE, or 1 − AUC for classification), which
// says whether the validation
// was still improving at the cap; nil otherwise.
func StoppedAtCap(m *Model) *Improvement {
	tr := m.Training()
	if tr.Status != StatusIterationLimit || len(tr.Validation) < 2 || tr.Iterations < m.Config().Iterations {
		return nil
	}
	return lastImprovement(m.Task(), tr.Validation, tr.BestIteration)
}
