package ooc

import (
	"cmp"
	"math"
	"slices"
)

// DefaultSigmaHalving is the σ-halving step TuneConfig.SigmaHalving
// means by 0 (bench/TUNE.md: the schedule replayed on the recorded
// validation curves of five data sets, and timed).
const DefaultSigmaHalving = 3

// StopSigmaHalving is the stop reason of a candidate whose σ was in the
// worse half of the σ still in the pass at a σ-halving step.
const StopSigmaHalving = "sigma-halving"

// sigmaHalving applies TuneConfig.SigmaHalving after the validation of
// iteration iter: at iterations h, 2h, 4h, … it ranks the σ groups that
// still have a live candidate by the best validation metric any of their
// candidates reached so far (stopped ones included: their best iterate is
// kept and may still be chosen) and stops every live candidate of the
// worse half (the better ⌈half⌉ stay), so that those σ's kernel blocks
// leave the pass. It returns the candidates it stopped.
func (t *tuner) sigmaHalving(iter int, now float64) []int {
	h := t.tc.SigmaHalving
	if h <= 0 || !isHalvingStep(iter, h) {
		return nil
	}
	type ranked struct {
		g    *sigmaGroup
		best float64
	}
	var groups []ranked
	for _, g := range t.groups {
		live, best := false, math.Inf(1)
		for _, c := range g.cands {
			live = live || c.live
			best = min(best, c.BestMetric)
		}
		if live {
			groups = append(groups, ranked{g, best})
		}
	}
	if len(groups) < 2 {
		return nil
	}
	slices.SortStableFunc(groups, func(a, b ranked) int { return cmp.Compare(a.best, b.best) })
	var stopped []int
	for _, r := range groups[(len(groups)+1)/2:] {
		for _, c := range r.g.cands {
			if c.live {
				c.live, c.Stop, c.Seconds = false, StopSigmaHalving, now
				stopped = append(stopped, c.idx)
			}
		}
	}
	return stopped
}
