package ooc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/falkon-ooc/falkon-ooc/internal/loss"
	"github.com/falkon-ooc/falkon-ooc/internal/procstat"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// NewtonStep records one Newton step of the logistic loss.
type NewtonStep struct {
	Lambda float64 `json:"lambda"`
	// Objective is (1/n) Σ wᵢ log(1 + e^(−yᵢ fᵢ)) + (λ/2) αᵀK̃α at the
	// step's start, with the step's λ (from its gradient pass).
	Objective float64 `json:"objective"`
	// GradNorm is ‖∇‖ at the step's start.
	GradNorm float64 `json:"grad_norm"`
	// Iterations are its CG iterations and Residual the last relative
	// CG residual.
	Iterations int     `json:"iterations"`
	Residual   float64 `json:"residual"`
	// Slope is ∇ᵀΔ, the objective's derivative along the step Δ (< 0).
	// Step is the length of Δ taken, 1 for the whole step (a line search
	// shortens it until the objective falls; 0 when it could not), and
	// After the objective after it, with the step's λ: never above
	// Objective.
	Slope float64 `json:"slope,omitempty"`
	Step  float64 `json:"step"`
	After float64 `json:"after"`
}

// newtonPath returns the λ of each of steps Newton steps: λ·10³, λ·10²,
// λ·10, then λ.
func newtonPath(lambda float64, steps int) []float64 {
	out := make([]float64, steps)
	for t := range out {
		out[t] = lambda * math.Pow(10, float64(max(0, 3-t)))
	}
	return out
}

// fitLogistic is Fit for Config.Loss = LossLogistic (LogisticFalkon), for
// K = 1 output (binary) or K one-against-the-rest outputs (multiclass: K
// binary problems sharing every pass and kernel block; the softmax loss
// would couple the classes in a K × K Hessian block per row, which a
// weighted FALKON solve cannot express as row weights): Newton's method
// (newtonRun) with one candidate, then the model, checkpointed after each
// step. With validation rows (RunOptions.Validation) each step is
// validated (newtonVal) and Config.Patience stops the steps and keeps the
// best step's α, as it stops CG for the squared loss; when those rows
// are held out of the data src is the rest of, the passes read the whole
// data and score them with no pass of their own.
func fitLogistic(ctx context.Context, plan *FitPlan, cs *centreSample, enc targetEncoding, op *fitOperator, src stream.Source,
	fp string, opts RunOptions, report func(Progress), ph *phaseClock, start time.Time) (*Model, error) {
	cfg := plan.Config
	m, k := cs.m, enc.k
	steps := cfg.NewtonSteps
	if steps == 0 {
		steps = DefaultNewtonSteps
	}
	nc := newNewtonCand(newtonPath(cfg.Lambda, steps), m*k)
	g := newNewtonGroup(plan, cs, cfg.Kernel, op)
	g.cands = []*newtonCand{nc}
	run := &newtonRun{m: m, k: k, steps: steps, iters: cfg.Iterations, workers: plan.Workers, tol: cfg.Tolerance, base: op.rhsJob,
		targets: plan.Targets[:1], pass: op.pass, groups: []*newtonGroup{g}, rule: stopRule(cfg.Patience, cfg.MinImprovement),
		balance: cfg.ClassWeight == ClassWeightBalanced, task: enc.task, classes: enc.classes, rows: plan.N}
	var vals []ValPoint
	var lastEv, bestEv *Evaluator // the validations of the last and the best α
	if opts.Validation != nil {
		tmpl, err := newModel(newModelMeta(plan, cs, enc, cfg, make([]float64, k), Training{}), cs.centres, make([]float64, m*k), nil, op.cfit)
		if err != nil {
			return nil, err
		}
		run.val = &newtonVal{rows: stream.Rows(opts.Validation), newEval: tmpl.NewEvaluator, done: func(c *newtonCand, ev *Evaluator, best bool) error {
			vp := ValPoint{Iteration: c.iters, Metrics: ev.Metrics().Brief()}
			vals, lastEv = append(vals, vp), ev
			if best {
				bestEv = ev
			}
			report(Progress{Stage: StageValidate, Iteration: len(c.steps), Iterations: steps, Val: &vp})
			return nil
		}}
		if root, frac, seed, ok := stream.HoldoutPair(src, opts.Validation); ok {
			run.pass, run.hold = passOver(spread(root), opts), &pass.Holdout{Fraction: frac, Seed: seed}
		} else {
			// A validation source of its own is scored locally.
			run.val.src, run.val.pass = opts.Validation, passOver(opts.Validation, RunOptions{Workers: opts.Workers})
		}
	}
	first := 0
	if res := opts.Resume; res != nil {
		if err := res.matches(fp, m, k); err != nil {
			return nil, err
		}
		if len(res.NewtonSteps) != res.Iteration {
			return nil, fmt.Errorf("%w: %d Newton steps recorded for %d done", ErrCheckpointMismatch, len(res.NewtonSteps), res.Iteration)
		}
		if run.balance && res.Iteration > 0 {
			if len(res.ClassWeights) != len(enc.classes) {
				return nil, fmt.Errorf("%w: the checkpoint has %d class weights for %d classes", ErrCheckpointMismatch, len(res.ClassWeights), len(enc.classes))
			}
			run.classWeights = slices.Clone(res.ClassWeights)
		}
		copy(nc.alpha, res.Beta)
		if slices.ContainsFunc(res.P, func(v float64) bool { return v != 0 }) {
			nc.dir = slices.Clone(res.P) // the last step, before its line search
		}
		first, nc.steps = res.Iteration, slices.Clone(res.NewtonSteps)
		for i, s := range nc.steps {
			nc.iters += s.Iterations
			nc.residuals = append(nc.residuals, s.Residual)
			if i < res.BestIteration {
				nc.bestIters += s.Iterations
			}
		}
		nc.track, nc.best = res.stop()
		if run.rule.Stopped(&nc.track) {
			nc.stop = StatusPatience
		}
	}
	run.report, run.ph, run.shown = report, ph, nc.iters
	run.onStop = func(c *newtonCand) {
		report(Progress{Stage: StageIterate, Note: "logistic loss: " + c.note})
	}
	ckw := checkpointWriter{save: opts.Checkpoint, fp: fp}
	run.afterStep = func(t int) error {
		if nc.err != nil {
			return nc.err
		}
		if !ckw.on() {
			return nil
		}
		// P holds the step not yet taken (its line search is the next
		// pass's).
		dir := nc.dir
		if dir == nil {
			dir = make([]float64, m*k)
		}
		// Iteration is the steps taken: t + 1, or t when the stopping
		// rule stopped it after step t (the checkpoint saves the stop).
		c := &Checkpoint{Iteration: len(nc.steps), M: m, K: k, Beta: slices.Clone(nc.alpha), R: make([]float64, m*k), P: slices.Clone(dir),
			RS: make([]float64, k), BN: make([]float64, k), NewtonSteps: slices.Clone(nc.steps)}
		if plan.Weight != "" || run.classWeights != nil {
			c.setWeights(run.n, run.classWeights, nil)
		}
		c.setStop(&nc.track, nc.best)
		return ckw.write(c, "Newton step")
	}
	if err := run.run(ctx, first); err != nil {
		return nil, err
	}
	tr := Training{Iterations: nc.iters, Status: cmp.Or(nc.stop, StatusIterationLimit), NewtonSteps: nc.steps, Residuals: nc.residuals,
		BestIteration: nc.bestIters}
	if nc.best != nil {
		lastEv = bestEv // the model is the best step's
	}
	tr.setUp(plan, cs, op.pre, run.n, run.classWeights)
	tr.PrecondSeconds, tr.PrecondCache = op.precondSeconds, op.cacheNote
	if nc.iters > 0 {
		tr.SecondsPerIteration = time.Since(start).Seconds() / float64(nc.iters+steps)
	}
	if err := finiteAlpha(nc.alpha, nil, k); err != nil {
		return nil, err
	}
	meta := newModelMeta(plan, cs, enc, cfg, make([]float64, k), tr)
	mdl, err := newModel(meta, slices.Clone(cs.centres), slices.Clone(nc.alpha), nil, op.cfit)
	if err != nil {
		return nil, err
	}
	mdl.training.Validation = vals
	if lastEv == nil && opts.Validation != nil {
		// A resumed fit with no step left to validate.
		ph.start("validation", nc.iters)
		if lastEv, err = mdl.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers}); err != nil {
			return nil, fmt.Errorf("validation: %w", err)
		}
	}
	if mdl, err = decideFit(mdl, lastEv); err != nil {
		return nil, err
	}
	mdl.training.Phases = ph.done()
	mdl.training.PeakRSS = procstat.PeakRSS()
	mdl.training.Seconds = time.Since(start).Seconds()
	report(Progress{Stage: StageDone, Iteration: nc.iters, Iterations: steps * cfg.Iterations})
	return mdl, nil
}

