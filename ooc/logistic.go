package ooc

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/falkon-ooc/falkon-ooc/internal/procstat"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/precond"
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
// step.
func fitLogistic(ctx context.Context, plan *FitPlan, cs *centreSample, enc targetEncoding, op *fitOperator, pass passFunc,
	fp string, opts RunOptions, report func(Progress), ph *phaseClock, start time.Time) (*Model, error) {
	cfg := plan.Config
	m, k := cs.m, enc.k
	steps := cfg.NewtonSteps
	if steps == 0 {
		steps = DefaultNewtonSteps
	}
	nc := &newtonCand{path: newtonPath(cfg.Lambda, steps), alpha: make([]float64, m*k)}
	g := newNewtonGroup(plan, cs, cfg.Kernel, op)
	g.cands = []*newtonCand{nc}
	run := &newtonRun{m: m, k: k, steps: steps, iters: cfg.Iterations, tol: cfg.Tolerance, base: op.rhsJob,
		targets: plan.Targets[:1], pass: pass, groups: []*newtonGroup{g},
		balance: cfg.ClassWeight == ClassWeightBalanced, task: enc.task, classes: enc.classes, rows: plan.N}
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
		first, nc.steps = res.Iteration, slices.Clone(res.NewtonSteps)
		for _, s := range nc.steps {
			nc.iters += s.Iterations
			nc.residuals = append(nc.residuals, s.Residual)
		}
	}
	total := nc.iters
	run.onStep = func(t int) { ph.start("newton", t+1) }
	run.gradReport = func(t, done, chunks int, rows int64) {
		report(Progress{Stage: StageRHS, Iteration: t + 1, Iterations: steps, Chunk: done, Chunks: chunks, Rows: rows})
	}
	run.iterReport = func(it, done, chunks int, rows int64, residual float64) {
		report(Progress{Stage: StageIterate, Iteration: total + it, Iterations: steps * cfg.Iterations,
			Chunk: done, Chunks: chunks, Rows: rows, Residual: residual})
	}
	run.afterStep = func(t int) error {
		total = nc.iters
		if nc.err != nil {
			return nc.err
		}
		if opts.Checkpoint == nil {
			return nil
		}
		c := &Checkpoint{Fingerprint: fp, Iteration: t + 1, M: m, K: k, TargetMean: make([]float64, k),
			Beta: slices.Clone(nc.alpha), R: make([]float64, m*k), P: make([]float64, m*k), RS: make([]float64, k), BN: make([]float64, k),
			NewtonSteps: slices.Clone(nc.steps)}
		if plan.Weight != "" || run.classWeights != nil {
			c.WeightSum, c.ClassWeights = run.n, slices.Clone(run.classWeights)
		}
		if err := opts.Checkpoint(c); err != nil {
			return fmt.Errorf("checkpoint after Newton step %d: %w", t+1, err)
		}
		return nil
	}
	if err := run.run(ctx, first); err != nil {
		return nil, err
	}
	tr := Training{N: plan.N, Iterations: nc.iters, Status: StatusIterationLimit, NewtonSteps: nc.steps, Residuals: nc.residuals}
	if plan.Weight != "" || run.classWeights != nil {
		tr.Weight, tr.WeightSum, tr.ClassWeights = plan.Weight, run.n, run.classWeights
	}
	tr.PrecondSeconds, tr.PrecondBytes, tr.Rank, tr.Jitter = op.precondSeconds, op.pre.Bytes(), op.pre.Rank(), op.pre.Jitter()
	tr.NystromRank, tr.NystromResidual, tr.PrecondCache = op.pre.NystromRank(), op.pre.NystromResidual(), op.cacheNote
	tr.DuplicateCenters, tr.LambdaLeverage = cs.dropped, cs.lambdaLeverage
	if nc.iters > 0 {
		tr.SecondsPerIteration = time.Since(start).Seconds() / float64(nc.iters+steps)
	}
	meta := newModelMeta(plan, cs, enc, cfg, make([]float64, k), tr)
	mdl, err := newModel(meta, slices.Clone(cs.centres), slices.Clone(nc.alpha), nil, op.cfit)
	if err != nil {
		return nil, err
	}
	if opts.Validation != nil {
		ph.start("validation", nc.iters)
		ev, err := mdl.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers})
		if err != nil {
			return nil, fmt.Errorf("validation: %w", err)
		}
		mdl.training.Validation = []ValPoint{{Iteration: nc.iters, Metrics: *ev.Metrics()}}
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
// candidate. Each step makes one gradient pass (PassLogisticGrad: K_nMᵀ g
// with the weights g of the current α, the Hessian weights' sums and the
// loss) and iters CG passes on (K_nMᵀ H K_nM / n + λ K̃) Δ = −∇, whose
// Hessian weights H each pass computes from the same kernel block
// (PassLogisticHess), one CG over every candidate's columns, each
// preconditioned by FALKON's preconditioner with the Hessian weights at
// the centres (precond.WithCenterWeights: A = chol(T H_C Tᵀ/M + λI), H_C
// from f_C = K_MM α, which the gradient's λ term computes anyway, scaled
// to the rows' mean Hessian weight h̄ from the gradient pass). A
// candidate's columns are computed as they would be alone: sharing the
// passes changes no value.
type newtonRun struct {
	m, k, steps, iters int
	tol                float64
	base               *PassJob // the template of the passes (the fit's right-hand side's job)
	targets            []string
	pass               passFunc
	groups             []*newtonGroup
	onStep             func(t int) // nil: nothing
	gradReport         func(t, done, chunks int, rows int64)
	iterReport         func(it, done, chunks int, rows int64, residual float64)
	afterStep          func(t int) error // nil: nothing
	passes             int
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
}

