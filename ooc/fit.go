package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Fit trains FALKON (Rudi, Carratino, Rosasco 2017) on src and returns the
// model. The data is read 1 + t times in full (once for the right-hand
// side, once per CG iteration), plus once in part to draw the centres —
// in full instead when Config.Columns does not supply the statistics.
// Memory is O(M²) plus a bounded number of chunk buffers: see
// EstimateMemory.
func Fit(ctx context.Context, src stream.Source, cfg Config) (*Model, error) {
	start := time.Now()
	f, err := newFitter(src, cfg, start)
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

// fitter holds the state of one Fit.
type fitter struct {
	src   stream.Source
	cfg   Config
	cols  Columns
	n     int64
	d, kt int // features, target columns
	start time.Time
	opts  stream.Options

	// Statistics (computed when cols does not give them).
	mean, std []float64
	distinct  [][]float64

	model  *Model
	task   Task
	k      int // outputs after encoding
	pre    *precond.Preconditioner
	cfit   *kernel.Centers // centres in the fit's precision
	invStd []float64
	iter   int // CG iterations done
	// weights is D for leverage-sampled centres (nil for uniform).
	weights []float64
}

func newFitter(src stream.Source, cfg Config, start time.Time) (*fitter, error) {
	src = spread(src)
	f := &fitter{src: src, start: start, d: src.Dim(), kt: src.NumTargets()}
	for i := range src.NumChunks() {
		f.n += int64(src.ChunkRows(i))
	}
	if f.n == 0 {
		return nil, configErr("the training data has no rows")
	}
	if f.kt == 0 {
		return nil, fmt.Errorf("%w: fit needs targets (ingest with --target COLUMN)", ErrNoTargets)
	}
	var err error
	if f.cfg, err = cfg.resolved(f.n, f.d); err != nil {
		return nil, err
	}
	f.opts = stream.Options{Workers: f.cfg.Workers}
	if cfg.Columns != nil {
		f.cols = *cfg.Columns
	}
	if f.cols.Features == nil {
		for j := range f.d {
			f.cols.Features = append(f.cols.Features, fmt.Sprintf("x%d", j))
		}
	}
	if f.cols.Targets == nil {
		for j := range f.kt {
			f.cols.Targets = append(f.cols.Targets, fmt.Sprintf("y%d", j))
		}
	}
	if len(f.cols.Features) != f.d || len(f.cols.Targets) != f.kt {
		return nil, configErr("Columns names %d features and %d targets, the source has %d and %d",
			len(f.cols.Features), len(f.cols.Targets), f.d, f.kt)
	}
	f.mean, f.std, f.distinct = f.cols.FeatureMean, f.cols.FeatureStd, f.cols.TargetDistinct
	return f, nil
}

func (f *fitter) progress(p Progress) {
	if f.cfg.Progress != nil {
		p.Elapsed = time.Since(f.start)
		f.cfg.Progress(p)
	}
}

// needStats reports whether the sampling pass must read every chunk.
func (f *fitter) needStats() bool {
	needClasses := f.cfg.Task != TaskRegression && f.distinct == nil
	return (!f.cfg.NoStandardize && (f.mean == nil || f.std == nil)) || needClasses
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
	st   colStats
	tv   []valueSet
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
	full := f.needStats()
	if full {
		chunks = nil // every chunk
	}
	d, kt := f.d, f.kt
	centres := make([]float64, 0, draw*d)
	var total colStats
	total.init(d)
	tv := make([]valueSet, kt)
	done, nchunks := 0, len(chunks)
	if full {
		nchunks = f.src.NumChunks()
	}
	err := stream.Run(ctx, f.src, f.opts, stream.Job[*samplePart]{
		Chunks:  chunks,
		Targets: full,
		NewPartial: func() *samplePart {
			p := &samplePart{tv: make([]valueSet, kt)}
			p.st.init(d)
			return p
		},
		NewWorker: func() func(context.Context, stream.Chunk, *samplePart) error {
			return func(_ context.Context, c stream.Chunk, p *samplePart) error {
				p.rows = p.rows[:0]
				for _, r := range want[c.Index] {
					p.rows = append(p.rows, c.X[r*d:(r+1)*d]...)
				}
				if full {
					p.st.reset()
					p.st.addRows(c.X, c.Rows)
					for j := range kt {
						p.tv[j].reset()
						for r := range c.Rows {
							p.tv[j].add(c.Y[r*kt+j])
						}
					}
				}
				return nil
			}
		},
		Reduce: func(chunk int, p *samplePart) error {
			centres = append(centres, p.rows...)
			if full {
				total.merge(&p.st)
				for j := range kt {
					tv[j].merge(&p.tv[j])
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
	if full {
		if f.mean == nil || f.std == nil {
			f.mean, f.std = total.meanStd()
		}
		if f.distinct == nil {
			f.distinct = make([][]float64, kt)
			for j := range kt {
				f.distinct[j] = tv[j].sorted()
			}
		}
	}
	f.model = &Model{D: d, Features: f.cols.Features, Targets: f.cols.Targets}
	if !f.cfg.NoStandardize {
		f.model.FeatureMean = slices.Clone(f.mean)
		f.model.FeatureStd = slices.Clone(f.std)
		f.invStd = make([]float64, d)
		for j, s := range f.std {
			f.invStd[j] = 1
			if s > 0 && !math.IsInf(s, 0) {
				f.invStd[j] = 1 / s
			}
		}
		standardize(centres, f.mean, f.invStd)
	}
	centres, dropped := dedupRows(centres, d)
	if dropped > 0 && len(centres) == 0 {
		return configErr("no centres could be drawn")
	}
	if leverage {
		var err error
		f.progress(Progress{Stage: StageLeverage})
		centres, f.weights, f.model.Training.LambdaLeverage, err = f.leverageSelect(ctx, centres, f.cfg.Centers)
		if err != nil {
			return err
		}
		dropped = f.cfg.Centers - len(f.weights)
	}
	f.model.M = len(centres) / d
	f.model.Centers = centres
	f.model.Training.DuplicateCenters = dropped
	return nil
}

// setTask decides the task and the encoding of the targets.
func (f *fitter) setTask() error {
	task := f.cfg.Task
	distinct := func() []float64 {
		if f.distinct == nil || f.distinct[0] == nil {
			return nil
		}
		return f.distinct[0]
	}
	if task == TaskAuto {
		task = TaskRegression
		if f.kt == 1 && len(distinct()) == 2 {
			task = TaskBinary
		}
	}
	switch task {
	case TaskRegression:
		f.k = f.kt
	case TaskBinary, TaskMulticlass:
		if f.kt != 1 {
			return configErr("%s classification needs exactly one target column, the data has %d", task, f.kt)
		}
		cls := distinct()
		if cls == nil {
			return configErr("target %q has more than 256 distinct values: it cannot be a class label", f.cols.Targets[0])
		}
		if task == TaskBinary && len(cls) != 2 {
			return configErr("binary classification needs exactly two classes in target %q, found %d: %v",
				f.cols.Targets[0], len(cls), cls)
		}
		if task == TaskMulticlass && len(cls) < 2 {
			return configErr("multiclass classification needs at least two classes in target %q, found %d",
				f.cols.Targets[0], len(cls))
		}
		f.model.Classes = slices.Clone(cls)
		f.k = 1
		if task == TaskMulticlass {
			f.k = len(cls)
		}
	}
	f.task = task
	f.model.Task = task
	f.model.K = f.k
	return nil
}

// prepare computes K_MM and the preconditioner.
func (f *fitter) prepare(ctx context.Context) error {
	m, d := f.model.M, f.d
	f.model.Kernel = f.cfg.Kernel
	f.model.Precision = f.cfg.Precision
	f.progress(Progress{Stage: StageKernel})
	t0 := time.Now()
	c64 := kernel.NewCenters(f.cfg.Kernel, f.model.Centers, m, d, kernel.Float64)
	// K_MM goes block by block straight into the preconditioner's one
	// M × M buffer (precond.Bytes), whatever its precision.
	wss := sync.Pool{New: func() any { return c64.NewWorkspace() }}
	rows := func(dst []float64, lo, hi int) {
		ws := wss.Get().(*kernel.Workspace)
		c64.BlockTo(ws, dst, f.model.Centers[lo*d:hi*d], hi-lo)
		wss.Put(ws)
	}
	started := false
	pre, err := precond.Build(ctx, m, rows, f.cfg.Lambda, precond.Options{
		Jitter: f.cfg.Jitter, Workers: f.cfg.Workers, Weights: f.weights, Method: f.cfg.Preconditioner,
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
	f.model.Training.PrecondSeconds = time.Since(t0).Seconds()
	f.pre = pre
	f.cfit = c64
	if f.cfg.Precision != kernel.Float64 {
		f.cfit = kernel.NewCenters(f.cfg.Kernel, f.model.Centers, m, d, f.cfg.Precision)
	}
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

// solve runs the right-hand-side pass and CG, and finishes the model.
func (f *fitter) solve(ctx context.Context) (*Model, error) {
	r, k := f.pre.Rank(), f.k
	var st *cgState
	var ymean []float64
	if f.cfg.Resume != nil {
		if err := f.cfg.Resume.matches(f.fingerprint(), r, k); err != nil {
			return nil, err
		}
		st = f.cfg.Resume.state()
		ymean = slices.Clone(f.cfg.Resume.TargetMean)
	} else {
		b, mu, err := f.rhs(ctx)
		if err != nil {
			return nil, err
		}
		st, ymean = newCGState(b, k), mu
	}
	f.model.TargetMean = ymean
	op := &fitOperator{f: f}
	iterStart := time.Now()
	startIter := st.Iter
	tr := &f.model.Training
	f.iter = st.Iter
	after := func(st *cgState) error {
		f.iter = st.Iter
		tr.Residuals = append(tr.Residuals, st.relResidual())
		p := Progress{Stage: StageIterate, Iteration: st.Iter, Iterations: f.cfg.Iterations, Residual: st.relResidual()}
		if f.cfg.Validation != nil && (st.Iter%f.cfg.ValEvery == 0 || st.Iter == f.cfg.Iterations) {
			vp, err := f.validate(ctx, st)
			if err != nil {
				return err
			}
			tr.Validation = append(tr.Validation, *vp)
			p.Val = vp
		}
		if f.cfg.Checkpoint != nil {
			if err := f.cfg.Checkpoint(newCheckpoint(f.fingerprint(), st, ymean)); err != nil {
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
	f.model.Alpha = make([]float64, f.model.M*k)
	f.pre.ApplyBTo(f.model.Alpha, st.Beta, k)
	cfg := f.cfg
	f.model.Config = cfg
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
	f.progress(Progress{Stage: StageDone, Iteration: st.Iter, Iterations: f.cfg.Iterations, Residual: st.relResidual()})
	return f.model, nil
}

// rhsPart is one chunk's contribution to the right-hand side: K_bᵀ[Y_b 1]
// and the column sums of the encoded targets.
type rhsPart struct {
	w   []float64 // M × (k+1)
	sum []float64 // k
}

// rhs makes the pass for b = Bᵀ K_nMᵀ (Y − 1μᵀ) / n. The all-ones column
// gives K_nMᵀ1, so the targets are centred without a pass of their own:
// K_nMᵀ(Y − 1μᵀ) = K_nMᵀY − (K_nMᵀ1)μᵀ.
func (f *fitter) rhs(ctx context.Context) (b, mu []float64, err error) {
	m, k, kt := f.model.M, f.k, f.kt
	k1 := k + 1
	w := make([]float64, m*k1)
	sum := make([]float64, k)
	f.progress(Progress{Stage: StageRHS, Chunks: f.src.NumChunks()})
	done := 0
	var rows int64
	err = stream.Run(ctx, f.src, f.opts, stream.Job[*rhsPart]{
		Targets:    true,
		NewPartial: func() *rhsPart { return &rhsPart{w: make([]float64, m*k1), sum: make([]float64, k)} },
		NewWorker: func() func(context.Context, stream.Chunk, *rhsPart) error {
			ws := f.cfit.NewWorkspace()
			var v []float64
			return func(_ context.Context, c stream.Chunk, p *rhsPart) error {
				f.standardizeChunk(c.X)
				v = slices.Grow(v[:0], c.Rows*k1)[:c.Rows*k1]
				if err := f.encode(c.Y, c.Rows, kt, v, k1); err != nil {
					return err
				}
				clear(p.sum)
				for r := range c.Rows {
					for j := range k {
						p.sum[j] += v[r*k1+j]
					}
				}
				clear(p.w)
				f.cfit.KtKvAdd(ws, p.w, c.X, c.Rows, nil, v, k1)
				return nil
			}
		},
		Reduce: func(chunk int, p *rhsPart) error {
			addTo(w, p.w)
			addTo(sum, p.sum)
			rows += int64(f.src.ChunkRows(chunk))
			done++
			f.progress(Progress{Stage: StageRHS, Chunk: done, Chunks: f.src.NumChunks(), Rows: rows})
			return nil
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("right-hand side: %w", err)
	}
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

// encode writes the encoded targets of rows into v (rows × stride; the
// column after the k outputs, when stride > k, is set to 1).
func (f *fitter) encode(y []float64, rows, kt int, v []float64, stride int) error {
	k := f.k
	for r := range rows {
		out := v[r*stride : r*stride+stride]
		switch f.task {
		case TaskRegression:
			copy(out, y[r*kt:r*kt+kt])
		default:
			ci, ok := slices.BinarySearch(f.model.Classes, y[r])
			if !ok {
				return fmt.Errorf("target %q: value %v in row %d of the chunk is not one of the classes %v",
					f.cols.Targets[0], y[r], r, f.model.Classes)
			}
			if f.task == TaskBinary {
				out[0] = float64(2*ci - 1) // −1 for the first class, +1 for the second
			} else {
				for j := range k {
					out[j] = 0
				}
				out[ci] = 1
			}
		}
		if stride > k {
			out[k] = 1
		}
	}
	return nil
}

func (f *fitter) standardizeChunk(x []float64) {
	if f.invStd != nil {
		standardize(x, f.mean, f.invStd)
	}
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
	f          *fitter
	v, z, u, w []float64
}

func (op *fitOperator) MulTo(ctx context.Context, dst, src []float64) error {
	f := op.f
	m, r, k := f.model.M, f.pre.Rank(), f.k
	if op.v == nil {
		op.v, op.z = make([]float64, r*k), make([]float64, r*k)
		op.u, op.w = make([]float64, m*k), make([]float64, m*k)
	}
	copy(op.v, src)
	f.pre.SolveA(op.v, k)         // v = A⁻¹p
	f.pre.SolveTTo(op.u, op.v, k) // u = D T⁻¹ A⁻¹ p
	clear(op.w)
	if err := f.kernelPass(ctx, op.u, op.w); err != nil {
		return err
	}
	n := float64(f.n)
	for i := range op.w {
		op.w[i] /= n
	}
	f.pre.SolveTTTo(op.z, op.w, k) // T⁻ᵀ D K_nMᵀ K_nM u / n
	for i := range op.z {
		op.z[i] += f.cfg.Lambda * op.v[i]
	}
	f.pre.SolveAT(op.z, k)
	copy(dst, op.z)
	return nil
}

// kernelPass accumulates w += K_nMᵀ K_nM u over the whole source: the
// pass of CG iteration f.iter+1.
func (f *fitter) kernelPass(ctx context.Context, u, w []float64) error {
	m, k := f.model.M, f.k
	chunks := f.src.NumChunks()
	done := 0
	var rows int64
	err := stream.Run(ctx, f.src, f.opts, stream.Job[[]float64]{
		NewPartial: func() []float64 { return make([]float64, m*k) },
		NewWorker: func() func(context.Context, stream.Chunk, []float64) error {
			ws := f.cfit.NewWorkspace()
			return func(_ context.Context, c stream.Chunk, p []float64) error {
				f.standardizeChunk(c.X)
				clear(p)
				f.cfit.KtKvAdd(ws, p, c.X, c.Rows, u, nil, k)
				return nil
			}
		},
		Reduce: func(chunk int, p []float64) error {
			addTo(w, p)
			rows += int64(f.src.ChunkRows(chunk))
			done++
			f.progress(Progress{Stage: StageIterate, Iteration: f.iter + 1, Iterations: f.cfg.Iterations,
				Chunk: done, Chunks: chunks, Rows: rows})
			return nil
		},
	})
	if err != nil {
		return fmt.Errorf("CG pass: %w", err)
	}
	return nil
}

// validate evaluates the current iterate on the validation source.
func (f *fitter) validate(ctx context.Context, st *cgState) (*ValPoint, error) {
	alpha := make([]float64, f.model.M*f.k)
	f.pre.ApplyBTo(alpha, st.Beta, f.k)
	mdl := *f.model
	mdl.Alpha = alpha
	mdl.Kernel, mdl.Precision = f.cfg.Kernel, f.cfg.Precision
	mdl.centers = f.cfit
	ev, err := mdl.Evaluate(ctx, f.cfg.Validation, PredictOptions{Workers: f.cfg.Workers})
	if err != nil {
		return nil, fmt.Errorf("validation after iteration %d: %w", st.Iter, err)
	}
	return &ValPoint{Iteration: st.Iter, Metrics: *ev}, nil
}

// ValPoint is the validation metric after one CG iteration.
type ValPoint struct {
	Iteration int `json:"iteration"`
	Metrics
}