// newtonCand is one λ of a run of Newton's method: its path of λ, its α
// (M × K) and its record.
type newtonCand struct {
	path      []float64
	alpha     []float64
	steps     []NewtonStep
	residuals []float64
	iters     int   // CG iterations in all
	err       error // why it failed (its preconditioner); it takes no more steps
	// The current step's: its preconditioner, its first column in the
	// step's CG and in its group's columns, and its last CG iteration
	// that moved it.
	pre       *precond.Preconditioner
	col, gcol int
	lastIter  int
	// dir is the last step Δ (M × K), not yet taken: the next gradient
	// pass searches along it (nil: none). stop says why the candidate
	// stopped before its last step ("": it did not), note what to tell
	// the user about it. regrad: its line search took less than the
	// whole step, so its gradient is one more pass.
	dir    []float64
	stop   Status
	note   string
	regrad bool
	pv     gradValues // its values from the last gradient pass
	// vcol is the column of its K α in a row the last line search's
	// pass scored, vnc its group's columns (K Δ is vnc further on).
	vcol, vnc int
	// track is the stopping rule's state (newtonRun.rule), best its best
	// validated α when the rule keeps it (nil: none) and bestIters its
	// CG iterations then.
	track     engine.Tracker
	best      []float64
	bestIters int
	pick      float64 // the selection metric of its best validation
}

// newNewtonCand returns a candidate of λ path path at α = 0 (M × K = mk
// values).
func newNewtonCand(path []float64, mk int) *newtonCand {
	return &newtonCand{path: path, alpha: make([]float64, mk), track: engine.NewTracker()}
}

// gradValues are a candidate's values from a gradient pass: K_nMᵀ G
// (M × K), the Hessian weights' and losses' sums (K each), the losses at
// each length of the line search (len(lineSteps) × K, or none), K_MM α
// and K_MM Δ (M × K, without the jitter term; kd empty without a line
// search), Σ w, and the jitter ε of K̃ = K_MM + εMI (0 when the
// preconditioner's λ term is K_MM itself).
type gradValues struct {
	sums, sh, sl, line, ka, kd []float64
	n, eps                     float64
}

