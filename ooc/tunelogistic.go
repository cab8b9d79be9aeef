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
// K_MM and T. With validation rows held out of src (ValFraction), the
// passes read the whole data and each line search's gradient pass scores
// them (newtonHeld): every candidate is validated after each Newton step
// with no pass of its own. A validation source of its own is scored once
// at the end, in one pass for every candidate. The lowest error rate of
// the last validations wins. A candidate's model is, up to rounding, the
// logistic Fit's. Patience, Halving and σ halving do not apply (each
// candidate runs its NewtonSteps), and a candidate's BestIteration is its
// CG iterations in all. Memory: a
// preconditioner (8M² bytes) per σ, and during a step one more per
// candidate.
func tuneLogistic(ctx context.Context, src stream.Source, tc TuneConfig, opts RunOptions) (*TuneResult, error) {
	start := time.Now()
	if err := ValidateTune(tc, opts); err != nil {
		return nil, err
	}
	base := tc.Base
	train, val := src, opts.Validation
	var hold *pass.Holdout // the validation rows held out of src: the passes score them
	var err error
	if val == nil {
		frac := tc.ValFraction
		if frac == 0 {
			frac = DefaultValFraction
		}
		if train, val, err = holdOut(src, frac, base.Seed, "TuneConfig.ValFraction"); err != nil {
			return nil, err
		}
		hold = &pass.Holdout{Fraction: frac, Seed: base.Seed}
	} else if val, err = AlignLabels(src, val); err != nil {
		return nil, err
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
		passFn = passOver(spread(src), opts)
	}
	type cand struct {
		TuneCandidate
		nc      *newtonCand
		g       int
		cfg     Config
		op      *fitOperator
		metrics *Metrics // of its last validation in the passes
	}
	var cands []*cand
	run := &newtonRun{m: cs.m, k: enc.k, steps: steps, iters: base.Iterations, workers: plan.Workers, tol: base.Tolerance,
		targets: plan.Targets[:1], pass: passFn,
		balance: base.ClassWeight == ClassWeightBalanced, task: enc.task, classes: enc.classes, rows: plan.N}
	var ops []*fitOperator
	for _, kn := range kernels {
		// Per σ: K_MM and T once (the preconditioner's A at the first λ
		// is not used: each step factorises its own).
		pk := *plan
		pk.Config.Kernel, pk.Config.Lambda = kn, lambdas[0]
		op, err := newFitOperator(ctx, &pk, cs, enc, passFn, report, ph, "")
		var g *newtonGroup
		if err == nil {
			g = newNewtonGroup(&pk, cs, kn, op)
			run.base = op.rhsJob
		} else if ctx.Err() != nil {
			return nil, err
		}
		for _, l := range lambdas {
			c := &cand{TuneCandidate: TuneCandidate{Lambda: l, Kernel: kn, BestMetric: math.Inf(1), Stop: StopIterations}, g: len(ops), op: op}
			if kn.Sigmas == nil && kn.Kind.IsDistance() {
				c.Sigma = kn.Sigma
			}
			c.cfg = pk.Config
			c.cfg.Lambda = l
			if err != nil {
				c.Stop, c.Err = StopFailed, err.Error()
			} else {
				c.nc = &newtonCand{path: newtonPath(l, steps), alpha: make([]float64, cs.m*enc.k)}
				g.cands = append(g.cands, c.nc)
			}
			cands = append(cands, c)
		}
		ops = append(ops, op)
		if g != nil {
			run.groups = append(run.groups, g)
		}
	}
	var rows rowSE // the validation rows' weights, for BestSE
	if hold != nil && len(run.groups) > 0 {
		var op *fitOperator
		for _, o := range ops {
			op = cmp.Or(op, o)
		}
		tmpl, err := newModel(newModelMeta(plan, cs, enc, plan.Config, make([]float64, enc.k), Training{}), cs.centres, make([]float64, cs.m*enc.k), nil, op.cfit)
		if err != nil {
			return nil, err
		}
		byNewton := map[*newtonCand]*cand{}
		for _, c := range cands {
			byNewton[c.nc] = c
		}
		run.hold = hold
		run.held = &newtonHeld{rows: stream.Rows(val), newEval: tmpl.NewEvaluator, done: func(nc *newtonCand, ev *Evaluator) error {
			c := byNewton[nc]
			c.metrics = ev.Metrics()
			c.Validation = append(c.Validation, ValPoint{Iteration: nc.iters, Metrics: c.metrics.Brief()})
			if rows.sw == 0 {
				for r := range int(run.held.rows) {
					wr := 1.0
					if run.held.weighted {
						wr = run.held.w[r]
					}
					rows.add(0, wr)
				}
			}
			return nil
		}}
	}
	if len(run.groups) > 0 {
		total := 0
		run.onStep = func(t int) { ph.start("newton", t+1) }
		run.gradReport = func(t, done, chunks int, rows int64) {
			report(Progress{Stage: StageRHS, Iteration: t + 1, Iterations: steps, Chunk: done, Chunks: chunks, Rows: rows})
		}
		run.iterReport = func(it, done, chunks int, rows int64, residual float64) {
			report(Progress{Stage: StageIterate, Iteration: total + it, Iterations: steps * base.Iterations,
				Chunk: done, Chunks: chunks, Rows: rows, Residual: residual})
		}
		run.onStop = func(nc *newtonCand) {
			for _, c := range cands {
				if c.nc == nc {
					report(Progress{Stage: StageIterate, Note: fmt.Sprintf("σ = %g, λ = %g: %s", c.Kernel.Sigma, c.Lambda, nc.note)})
				}
			}
		}
		run.afterStep = func(t int) error {
			total = (t + 1) * base.Iterations
			live = 0
			for _, c := range cands {
				if c.nc != nil && c.nc.err == nil {
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
	// The models, then, for a validation source of its own, every
	// candidate's validation in one scoring pass.
	centres := slices.Clone(cs.centres)
	var scored []*cand
	job := &pass.Job{Kind: pass.GroupKernelProduct, Precision: plan.Config.Precision, M: cs.m, D: plan.D, K: enc.k,
		Centers: cs.centres, Mean: cs.std.mean, InvStd: cs.std.invStd, Task: enc.task, Classes: enc.classes,
		Features: plan.Features, Targets: plan.Targets[:1], Weight: stream.WeightColumn(val), WeightExp: weightExp(val), ScoreRows: stream.Rows(val)}
	groupOf := map[int]int{}
	for _, c := range cands {
		if c.nc != nil && c.nc.err != nil {
			c.Stop, c.Err = StopFailed, c.nc.err.Error()
		} else if c.nc != nil && c.nc.stop == StatusNoDescent {
			c.Stop, c.Err = StopNoDescent, c.nc.note
		}
		if c.Stop == StopFailed {
			continue
		}
		nc := c.nc
		tr := Training{Iterations: nc.iters, Status: cmp.Or(nc.stop, StatusIterationLimit), NewtonSteps: nc.steps, Residuals: nc.residuals}
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
		c.model, c.Residuals, c.Iterations, c.BestIteration = m, nc.residuals, nc.iters, nc.iters
		if hold != nil {
			// Validated in the passes, step by step.
			if c.metrics != nil {
				m.training.Validation = slices.Clone(c.Validation)
				c.BestMetric = selectionMetric(m.Task(), c.metrics)
				c.BestSE = candidateSE(m.Task(), c.BestMetric, &rows)
			}
			continue
		}
		gi, ok := groupOf[c.g]
		if !ok {
			gi = len(job.Groups)
			groupOf[c.g] = gi
			job.Groups = append(job.Groups, pass.Group{Kernel: c.Kernel})
			job.PreparedGroups = append(job.PreparedGroups, c.op.cfit.WithInputMap(cs.std.mean, cs.std.invStd))
		}
		g := &job.Groups[gi]
		alpha := make([]float64, cs.m*(g.Cols+enc.k))
		if g.Cols > 0 {
			setCols(alpha, g.Cols+enc.k, 0, g.Alpha, g.Cols)
		}
		setCols(alpha, g.Cols+enc.k, g.Cols, nc.alpha, enc.k)
		g.Alpha, g.Cols = alpha, g.Cols+enc.k
		scored = append(scored, c)
	}
	if len(scored) > 0 {
		ph.start("validation", run.steps*base.Iterations)
		report(Progress{Stage: StageValidate})
		valPass := passOver(val, opts)
		if opts.Validation != nil {
			// A validation source of its own is scored locally, as Tune
			// scores it: an executor's passes read the training data.
			valPass = passOver(val, RunOptions{Workers: opts.Workers})
		}
		vals, err := valPass(ctx, job, func(done, chunks int, rows int64) {
			report(Progress{Stage: StageValidate, Chunk: done, Chunks: chunks, Rows: rows})
		})
		if err != nil {
			return nil, fmt.Errorf("validation: %w", err)
		}
		res.Passes++
		rowLen, n := job.RowLen(), int(job.ScoreRows)
		col := make([]int, len(job.Groups)) // the group's first column in a row
		for i := 1; i < len(col); i++ {
			col[i] = col[i-1] + job.Groups[i-1].Cols
		}
		y := make([]float64, n)
		var w []float64
		if job.Weight != "" {
			w = make([]float64, n)
		}
		nextCol := make([]int, len(job.Groups))
		sc := make([]float64, n*enc.k)
		for r := range n {
			y[r] = vals[r*rowLen+rowLen-1-weightValues(job)]
			if w != nil {
				w[r] = vals[(r+1)*rowLen-1]
			}
			wr := 1.0
			if w != nil {
				wr = w[r]
			}
			rows.add(0, wr)
		}
		for _, c := range scored {
			gi := groupOf[c.g]
			c0 := col[gi] + nextCol[gi]
			nextCol[gi] += enc.k
			for r := range n {
				copy(sc[r*enc.k:(r+1)*enc.k], vals[r*rowLen+c0:r*rowLen+c0+enc.k])
			}
			ev := c.model.NewEvaluator()
			if err := ev.AddWeighted(sc, y, w, n); err != nil {
				return nil, fmt.Errorf("validation: %w", err)
			}
			c.Validation = []ValPoint{{Iteration: c.Iterations, Metrics: ev.Metrics().Brief()}}
			c.model.training.Validation = slices.Clone(c.Validation)
			c.BestMetric = selectionMetric(c.model.Task(), ev.Metrics())
			c.BestSE = candidateSE(c.model.Task(), c.BestMetric, &rows)
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
	applyPick(res, tc.Pick)
	res.Phases = ph.done()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
