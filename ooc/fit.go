package ooc

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/internal/colstats"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Fit trains FALKON (Rudi, Carratino, Rosasco 2017) on src and returns the
// complete model. It calls Plan first, so a bad configuration fails before
// any pass. The data is read 1 + t times in full (once for the
// right-hand side, once per CG iteration, through opts.Executor), plus
// once locally, in part, to draw the centres — in full instead when the
// source does not report its statistics (stream.Statser) or, for
// classification, its target values (stream.TargetValuer). A NaN or
// infinite value in the data is an error (a *stream.ValueError naming the
// chunk, row and column). Memory is O(M²) plus a bounded number of chunk
// buffers: see FitPlan.Memory.
func Fit(ctx context.Context, src stream.Source, cfg Config, opts RunOptions) (*Model, error) {
	f, err := newFitter(src, cfg, opts, time.Now())
	if err != nil {
		return nil, err
	}
	if err := f.sample(ctx); err != nil {
		return nil, err
	}
	if err := f.setTask(); err != nil {
		return nil, err
	}
	if err := f.prepare(ctx); err != nil {
		return nil, err
	}
	return f.solve(ctx)
}

// newFitter plans the fit of src (Plan) and returns its state.
func newFitter(src stream.Source, cfg Config, opts RunOptions, start time.Time) (*fitter, error) {
	plan, err := Plan(src, cfg, opts)
	if err != nil {
		return nil, err
	}
	f := &fitter{plan: plan, src: plan.src, cfg: plan.Config, run: opts, start: start,
		n: plan.N, d: plan.D, kt: plan.TargetColumns, opts: stream.Options{Workers: opts.Workers}}
	if f.run.ValEvery == 0 {
		f.run.ValEvery = 1
	}
	if v := f.run.Validation; v != nil && plan.Task != TaskRegression {
		if f.run.Validation, err = relabel(v, "the validation data", plan.Targets[0], labelCodes(plan.labels)); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// fitter holds the state of one Fit.
type fitter struct {
	plan  *FitPlan
	src   stream.Source
	cfg   Config
	run   RunOptions
	n     int64
	d, kt int // features, target columns
	start time.Time
	opts  stream.Options

	// Statistics: the source's, or computed in the sampling pass.
	mean, std []float64
	distinct  [][]float64

	centres  []float64 // M × d, standardised
	dropped  int       // duplicate centres
	invStd   []float64
	task     Task
	classes  []float64
	labels   []string // label names of the classes, or nil
	k        int      // outputs after encoding
	pre      *precond.Preconditioner
	cfit     *kernel.Centers // centres in the fit's precision
	rhsJob   *PassJob
	passJob  *PassJob
	iter     int      // CG iterations done
	training Training // filled as the fit goes
	// weights is D for leverage-sampled centres (nil for uniform).
	weights []float64
	// lastVal holds the scores of the last validation pass, after CG
	// iteration lastValIter (for calibrate).
	lastVal     *Evaluator
	lastValIter int
}

func (f *fitter) progress(p Progress) {
	if f.run.Progress != nil {
		p.Elapsed = time.Since(f.start)
		f.run.Progress(p)
	}
}

// sampleIndices draws m distinct row numbers out of n, sorted, by Floyd's
// algorithm (O(m) memory whatever n).
func sampleIndices(n int64, m int, seed uint64) []int64 {
	rng := newRand(seed, 0x63656e74726573) // "centres"
	set := make(map[int64]struct{}, m)
	out := make([]int64, 0, m)
	for j := n - int64(m); j < n; j++ {
		t := rng.Int64N(j + 1)
		if _, dup := set[t]; dup {
			t = j
		}
		set[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

type samplePart struct {
	rows []float64 // selected rows of the chunk, raw
	st   []colstats.Stats
	col  []float64 // one column of the chunk
}

// sample draws the centres uniformly without replacement and, when needed,
// computes the statistics in the same pass.
func (f *fitter) sample(ctx context.Context) error {
	f.progress(Progress{Stage: StageSample})
	leverage := f.cfg.Sampling == SamplingLeverage
	draw := f.cfg.Centers
	if leverage {
		draw = leverageCandidates(f.n, f.cfg.Centers, f.cfg.Candidates)
	}
	idx := sampleIndices(f.n, draw, f.cfg.Seed)
	// Local row numbers wanted from each chunk.
	want := make(map[int][]int)
	var chunks []int
	var lo int64
	p := 0
	for c := range f.src.NumChunks() {
		hi := lo + int64(f.src.ChunkRows(c))
		for p < len(idx) && idx[p] < hi {
			want[c] = append(want[c], int(idx[p]-lo))
			p++
		}
		if len(want[c]) > 0 {
			chunks = append(chunks, c)
		}
		lo = hi
	}
	full := f.plan.needFullSample()
	if full {
		chunks = nil // every chunk
	}
	d, kt := f.d, f.kt
	centres := make([]float64, 0, draw*d)
	total := make([]colstats.Stats, d+kt)
	for j := range total {
		total[j] = colstats.New()
	}
	done, nchunks := 0, len(chunks)
	if full {
		nchunks = f.src.NumChunks()
	}
	err := stream.Run(ctx, f.src, f.opts, stream.Job[*samplePart]{
		Chunks:  chunks,
		Targets: full,
		NewPartial: func() *samplePart {
			p := &samplePart{st: make([]colstats.Stats, d+kt)}
			for j := range p.st {
				p.st[j] = colstats.New()
			}
			return p
		},
		NewWorker: func() func(context.Context, stream.Chunk, *samplePart) error {
			return func(_ context.Context, c stream.Chunk, p *samplePart) error {
				p.rows = p.rows[:0]
				for _, r := range want[c.Index] {
					row := c.X[r*d : (r+1)*d]
					if err := stream.CheckFinite(row, f.plan.Features); err != nil {
						return err.(*stream.ValueError).At(r)
					}
					p.rows = append(p.rows, row...)
				}
				if !full {
					return nil
				}
				if err := stream.CheckFinite(c.X, f.plan.Features); err != nil {
					return err
				}
				if err := stream.CheckFinite(c.Y, f.plan.Targets); err != nil {
					return err
				}
				// One statistics routine for the module (package
				// colstats, as the chunk store's writer): per column,
				// shifted by the chunk's first value.
				p.col = slices.Grow(p.col[:0], c.Rows)[:c.Rows]
				for j := range d + kt {
					src, w, o := c.X, d, j
					if j >= d {
						src, w, o = c.Y, kt, j-d
					}
					for r := range c.Rows {
						p.col[r] = src[r*w+o]
					}
					shift := 0.0
					if c.Rows > 0 {
						shift = p.col[0]
					}
					p.st[j].Chunk(p.col, shift, j < d) // features need no distinct values
				}
				return nil
			}
		},
		Reduce: func(chunk int, p *samplePart) error {
			centres = append(centres, p.rows...)
			if full {
				for j := range total {
					total[j].Merge(&p.st[j])
				}
			}
			done++
			f.progress(Progress{Stage: StageSample, Chunk: done, Chunks: nchunks})
			return nil
		},
	})
	if err != nil {
		return fmt.Errorf("sample centres: %w", err)
	}
	f.mean, f.std, f.distinct = f.plan.mean, f.plan.std, f.plan.distinct
	if full {
		if f.mean == nil {
			f.mean, f.std = make([]float64, d), make([]float64, d)
			for j := range d {
				sum := total[j].Summary()
				f.mean[j], f.std[j] = sum.Mean, sum.Std
			}
		}
		if f.distinct == nil {
			f.distinct = make([][]float64, kt)
			for j := range kt {
				f.distinct[j] = total[d+j].Summary().Distinct
			}
		}
	}
	if !f.cfg.NoStandardize {
		f.invStd = invStdOf(f.std)
		standardize(centres, f.mean, f.invStd)
	} else {
		f.mean, f.std = nil, nil
	}
	centres, dropped := dedupRows(centres, d)
	if dropped > 0 && len(centres) == 0 {
		return configErr("no centres could be drawn")
	}
	if leverage {
		var err error
		f.progress(Progress{Stage: StageLeverage})
		centres, f.weights, f.training.LambdaLeverage, err = f.leverageSelect(ctx, centres, f.cfg.Centers)
		if err != nil {
			return err
		}
		dropped = f.cfg.Centers - len(f.weights)
	}
	f.centres, f.dropped = centres, dropped
	return nil
}

// setTask decides the task and the encoding of the targets.
func (f *fitter) setTask() error {
	p := *f.plan
	if err := p.resolveTask(f.distinct); err != nil {
		return err
	}
	f.task, f.classes, f.k, f.labels = p.Task, p.Classes, p.K, p.ClassNames
	return nil
}

// prepare computes K_MM, the preconditioner and the pass jobs.
func (f *fitter) prepare(ctx context.Context) error {
	d := f.d
	m := len(f.centres) / d
	f.progress(Progress{Stage: StageKernel})
	t0 := time.Now()
	c64 := kernel.NewCenters(f.cfg.Kernel, f.centres, m, d, kernel.Float64)
	// K_MM goes block by block straight into the preconditioner's one
	// M × M buffer (precond.Bytes), whatever its precision.
	wss := sync.Pool{New: func() any { return c64.NewWorkspace() }}
	rows := func(dst []float64, lo, hi int) {
		ws := wss.Get().(*kernel.Workspace)
		c64.BlockTo(ws, dst, f.centres[lo*d:hi*d], hi-lo)
		wss.Put(ws)
	}
	started := false
	pre, err := precond.Build(ctx, m, rows, f.cfg.Lambda, precond.Options{
		Jitter: f.cfg.Jitter, Workers: f.run.Workers, Weights: f.weights, Method: f.cfg.Preconditioner,
		Precision: f.cfg.PrecondPrecision,
		Progress: func(done float64) {
			started = true
			f.progress(Progress{Stage: StagePrecond, Fraction: done})
		},
	})
	if err != nil {
		return err
	}
	if !started { // the eigen method reports no progress
		f.progress(Progress{Stage: StagePrecond, Fraction: 1})
	}
	f.training.PrecondSeconds = time.Since(t0).Seconds()
	f.pre = pre
	f.cfit = c64
	if f.cfg.Precision != kernel.Float64 {
		f.cfit = kernel.NewCenters(f.cfg.Kernel, f.centres, m, d, f.cfg.Precision)
	}
	targets := f.plan.Targets
	if f.task != TaskRegression {
		targets = targets[:1]
	}
	job := func(kind PassKind) *PassJob {
		j := &PassJob{
			Kind: kind, Kernel: f.cfg.Kernel, Precision: f.cfg.Precision, M: m, D: d, K: f.k,
			Centers: f.centres, Task: f.task, Classes: f.classes, Features: f.plan.Features,
			centers: f.cfit,
		}
		if f.invStd != nil {
			j.Mean, j.InvStd = f.mean, f.invStd
		}
		return j
	}
	f.rhsJob = job(PassRHS)
	f.rhsJob.Targets = f.plan.Targets
	if f.task != TaskRegression {
		f.rhsJob.Targets = f.plan.Targets[:1]
	}
	f.passJob = job(PassKernel)
	f.passJob.U = make([]float64, m*f.k)
	return nil
}

// blockParallel computes dst (rows × M) = K(x, C) over row blocks on the
// configured number of goroutines.
func blockParallel(ctx context.Context, c *kernel.Centers, dst, x []float64, rows, d int, opts stream.Options) error {
	const block = 256
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workersOf(opts))
	m := c.M()
	for lo := 0; lo < rows; lo += block {
		hi := min(lo+block, rows)
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			ws := c.NewWorkspace()
			c.BlockTo(ws, dst[lo*m:hi*m], x[lo*d:hi*d], hi-lo)
			return nil
		})
	}
	return g.Wait()
}

// pass runs one pass of job over the training source: through the
// configured Executor, or locally with a progress report per chunk.
func (f *fitter) pass(ctx context.Context, job *PassJob, report func(done int, rows int64)) ([]float64, error) {
	if f.run.Executor != nil {
		out, err := f.run.Executor.Pass(ctx, f.src, job)
		if err == nil && len(out) != job.OutLen() {
			err = fmt.Errorf("ooc: the executor returned %d values, want %d", len(out), job.OutLen())
		}
		return out, err
	}
	done := 0
	var rows int64
	return localPass(ctx, f.src, job, f.run.Workers, func(chunk int) {
		done++
		rows += int64(f.src.ChunkRows(chunk))
		report(done, rows)
	})
}

// solve runs the right-hand-side pass and CG, and returns the model.
func (f *fitter) solve(ctx context.Context) (*Model, error) {
	r, k := f.pre.Rank(), f.k
	var st *cgState
	var ymean []float64
	if res := f.run.Resume; res != nil {
		if err := res.matches(f.fingerprint(), r, k); err != nil {
			return nil, err
		}
		st = res.state()
		ymean = slices.Clone(res.TargetMean)
	} else {
		b, mu, err := f.rhs(ctx)
		if err != nil {
			return nil, err
		}
		st, ymean = newCGState(b, k), mu
	}
	op := &fitOperator{f: f}
	iterStart := time.Now()
	startIter := st.Iter
	tr := &f.training
	f.iter = st.Iter
	after := func(st *cgState) error {
		f.iter = st.Iter
		tr.Residuals = append(tr.Residuals, st.relResidual())
		p := Progress{Stage: StageIterate, Iteration: st.Iter, Iterations: f.cfg.Iterations, Residual: st.relResidual()}
		if f.run.Validation != nil && (st.Iter%f.run.ValEvery == 0 || st.Iter == f.cfg.Iterations) {
			vp, err := f.validate(ctx, st, ymean)
			if err != nil {
				return err
			}
			tr.Validation = append(tr.Validation, *vp)
			p.Val = vp
		}
		if f.run.Checkpoint != nil {
			if err := f.run.Checkpoint(newCheckpoint(f.fingerprint(), st, ymean)); err != nil {
				return fmt.Errorf("checkpoint after iteration %d: %w", st.Iter, err)
			}
		}
		f.progress(p)
		return nil
	}
	status, err := conjugateGradient(ctx, op, st, k, f.cfg.Iterations, f.cfg.Tolerance, after)
	if err != nil {
		return nil, err
	}
	tr.N = f.n
	tr.Iterations = st.Iter
	tr.Status = status
	tr.Seconds = time.Since(f.start).Seconds()
	if n := st.Iter - startIter; n > 0 {
		tr.SecondsPerIteration = time.Since(iterStart).Seconds() / float64(n)
	}
	tr.PrecondBytes = f.pre.Bytes()
	tr.Rank = r
	tr.Jitter = f.pre.Jitter()
	tr.DuplicateCenters = f.dropped
	m, err := f.model(st, ymean, *tr)
	if err != nil {
		return nil, err
	}
	if m, err = f.calibrate(ctx, m, st.Iter); err != nil {
		return nil, err
	}
	f.progress(Progress{Stage: StageDone, Iteration: st.Iter, Iterations: f.cfg.Iterations, Residual: st.relResidual()})
	return m, nil
}

// model builds the model of the CG state st.
func (f *fitter) model(st *cgState, ymean []float64, tr Training) (*Model, error) {
	alpha := make([]float64, f.numCenters()*f.k)
	f.pre.ApplyBTo(alpha, st.Beta, f.k)
	return newModel(f.modelMeta(f.cfg, ymean, tr), slices.Clone(f.centres), alpha, f.cfit)
}

// modelMeta returns the metadata of the fit's model.
func (f *fitter) modelMeta(cfg Config, ymean []float64, tr Training) *modelMeta {
	meta := &modelMeta{
		Kernel: cfg.Kernel, Task: f.task, Classes: slices.Clone(f.classes), ClassNames: slices.Clone(f.labels),
		Features: slices.Clone(f.plan.Features), Targets: slices.Clone(f.plan.Targets),
		TargetMean: slices.Clone(ymean), M: f.numCenters(), D: f.d, K: f.k, Config: cfg, Training: tr, prec: cfg.Precision,
	}
	if f.invStd != nil {
		meta.FeatureMean, meta.FeatureStd = slices.Clone(f.mean), slices.Clone(f.std)
	}
	return meta
}

// numCenters is M, once the centres are drawn.
func (f *fitter) numCenters() int { return len(f.centres) / f.d }

// evaluator returns an Evaluator for the fit's task and classes.
func (f *fitter) evaluator() *Evaluator {
	return &Evaluator{m: &Model{task: f.task, classes: f.classes, targets: f.plan.Targets, k: f.k}}
}

// standardizeChunk standardises x in place (when the fit does) and
// refuses non-finite values.
func (f *fitter) standardizeChunk(x []float64) error {
	if f.invStd == nil {
		return standardizeChecked(x, nil, nil, f.plan.Features)
	}
	return standardizeChecked(x, f.mean, f.invStd, f.plan.Features)
}

// encode writes the encoded targets of rows into v (encodeTargets),
// refusing non-finite values.
func (f *fitter) encode(y []float64, rows, kt int, v []float64, stride int) error {
	if err := stream.CheckFinite(y[:rows*kt], f.plan.Targets[:kt]); err != nil {
		return err
	}
	return encodeTargets(f.task, f.classes, f.plan.Targets, y, rows, kt, f.k, v, stride)
}

// rhs makes the pass for b = Bᵀ K_nMᵀ (Y − 1μᵀ) / n. The all-ones column
// gives K_nMᵀ1, so the targets are centred without a pass of their own:
// K_nMᵀ(Y − 1μᵀ) = K_nMᵀY − (K_nMᵀ1)μᵀ.
func (f *fitter) rhs(ctx context.Context) (b, mu []float64, err error) {
	m, k := f.rhsJob.M, f.k
	k1 := k + 1
	chunks := f.src.NumChunks()
	f.progress(Progress{Stage: StageRHS, Chunks: chunks})
	out, err := f.pass(ctx, f.rhsJob, func(done int, rows int64) {
		f.progress(Progress{Stage: StageRHS, Chunk: done, Chunks: chunks, Rows: rows})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("right-hand side: %w", err)
	}
	w, sum := out[:m*k1], out[m*k1:]
	mu = make([]float64, k)
	for j := range k {
		mu[j] = sum[j] / float64(f.n)
	}
	bm := make([]float64, m*k)
	for i := range m {
		ones := w[i*k1+k]
		for j := range k {
			bm[i*k+j] = (w[i*k1+j] - ones*mu[j]) / float64(f.n)
		}
	}
	b = make([]float64, f.pre.Rank()*k)
	f.pre.ApplyBTTo(b, bm, k)
	return b, mu, nil
}

// standardize sets x ← (x − mean) · invStd row by row, in place.
func standardize(x, mean, invStd []float64) {
	d := len(mean)
	for i := 0; i < len(x); i += d {
		row := x[i : i+d]
		for j := range row {
			row[j] = (row[j] - mean[j]) * invStd[j]
		}
	}
}

func addTo(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}

// fitOperator is W(p) = Bᵀ (K_nMᵀ K_nM / n + λ K̃) B p in FALKON's form
// A⁻ᵀ(T⁻ᵀ K_nMᵀ K_nM T⁻¹A⁻¹p / n + λ A⁻¹p): one pass over the data. p
// and W(p) are r × k (r = M unless the eigen preconditioner dropped
// directions); the pass works on M × k.
type fitOperator struct {
	f    *fitter
	v, z []float64
}

func (op *fitOperator) MulTo(ctx context.Context, dst, src []float64) error {
	f := op.f
	r, k := f.pre.Rank(), f.k
	if op.v == nil {
		op.v, op.z = make([]float64, r*k), make([]float64, r*k)
	}
	u := f.passJob.U
	copy(op.v, src)
	f.pre.SolveA(op.v, k)      // v = A⁻¹p
	f.pre.SolveTTo(u, op.v, k) // u = D T⁻¹ A⁻¹ p
	w, err := f.kernelPass(ctx)
	if err != nil {
		return err
	}
	n := float64(f.n)
	for i := range w {
		w[i] /= n
	}
	f.pre.SolveTTTo(op.z, w, k) // T⁻ᵀ D K_nMᵀ K_nM u / n
	for i := range op.z {
		op.z[i] += f.cfg.Lambda * op.v[i]
	}
	f.pre.SolveAT(op.z, k)
	copy(dst, op.z)
	return nil
}

// kernelPass returns K_nMᵀ K_nM u over the whole source for u =
// f.passJob.U: the pass of CG iteration f.iter+1.
func (f *fitter) kernelPass(ctx context.Context) ([]float64, error) {
	chunks := f.src.NumChunks()
	w, err := f.pass(ctx, f.passJob, func(done int, rows int64) {
		f.progress(Progress{Stage: StageIterate, Iteration: f.iter + 1, Iterations: f.cfg.Iterations,
			Chunk: done, Chunks: chunks, Rows: rows})
	})
	if err != nil {
		return nil, fmt.Errorf("CG pass: %w", err)
	}
	return w, nil
}

// validate evaluates the current iterate on the validation source.
func (f *fitter) validate(ctx context.Context, st *cgState, ymean []float64) (*ValPoint, error) {
	mdl, err := f.model(st, ymean, Training{})
	if err != nil {
		return nil, err
	}
	ev, err := mdl.evaluate(ctx, f.run.Validation, PredictOptions{Workers: f.run.Workers})
	if err != nil {
		return nil, fmt.Errorf("validation after iteration %d: %w", st.Iter, err)
	}
	f.lastVal, f.lastValIter = ev, st.Iter // for calibrate
	return &ValPoint{Iteration: st.Iter, Metrics: *ev.Metrics()}, nil
}

// ValPoint is the validation metric after one CG iteration.
type ValPoint struct {
	Iteration int `json:"iteration"`
	Metrics
}