// newtonGroup is one kernel of a run: the preconditioner's T (its A is
// not used), the centres in float64 for K_MM α, the pass's prepared
// centres, and the candidates.
type newtonGroup struct {
	kern    kernel.Kernel
	pre     *precond.Preconditioner
	c64     *kernel.Centers
	ws      *kernel.Workspace
	centres []float64 // standardised, M × D
	prep    *kernel.Centers
	cands   []*newtonCand
	live    []*newtonCand // the current step's
}

// newNewtonGroup returns the group of kernel kern with op's
// preconditioner and centres.
func newNewtonGroup(plan *FitPlan, cs *centreSample, kern kernel.Kernel, op *fitOperator) *newtonGroup {
	c64 := kernel.NewCenters(kern, cs.centres, cs.m, plan.D, kernel.Float64)
	return &newtonGroup{kern: kern, pre: op.pre, c64: c64, ws: c64.NewWorkspace(), centres: cs.centres,
		prep: op.cfit.WithInputMap(cs.std.mean, cs.std.invStd)}
}

// newtonRun is Newton's method on J(α) = (1/n) Σ wᵢ ℓ(yᵢ, (K_nM α)ᵢ) +
// (λ/2) αᵀK̃α for several candidates (σ, λ) at once, ℓ the logistic loss,
// K̃ = K_MM + εMI, along each candidate's decreasing λ path. The
// candidates share every pass: a group of columns per kernel, K per
// candidate. Each step makes one gradient pass (pass.LogisticGradient: K_nMᵀ g
// with the weights g of the current α, the Hessian weights' sums and the
// loss) and iters CG passes on (K_nMᵀ H K_nM / n + λ K̃) Δ = −∇, whose
// Hessian weights H each pass computes from the same kernel block
// (pass.LogisticHessianProduct), one CG over every candidate's columns, each
// preconditioned by FALKON's preconditioner with the Hessian weights at
// the centres (precond.WithCenterWeights: A = chol(T H_C Tᵀ/M + λI), H_C
// from f_C = K_MM α, which the gradient's λ term computes anyway, scaled
// to the rows' mean Hessian weight h̄ from the gradient pass). A
// candidate's columns are computed as they would be alone: sharing the
// passes changes no value.
type newtonRun struct {
	m, k, steps, iters int
	workers            int // goroutines of the candidates' solves
	tol                float64
	base               *pass.Job // the template of the passes (the fit's right-hand side's job)
	targets            []string
	pass               passFunc
	groups             []*newtonGroup
	// report and ph are told of the run's progress and phases; shown is
	// the CG iterations reported before the current step's.
	report    func(Progress)
	ph        *phaseClock
	shown     int
	afterStep func(t int) error // nil: nothing
	// onStop is told of a candidate that stopped early with a note (its
	// objective could not fall); nil: nothing.
	onStop func(c *newtonCand)
	passes int
	// balance asks for balanced class weights (Config.ClassWeight):
	// classWeights are them once known (from the first step's pass, or a
	// checkpoint), task and classes the encoding, rows the training rows
	// (the weight sum without row weights).
	balance      bool
	classWeights []float64
	task         Task
	classes      []float64
	rows         int64
	n            float64 // Σ wᵢ of the last gradient pass
	// hold, when set, holds the validation rows out of the data every
	// pass reads. val, when set, validates each candidate after each
	// Newton step (nil: no validation), rule stops it by those
	// validations and keeps its best α (Patience > 0), and halving, when
	// > 0, stops the worse half of the live candidates after steps
	// halving, 2·halving, 4·halving, … (successive halving).
	hold    *pass.Holdout
	val     *newtonVal
	rule    engine.Rule
	halving int
}

// newtonVal validates a run's candidates after each Newton step, from the
// pass that ends the step, its line search's gradient pass, whose U holds
// [α | Δ] of every candidate: when the validation rows are held out of
// the data the passes read (newtonRun.hold), that pass scores them
// itself, with K α and K Δ (pass.LogisticGradient with ScoreRows); a
// validation source of its own (src) is scored by a pass over it with
// the same columns (pass.GroupKernelProduct, Alpha = that U). Once the
// line search has chosen the length s, a candidate's scores after its
// step are K α + s·K Δ. Held out, a step's validation is no pass of its
// own.
type newtonVal struct {
	rows    int64             // the validation rows
	src     stream.Source     // a validation source of its own (nil: held out)
	pass    passFunc          // over src
	newEval func() *Evaluator // an evaluator for the model's task and loss
	// done is told of candidate c's validation after its step (ev: the
	// scores of its α; best: the stopping rule keeps that α).
	done func(c *newtonCand, ev *Evaluator, best bool) error

	vals       []float64 // the last line search's scored rows
	rowLen, kt int       // values per scored row, target columns
	weighted   bool
	weightExp  int       // the pass's pass.Job.WeightExp, undone on the scored rows' weights
	sc, y, w   []float64 // scratch of score
}

