package engine

import (
	"cmp"
	"math"
	"slices"
)

// Rule is the stopping rule every fit and search applies to each
// candidate's validation metric, lower being better (RMSE, error rate,
// 1 − AUC): the candidate keeps its best validated iterate, and stops
// once Patience validations in a row bring no relative improvement of
// MinImprovement over the last validation that did. Its fields are
// resolved: the callers' defaults (ooc.Config.Patience 0 →
// ooc.DefaultPatience) are applied before.
type Rule struct {
	// Patience is the number of validations in a row without an
	// improvement of MinImprovement after which the candidate stops.
	// 0 or negative: it never stops by patience.
	Patience int
	// MinImprovement is the relative improvement that counts for
	// Patience: v improves on the reference r when v < r·(1 −
	// MinImprovement). 0 counts any strict improvement. It does not
	// decide the best iterate, which is the lowest metric so far.
	MinImprovement float64
}

// Tracker is one candidate's state under a Rule. Its fields are what a
// checkpoint saves to resume the rule exactly. The zero Tracker is not
// ready: use NewTracker.
type Tracker struct {
	// Best is the lowest metric so far (+Inf before any finite one) and
	// BestIter its iteration (0 before any): the iterate the candidate
	// keeps.
	Best     float64
	BestIter int
	// Ref is the metric of the last improvement by MinImprovement (+Inf
	// before any finite one) and Since the validations since then.
	Ref   float64
	Since int
	// Validated is the last iteration observed (0 before any).
	Validated int
}

// NewTracker returns the state of a candidate before any validation.
func NewTracker() Tracker { return Tracker{Best: math.Inf(1), Ref: math.Inf(1)} }

// Observe records the metric v of the iterate iter under r. best reports
// that v is the lowest so far (strictly; a first +Inf is not): the
// caller keeps that iterate. stop reports that the candidate has now run
// out of patience. A NaN metric counts as +Inf: never an improvement.
func (t *Tracker) Observe(r Rule, iter int, v float64) (best, stop bool) {
	if math.IsNaN(v) {
		v = math.Inf(1)
	}
	t.Validated = iter
	if v < t.Best {
		t.Best, t.BestIter, best = v, iter, true
	}
	if v < t.Ref*(1-r.MinImprovement) || (math.IsInf(t.Ref, 1) && !math.IsInf(v, 1)) {
		t.Ref, t.Since = v, 0
		return best, false
	}
	t.Since++
	return best, r.Patience > 0 && t.Since >= r.Patience
}

// Stopped reports whether t, restored from a checkpoint, had already run
// out of r's patience. A tracker without a best iterate has nothing to
// keep and is not stopped (a checkpoint saves none).
func (r Rule) Stopped(t *Tracker) bool {
	return r.Patience > 0 && t.BestIter > 0 && t.Since >= r.Patience
}

// IsHalvingStep reports whether iter is a step of successive halving
// every h iterations: h·2^j for some j ≥ 0. It is false for h ≤ 0.
func IsHalvingStep(iter, h int) bool {
	if h <= 0 || iter <= 0 || iter%h != 0 {
		return false
	}
	q := iter / h
	return q&(q-1) == 0
}

// WorseHalf returns the indices into best (the live candidates' best
// metrics) of the worse half, ⌊len/2⌋ of them, that successive halving
// stops: the better ⌈half⌉ stay. Ties keep the earlier candidate.
func WorseHalf(best []float64) []int {
	idx := make([]int, len(best))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(best[a], best[b]) })
	return idx[(len(idx)+1)/2:]
}
