package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// runTuned runs fit --tune's search and fit, reporting both.
func runTuned(ctx context.Context, o *fitOpts, cfg ooc.Config, set map[string]bool, train stream.Source, run ooc.RunOptions,
	pr *progress, dim int) (*ooc.Model, error) {
	tc, err := o.FitTunedConfig(cfg, set)
	if err != nil {
		return nil, err
	}
	o.SearchValRows(&tc, stream.Rows(train))
	var subStart time.Time
	run.SearchProgress = tuneProgress(pr, "fit --tune: search", dim, &subStart)
	pr.printf("fit --tune: searching σ × λ on a row subsample, then fitting all %d training rows at M = %d%s", stream.Rows(train), cfg.Centers,
		finalBudgetNote(tc, run.Validation == nil || heldOutOf(train, run.Validation)))
	return ooc.FitTuned(ctx, train, tc, run)
}

// heldOutOf reports whether val is held out of train's data, so that the
// fit scores it in its own passes.
func heldOutOf(train, val stream.Source) bool {
	_, _, _, ok := stream.HoldoutPair(train, val)
	return ok
}

// finalBudgetNote states the budget of fit --tune's final fit as
// ooc.FitTuned sets it (heldOut: its validation rows are held out of its
// input, scored in its passes, and one more pass scores its last
// iterate): "" for the logistic loss, which runs its Newton steps.
func finalBudgetNote(tc ooc.FitTunedConfig, heldOut bool) string {
	f := tc.Fit
	if f.Loss == ooc.LossLogistic {
		return ""
	}
	iters, patience := cmp.Or(f.Iterations, ooc.DefaultIterations), cmp.Or(f.Patience, ooc.DefaultPatience)
	budget := tc.Search.MaxPasses
	if budget == 0 {
		budget = ooc.DefaultMaxPasses(iters, patience, heldOut)
	}
	if patience < 0 {
		return fmt.Sprintf(", at most %d passes over the data (--max-passes)", budget)
	}
	return fmt.Sprintf(", at most %d passes over the data (--max-passes): past --iters %d the fit continues while its validation improves (--patience %d)",
		budget, iters, patience)
}

// writeHandoff prints the search's pick and what fit --tune carried.
func writeHandoff(w io.Writer, res *ooc.TuneResult, ho *ooc.Handoff) {
	best := res.Candidates[res.Best]
	fmt.Fprintf(w, "search     candidate %d: %s, λ = %g, validation %s %.6g; %d rows, %d validation rows, M = %d, %.2f s (+ %.2f s to draw the rows)\n",
		res.Best+1, best.Kernel, best.Lambda, res.Metric, best.BestMetric, ho.SearchRows, ho.SearchValRows, ho.SearchCenters,
		ho.SearchSeconds, ho.SubsampleSeconds)
	if l := pickLine(res); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := searchCapLine(res); l != "" {
		fmt.Fprintln(w, l)
	}
	for _, l := range failedLines(res) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "handoff    λ = %g (--handoff %s), σ as chosen\n", ho.Lambda, ho.Rule)
	switch sl := ho.Slope; {
	case sl == nil:
	case sl.Rows > 0:
		fmt.Fprintf(w, "slope      λ tolerated within 1 SE: %.3g on %d rows, %.3g on %d (M = %d, %d passes, %.2f s): α = %.2f\n",
			sl.Tolerated, ho.SearchRows, sl.ProbeTolerated, sl.Rows, sl.Centers, sl.Passes, sl.Seconds, sl.Exponent)
	default:
		fmt.Fprintf(w, "slope      not measured (%d search rows: too few for a probe on a quarter of them, or one λ): α = 1, as linear\n",
			ho.SearchRows)
	}
}

// tuneProgress prints a search's progress (tune, and fit --tune's
// search) under the name who.
func tuneProgress(pr *progress, who string, dim int, passStart *time.Time) func(ooc.TuneProgress) {
	var precondStart, ardStart time.Time
	asked := 0
	return func(p ooc.TuneProgress) {
		if p.Memory != nil {
			asked = p.M
			mem := *p.Memory
			budget := ""
			if p.MaxPasses > 0 {
				budget = fmt.Sprintf("; at most %d passes", p.MaxPasses)
			}
			pr.printf("%s: n = %d training rows, %d validation rows, d = %d, M = %d centres; memory needed ≈ %s%s",
				who, p.N, p.ValRows, dim, p.M, mem, budget)
			softMemoryLimit(mem)
			return
		}
		if p.Note != "" {
			pr.printf("%s: %s", who, flagText(p.Note))
			return
		}
		switch p.Stage {
		case ooc.StageSubsample, ooc.StageSample, ooc.StageRHS, ooc.StageIterate, ooc.StageValidate:
			if p.Stage == ooc.StageSample && p.Centers > 0 {
				centresNote(pr, who, p.Progress, asked, ooc.Memory{})
				return
			}
			step := string(p.Stage)
			if p.Stage == ooc.StageIterate || p.Stage == ooc.StageValidate {
				step = fmt.Sprintf("iteration %d/%d (%d candidates)", p.Iteration, p.Iterations, p.Live)
			}
			if p.Chunks > 0 {
				passUpdate(pr, step, p.Chunk, p.Chunks, passStart)
				return
			}
			if len(p.Stopped) > 0 {
				pr.printf("%s: after iteration %d, %d candidate(s) stopped, %d still in the pass", who, p.Iteration, len(p.Stopped), p.Live)
			}
		case ooc.StagePrecond:
			// Reported at 0 before the right-hand side's pass (the
			// factorisations run beside it), then by σ done, then 1.
			if precondStart.IsZero() {
				precondStart = time.Now()
				pr.printf("%s: factorising the preconditioners (K_MM and T per σ, A per candidate) beside the right-hand side's pass", who)
				return
			}
			pr.update("preconditioners", bar(p.Fraction)+eta(p.Fraction, 1, time.Since(precondStart)), p.Fraction == 1)
		case ooc.StageARD:
			if ardStart.IsZero() {
				ardStart = time.Now()
				pr.printf("%s: learning one length scale per feature on a subsample (--ard), %d gradient steps", who, p.Iterations)
				return
			}
			frac := float64(p.Iteration) / float64(max(p.Iterations, 1))
			pr.update("ard", fmt.Sprintf("%s step %d/%d%s", bar(frac), p.Iteration, p.Iterations,
				eta(float64(p.Iteration), float64(p.Iterations), time.Since(ardStart))), p.Iteration == p.Iterations)
		}
	}
}

// centresNote says, once sampling is done, when rows drawn as centres
// repeated others: replaced by other rows, or, when the data holds too
// few distinct rows, M lowered (with the memory at the lower M when mem
// is known). asked is the M asked for (0: unknown, said as "M").
func centresNote(pr *progress, who string, p ooc.Progress, asked int, mem ooc.Memory) {
	if p.Duplicates == 0 {
		return
	}
	if asked == 0 || p.Centers >= asked {
		pr.printf("%s: %d of the rows drawn as centres repeated another row and were replaced by other rows: %d distinct centres", who, p.Duplicates, p.Centers)
		return
	}
	line := fmt.Sprintf("%s: the data repeats rows: only %d distinct rows could be drawn as centres (%d draws repeated another), so M = %d, not %d",
		who, p.Centers, p.Duplicates, p.Centers, asked)
	if mem.Total > 0 {
		line += "; memory needed ≈ " + ooc.FormatBytes(mem.Total)
	}
	pr.printf("%s", line)
}