// scored takes the rows of the line search's pass grad (its output out,
// or, for a source of its own, a pass over it with the same columns) and
// places each live candidate's columns in them.
func (v *newtonVal) scored(ctx context.Context, grad *pass.Job, out []float64, live []*newtonGroup) error {
	job := grad
	if v.src != nil {
		job = &pass.Job{Kind: pass.GroupKernelProduct, Precision: grad.Precision, M: grad.M, D: grad.D, K: grad.K,
			Centers: grad.Centers, Mean: grad.Mean, InvStd: grad.InvStd, Task: grad.Task, Classes: grad.Classes,
			Features: grad.Features, Targets: grad.Targets, Weight: stream.WeightColumn(v.src), WeightExp: weightExp(v.src),
			ScoreRows: v.rows, PreparedGroups: grad.PreparedGroups}
		for _, g := range grad.Groups {
			job.Groups = append(job.Groups, pass.Group{Kernel: g.Kernel, Cols: 2 * g.Cols, Alpha: g.U})
		}
		var err error
		if out, err = v.pass(ctx, job, func(int, int, int64) {}); err != nil {
			return err
		}
	}
	v.vals, v.rowLen, v.weighted, v.weightExp = out[job.SumLen():], job.RowLen(), job.Weight != "", job.WeightExp
	col := 0
	for gi, g := range live {
		nc := grad.Groups[gi].Cols
		for _, c := range g.live {
			c.vcol, c.vnc = col+c.gcol, nc
		}
		col += 2 * nc
	}
	v.kt = v.rowLen - col
	if v.weighted {
		v.kt--
	}
	return nil
}

// score returns the evaluator of candidate c's α after the step its line
// search just ended (c.steps' last Step: 0 when it took none), from the
// scored rows.
func (v *newtonVal) score(c *newtonCand, k int) (*Evaluator, error) {
	n := int(v.rows)
	s := c.steps[len(c.steps)-1].Step
	v.sc = slices.Grow(v.sc[:0], n*k)[:n*k]
	v.y = slices.Grow(v.y[:0], n*v.kt)[:n*v.kt]
	var w []float64
	if v.weighted {
		v.w = slices.Grow(v.w[:0], n)[:n]
		w = v.w
	}
	tcol := v.rowLen - v.kt
	if v.weighted {
		tcol--
	}
	for r := range n {
		row := v.vals[r*v.rowLen : (r+1)*v.rowLen]
		for o := range k {
			f := row[c.vcol+o]
			if s != 0 {
				f += s * row[c.vcol+c.vnc+o]
			}
			v.sc[r*k+o] = f
		}
		copy(v.y[r*v.kt:(r+1)*v.kt], row[tcol:tcol+v.kt])
		if w != nil {
			w[r] = math.Ldexp(row[v.rowLen-1], -v.weightExp)
		}
	}
	ev := v.newEval()
	if err := ev.AddWeighted(v.sc, v.y, w, n); err != nil {
		return nil, err
	}
	return ev, nil
}

// observe applies the stopping rule to candidate c's validation ev after
// its step: it keeps c's α when it is the best so far (Patience > 0), and
// stops c when its patience has run out.
func (r *newtonRun) observe(c *newtonCand, ev *Evaluator) error {
	met := ev.Metrics()
	isBest, stop := c.track.Observe(r.rule, len(c.steps), stoppingMetric(r.task, met))
	if isBest {
		c.pick = selectionMetric(r.task, met)
		if r.rule.Patience > 0 {
			c.best, c.bestIters = append(c.best[:0], c.alpha...), c.iters
		}
	}
	if err := r.val.done(c, ev, isBest); err != nil {
		return err
	}
	if stop && active(c) {
		c.stop = StatusPatience
	}
	return nil
}

// halve stops the worse half of the live candidates by the selection
// metric of their best validations (successive halving), as Tune does.
func (r *newtonRun) halve() {
	var live []*newtonCand
	var best []float64
	for _, c := range r.cands() {
		if active(c) && c.track.BestIter > 0 {
			live, best = append(live, c), append(best, c.pick)
		}
	}
	for _, i := range engine.WorseHalf(best) {
		live[i].stop = statusHalved
	}
}

// statusHalved is a search candidate that successive halving stopped.
const statusHalved Status = "halving"

// job returns the step's pass of kind with the live groups, U unset
// (M × 2·Cols for pass.LogisticHessianProduct, and for pass.LogisticGradient with line:
// then Line is lineSteps).
func (r *newtonRun) job(kind pass.Kind, live []*newtonGroup, line bool) *pass.Job {
	j := *r.base
	j.Kind, j.Targets, j.U, j.Prepared = kind, r.targets, nil, nil
	j.Groups, j.PreparedGroups = nil, nil
	j.ClassWeights = r.classWeights
	j.Holdout, j.ScoreRows = r.hold, 0
	mul := 1
	if kind == pass.LogisticHessianProduct || line {
		mul = 2
	}
	if line {
		j.Line = lineSteps
	}
	for _, g := range live {
		c := len(g.live) * r.k
		j.Groups = append(j.Groups, pass.Group{Kernel: g.kern, Cols: c, U: make([]float64, mul*r.m*c)})
		j.PreparedGroups = append(j.PreparedGroups, g.prep)
	}
	return &j
}

// lineSteps are the step lengths a Newton step's line search tries
// after the whole step (pass.Job.Line): ½, ¼, …, 2⁻¹², all in the one
// pass that computes the gradient at the whole step.
var lineSteps = func() []float64 {
	s := make([]float64, 12)
	for i := range s {
		s[i] = math.Ldexp(1, -(i + 1))
	}
	return s
}()

