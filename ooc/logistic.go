package ooc

import (
	"context"
	"fmt"
	"math"
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
// weighted FALKON solve cannot express as row weights):
// Newton's method on J(α) = (1/n) Σ wᵢ ℓ(yᵢ, (K_nM α)ᵢ) + (λ/2) αᵀK̃α, ℓ the
// logistic loss, K̃ = K_MM + εMI, along a decreasing λ path. Each step
// makes one gradient pass (K_nMᵀ g with the weights g of the current α,
// and the loss) and Iterations CG passes on
// (K_nMᵀ H K_nM / n + λ K̃) Δ = −∇, whose Hessian weights H each pass
// computes from the same kernel block (PassLogisticHess), preconditioned
// by FALKON's preconditioner with the Hessian weights at the centres
// (precond.WithCenterWeights: A = chol(T H_C Tᵀ/M + λI), H_C from
// f_C = K_MM α, which the gradient's λ term computes anyway, scaled to
// the rows' mean Hessian weight h̄ from the gradient pass).
func fitLogistic(ctx context.Context, plan *FitPlan, cs *centreSample, enc targetEncoding, op *fitOperator, pass passFunc,
	fp string, opts RunOptions, report func(Progress), ph *phaseClock, start time.Time) (*Model, error) {
	cfg := plan.Config
	m, d, k := cs.m, plan.D, enc.k
	mk := m * k
	steps := cfg.NewtonSteps
	if steps == 0 {
		steps = DefaultNewtonSteps
	}
	path := newtonPath(cfg.Lambda, steps)
	base := *op.rhsJob
	base.Targets = plan.Targets[:1]
	grad, hess := base, base
	grad.Kind, hess.Kind = PassLogisticGrad, PassLogisticHess
	alpha := make([]float64, mk)
	grad.U, hess.U = alpha, make([]float64, 2*mk)
	// K̃α = K_MM α + εMα, streamed over the centres (no M × M buffer).
	c64 := kernel.NewCenters(cfg.Kernel, cs.centres, m, d, kernel.Float64)
	ws := c64.NewWorkspace()
	eps := op.pre.Jitter()
	if op.pre.ExplicitLambda() { // the operator's λ term is K_MM itself
		eps = 0
	}
	kalpha := make([]float64, mk)
	hc := make([]float64, m)
	var tr Training
	total, first := 0, 0
	if res := opts.Resume; res != nil {
		if err := res.matches(fp, m, k); err != nil {
			return nil, err
		}
		if len(res.NewtonSteps) != res.Iteration {
			return nil, fmt.Errorf("%w: %d Newton steps recorded for %d done", ErrCheckpointMismatch, len(res.NewtonSteps), res.Iteration)
		}
		copy(alpha, res.Beta)
		first, tr.NewtonSteps = res.Iteration, slices.Clone(res.NewtonSteps)
		for _, s := range tr.NewtonSteps {
			total += s.Iterations
			tr.Residuals = append(tr.Residuals, s.Residual)
		}
	}
	for t, lam := range path {
		if t < first {
			continue
		}
		ph.start("newton", t+1)
		out, err := pass(ctx, &grad, func(done, chunks int, rows int64) {
			report(Progress{Stage: StageRHS, Iteration: t + 1, Iterations: steps, Chunk: done, Chunks: chunks, Rows: rows})
		})
		if err != nil {
			return nil, fmt.Errorf("Newton step %d: gradient: %w", t+1, err)
		}
		sh, n, loss := 0.0, out[mk+k], out[mk+k+1]
		for _, v := range out[mk : mk+k] {
			sh += v / float64(k) // the mean over the outputs
		}
		if !(n > 0) {
			return nil, fmt.Errorf("Newton step %d: the rows weigh %v in all", t+1, n)
		}
		c64.KvTo(ws, kalpha, cs.centres, m, alpha, k)
		// The Hessian weights at the centres, f_C = K_MM α (the mean over
		// the outputs): the preconditioner's view of H.
		for j := range m {
			hc[j] = 0
			for c := range k {
				p := sigmoid(kalpha[j*k+c])
				hc[j] += p * (1 - p) / float64(k)
			}
		}
		pen := 0.0
		for i := range mk {
			kalpha[i] += eps * float64(m) * alpha[i]
			pen += alpha[i] * kalpha[i]
		}
		g := make([]float64, mk)
		gn := 0.0
		for i := range mk {
			g[i] = out[i]/n + lam*kalpha[i]
			gn += g[i] * g[i]
		}
		stepRec := NewtonStep{Lambda: lam, Objective: loss/n + lam/2*pen, GradNorm: math.Sqrt(gn)}
		// h̄ scales the centres' weights to the rows' mean Hessian weight
		// (row weights included): K_nMᵀ H K_nM / n ≈ h̄/h̄_C · K_MM H_C K_MM / M.
		hbar, hcbar := sh/n, 0.0
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
		pre, err := op.pre.WithCenterWeights(hc, lam)
		if err != nil {
			return nil, fmt.Errorf("Newton step %d: %w", t+1, err)
		}
		r := pre.Rank()
		b := make([]float64, r*k)
		pre.ApplyBTTo(b, g, k)
		for i := range b {
			b[i] = -b[i]
		}
		lop := &logisticOperator{pre: pre, job: &hess, alpha: alpha, k: k, n: n, lambda: lam, pass: pass, kmm: op,
			report: func(it, done, chunks int, rows int64) {
				report(Progress{Stage: StageIterate, Iteration: total + it, Iterations: steps * cfg.Iterations,
					Chunk: done, Chunks: chunks, Rows: rows})
			}}
		st := newCGState(b, k)
		if _, err := conjugateGradient(ctx, lop, st, k, cfg.Iterations, cfg.Tolerance, func(st *cgState) error {
			report(Progress{Stage: StageIterate, Iteration: total + st.Iter, Iterations: steps * cfg.Iterations, Residual: st.relResidual()})
			return nil
		}); err != nil {
			return nil, fmt.Errorf("Newton step %d: %w", t+1, err)
		}
		delta := make([]float64, mk)
		pre.ApplyBTo(delta, st.Beta, k)
		for i := range alpha {
			alpha[i] += delta[i]
		}
		total += st.Iter
		stepRec.Iterations, stepRec.Residual = st.Iter, st.relResidual()
		tr.NewtonSteps = append(tr.NewtonSteps, stepRec)
		tr.Residuals = append(tr.Residuals, st.relResidual())
		if opts.Checkpoint != nil {
			c := &Checkpoint{Fingerprint: fp, Iteration: t + 1, M: m, K: k, TargetMean: make([]float64, k),
				Beta: slices.Clone(alpha), R: make([]float64, mk), P: make([]float64, mk), RS: make([]float64, k), BN: make([]float64, k),
				NewtonSteps: slices.Clone(tr.NewtonSteps)}
			if err := opts.Checkpoint(c); err != nil {
				return nil, fmt.Errorf("checkpoint after Newton step %d: %w", t+1, err)
			}
		}
	}
	tr.N, tr.Iterations, tr.Status = plan.N, total, StatusIterationLimit
	if plan.Weight != "" {
		tr.Weight = plan.Weight
	}
	tr.PrecondSeconds, tr.PrecondBytes, tr.Rank, tr.Jitter = op.precondSeconds, op.pre.Bytes(), op.pre.Rank(), eps
	tr.NystromRank, tr.NystromResidual, tr.PrecondCache = op.pre.NystromRank(), op.pre.NystromResidual(), op.cacheNote
	tr.DuplicateCenters = cs.dropped
	if total > 0 {
		tr.SecondsPerIteration = time.Since(start).Seconds() / float64(total+steps)
	}
	meta := newModelMeta(plan, cs, enc, cfg, make([]float64, k), tr)
	mdl, err := newModel(meta, slices.Clone(cs.centres), slices.Clone(alpha), nil, op.cfit)
	if err != nil {
		return nil, err
	}
	if opts.Validation != nil {
		ph.start("validation", total)
		ev, err := mdl.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers})
		if err != nil {
			return nil, fmt.Errorf("validation: %w", err)
		}
		mdl.training.Validation = []ValPoint{{Iteration: total, Metrics: *ev.Metrics()}}
	}
	mdl.training.Phases = ph.done()
	mdl.training.PeakRSS = procstat.PeakRSS()
	mdl.training.Seconds = time.Since(start).Seconds()
	report(Progress{Stage: StageDone, Iteration: total, Iterations: steps * cfg.Iterations})
	return mdl, nil
}