// job returns the step's pass of kind with the live groups, U unset.
func (r *newtonRun) job(kind PassKind, live []*newtonGroup) *PassJob {
	j := *r.base
	j.Kind, j.Targets, j.U, j.centers = kind, r.targets, nil, nil
	j.Groups, j.groupCenters = nil, nil
	j.ClassWeights = r.classWeights
	mul := 1
	if kind == PassLogisticHess {
		mul = 2
	}
	for _, g := range live {
		c := len(g.live) * r.k
		j.Groups = append(j.Groups, PassGroup{Kernel: g.kern, Cols: c, U: make([]float64, mul*r.m*c)})
		j.groupCenters = append(j.groupCenters, g.prep)
	}
	return &j
}

// run takes the steps first, first+1, … of every candidate.
func (r *newtonRun) run(ctx context.Context, first int) error {
	m, k := r.m, r.k
	for t := first; t < r.steps; t++ {
		var live []*newtonGroup
		ncols := 0
		for _, g := range r.groups {
			g.live = g.live[:0]
			for _, c := range g.cands {
				if c.err == nil {
					c.col, c.gcol = ncols, len(g.live)*k
					g.live = append(g.live, c)
					ncols += k
				}
			}
			if len(g.live) > 0 {
				live = append(live, g)
			}
		}
		if len(live) == 0 {
			return nil
		}
		if r.onStep != nil {
			r.onStep(t)
		}
		grad := r.job(PassLogisticGrad, live)
		for gi, g := range live {
			gc := grad.Groups[gi]
			for _, c := range g.live {
				setCols(gc.U, gc.Cols, c.gcol, c.alpha, k)
			}
		}
		r.passes++
		var out []float64
		var err error
		if r.balance && r.classWeights == nil {
			// At α = 0 the gradient is the class-weighted right-hand side's.
			out, err = r.balancedStart(ctx, t, grad, live)
		} else {
			out, err = r.pass(ctx, grad, func(done, chunks int, rows int64) { r.gradReport(t, done, chunks, rows) })
		}
		if err != nil {
			return fmt.Errorf("Newton step %d: gradient: %w", t+1, err)
		}
		n := out[len(out)-1]
		r.n = n
		if !(n > 0) {
			return fmt.Errorf("Newton step %d: the rows weigh %v in all", t+1, n)
		}
		b := make([]float64, m*ncols)
		off := 0
		for gi, g := range live {
			gc := grad.Groups[gi]
			nc := gc.Cols
			sums := out[off : off+m*nc]
			sh, sl := out[off+m*nc:off+m*nc+nc], out[off+m*nc+nc:off+m*nc+2*nc]
			off += m*nc + 2*nc
			// K̃α = K_MM α + εMα for every candidate of the group at once,
			// streamed over the centres (no M × M buffer).
			kalpha := make([]float64, m*nc)
			g.c64.KvTo(g.ws, kalpha, g.centres, m, gc.U, nc)
			for _, c := range g.live {
				gk, err := r.prepare(c, t, g, kalpha, sums, sh, sl, nc, n)
				if err != nil {
					c.err = fmt.Errorf("Newton step %d: %w", t+1, err)
					continue
				}
				setCols(b, ncols, c.col, gk, k)
			}
		}
		// Candidates that failed in prepare stay in the CG with b = 0
		// (frozen) so that every column keeps its place.
		failed := 0
		for _, g := range live {
			for _, c := range g.live {
				if c.err != nil {
					failed++
				}
			}
		}
		if failed == ncols/k {
			if r.afterStep != nil {
				if err := r.afterStep(t); err != nil {
					return err
				}
			}
			continue
		}
		op := &newtonOperator{r: r, live: live, ncols: ncols, n: n}
		st := newCGState(b, ncols)
		hess := r.job(PassLogisticHess, live)
		op.job = hess
		if _, err := conjugateGradient(ctx, op, st, ncols, r.iters, r.tol, func(st *cgState) error {
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
			r.iterReport(st.Iter, 0, 0, 0, st.relResidual())
			return nil
		}); err != nil {
			return fmt.Errorf("Newton step %d: %w", t+1, err)
		}
		r.passes += st.Iter
		beta := make([]float64, m*k)
		delta := make([]float64, m*k)
		for _, g := range live {
			for _, c := range g.live {
				if c.err != nil {
					continue
				}
				getCols(beta, k, st.Beta, ncols, c.col)
				c.pre.ApplyBTo(delta, beta, k)
				for i := range c.alpha {
					c.alpha[i] += delta[i]
				}
				its := c.lastIter
				if len(r.groups) == 1 && len(g.live) == 1 {
					its = st.Iter // alone, the CG's own count
				}
				res := colResidual(st, c.col, k)
				c.iters += its
				c.steps[len(c.steps)-1].Iterations, c.steps[len(c.steps)-1].Residual = its, res
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

// balancedStart is the first gradient pass of a run with balanced class
// weights, which are not known before it: at α = 0 every row's gradient
// weight is −wᵢ cw_c yᵢ/2, its Hessian weight wᵢ cw_c/4 and its loss
// wᵢ cw_c log 2, so one right-hand side's pass per kernel (PassMultiRHS:
// K_nMᵀ W [Y 1], the encoded targets' sums and Σ w) gives the class
// weights (balancedWeights) and, reweighted (weighRHS), the gradient
// pass's values for grad's groups (every candidate starts at α = 0). It
// sets r.classWeights.
func (r *newtonRun) balancedStart(ctx context.Context, t int, grad *PassJob, live []*newtonGroup) ([]float64, error) {
	m, k := r.m, r.k
	for _, c := range live[0].live {
		for _, v := range c.alpha {
			if v != 0 {
				return nil, fmt.Errorf("ooc: balanced class weights need the first Newton step from α = 0")
			}
		}
	}
	job := *grad
	job.Kind, job.ClassWeights = PassMultiRHS, nil
	job.Groups = make([]PassGroup, len(grad.Groups))
	for i, g := range grad.Groups {
		job.Groups[i] = PassGroup{Kernel: g.Kernel}
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
	cw, counts := balancedWeights(r.task, len(r.classes), sums, n)
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
// at step t from its columns of the gradient pass, and returns Bᵀ(−∇)
// (its right-hand side, r × K).
func (r *newtonRun) prepare(c *newtonCand, t int, g *newtonGroup, kalpha, sums, sh, sl []float64, nc int, n float64) ([]float64, error) {
	m, k := r.m, r.k
	lam := c.path[t]
	ka := make([]float64, m*k)
	getCols(ka, k, kalpha, nc, c.gcol)
	// The Hessian weights at the centres, f_C = K_MM α (the mean over the
	// outputs): the preconditioner's view of H.
	hc := make([]float64, m)
	for j := range m {
		for o := range k {
			p := sigmoid(ka[j*k+o])
			hc[j] += p * (1 - p) / float64(k)
		}
	}
	eps := g.pre.Jitter()
	if g.pre.ExplicitLambda() { // the operator's λ term is K_MM itself
		eps = 0
	}
	pen := 0.0
	for i := range ka {
		ka[i] += eps * float64(m) * c.alpha[i]
		pen += c.alpha[i] * ka[i]
	}
	grad := make([]float64, m*k)
	gn := 0.0
	for j := range m {
		for o := range k {
			v := sums[j*nc+c.gcol+o]/n + lam*ka[j*k+o]
			grad[j*k+o] = v
			gn += v * v
		}
	}
	shm, loss := 0.0, 0.0
	for o := range k {
		shm += sh[c.gcol+o] / float64(k) // the mean over the outputs
		loss += sl[c.gcol+o]
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
		return nil, err
	}
	c.pre = pre
	b := make([]float64, pre.Rank()*k)
	pre.ApplyBTTo(b, grad, k)
	for i := range b {
		b[i] = -b[i]
	}
	return b, nil
}

// newtonOperator is, on each live candidate's K columns, W(p) = Bᵀ
// (K_nMᵀ H K_nM / n + λ K̃) B p in FALKON's form with the candidate's
// preconditioner, H from its α: one PassLogisticHess for all. A failed
// candidate's columns get 0, which freezes them.
type newtonOperator struct {
	r     *newtonRun
	live  []*newtonGroup
	job   *PassJob
	ncols int
	n     float64
	iter  int
}

func (op *newtonOperator) MulTo(ctx context.Context, dst, src []float64) error {
	r := op.r
	m, k := r.m, r.k
	vs := make([][]float64, 0)
	us := make([][]float64, 0) // each candidate's u, for an explicit λ·K_MM·u
	u := make([]float64, m*k)
	for gi, g := range op.live {
		gc := op.job.Groups[gi]
		nc := gc.Cols
		for _, c := range g.live {
			v := make([]float64, m*k)
			vs = append(vs, v)
			if c.pre == nil {
				clear(u)
			} else {
				getCols(v, k, src, op.ncols, c.col)
				c.pre.SolveA(v, k)
				c.pre.SolveTTo(u, v, k)
			}
			if c.pre != nil && c.pre.ExplicitLambda() {
				us = append(us, slices.Clone(u))
			} else {
				us = append(us, nil)
			}
			for i := range m {
				copy(gc.U[2*i*nc+c.gcol:2*i*nc+c.gcol+k], u[i*k:(i+1)*k])
				copy(gc.U[2*i*nc+nc+c.gcol:2*i*nc+nc+c.gcol+k], c.alpha[i*k:(i+1)*k])
			}
		}
	}
	op.iter++
	it := op.iter
	w, err := r.pass(ctx, op.job, func(done, chunks int, rows int64) { r.iterReport(it, done, chunks, rows, 0) })
	if err != nil {
		return fmt.Errorf("CG pass: %w", err)
	}
	clear(dst)
	off, vi := 0, 0
	wc := make([]float64, m*k)
	for gi, g := range op.live {
		nc := op.job.Groups[gi].Cols
		for _, c := range g.live {
			v := vs[vi]
			vi++
			if c.pre == nil {
				continue
			}
			getCols(wc, k, w[off:off+m*nc], nc, c.gcol)
			for i := range wc {
				wc[i] /= op.n
			}
			z := make([]float64, c.pre.Rank()*k)
			lam := c.path[len(c.steps)-1]
			if uc := us[vi-1]; uc != nil {
				// Bᵀ(K_nMᵀHK_nM u/n + λ K_MM u): the Nyström
				// preconditioner has no identity for the λ term.
				if err := kmmMulAdd(ctx, g.c64, g.centres, wc, uc, make([]float64, m*k), k, lam, runtime.GOMAXPROCS(0), nil); err != nil {
					return err
				}
				c.pre.SolveTTTo(z, wc, k)
			} else {
				c.pre.SolveTTTo(z, wc, k)
				for i := range z {
					z[i] += lam * v[i]
				}
			}
			c.pre.SolveAT(z, k)
			setCols(dst, op.ncols, c.col, z, k)
		}
		off += m * nc
	}
	return nil
}