// armijo is the sufficient decrease the line search asks of a step
// length s: J(α + sΔ) ≤ J(α) + armijo·s·∇Jᵀ Δ.
const armijo = 1e-4

// selectLive sets each group's live candidates to those sel accepts, in
// order, with their columns (c.col over every group, c.gcol in the
// group), and returns the groups with any and the number of columns.
func (r *newtonRun) selectLive(sel func(*newtonCand) bool) ([]*newtonGroup, int) {
	var live []*newtonGroup
	ncols := 0
	for _, g := range r.groups {
		g.live = g.live[:0]
		for _, c := range g.cands {
			if sel(c) {
				c.col, c.gcol = ncols, len(g.live)*r.k
				g.live = append(g.live, c)
				ncols += r.k
			}
		}
		if len(g.live) > 0 {
			live = append(live, g)
		}
	}
	return live, ncols
}

// active is a candidate that still takes steps.
func active(c *newtonCand) bool { return c.err == nil && c.stop == "" }

// searching is an active candidate whose last step awaits its line
// search.
func searching(c *newtonCand) bool { return active(c) && c.dir != nil }

// gradPass runs one pass.LogisticGradient over the candidates sel accepts
// (at least one), at step t: with line, each at α + Δ with the losses at
// α + sΔ for s in lineSteps (Δ = c.dir, 0 without), else at α. It sets
// each candidate's pass values (c.pv) and returns Σ w.
func (r *newtonRun) gradPass(ctx context.Context, t int, sel func(*newtonCand) bool, line bool) (float64, error) {
	m, k := r.m, r.k
	live, _ := r.selectLive(sel)
	grad := r.job(pass.LogisticGradient, live, line)
	for gi, g := range live {
		gc := grad.Groups[gi]
		nc := gc.Cols
		for _, c := range g.live {
			if !line {
				setCols(gc.U, nc, c.gcol, c.alpha, k)
				continue
			}
			for i := range m {
				copy(gc.U[2*i*nc+c.gcol:2*i*nc+c.gcol+k], c.alpha[i*k:(i+1)*k])
				if c.dir != nil {
					copy(gc.U[2*i*nc+nc+c.gcol:2*i*nc+nc+c.gcol+k], c.dir[i*k:(i+1)*k])
				}
			}
		}
	}
	if line && r.val != nil && r.val.src == nil {
		grad.ScoreRows = r.val.rows
	}
	r.passes++
	var out []float64
	var err error
	if r.balance && r.classWeights == nil && !line {
		// At α = 0 the gradient is the class-weighted right-hand side's.
		out, err = r.balancedStart(ctx, t, grad, live)
	} else {
		out, err = r.pass(ctx, grad, func(done, chunks int, rows int64) { r.gradReport(t, done, chunks, rows) })
	}
	if err != nil {
		return 0, err
	}
	if line && r.val != nil {
		if err := r.val.scored(ctx, grad, out, live); err != nil {
			return 0, fmt.Errorf("validation: %w", err)
		}
		out = out[:grad.SumLen()]
	}
	n := out[len(out)-1]
	r.n = n
	if !(n > 0) {
		return 0, fmt.Errorf("the rows weigh %v in all", n)
	}
	nl := len(grad.Line)
	off := 0
	for gi, g := range live {
		gc := grad.Groups[gi]
		nc := gc.Cols
		uc := nc
		if line {
			uc = 2 * nc
		}
		sums := out[off : off+m*nc]
		sh, sl := out[off+m*nc:off+m*nc+nc], out[off+m*nc+nc:off+m*nc+2*nc]
		ls := out[off+m*nc+2*nc : off+m*nc+(2+nl)*nc]
		off += m*nc + (2+nl)*nc
		// K_MM α (and K_MM Δ) for every candidate of the group at once,
		// streamed over the centres (no M × M buffer).
		kalpha := make([]float64, m*uc)
		g.c64.KvTo(g.ws, kalpha, g.centres, m, gc.U, uc)
		for _, c := range g.live {
			pv := &c.pv
			pv.sums = slices.Grow(pv.sums[:0], m*k)[:m*k]
			getCols(pv.sums, k, sums, nc, c.gcol)
			pv.sh, pv.sl = slices.Clone(sh[c.gcol:c.gcol+k]), slices.Clone(sl[c.gcol:c.gcol+k])
			pv.line = pv.line[:0]
			for i := range nl {
				pv.line = append(pv.line, ls[i*nc+c.gcol:i*nc+c.gcol+k]...)
			}
			pv.ka = slices.Grow(pv.ka[:0], m*k)[:m*k]
			getCols(pv.ka, k, kalpha, uc, c.gcol)
			pv.kd = pv.kd[:0]
			if line {
				pv.kd = slices.Grow(pv.kd, m*k)[:m*k]
				getCols(pv.kd, k, kalpha, uc, nc+c.gcol)
			}
			pv.n, pv.eps = n, g.pre.Jitter()
			if g.pre.ExplicitLambda() { // the operator's λ term is K_MM itself
				pv.eps = 0
			}
		}
	}
	return n, nil
}

