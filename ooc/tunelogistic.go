package ooc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// tuneLogistic is Tune for the logistic loss (Base.Loss): every (σ, λ)
// of the grid runs Newton's method as a logistic Fit on the training rows
// would, and the candidates share every pass (newtonRun: one group of
// columns per σ, K per λ, so one gradient pass per Newton step and one
// pass per CG iteration for the whole grid, where one Fit per candidate
// made as many for each). They share the centre sampling and, per σ,
// K_MM and T. Every candidate is validated after each Newton step
// (newtonVal): with validation rows held out of src (ValFraction), the
// passes read the whole data and each line search's gradient pass scores
// them, with no pass of their own; a validation source of its own is
// scored in a pass over it per step. The lowest error rate of the kept
// α's validations wins. The stopping rules are the squared
// loss's, counted in Newton steps: Patience (0: DefaultPatience) stops a
// candidate whose validation stopped improving by MinImprovement and
// keeps its best step's α, and Halving stops the worse half of the live
// candidates after Newton steps Halving, 2·Halving, 4·Halving, …; σ
// halving does not apply. A candidate's model is, up to rounding, the
// logistic Fit's with the same Patience, and its BestIteration is its CG
// iterations up to its best step. Memory: a preconditioner (8M² bytes)
// per σ, and during a step one more per candidate.
func tuneLogistic(ctx context.Context, src stream.Source, tc TuneConfig, opts RunOptions) (*TuneResult, error) {
	start := time.Now()
	if err := ValidateTune(tc, opts); err != nil {
		return nil, err
	}
	base := tc.Base
	train, val, frac, err := searchRows(src, tc, opts)
	if err != nil {
		return nil, err
	}
	var hold *pass.Holdout // the validation rows held out of src: the passes score them
	if frac > 0 {
		hold = &pass.Holdout{Fraction: frac, Seed: base.Seed}
	}
	// The candidates' memory is the search's to check (below), and their
	// preconditioner is Cholesky.
	base.Preconditioner = cmp.Or(base.Preconditioner, precond.MethodCholesky)
	plan, err := Plan(train, base, RunOptions{Workers: opts.Workers, MaxMemory: -1})
	if err != nil {
		return nil, err
	}
	if plan.Task != TaskRegression && len(plan.Targets) > 0 {
		if val, err = relabel(val, "the validation data", plan.Targets[0], labelCodes(plan.labels)); err != nil {
			return nil, err
		}
	}
	kernels, lambdas := searchGrid(tc, plan.Config, plan.D)
	res := &TuneResult{N: plan.N, ValRows: stream.Rows(val), M: plan.Config.Centers, Metric: "error_rate"}
	live := len(kernels) * len(lambdas)
	report := func(p Progress) {
		if opts.SearchProgress != nil {
			p.Elapsed = time.Since(start)
			opts.SearchProgress(TuneProgress{Progress: p, Live: live})
		}
	}
	// Memory, before any pass: per σ a preconditioner (T and an unused A),
	// and during a Newton step one more A per candidate.
	maxRows := 0
	for i := range plan.src.NumChunks() {
		maxRows = max(maxRows, plan.src.ChunkRows(i))
	}
	s, l := len(kernels), len(lambdas)
	est := func(prec precond.Precision) Memory {
		mem := EstimateTuneMemory(plan.Config.Centers, plan.D, max(plan.K, 1), s, l, opts.Workers, maxRows, prec)
		extra := int64(s) * precond.Bytes(plan.Config.Centers, prec)
		mem.Precond += extra
		mem.Total += extra
		return mem
	}
	var note string
	res.Memory, plan.Config.PrecondPrecision, note, err = searchMemory(tc.Base.PrecondPrecision, opts.memoryLimit(), est, "logistic search",
		fmt.Sprintf("over %d σ × %d λ with M = %d", s, l, plan.Config.Centers),
		func(m Memory) string {
			return fmt.Sprintf("one M × M buffer for each σ and, during a Newton step, one for each of the %d candidates: %s", s*l, FormatBytes(m.Precond))
		})
	if err != nil {
		return nil, err
	}
	if note != "" {
		report(Progress{Note: note})
	}
	ph := &phaseClock{}
	ph.start("sample", 0)
	// The centres are drawn where the data is (RowReader), as Tune's.
	cs, err := sampleCentres(ctx, plan, report, rowReader(opts.Executor))
	if err != nil {
		return nil, err
	}
	enc, err := plan.encoding(cs.distinct)
	if err != nil {
		return nil, err
	}
	res.M = cs.m
	steps := base.NewtonSteps
	if steps == 0 {
		steps = DefaultNewtonSteps
	}
	passFn := passOver(plan.src, opts)
	if hold != nil {
		// The passes read the whole data and score the held-out rows.
		passFn = passOver(spread(src), opts)
	}
	type cand struct {
		TuneCandidate
		nc      *newtonCand
		cfg     Config
		op      *fitOperator
		metrics *Metrics // of the validation of the α it keeps
	}
	var cands []*cand
	patience := tc.Patience
	if patience == 0 {
		patience = DefaultPatience
	}
	run := &newtonRun{m: cs.m, k: enc.k, steps: steps, iters: base.Iterations, workers: plan.Workers, tol: base.Tolerance,
		targets: plan.Targets[:1], pass: passFn, hold: hold, rule: stopRule(patience, tc.MinImprovement), halving: tc.Halving,
		balance: base.ClassWeight == ClassWeightBalanced, task: enc.task, classes: enc.classes, rows: plan.N}
	var tmpl *fitOperator // any σ's, for the validations' evaluator
	byNewton := map[*newtonCand]*cand{}
	for _, kn := range kernels {
		// Per σ: K_MM and T once (the preconditioner's A at the first λ
		// is not used: each step factorises its own).
		pk := *plan
		pk.Config.Kernel, pk.Config.Lambda = kn, lambdas[0]
		op, err := newFitOperator(ctx, &pk, cs, enc, passFn, report, ph, "")
		var g *newtonGroup
		if err == nil {
			g = newNewtonGroup(&pk, cs, kn, op)
			run.base, tmpl = op.rhsJob, op
			run.groups = append(run.groups, g)
		} else if ctx.Err() != nil {
			return nil, err
		}
		for _, l := range lambdas {
			c := &cand{TuneCandidate: TuneCandidate{Lambda: l, Kernel: kn, BestMetric: math.Inf(1), Stop: StopIterations}, op: op}
			if kn.Sigmas == nil && kn.Kind.IsDistance() {
				c.Sigma = kn.Sigma
			}
			c.cfg = pk.Config
			c.cfg.Lambda = l
			if err != nil {
				c.Stop, c.Err = StopFailed, err.Error()
			} else {
				c.nc = newNewtonCand(newtonPath(l, steps), cs.m*enc.k)
				g.cands = append(g.cands, c.nc)
				byNewton[c.nc] = c
			}
			cands = append(cands, c)
		}
	}
	var rows rowSE // the validation rows' weights, for BestSE
	if len(run.groups) > 0 {
		m, err := newModel(newModelMeta(plan, cs, enc, plan.Config, make([]float64, enc.k), Training{}), cs.centres,
			make([]float64, cs.m*enc.k), nil, tmpl.cfit)
		if err != nil {
			return nil, err
		}
		v := &newtonVal{rows: stream.Rows(val), newEval: m.NewEvaluator}
		if hold == nil {
			// A validation source of its own is scored locally, as Tune
			// scores it: an executor's passes read the training data.
			v.src, v.pass = val, passOver(val, RunOptions{Workers: opts.Workers})
		}
		v.done = func(nc *newtonCand, ev *Evaluator, best bool) error {
			c := byNewton[nc]
			met := ev.Metrics()
			c.Validation = append(c.Validation, ValPoint{Iteration: nc.iters, Metrics: met.Brief()})
			if best || run.rule.Patience <= 0 { // the α it keeps
				c.metrics = met
			}
			if rows.sw == 0 {
				for r := range int(v.rows) {
					wr := 1.0
					if v.weighted {
						wr = v.w[r]
					}
					rows.add(0, wr)
				}
			}
			return nil
		}
		run.val = v
		run.report, run.ph = report, ph
		run.onStop = func(nc *newtonCand) {
			c := byNewton[nc]
			report(Progress{Stage: StageIterate, Note: fmt.Sprintf("σ = %g, λ = %g: %s", c.Kernel.Sigma, c.Lambda, nc.note)})
		}
		run.afterStep = func(t int) error {
			live = 0
			for _, c := range cands {
				if c.nc != nil && active(c.nc) {
					live++
				}
			}
			return nil
		}
		if err := run.run(ctx, 0); err != nil {
			return nil, err
		}
	}
	res.Passes = 1 + run.passes
	centres := slices.Clone(cs.centres)
	for _, c := range cands {
		nc := c.nc
		if nc == nil {
			continue
		}
		switch {
		case nc.err != nil:
			c.Stop, c.Err = StopFailed, nc.err.Error()
			continue
		case nc.stop == StatusNoDescent:
			c.Stop, c.Err = StopNoDescent, nc.note
		case nc.stop == StatusPatience:
			c.Stop = StopPatience
		case nc.stop == statusHalved:
			c.Stop = StopHalving
		}
		tr := Training{Iterations: nc.iters, Status: cmp.Or(nc.stop, StatusIterationLimit), NewtonSteps: nc.steps, Residuals: nc.residuals,
			BestIteration: nc.bestIters, Validation: slices.Clone(c.Validation)}
		tr.setUp(plan, cs, c.op.pre, run.n, run.classWeights)
		err := finiteAlpha(nc.alpha, nil, enc.k)
		var m *Model
		if err == nil {
			m, err = newModel(newModelMeta(plan, cs, enc, c.cfg, make([]float64, enc.k), tr), centres, slices.Clone(nc.alpha), nil, c.op.cfit)
		}
		if err != nil {
			c.Stop, c.Err = StopFailed, err.Error()
			continue
		}
		c.model, c.Residuals, c.Iterations, c.BestIteration = m, nc.residuals, nc.iters, cmp.Or(nc.bestIters, nc.iters)
		if c.metrics != nil {
			c.BestMetric = selectionMetric(m.Task(), c.metrics)
			c.BestSE = candidateSE(m.Task(), c.BestMetric, &rows)
		}
	}
	now := time.Since(start).Seconds()
	failed := true
	for _, c := range cands {
		c.Seconds = now
		failed = failed && c.Stop == StopFailed
		res.Candidates = append(res.Candidates, c.TuneCandidate)
	}
	if failed {
		return nil, fmt.Errorf("every candidate failed: %s", res.Candidates[0].Err)
	}
	applyPick(res, tc.Pick, tc.Base.MinImprovement)
	res.Phases = ph.done()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