// logisticOperator is W(p) = Bᵀ (K_nMᵀ H K_nM / n + λ K̃) B p in FALKON's
// form, one PassLogisticHess each, H from the step's α.
type logisticOperator struct {
	pre    *precond.Preconditioner
	job    *PassJob // U: rows [u | α], M × 2K
	alpha  []float64
	k      int
	n      float64
	lambda float64
	pass   passFunc
	report func(iter, done, chunks int, rows int64)
	iter   int
	kmm    *fitOperator // its centres and kernel, for ExplicitLambda
}

func (op *logisticOperator) MulTo(ctx context.Context, dst, src []float64) error {
	k := op.k
	m, r := len(op.alpha)/k, op.pre.Rank()
	v := slices.Clone(src)
	op.pre.SolveA(v, k)
	u := make([]float64, m*k)
	op.pre.SolveTTo(u, v, k)
	for i := range m {
		copy(op.job.U[2*i*k:2*i*k+k], u[i*k:(i+1)*k])
		copy(op.job.U[2*i*k+k:2*(i+1)*k], op.alpha[i*k:(i+1)*k])
	}
	op.iter++
	it := op.iter
	w, err := op.pass(ctx, op.job, func(done, chunks int, rows int64) { op.report(it, done, chunks, rows) })
	if err != nil {
		return fmt.Errorf("CG pass: %w", err)
	}
	for i := range w {
		w[i] /= op.n
	}
	z := make([]float64, r*k)
	if op.pre.ExplicitLambda() {
		if err := kmmMulAdd(ctx, op.kmm.c64, op.kmm.centres, w, u, make([]float64, m*k), k, op.lambda, op.kmm.workers); err != nil {
			return err
		}
		op.pre.SolveTTTo(z, w, k)
	} else {
		op.pre.SolveTTTo(z, w, k)
		for i := range z {
			z[i] += op.lambda * v[i]
		}
	}
	op.pre.SolveAT(z, k)
	copy(dst, z)
	return nil
}