// search ends candidate c's last step from the gradient pass along it
// (c.pv): it takes the longest of the lengths 1, ½, …, 2⁻¹² whose
// objective (at the step's λ) falls by armijo of the slope's prediction,
// else the length whose objective is lowest if any is below J(α), else
// none, and then c stops (StatusConverged when the step's predicted
// decrease is within rounding of J, else StatusNoDescent with a note).
// The objective never rises. It reports whether c's gradient at its new
// α is still to compute (a length below 1).
func (r *newtonRun) search(c *newtonCand) bool {
	m, k := r.m, r.k
	pv := &c.pv
	last := &c.steps[len(c.steps)-1]
	lam, j0, slope := last.Lambda, last.Objective, last.Slope
	em := pv.eps * float64(m)
	// The penalty at α + sΔ is computed as prepare computes it at a new
	// α (not expanded in s: K_MM may be ill-conditioned, and αᵀK̃α then
	// the small difference of large terms), so that a whole step's After
	// is the next step's Objective when λ stays.
	obj := func(loss []float64, s float64) float64 {
		l, pen := 0.0, 0.0
		for _, v := range loss {
			l += v
		}
		for i, a := range c.alpha {
			a += s * c.dir[i]
			pen += a * (pv.ka[i] + s*pv.kd[i] + em*a)
		}
		return l/pv.n + lam/2*pen
	}
	ok := func(j, s float64) bool { return j <= j0+armijo*s*min(slope, 0) }
	js := make([]float64, 1+len(lineSteps))
	ss := append([]float64{1}, lineSteps...)
	js[0] = obj(pv.sl, 1)
	for i := range lineSteps {
		js[i+1] = obj(pv.line[i*k:(i+1)*k], lineSteps[i])
	}
	best := -1
	for i, j := range js {
		if ok(j, ss[i]) {
			best = i
			break
		}
	}
	if best < 0 {
		for i, j := range js {
			if j < j0 && (best < 0 || j < js[best]) {
				best = i
			}
		}
	}
	dir := c.dir
	c.dir = nil
	if best < 0 {
		last.After = j0
		if -slope <= 1e-12*math.Abs(j0) {
			c.stop = StatusConverged
			return false
		}
		c.stop = StatusNoDescent
		c.note = fmt.Sprintf("the objective %.6g did not fall along Newton step %d at any length from 1 to 2⁻%d of it (λ = %g); "+
			"the model keeps the α from before that step. Raise Config.Lambda, or Config.Iterations for more accurate steps",
			j0, len(c.steps), len(lineSteps), lam)
		return false
	}
	s := ss[best]
	last.Step, last.After = s, js[best]
	for i := range c.alpha {
		c.alpha[i] += s * dir[i]
	}
	if s != 1 {
		return true
	}
	// The pass's gradient values are those of the new α.
	for i := range pv.ka {
		pv.ka[i] += pv.kd[i]
	}
	return false
}

// run takes the steps first, first+1, … of every candidate (takeSteps),
// and then gives each candidate that the stopping rule kept a best α
// (Patience > 0) that α.
func (r *newtonRun) run(ctx context.Context, first int) error {
	if err := r.takeSteps(ctx, first); err != nil {
		return err
	}
	for _, c := range r.cands() {
		if c.best != nil && c.err == nil {
			copy(c.alpha, c.best)
		}
	}
	return nil
}

