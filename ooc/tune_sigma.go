package ooc

import (
	"cmp"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
)

// DefaultSigmaSteps returns the iterations after which Tune halves the
// σ when TuneConfig.SigmaSteps is nil and SigmaHalving 0: 2, 4 and 10
// (5 σ → 3 → 2 → 1). bench/TUNE.md has how it was chosen: replayed on the
// recorded validation curves of five data sets, every schedule whose last
// step comes before iteration 9 picks a σ 5.6 % worse on bike (whose best
// σ overtakes the runner-up at iteration 9), and a first step at
// iteration 1 misses on california; steps 2–3, 3–6 and 9–12 all pick the
// best candidate on all five, and 2, 4, 10 does it with the least work.
func DefaultSigmaSteps() []int { return []int{2, 4, 10} }

// StopSigmaHalving is the stop reason of a candidate whose σ was in the
// worse half of the σ still in the pass at a σ-halving step.
const StopSigmaHalving = "sigma-halving"

// sigmaHalving applies TuneConfig.SigmaSteps (or SigmaHalving) after the
// validation of iteration iter: at those iterations it ranks the σ groups that
// still have a live candidate by the best validation metric any of their
// candidates reached so far (stopped ones included: their best iterate is
// kept and may still be chosen) and stops every live candidate of the
// worse half (the better ⌈half⌉ stay), so that those σ's kernel blocks
// leave the pass. It returns the candidates it stopped.
func (t *tuner) sigmaHalving(iter int, now float64) []int {
	if steps := t.tc.SigmaSteps; steps != nil {
		if !slices.Contains(steps, iter) {
			return nil
		}
	} else if h := t.tc.SigmaHalving; !engine.IsHalvingStep(iter, h) {
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