// takeSteps takes the steps first, first+1, … of every candidate, each
// ended by its line search in the next step's gradient pass (after the
// last step, one more pass searches alone).
func (r *newtonRun) takeSteps(ctx context.Context, first int) error {
	m, k := r.m, r.k
	for t := first; t <= r.steps; t++ {
		line := slices.ContainsFunc(r.cands(), searching)
		sel := active
		if t == r.steps {
			if !line {
				return nil
			}
			sel = searching // the last step's line search
		} else if !slices.ContainsFunc(r.cands(), active) {
			return nil
		}
		r.ph.start("newton", t+1)
		if _, err := r.gradPass(ctx, t, sel, line); err != nil {
			return fmt.Errorf("Newton step %d: gradient: %w", t+1, err)
		}
		regrad := false
		for _, c := range r.cands() {
			if searching(c) {
				if r.search(c) {
					c.regrad, regrad = true, true
				}
				if r.val != nil {
					ev, err := r.val.score(c, k)
					if err == nil {
						err = r.observe(c, ev)
					}
					if err != nil {
						return fmt.Errorf("Newton step %d: validation: %w", t, err)
					}
				}
				if c.note != "" && r.onStop != nil {
					r.onStop(c)
				}
			}
		}
		if t == r.steps {
			return nil
		}
		if r.halving > 0 && engine.IsHalvingStep(t, r.halving) {
			r.halve()
		}
		// Those the rule stopped keep their α: no gradient at it.
		regrad = regrad && slices.ContainsFunc(r.cands(), func(c *newtonCand) bool { return active(c) && c.regrad })
		if regrad {
			// A shorter step than the whole: its gradient is one more pass.
			if _, err := r.gradPass(ctx, t, func(c *newtonCand) bool { return active(c) && c.regrad }, false); err != nil {
				return fmt.Errorf("Newton step %d: gradient: %w", t+1, err)
			}
			for _, c := range r.cands() {
				c.regrad = false
			}
		}
		grads := map[*newtonCand][]float64{}
		var rhs [][]float64
		for _, g := range r.groups {
			for _, c := range g.cands {
				if !active(c) {
					continue
				}
				gk, grad, err := r.prepare(c, t, g)
				if err != nil {
					c.err = fmt.Errorf("Newton step %d: %w", t+1, err)
					continue
				}
				grads[c] = grad
				rhs = append(rhs, gk)
			}
		}
		live, ncols := r.selectLive(active)
		if len(live) == 0 {
			if r.afterStep != nil {
				if err := r.afterStep(t); err != nil {
					return err
				}
			}
			continue
		}
		b := make([]float64, m*ncols)
		i := 0
		for _, g := range live {
			for _, c := range g.live {
				setCols(b, ncols, c.col, rhs[i], k)
				i++
			}
		}
		st := newCGState(b, ncols)
		if _, err := conjugateGradient(ctx, r.grid(live, ncols), st, ncols, r.iters, r.tol, func(st *cgState) error {
			for _, g := range live {
				for _, c := range g.live {
					for j := c.col; j < c.col+k; j++ {
						if st.Step[j] != 0 {
							c.lastIter = st.Iter
							break
						}
					}
				}
			}
			r.iterReport(st.Iter, 0, 0, 0, st.RelResidual())
			return nil
		}); err != nil {
			return fmt.Errorf("Newton step %d: %w", t+1, err)
		}
		r.passes += st.Iter
		r.shown += st.Iter
		beta := make([]float64, m*k)
		for _, g := range live {
			for _, c := range g.live {
				getCols(beta, k, st.Beta, ncols, c.col)
				delta := make([]float64, m*k)
				c.pre.ApplyBTo(delta, beta, k)
				slope := 0.0
				for i, v := range grads[c] {
					slope += v * delta[i]
				}
				c.dir = delta // taken by the next pass's line search
				its := c.lastIter
				if len(r.groups) == 1 && len(g.live) == 1 {
					its = st.Iter // alone, the CG's own count
				}
				res := st.ColResidual(c.col, k)
				c.iters += its
				s := &c.steps[len(c.steps)-1]
				s.Iterations, s.Residual, s.Slope = its, res, slope
				c.residuals = append(c.residuals, res)
				c.pre = nil
			}
		}
		if r.afterStep != nil {
			if err := r.afterStep(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// gradReport reports the progress of step t's gradient pass.
func (r *newtonRun) gradReport(t, done, chunks int, rows int64) {
	r.report(Progress{Stage: StageRHS, Iteration: t + 1, Iterations: r.steps, Chunk: done, Chunks: chunks, Rows: rows})
}

// iterReport reports the progress of CG iteration it of the current
// step.
func (r *newtonRun) iterReport(it, done, chunks int, rows int64, residual float64) {
	r.report(Progress{Stage: StageIterate, Iteration: r.shown + it, Iterations: r.steps * r.iters,
		Chunk: done, Chunks: chunks, Rows: rows, Residual: residual})
}

// cands returns every candidate of the run, group by group.
func (r *newtonRun) cands() []*newtonCand {
	var out []*newtonCand
	for _, g := range r.groups {
		out = append(out, g.cands...)
	}
	return out
}

// balancedStart is the first gradient pass of a run with balanced class
// weights, which are not known before it: at α = 0 every row's gradient
// weight is −wᵢ cw_c yᵢ/2, its Hessian weight wᵢ cw_c/4 and its loss
// wᵢ cw_c log 2, so one right-hand side's pass per kernel (pass.GroupTargetProduct:
// K_nMᵀ W [Y 1], the encoded targets' sums and Σ w) gives the class
// weights (balancedWeights) and, reweighted (weighRHS), the gradient
// pass's values for grad's groups (every candidate starts at α = 0). It
// sets r.classWeights.
func (r *newtonRun) balancedStart(ctx context.Context, t int, grad *pass.Job, live []*newtonGroup) ([]float64, error) {
	m, k := r.m, r.k
	for _, c := range live[0].live {
		for _, v := range c.alpha {
			if v != 0 {
				return nil, fmt.Errorf("ooc: balanced class weights need the first Newton step from α = 0")
			}
		}
	}
	job := *grad
	job.Kind, job.ClassWeights = pass.GroupTargetProduct, nil
	job.Groups = make([]pass.Group, len(grad.Groups))
	for i, g := range grad.Groups {
		job.Groups[i] = pass.Group{Kernel: g.Kernel}
	}
	rhs, err := r.pass(ctx, &job, func(done, chunks int, rows int64) { r.gradReport(t, done, chunks, rows) })
	if err != nil {
		return nil, err
	}
	k1 := k + 1
	sums := slices.Clone(rhs[len(job.Groups)*m*k1 : len(job.Groups)*m*k1+k])
	n := float64(r.rows)
	if job.Weight != "" {
		n = rhs[len(job.Groups)*m*k1+k]
	}
	cw, counts, err := balancedWeights(r.task, r.classes, sums, n)
	if err != nil {
		return nil, err
	}
	nw := weighSums(r.task, cw, counts, sums)
	out := make([]float64, grad.SumLen())
	off := 0
	for gi, g := range grad.Groups {
		w := rhs[gi*m*k1 : (gi+1)*m*k1]
		weighRHS(r.task, cw, m, k, w)
		nc := g.Cols
		for j := range m {
			row := w[j*k1 : (j+1)*k1]
			for c := range nc {
				o := c % k
				ys := row[0] // Σ wᵢ cwᵢ yᵢ K_ij, y = ±1
				if r.task == TaskMulticlass {
					ys = 2*row[o] - row[k] // one against the rest
				}
				out[off+j*nc+c] = -ys / 2
			}
		}
		for c := range nc {
			out[off+m*nc+c] = nw / 4
			out[off+m*nc+nc+c] = nw * math.Ln2
		}
		off += m*nc + 2*nc
	}
	out[off] = nw
	r.classWeights = cw
	return out, nil
}

// prepare computes candidate c's gradient, objective and preconditioner
// at step t from its gradient pass's values (c.pv), and returns Bᵀ(−∇)
// (its right-hand side, r × K) and ∇ (M × K).
func (r *newtonRun) prepare(c *newtonCand, t int, g *newtonGroup) (b, grad []float64, err error) {
	m, k := r.m, r.k
	pv := &c.pv
	lam, n := c.path[t], pv.n
	ka := slices.Clone(pv.ka)
	// The Hessian weights at the centres, f_C = K_MM α (the mean over the
	// outputs): the preconditioner's view of H.
	hc := make([]float64, m)
	for j := range m {
		for o := range k {
			hc[j] += loss.Logistic.Curvature(ka[j*k+o]) / float64(k)
		}
	}
	pen := 0.0
	for i := range ka {
		ka[i] += pv.eps * float64(m) * c.alpha[i]
		pen += c.alpha[i] * ka[i]
	}
	grad = make([]float64, m*k)
	gn := 0.0
	for i := range grad {
		v := pv.sums[i]/n + lam*ka[i]
		grad[i] = v
		gn += v * v
	}
	shm, loss := 0.0, 0.0
	for o := range k {
		shm += pv.sh[o] / float64(k) // the mean over the outputs
		loss += pv.sl[o]
	}
	c.steps = append(c.steps, NewtonStep{Lambda: lam, Objective: loss/n + lam/2*pen, GradNorm: math.Sqrt(gn)})
	// h̄ scales the centres' weights to the rows' mean Hessian weight
	// (row weights included): K_nMᵀ H K_nM / n ≈ h̄/h̄_C · K_MM H_C K_MM / M.
	hbar, hcbar := shm/n, 0.0
	for _, v := range hc {
		hcbar += v / float64(m)
	}
	for j := range hc {
		if hcbar > 0 && hbar > 0 {
			hc[j] *= hbar / hcbar
		} else {
			hc[j] = 1
		}
	}
	pre, err := g.pre.WithCenterWeights(hc, lam)
	if err != nil {
		return nil, nil, err
	}
	c.pre = pre
	b = make([]float64, pre.Rank()*k)
	pre.ApplyBTTo(b, grad, k)
	for i := range b {
		b[i] = -b[i]
	}
	return b, grad, nil
}

// grid is the CG operator of a Newton step on the live candidates (each
// with its step's preconditioner, c.pre, and λ): an engine.Grid that
// applies, on each candidate's K columns, W(p) = Bᵀ (K_nMᵀ H K_nM / n +
// λ K̃) B p in FALKON's form, H from the candidate's α, with one
// pass.LogisticHessianProduct for every candidate. Each candidate is a
// group of the grid: its T is its own (WithCenterWeights gives a
// Nyström preconditioner a T of its own), while the pass shares one
// kernel block per σ (the newtonGroup).
func (r *newtonRun) grid(live []*newtonGroup, ncols int) *engine.Grid {
	m, k := r.m, r.k
	hess := r.job(pass.LogisticHessianProduct, live, false)
	type place struct {
		g   int // the newtonGroup, in live and hess.Groups
		off int // its products' offset in the pass's output
		c   *newtonCand
	}
	var groups []*engine.Group
	var places []place
	off := 0
	for gi, g := range live {
		for _, c := range g.live {
			ec := &engine.Cand{Lambda: c.path[len(c.steps)-1], A: c.pre, Live: true, Alpha: c.alpha}
			eg := &engine.Group{T: c.pre, Cands: []*engine.Cand{ec}}
			if c.pre.ExplicitLambda() {
				// Bᵀ(K_nMᵀHK_nM u/n + λ K_MM u): the Nyström
				// preconditioner has no identity for the λ term.
				g, scratch := g, make([]float64, m*k)
				eg.KMM = func(ctx context.Context, dst, u []float64, k int, a float64) error {
					return kmmMulAdd(ctx, g.c64, g.centres, dst, u, scratch, k, a, runtime.GOMAXPROCS(0), nil)
				}
			}
			groups = append(groups, eg)
			places = append(places, place{gi, off, c})
		}
		off += m * hess.Groups[gi].Cols
	}
	grid := engine.NewGrid(m, k, r.n, r.workers, groups)
	out := make([]float64, m*ncols)
	grid.Pass = func(ctx context.Context) ([]float64, error) {
		// [u | α] per σ, each candidate's columns in its group's place.
		for i, eg := range groups {
			p := places[i]
			gc := hess.Groups[p.g]
			nc := gc.Cols
			for j := range m {
				copy(gc.U[2*j*nc+p.c.gcol:2*j*nc+p.c.gcol+k], eg.U[j*k:(j+1)*k])
				copy(gc.U[2*j*nc+nc+p.c.gcol:2*j*nc+nc+p.c.gcol+k], p.c.alpha[j*k:(j+1)*k])
			}
		}
		it := grid.Iter + 1
		w, err := r.pass(ctx, hess, func(done, chunks int, rows int64) { r.iterReport(it, done, chunks, rows, 0) })
		if err != nil {
			return nil, fmt.Errorf("CG pass: %w", err)
		}
		// The products per candidate, M × K each, in the grid's order.
		for i, p := range places {
			nc := hess.Groups[p.g].Cols
			getCols(out[i*m*k:(i+1)*m*k], k, w[p.off:p.off+m*nc], nc, p.c.gcol)
		}
		return out, nil
	}
	return grid
}
