package ooc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/internal/colstats"
	"github.com/falkon-ooc/falkon-ooc/internal/procstat"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Fit trains FALKON (Rudi, Carratino, Rosasco 2017) on src and returns the
// complete model. It calls Plan first, so a bad configuration fails before
// any pass. The data is read 1 + t times in full (once for the
// right-hand side, once per CG iteration, through opts.Executor; once
// more for the last iterate's validation when the validation rows are
// held out of the same data, see RunOptions.Validation), plus
// once locally, in part, to draw the centres — in full instead when the
// source does not report its statistics (stream.Statser) or, for
// classification, its target values (stream.TargetValuer). A NaN or
// infinite value in the data is an error (a *stream.ValueError naming the
// chunk, row and column). Memory is O(M²) plus a bounded number of chunk
// buffers: see FitPlan.Memory.
//
// The fit runs in phases, each a function of the previous ones' results:
// sampleCentres (centres and statistics), FitPlan.encoding (task and
// target encoding), newFitOperator (K_MM, the preconditioner and the pass
// jobs), rightHandSide and solveCG.
func Fit(ctx context.Context, src stream.Source, cfg Config, opts RunOptions) (*Model, error) {
	start := time.Now()
	plan, err := Plan(src, cfg, opts)
	if err != nil {
		return nil, err
	}
	src, opts = plan.Sources(src, opts)
	if opts.Validation != nil && plan.Task != TaskRegression && len(plan.Targets) > 0 {
		// A validation source that numbers its labels otherwise.
		if opts.Validation, err = relabel(opts.Validation, "the validation data", plan.Targets[0], labelCodes(plan.labels)); err != nil {
			return nil, err
		}
	}
	report := reporter(opts.Progress, start)
	ph := &phaseClock{}
	ph.start("sample", 0)
	rr := rowReader(opts.Executor)
	cs, err := sampleCentres(ctx, plan, report, rr)
	if err != nil {
		return nil, err
	}
	enc, err := plan.encoding(cs.distinct)
	if err != nil {
		return nil, err
	}
	if err := checkUncertainty(plan.Config, enc.task); err != nil {
		return nil, err
	}
	passFn := passOver(plan.src, opts)
	op, err := newFitOperator(ctx, plan, cs, enc, passFn, report, ph, opts.PrecondCache)
	if err != nil {
		return nil, err
	}
	defer op.closeFactors()()
	fp := fingerprint(plan, cs, enc)
	if plan.Config.Loss == LossLogistic {
		return fitLogistic(ctx, plan, cs, enc, op, src, fp, opts, report, ph, start)
	}
	var st *cgState
	var ymean []float64
	ps := engine.NewTracker()
	var bestBeta []float64 // β at the best validation (Config.Patience)
	ckw := checkpointWriter{save: opts.Checkpoint, fp: fp}
	if res := opts.Resume; res != nil {
		if err := res.matches(fp, op.pre.Rank(), enc.k); err != nil {
			return nil, err
		}
		st, ymean = res.state(), slices.Clone(res.TargetMean)
		op.passJob.ClassWeights = slices.Clone(res.ClassWeights)
		if plan.Weight != "" || plan.Config.ClassWeight == ClassWeightBalanced {
			if !(res.WeightSum > 0) {
				return nil, fmt.Errorf("%w: the checkpoint has no sum of weights", ErrCheckpointMismatch)
			}
			op.n = res.WeightSum
		}
		if seesWeights(plan) {
			if len(res.PrecondWeights) != cs.m {
				return nil, fmt.Errorf("%w: the checkpoint has %d weights for the preconditioner's %d centres (it predates the weighted preconditioner: fit again)", ErrCheckpointMismatch, len(res.PrecondWeights), cs.m)
			}
			if err := op.weigh(slices.Clone(res.PrecondWeights)); err != nil {
				return nil, err
			}
		}
		ps, bestBeta = res.stop()
	} else {
		ph.start("rhs", 0)
		var balance func(w, sum []float64, n float64) (float64, error)
		if plan.Config.ClassWeight == ClassWeightBalanced {
			balance = func(w, sum []float64, n float64) (float64, error) {
				cw, counts, err := balancedWeights(enc.task, enc.classes, sum, n)
				if err != nil {
					return 0, err
				}
				weighRHS(enc.task, cw, cs.m, enc.k, w)
				op.passJob.ClassWeights = cw
				return weighSums(enc.task, cw, counts, sum), nil
			}
		}
		var weigh func(ones []float64) (*precond.Preconditioner, error)
		if seesWeights(plan) {
			weigh = func(ones []float64) (*precond.Preconditioner, error) {
				h := smoothedWeights(plan.Config.Kernel, cs, ones)
				if centreRowWeights != nil {
					h = meanOne(centreRowWeights(cs.centres, cs.m, plan.D))
				}
				if err := op.weigh(h); err != nil {
					return nil, err
				}
				return op.pre, nil
			}
		}
		b, mu, n, err := rightHandSide(ctx, passFn, op.rhsJob, op.pre, plan.N, plan.src.NumChunks(), balance, weigh, report)
		if err != nil {
			return nil, err
		}
		st, ymean, op.n = newCGState(b, enc.k), mu, n
	}
	var lastVal, bestVal *Evaluator // the scores of the last and the best validation, for calibrate
	if opts.Validation != nil && enc.task == TaskRegression {
		// A classifier's calibration reuses the scores of the best
		// validation, which must be the returned model's to the bit:
		// its validations keep solving α from β (validalpha.go).
		op.val = &valAlpha{}
	}
	if root, frac, seed, ok := stream.HoldoutPair(src, opts.Validation); ok {
		// The validation rows are held out of the data the fit reads:
		// the CG passes score them (heldVal), with no pass of their own.
		op.held = newHeldVal(plan, cs, enc, op, spread(root), &pass.Holdout{Fraction: frac, Seed: seed},
			stream.Rows(opts.Validation), ymean, opts, func(st *cgState) []float64 {
				if op.val != nil {
					return op.val.alphaOf(op.pre, st, cs.m, enc.k)
				}
				alpha := make([]float64, cs.m*enc.k)
				op.pre.ApplyBTo(alpha, st.Beta, enc.k)
				return alpha
			})
	}
	lastValIter := -1
	tr, err := solveCG(ctx, op, st, plan.Config, enc.task, opts, ph, &ps, func(ctx context.Context, st *cgState) error {
		if err := op.pre.Err(); err != nil { // factors on disk that could not be read
			return err
		}
		if !ckw.on() {
			return nil
		}
		c := cgCheckpoint(st, ymean)
		if plan.Weight != "" || op.passJob.ClassWeights != nil {
			c.setWeights(op.n, op.passJob.ClassWeights, op.precondWeights)
		}
		c.setStop(&ps, bestBeta)
		return ckw.write(c, "iteration")
	}, func(ctx context.Context, st *cgState) (*ValPoint, error) {
		mdl, exact, err := op.val.model(plan, cs, enc, op, st, ymean)
		if err != nil {
			return nil, err
		}
		ev, err := mdl.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers})
		if err != nil {
			return nil, fmt.Errorf("validation after iteration %d: %w", st.Iter, err)
		}
		lastVal, lastValIter = nil, -1
		if exact { // carried α's scores differ from the model's by rounding
			lastVal, lastValIter = ev, st.Iter
		}
		return &ValPoint{Iteration: st.Iter, Metrics: ev.Metrics().Brief()}, nil
	}, func(st *cgState) {
		bestVal = lastVal
		if plan.Config.Patience > 0 {
			bestBeta = append(bestBeta[:0], st.Beta...)
		}
	}, report)
	if err != nil {
		return nil, err
	}
	if op.held != nil {
		// Its scores come from the pass's kernel blocks, not from the
		// model's prediction: the calibration scores the model itself.
		lastVal, bestVal = nil, nil
	}
	tr.setUp(plan, cs, op.pre, op.n, op.passJob.ClassWeights)
	tr.Seconds = time.Since(start).Seconds()
	tr.PrecondSeconds, tr.PrecondCache = op.precondSeconds, op.cacheNote
	final := st
	if bestBeta != nil && plan.Config.Patience > 0 && tr.BestIteration != st.Iter {
		// Config.Patience: the model of the best validated iteration.
		final = &cgState{Iter: tr.BestIteration, Beta: bestBeta}
		lastVal, lastValIter = bestVal, tr.BestIteration
	}
	m, err := fitModel(plan, cs, enc, op, final, ymean, tr)
	if err != nil {
		return nil, err
	}
	if lastValIter != final.Iter {
		lastVal = nil
	}
	if m.Task() != TaskRegression && opts.Validation != nil {
		ph.start("calibration", 0)
	}
	if m, err = calibrateFit(ctx, m, opts, lastVal); err != nil {
		return nil, err
	}
	if plan.Config.Uncertainty != "" {
		ph.start("uncertainty", 0)
		if m, err = buildUncertainty(ctx, m, plan, cs, op, opts, report); err != nil {
			return nil, err
		}
	}
	m.training.Phases = ph.done()
	m.training.PeakRSS = procstat.PeakRSS()
	m.training.Seconds = time.Since(start).Seconds()
	report(Progress{Stage: StageDone, Iteration: st.Iter, Iterations: plan.Config.Iterations, Residual: st.RelResidual()})
	return m, nil
}

// reporter returns the progress callback of a run started at start: fn
// with the elapsed time filled in, or a no-op when fn is nil.
func reporter(fn func(Progress), start time.Time) func(Progress) {
	return func(p Progress) {
		if fn != nil {
			p.Elapsed = time.Since(start)
			fn(p)
		}
	}
}

// standardization is the per-feature shift and scale of a fit: x ↦
// (x − mean)·invStd. All nil when the fit does not standardise.
type standardization struct {
	mean, std []float64 // as stored in the model
	invStd    []float64 // invStdOf(std)
}

// centreSample is what the sampling pass returns: the centres and the
// statistics of the data.
type centreSample struct {
	centres  []float64 // M × d, standardised
	m        int       // M, after duplicates are dropped
	weights  []float64 // D for leverage-sampled centres (nil for uniform)
	dropped  int       // duplicate centres
	std      standardization
	distinct [][]float64 // distinct target values (nil when unknown)
	// lambdaLeverage is the λ of the leverage scores (0 for uniform).
	lambdaLeverage float64
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

// sampleCentres draws the centres of plan (uniformly without replacement,
// or by approximate leverage scores among uniformly drawn candidates) and,
// when needed, computes the statistics in the same pass. With rr (an
// executor's) and the statistics known, the drawn rows are read by rr.
func sampleCentres(ctx context.Context, plan *FitPlan, report func(Progress), rr pass.RowReader) (*centreSample, error) {
	report(Progress{Stage: StageSample})
	cfg, src := plan.Config, plan.src
	leverage := cfg.Sampling == SamplingLeverage
	draw := cfg.Centers
	if leverage {
		draw = leverageCandidates(plan.N, cfg.Centers, cfg.Candidates)
	}
	idx := sampleIndices(plan.N, draw, cfg.Seed)
	// Local row numbers wanted from each chunk.
	want := make(map[int][]int)
	var chunks []int
	var lo int64
	p := 0
	for c := range src.NumChunks() {
		hi := lo + int64(src.ChunkRows(c))
		for p < len(idx) && idx[p] < hi {
			want[c] = append(want[c], int(idx[p]-lo))
			p++
		}
		if len(want[c]) > 0 {
			chunks = append(chunks, c)
		}
		lo = hi
	}
	full := plan.needFullSample()
	if full {
		chunks = nil // every chunk
	}
	d, kt := plan.D, plan.TargetColumns
	centres := make([]float64, 0, draw*d)
	total := make([]colstats.Stats, d+kt)
	for j := range total {
		total[j] = colstats.New()
	}
	done, nchunks := 0, len(chunks)
	if full {
		nchunks = src.NumChunks()
	}
	var err error
	if rr != nil && !full {
		centres, err = readCentres(ctx, rr, plan, idx)
		report(Progress{Stage: StageSample, Chunk: nchunks, Chunks: nchunks})
	} else {
		err = sampleRun(ctx, plan, full, chunks, want, total, &centres, func() {
			done++
			report(Progress{Stage: StageSample, Chunk: done, Chunks: nchunks})
		})
	}
	if err != nil {
		return nil, fmt.Errorf("sample centres: %w", err)
	}
	cs := &centreSample{distinct: plan.distinct}
	mean, std := plan.mean, plan.std
	if full {
		if mean == nil {
			mean, std = make([]float64, d), make([]float64, d)
			for j := range d {
				sum := total[j].Summary()
				mean[j], std[j] = sum.Mean, sum.Std
			}
		}
		if cs.distinct == nil {
			cs.distinct = make([][]float64, kt)
			for j := range kt {
				cs.distinct[j] = total[d+j].Summary().Distinct
			}
		}
	}
	if !cfg.NoStandardize {
		cs.std = standardization{mean: mean, std: std, invStd: invStdOf(std)}
		standardize(centres, cs.std.mean, cs.std.invStd)
	}
	centres, dropped := dedupRows(centres, d)
	if dropped > 0 && len(centres) == 0 {
		return nil, configErr("", "no centres could be drawn")
	}
	if dropped > 0 && !leverage {
		// Rows drawn twice (the data repeats rows): draw others in their
		// place, while the data has distinct rows to give.
		var err error
		if centres, err = replaceDuplicates(ctx, plan, idx, centres, cs.std, rr); err != nil {
			return nil, err
		}
	}
	if !leverage {
		report(Progress{Stage: StageSample, Centers: len(centres) / d, Duplicates: dropped})
	}
	if leverage {
		report(Progress{Stage: StageLeverage})
		lev := leverageParams{d: d, kern: cfg.Kernel, seed: cfg.Seed, lambda: cfg.Lambda, workers: plan.Workers}
		var err error
		centres, cs.weights, cs.lambdaLeverage, err = lev.selectCentres(ctx, centres, cfg.Centers)
		if err != nil {
			return nil, err
		}
		dropped = cfg.Centers - len(cs.weights)
	}
	cs.centres, cs.m, cs.dropped = centres, len(centres)/d, dropped
	return cs, nil
}

// readCentres reads the drawn rows idx of plan's source through rr.
func readCentres(ctx context.Context, rr pass.RowReader, plan *FitPlan, idx []int64) ([]float64, error) {
	x, err := rr.ReadRows(ctx, plan.src, idx)
	if err != nil {
		return nil, err
	}
	if len(x) != len(idx)*plan.D {
		return nil, fmt.Errorf("the executor read %d values for %d rows of %d features", len(x), len(idx), plan.D)
	}
	if err := stream.CheckFinite(x, plan.Features); err != nil {
		return nil, err
	}
	return x, nil
}

// sampleRun reads the chunks that hold the drawn rows (want, by chunk;
// every chunk when full, with their statistics into total) and appends
// the rows to centres in row order; step is called after each chunk.
func sampleRun(ctx context.Context, plan *FitPlan, full bool, chunks []int, want map[int][]int, total []colstats.Stats, centres *[]float64, step func()) error {
	src := plan.src
	d, kt := plan.D, plan.TargetColumns
	return stream.Run(ctx, src, stream.Options{Workers: plan.Workers}, stream.Job[*samplePart]{
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
					if err := stream.CheckFinite(row, plan.Features); err != nil {
						return err.(*stream.ValueError).At(r)
					}
					p.rows = append(p.rows, row...)
				}
				if !full {
					return nil
				}
				if err := stream.CheckFinite(c.X, plan.Features); err != nil {
					return err
				}
				if err := stream.CheckFinite(c.Y, plan.Targets); err != nil {
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
			*centres = append(*centres, p.rows...)
			if full {
				for j := range total {
					total[j].Merge(&p.st[j])
				}
			}
			step()
			return nil
		},
	})
}

// replaceDuplicates draws rows in place of the duplicates dropped from
// the uniformly drawn centres (standardised, distinct, in centres): up to
// eight rounds, each drawing new row numbers (never one drawn before;
// four times the missing centres times the draws per distinct row so
// far; seeded by Config.Seed) and reading
// only the chunks that hold them, keeping the rows not yet among the
// centres. It stops when M distinct centres are reached, when every row
// has been drawn, or after two rounds in a row that found no new
// distinct row: the data then holds (about) that few distinct rows, and
// M is lower.
func replaceDuplicates(ctx context.Context, plan *FitPlan, drawn []int64, centres []float64, std standardization, rr pass.RowReader) ([]float64, error) {
	d, m := plan.D, plan.Config.Centers
	used := make(map[int64]struct{}, len(drawn))
	for _, i := range drawn {
		used[i] = struct{}{}
	}
	seen := make(map[string]struct{}, len(centres)/d)
	key := func(row []float64) string {
		b := make([]byte, 8*d)
		for j, v := range row {
			binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(v))
		}
		return string(b)
	}
	for i := 0; i < len(centres); i += d {
		seen[key(centres[i:i+d])] = struct{}{}
	}
	rng := newRand(plan.Config.Seed, 0x7265706c616365) // "replace"
	empty := 0                                         // rounds in a row that found no new distinct row
	for round := 0; round < 8 && empty < 2 && len(centres)/d < m && int64(len(used)) < plan.N; round++ {
		// As many draws as the duplicates so far suggest it takes to find
		// the missing distinct rows, twice over.
		need := m - len(centres)/d
		draws := int(min(int64(4*need*len(used)/max(len(centres)/d, 1)), plan.N))
		var idx []int64
		for len(idx) < draws && int64(len(used)) < plan.N {
			i := rng.Int64N(plan.N)
			if _, ok := used[i]; ok {
				continue
			}
			used[i] = struct{}{}
			idx = append(idx, i)
		}
		slices.Sort(idx)
		var x []float64
		var err error
		if rr != nil {
			x, err = readCentres(ctx, rr, plan, idx)
		} else {
			x, _, err = readRows(ctx, plan.src, idx, nil)
			if err == nil {
				err = stream.CheckFinite(x, plan.Features)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("sample centres: %w", err)
		}
		if std.invStd != nil {
			standardize(x, std.mean, std.invStd)
		}
		added := 0
		for i := 0; i < len(x) && len(centres)/d < m; i += d {
			k := key(x[i : i+d])
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
			centres = append(centres, x[i:i+d]...)
			added++
		}
		if added == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return centres, nil
}

// targetEncoding is the resolved task and the encoding of the targets
// into k outputs.
type targetEncoding struct {
	task    Task
	classes []float64
	labels  []string // label names of the classes, or nil
	k       int      // outputs after encoding
}

// encoding decides the task and the encoding of the targets from the
// distinct target values the sampling pass found (or the source gave).
func (p *FitPlan) encoding(distinct [][]float64) (targetEncoding, error) {
	q := *p
	if err := q.resolveTask(distinct); err != nil {
		return targetEncoding{}, err
	}
	return targetEncoding{task: q.Task, classes: q.Classes, labels: q.ClassNames, k: q.K}, nil
}

// encode writes the encoded targets of rows into v (encodeTargets),
// refusing non-finite values; names are the kt target columns' names.
func (e targetEncoding) encode(y []float64, rows, kt int, v []float64, stride int, names []string) error {
	if err := stream.CheckFinite(y[:rows*kt], names[:kt]); err != nil {
		return err
	}
	return pass.EncodeTargets(e.task, e.classes, names, y, rows, kt, e.k, v, stride)
}

// evaluator returns an Evaluator for the task and classes, with the
// given target names.
func (e targetEncoding) evaluator(targets []string) *Evaluator {
	return newEvaluator(e.task, e.classes, targets, e.k)
}

// fitOperator is what the fit's CG operator, W(p) = Bᵀ (K_nMᵀ K_nM / n +
// λ K̃) B p in FALKON's form A⁻ᵀ(T⁻ᵀ K_nMᵀ K_nM T⁻¹A⁻¹p / n + λ A⁻¹p), one
// pass over the data, is made of: the preconditioner and the pass jobs,
// the fit as a grid of one σ and one λ (newGrid). p and W(p) are r × k
// (r = M unless the eigen preconditioner dropped directions); the pass
// works on M × k. It also carries the right-hand side's pass job and the
// centres in the fit's precision.
type fitOperator struct {
	pre            *precond.Preconditioner
	cfit           *kernel.Centers // centres in the fit's precision
	rhsJob         *pass.Job
	passJob        *pass.Job
	pass           passFunc
	n              float64
	lambda         float64
	k              int
	iterations     int // for progress reports
	precondSeconds float64
	report         func(Progress)
	// precondWeights are the weights at the centres the preconditioner
	// sees (nil: FALKON's, unweighted).
	precondWeights []float64

	grid *engine.Grid // the CG operator (solveCG)
	// val carries α = Bβ between the validations (validalpha.go); nil
	// without validation rows.
	val *valAlpha
	// held, when set, scores the validation rows in the CG passes
	// (heldval.go); nil: the validations are passes of their own.
	held *heldVal

	// For a preconditioner with ExplicitLambda: the centres (in the fit's
	// standardised space) in float64 (K_MM·u's rounding along K_MM's
	// small eigenvalues is amplified by the preconditioner: float32
	// blocks would need a jitter 10⁸ times larger) and the scratch of
	// K_MM·u.
	c64       *kernel.Centers
	centres   []float64
	cacheNote string // Training.PrecondCache
	workers   int
	ku        []float64
}

// kmmDiag returns the diagonal of K_MM: k(c, c) for each centre.
func kmmDiag(kern kernel.Kernel, centres []float64, m, d int) []float64 {
	diag := make([]float64, m)
	for i := range m {
		c := centres[i*d : (i+1)*d]
		diag[i] = kern.Eval(c, c)
	}
	return diag
}

// kmmPick returns the row picker of K_MM for precond.BuildNystrom: the
// picked centres' rows of K(C, C) from c64, split over workers.
func kmmPick(c64 *kernel.Centers, centres []float64, m, d, workers int) precond.PickRows {
	var x []float64
	return func(dst []float64, idx []int) {
		x = x[:0]
		for _, i := range idx {
			x = append(x, centres[i*d:(i+1)*d]...)
		}
		parallelRows(len(idx), workers, func(lo, hi int) {
			c64.BlockTo(c64.NewWorkspace(), dst[lo*m:hi*m], x[lo*d:hi*d], hi-lo)
		})
	}
}

// kmmMulAdd sets dst += alpha·K_MM·u (u and dst M × k) with the kernel,
// M² entries, never storing K_MM: the λ term of a preconditioner with
// ExplicitLambda. scratch is M × k. The rows go in blocks of
// kmmBlockRows to the workers, so that ctx ends it within a block's time
// and report (if not nil) sees the rows done, from one goroutine at a
// time: at M = 10⁵ it takes seconds every iteration.
func kmmMulAdd(ctx context.Context, c *kernel.Centers, centres []float64, dst, u, scratch []float64, k int, alpha float64, workers int, report func(done, m int)) error {
	m, d := c.M(), c.Dim()
	blocks := (m + kmmBlockRows - 1) / kmmBlockRows
	var next atomic.Int64
	var mu sync.Mutex
	done := 0
	parallelRows(min(workers, blocks), workers, func(int, int) {
		ws := c.NewWorkspace()
		for ctx.Err() == nil {
			b := int(next.Add(1)) - 1
			if b >= blocks {
				return
			}
			lo, hi := b*kmmBlockRows, min((b+1)*kmmBlockRows, m)
			c.KvTo(ws, scratch[lo*k:hi*k], centres[lo*d:hi*d], hi-lo, u, k)
			if report != nil {
				mu.Lock()
				done += hi - lo
				report(done, m)
				mu.Unlock()
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, v := range scratch[:m*k] {
		dst[i] += alpha * v
	}
	return nil
}

// kmmBlockRows is the rows of K_MM per block of kmmMulAdd.
const kmmBlockRows = 1024

// centreRowWeights, when set (by a test), replaces the weights at the
// centres that a weighted squared-loss fit's preconditioner sees
// (smoothedWeights) with its own (centres standardised, M × D), for the
// measurement in bench/PASSES.md ("The preconditioner and the row
// weights").
var centreRowWeights func(centres []float64, m, d int) []float64

// seesWeights reports whether a fit's preconditioner sees the row
// weights: a squared-loss fit with row weights or balanced class weights
// and the Cholesky preconditioner.
func seesWeights(plan *FitPlan) bool {
	cfg := plan.Config
	return (plan.Weight != "" || cfg.ClassWeight == ClassWeightBalanced) && cfg.Loss != LossLogistic &&
		(cfg.Preconditioner == "" || cfg.Preconditioner == precond.MethodCholesky)
}

// smoothedWeights returns the weights H at the centres of cs for the
// preconditioner of a weighted squared-loss system, A = chol(T H Tᵀ/M +
// λI) (precond.WithCenterWeights): the row weights smoothed by the kernel
// around each centre, (K_nMᵀ W 1)_j (ones, from the right-hand side's
// pass) over the rows' kernel density there, estimated from the centres
// themselves as (n/M)·(K_MM D² 1)_j (D the leverage weights, 1 for
// uniform centres), scaled to mean 1. K_nMᵀ W K_nM ≈ (n/M) K_MM D H D K_MM
// then, so A is the Nyström approximation of the weighted system's data
// term (FALKON's is the case W = 1, H ≈ 1). No pass of its own; measured
// in bench/PASSES.md: CG reaches the direct solution in fewer iterations
// with every kind of weights tried, uniform ones included.
func smoothedWeights(kern kernel.Kernel, cs *centreSample, ones []float64) []float64 {
	m, d := cs.m, len(cs.centres)/cs.m
	c := kernel.NewCenters(kern, cs.centres, m, d, kernel.Float64)
	u := make([]float64, m)
	for j := range u {
		u[j] = 1
		if cs.weights != nil {
			u[j] = cs.weights[j] * cs.weights[j]
		}
	}
	den := make([]float64, m)
	c.KvTo(c.NewWorkspace(), den, cs.centres, m, u, 1)
	h := make([]float64, m)
	for j := range h {
		if den[j] > 0 && ones[j] > 0 {
			h[j] = ones[j] / den[j]
		}
	}
	return meanOne(h)
}

// meanOne scales h to mean 1 (all 1 when its mean is not positive).
func meanOne(h []float64) []float64 {
	mean := 0.0
	for _, v := range h {
		mean += v / float64(len(h))
	}
	for j := range h {
		if mean > 0 {
			h[j] /= mean
		} else {
			h[j] = 1
		}
	}
	return h
}

// weigh makes the operator's preconditioner see the weights h at the
// centres (A = chol(T H Tᵀ/M + λI), sharing T).
func (op *fitOperator) weigh(h []float64) error {
	pre, err := op.pre.WithCenterWeights(h, op.lambda)
	if err != nil {
		return err
	}
	op.pre, op.precondWeights = pre, h
	return nil
}

// newFitOperator computes K_MM, the preconditioner and the pass jobs of
// the fit of plan with centres cs and targets encoded by enc.
// kmmRows returns the centres prepared in float64 and the row-block
// source of K_MM for precond.Build: rows [lo, hi) of K(C, C), each call
// with a workspace of its own (Build calls it from several goroutines).
func kmmRows(kern kernel.Kernel, centres []float64, m, d int) (*kernel.Centers, func(dst []float64, lo, hi int)) {
	c64 := kernel.NewCenters(kern, centres, m, d, kernel.Float64)
	wss := sync.Pool{New: func() any { return c64.NewWorkspace() }}
	return c64, func(dst []float64, lo, hi int) {
		ws := wss.Get().(*kernel.Workspace)
		c64.BlockTo(ws, dst, centres[lo*d:hi*d], hi-lo)
		wss.Put(ws)
	}
}

func newFitOperator(ctx context.Context, plan *FitPlan, cs *centreSample, enc targetEncoding,
	passFn passFunc, report func(Progress), ph *phaseClock, cache string) (*fitOperator, error) {
	cfg := plan.Config
	d, m := plan.D, cs.m
	ph.start("kmm", 0)
	report(Progress{Stage: StageKernel})
	t0 := time.Now()
	// K_MM goes block by block straight into the preconditioner's one
	// M × M buffer (precond.Bytes), whatever its precision.
	c64, rows := kmmRows(cfg.Kernel, cs.centres, m, d)
	started := false
	popt := precond.Options{
		Jitter: cfg.Jitter, Workers: plan.Workers, Weights: cs.weights, Method: cfg.Preconditioner,
		Precision: cfg.PrecondPrecision, OutOfCore: plan.disk,
		Progress: func(done float64) {
			switch name := phaseOfFactorise(cfg.Preconditioner, done); {
			case !started:
				ph.start(name, 0)
			case name != ph.phases[len(ph.phases)-1].Name:
				ph.start(name, 0)
			}
			started = true
			report(Progress{Stage: StagePrecond, Fraction: done})
		},
	}
	var pre *precond.Preconditioner
	var err error
	cacheNote := ""
	if cfg.Preconditioner == precond.MethodNystrom {
		// r rows of K_MM, picked by the randomly pivoted Cholesky: never
		// an M × M buffer.
		popt.Rank, popt.Seed, popt.Precision = cfg.PrecondRank, cfg.Seed, ""
		// K_MM·x for μ's power steps in float32 kernel entries: μ is
		// needed to a few per cent, and they run 2.4 times as fast.
		c32 := kernel.NewCenters(cfg.Kernel, cs.centres, m, d, kernel.Float32)
		popt.KMul = func(dst, src []float64, k int) {
			clear(dst)
			kmmMulAdd(ctx, c32, cs.centres, dst, src, make([]float64, m*k), k, 1, plan.Workers, nil)
		}
		key := basisKey(cfg, cs)
		if cache != "" {
			q, sm, trace, residual, mu, rerr := readBasis(cache, key, m)
			switch {
			case rerr == nil:
				if pre, err = precond.NewNystrom(m, q, sm, trace, residual, mu, cfg.Lambda, popt); err == nil {
					cacheNote = "read"
				}
			case errors.Is(rerr, fs.ErrNotExist):
			default:
				cacheNote = fmt.Sprintf("%s not used: %v", cache, rerr)
			}
		}
		if pre == nil {
			pre, err = precond.BuildNystrom(ctx, m, kmmDiag(cfg.Kernel, cs.centres, m, d), kmmPick(c64, cs.centres, m, d, plan.Workers), cfg.Lambda, popt)
			if err == nil && cache != "" {
				if werr := writeBasis(cache, key, pre); werr != nil {
					return nil, fmt.Errorf("writing the Nyström basis: %w", werr)
				}
				cacheNote = strings.TrimPrefix(cacheNote+"; written", "; ")
			}
		}
	} else {
		pre, err = precond.Build(ctx, m, rows, cfg.Lambda, popt)
	}
	if err != nil {
		return nil, err
	}
	if !started { // the eigen method reports no progress
		report(Progress{Stage: StagePrecond, Fraction: 1})
	}
	op := &fitOperator{pre: pre, cfit: c64, pass: passFn, n: float64(plan.N), lambda: cfg.Lambda, k: enc.k,
		iterations: cfg.Iterations, precondSeconds: time.Since(t0).Seconds(), report: report,
		centres: cs.centres, workers: plan.Workers, c64: c64, cacheNote: cacheNote}
	if cfg.Precision != kernel.Float64 {
		op.cfit = kernel.NewCenters(cfg.Kernel, cs.centres, m, d, cfg.Precision)
	}
	job := func(kind pass.Kind) *pass.Job {
		j := &pass.Job{
			Kind: kind, Kernel: cfg.Kernel, Precision: cfg.Precision, M: m, D: d, K: enc.k,
			Centers: cs.centres, Task: enc.task, Classes: enc.classes, Features: plan.Features,
			Mean: cs.std.mean, InvStd: cs.std.invStd, Weight: plan.Weight, WeightExp: plan.WeightExp,
			// The standardisation rides on the kernel's tile loading.
			Prepared: op.cfit.WithInputMap(cs.std.mean, cs.std.invStd),
		}
		return j
	}
	op.rhsJob = job(pass.TargetProduct)
	op.rhsJob.Targets = plan.Targets
	if enc.task != TaskRegression {
		op.rhsJob.Targets = plan.Targets[:1]
	}
	op.passJob = job(pass.KernelProduct)
	return op, nil
}

// closeFactors returns the function that releases the files of a
// preconditioner kept on disk (precond.OutOfCore): the one built and the
// one weigh may have put in its place.
func (op *fitOperator) closeFactors() func() {
	built := op.pre
	return func() {
		if op.pre != built {
			op.pre.Close()
		}
		built.Close()
	}
}

// newGrid returns the fit as a grid of one σ and one λ (engine.Grid),
// continuing from the CG iterate st: its pass is the fit's (passJob, or
// held's when the validation rows are scored in it), and a
// preconditioner with an explicit λ term adds λ·K_MM·u by the kernel.
func (op *fitOperator) newGrid(st *cgState) *engine.Grid {
	c := &engine.Cand{Lambda: op.lambda, A: op.pre, Live: true}
	g := &engine.Group{T: op.pre, Cands: []*engine.Cand{c}}
	grid := engine.NewGrid(len(op.centres)/op.c64.Dim(), op.k, op.n, op.workers, []*engine.Group{g})
	grid.Iter = st.Iter
	if op.pre.ExplicitLambda() {
		g.KMM = func(ctx context.Context, dst, u []float64, k int, a float64) error {
			if op.ku == nil {
				op.ku = make([]float64, len(u))
			}
			iter := grid.Iter + 1
			return kmmMulAdd(ctx, op.c64, op.centres, dst, u, op.ku, k, a, op.workers, func(done, m int) {
				op.report(Progress{Stage: StageKMM, Iteration: iter, Iterations: op.iterations, Fraction: float64(done) / float64(m)})
			})
		}
	}
	grid.Pass = func(ctx context.Context) ([]float64, error) {
		iter := grid.Iter + 1
		progress := func(done, chunks int, rows int64) {
			op.report(Progress{Stage: StageIterate, Iteration: iter, Iterations: op.iterations,
				Chunk: done, Chunks: chunks, Rows: rows})
		}
		var w []float64
		var err error
		if op.held != nil {
			w, err = op.held.pass(ctx, grid.Iter, g.U, progress)
		} else {
			op.passJob.U = g.U
			w, err = op.pass(ctx, op.passJob, progress)
		}
		if err != nil {
			return nil, fmt.Errorf("CG pass: %w", err)
		}
		return w, nil
	}
	if op.held != nil {
		// The validation of the iterate the pass scored; errPatience
		// stops CG before it takes this pass's step.
		grid.After = func(context.Context) error { return op.held.validated(grid.Iter) }
	}
	return grid
}

// passFunc runs one pass of job over the training source and calls report
// after each chunk is reduced (done of chunks, rows so far).
type passFunc func(ctx context.Context, job *pass.Job, report func(done, chunks int, rows int64)) ([]float64, error)

// passOver returns the passFunc over src: through opts.Executor, or
// locally on opts.Workers goroutines with a report per chunk.
func passOver(src stream.Source, opts RunOptions) passFunc {
	return func(ctx context.Context, job *pass.Job, report func(done, chunks int, rows int64)) ([]float64, error) {
		if opts.Executor != nil {
			out, err := opts.Executor.Pass(ctx, src, job)
			if err == nil && len(out) != job.OutLen() {
				err = fmt.Errorf("ooc: the executor returned %d values, want %d", len(out), job.OutLen())
			}
			return out, err
		}
		done, chunks := 0, src.NumChunks()
		var rows int64
		return pass.LocalExecutor{Workers: opts.Workers, OnChunk: func(chunk int, _ []float64) {
			done++
			rows += int64(src.ChunkRows(chunk))
			report(done, chunks, rows)
		}}.Pass(ctx, src, job)
	}
}

// scoredPass is a passFunc that also hands the values of the rows a pass
// scores (pass.GroupKernelProduct) to rows, in chunk order, as they come: chunk by
// chunk locally, so that scoring them overlaps the pass; at once after
// an executor's pass.
type scoredPass func(ctx context.Context, job *pass.Job, report func(done, chunks int, rows int64), rows func(vals []float64)) ([]float64, error)

// scoredPassOver is passOver as a scoredPass.
func scoredPassOver(src stream.Source, opts RunOptions) scoredPass {
	plain := passOver(src, opts)
	return func(ctx context.Context, job *pass.Job, report func(done, chunks int, rows int64), rows func(vals []float64)) ([]float64, error) {
		if opts.Executor != nil {
			out, err := plain(ctx, job, report)
			if err == nil && rows != nil && job.RowLen() > 0 {
				rows(out[job.SumLen():])
			}
			return out, err
		}
		done, chunks := 0, src.NumChunks()
		var n int64
		return pass.LocalExecutor{Workers: opts.Workers, OnChunk: func(chunk int, placed []float64) {
			done++
			n += int64(src.ChunkRows(chunk))
			report(done, chunks, n)
			if rows != nil && len(placed) > 0 {
				rows(placed)
			}
		}}.Pass(ctx, src, job)
	}
}

// blockParallel computes dst (rows × M) = K(x, C) over row blocks on the
// given number of goroutines (≥ 1).
func blockParallel(ctx context.Context, c *kernel.Centers, dst, x []float64, rows, d, workers int) error {
	const block = 256
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
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

// rightHandSide makes the pass for b = Bᵀ K_nMᵀ (Y − 1μᵀ) / n and returns
// b, the target means μ and n. The all-ones column gives K_nMᵀ1, so the
// targets are centred without a pass of their own:
// K_nMᵀ(Y − 1μᵀ) = K_nMᵀY − (K_nMᵀ1)μᵀ. With row weights W (job.Weight)
// every product is weighted, b = Bᵀ K_nMᵀ W (Y − 1μᵀ) / n, μ is the
// weighted mean and n the sum of the weights (from the same pass);
// without, n is rows, the number of rows. balance, when not nil, rewrites
// the pass's products and sums for class weights and returns the new n.
// weigh, when not nil, gets K_nMᵀ W 1 (after balance) and returns the
// preconditioner b is computed with (weightedPrecond).
func rightHandSide(ctx context.Context, passFn passFunc, job *pass.Job, pre *precond.Preconditioner, rows int64, chunks int,
	balance func(w, sum []float64, n float64) (float64, error), weigh func(ones []float64) (*precond.Preconditioner, error),
	report func(Progress)) (b, mu []float64, n float64, err error) {
	m, k := job.M, job.K
	k1 := k + 1
	report(Progress{Stage: StageRHS, Chunks: chunks})
	out, err := passFn(ctx, job, func(done, chunks int, rows int64) {
		report(Progress{Stage: StageRHS, Chunk: done, Chunks: chunks, Rows: rows})
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("right-hand side: %w", err)
	}
	w, sum := out[:m*k1], out[m*k1:m*k1+k]
	n = float64(rows)
	if job.Weight != "" {
		if n = out[m*k1+k]; !(n > 0) {
			return nil, nil, 0, fmt.Errorf("right-hand side: the weights of column %q sum to %v: no row weighs anything", job.Weight, n)
		} else if math.IsInf(n, 0) {
			return nil, nil, 0, fmt.Errorf("right-hand side: the weights of column %q sum beyond the float64 range: "+
				"divide the column by a constant (any positive scale gives the same model)", job.Weight)
		}
	}
	if balance != nil {
		if n, err = balance(w, sum, n); err != nil {
			return nil, nil, 0, err
		}
	}
	mu = make([]float64, k)
	for j := range k {
		mu[j] = sum[j] / n
	}
	bm := make([]float64, m*k)
	for i := range m {
		ones := w[i*k1+k]
		for j := range k {
			bm[i*k+j] = (w[i*k1+j] - ones*mu[j]) / n
		}
	}
	if weigh != nil {
		ones := make([]float64, m)
		for i := range m {
			ones[i] = w[i*k1+k]
		}
		if pre, err = weigh(ones); err != nil {
			return nil, nil, 0, err
		}
	}
	b = make([]float64, pre.Rank()*k)
	pre.ApplyBTTo(b, bm, k)
	return b, mu, n, nil
}

// phaseOfFactorise names the step of the preconditioner's set-up that
// its progress fraction done is in: precond.Build's Cholesky method
// reports T = chol(K_MM + εMI), T Tᵀ and A = chol(T Tᵀ/M + λI) in thirds.
func phaseOfFactorise(m precond.Method, done float64) string {
	if m == precond.MethodNystrom {
		return "nystrom"
	}
	if m != "" && m != precond.MethodCholesky {
		return "factorise"
	}
	switch {
	case done < 1.0/3:
		return "chol_t"
	case done < 2.0/3:
		return "t_tt"
	}
	return "chol_a"
}

// solveCG runs CG on op from st up to cfg.Iterations (or cfg.Tolerance,
// or cfg.Patience) and returns what it did. After each iteration it
// validates (when opts.Validation is set, every opts.ValEvery iterations
// and after the last) with validate, calls best when that validation is
// the best so far (by stoppingMetric), then calls
// checkpoint, then reports progress.
func solveCG(ctx context.Context, op *fitOperator, st *cgState, cfg Config, task Task, opts RunOptions, ph *phaseClock,
	ps *engine.Tracker, checkpoint func(context.Context, *cgState) error,
	validate func(context.Context, *cgState) (*ValPoint, error),
	best func(*cgState),
	report func(Progress)) (Training, error) {
	var tr Training
	every := opts.ValEvery
	if every == 0 {
		every = 1
	}
	iterStart := time.Now()
	startIter := st.Iter
	op.grid = op.newGrid(st)
	rule := stopRule(cfg.Patience, cfg.MinImprovement)
	if rule.Stopped(ps) {
		// A resumed fit that had already stopped on patience.
		return Training{Iterations: st.Iter, Status: StatusPatience, BestIteration: ps.BestIter}, nil
	}
	ph.start("iteration", st.Iter+1)
	due := func(iter int) bool { return opts.Validation != nil && (iter%every == 0 || iter == cfg.Iterations) }
	// observe records the validation vp of the iterate st and reports
	// whether patience stops the fit there.
	observe := func(st *cgState, vp *ValPoint) bool {
		tr.Validation = append(tr.Validation, *vp)
		isBest, stop := ps.Observe(rule, st.Iter, stoppingMetric(task, &vp.Metrics))
		if isBest {
			best(st)
		}
		return stop
	}
	if h := op.held; h != nil {
		// The pass after iterate i scores it: its validation is known
		// during the next iteration's pass, before that step is taken,
		// and a stop leaves st at iterate i, as a validation of its own
		// after iteration i would.
		h.st = st
		h.due = func(iter int) bool { return iter > ps.Validated && due(iter) }
		h.done = func(vp *ValPoint) error {
			stop := observe(st, vp)
			report(Progress{Stage: StageValidate, Iteration: vp.Iteration, Iterations: cfg.Iterations, Val: vp})
			if !stop {
				return nil
			}
			if err := checkpoint(ctx, st); err != nil { // with the stop, for a resume
				return err
			}
			return errPatience
		}
	}
	after := func(st *cgState) error {
		op.val.step(st.Step, op.grid.Groups[0].U)
		tr.Residuals = append(tr.Residuals, st.RelResidual())
		p := Progress{Stage: StageIterate, Iteration: st.Iter, Iterations: cfg.Iterations, Residual: st.RelResidual()}
		stop := false
		if op.held == nil && due(st.Iter) {
			ph.start("validation", st.Iter)
			vp, err := validate(ctx, st)
			if err != nil {
				return err
			}
			p.Val = vp
			stop = observe(st, vp)
		}
		if err := checkpoint(ctx, st); err != nil {
			return err
		}
		report(p)
		if stop {
			return errPatience
		}
		ph.start("iteration", st.Iter+1)
		return nil
	}
	status, err := conjugateGradient(ctx, op.grid, st, op.k, cfg.Iterations, cfg.Tolerance, after)
	if n := len(ph.phases); n > 0 && ph.phases[n-1].Name == "iteration" && ph.phases[n-1].Iteration > st.Iter {
		ph.phases = ph.phases[:n-1] // opened after the last iteration, never run
	}
	if errors.Is(err, errPatience) {
		status, err = StatusPatience, nil
	} else if err == nil && op.held != nil && st.Iter > ps.Validated && due(st.Iter) {
		// The last iterate, which no CG pass follows: one pass that
		// scores the held-out rows only.
		ph.start("validation", st.Iter)
		var vp *ValPoint
		if vp, err = op.held.final(ctx, st); err == nil {
			observe(st, vp)
			report(Progress{Stage: StageValidate, Iteration: st.Iter, Iterations: cfg.Iterations, Val: vp})
			err = checkpoint(ctx, st)
		}
	}
	if err != nil {
		return Training{}, err
	}
	tr.Iterations, tr.Status, tr.BestIteration = st.Iter, status, ps.BestIter
	if n := st.Iter - startIter; n > 0 {
		tr.SecondsPerIteration = time.Since(iterStart).Seconds() / float64(n)
	}
	return tr, nil
}

// fitModel builds the model of the CG state st: α = Bβ.
func fitModel(plan *FitPlan, cs *centreSample, enc targetEncoding, op *fitOperator, st *cgState, ymean []float64,
	tr Training) (*Model, error) {
	alpha := make([]float64, cs.m*enc.k)
	op.pre.ApplyBTo(alpha, st.Beta, enc.k)
	if err := finiteAlpha(alpha, ymean, enc.k); err != nil {
		return nil, err
	}
	return newModel(newModelMeta(plan, cs, enc, plan.Config, ymean, tr), slices.Clone(cs.centres), alpha, nil, op.cfit)
}

// ErrNotFinite is matched by the error of a fit whose coefficients came
// out NaN or infinite: the solve broke down, and no model is returned.
var ErrNotFinite = errors.New("the fit's coefficients are not finite")

// finiteAlpha returns an error (matching ErrNotFinite) unless every
// coefficient α (M × k) and target mean is finite: a fit that broke down
// (a damaged cached basis, an overflow) must not give a model of NaNs.
func finiteAlpha(alpha, mean []float64, k int) error {
	for i, v := range alpha {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: α of centre %d, output %d, is %v; no model was written. If the preconditioner's "+
				"Nyström basis was read from a file (MODEL.ckpt.basis), delete the file so that it is rebuilt; "+
				"otherwise raise λ (Config.Lambda) or the jitter (Config.Jitter)", ErrNotFinite, i/k, i%k, v)
		}
	}
	for o, v := range mean {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: the mean of target %d is %v; no model was written: check the target and weight columns", ErrNotFinite, o, v)
		}
	}
	return nil
}

// newModelMeta returns the metadata of a model fitted with cfg on the
// centres cs.
func newModelMeta(plan *FitPlan, cs *centreSample, enc targetEncoding, cfg Config, ymean []float64, tr Training) *modelMeta {
	meta := &modelMeta{
		Kernel: cfg.Kernel, Task: enc.task, Classes: slices.Clone(enc.classes), ClassNames: slices.Clone(enc.labels),
		Features: slices.Clone(plan.Features), Targets: slices.Clone(plan.Targets), Encoding: plan.Encoding, Nulls: plan.Nulls,
		TargetMean: slices.Clone(ymean), M: cs.m, D: plan.D, K: enc.k, Config: cfg, Training: tr, prec: cfg.Precision,
	}
	if cs.std.invStd != nil {
		meta.FeatureMean, meta.FeatureStd = slices.Clone(cs.std.mean), slices.Clone(cs.std.std)
	}
	return meta
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

// ValPoint is the validation metric after one CG iteration.
type ValPoint struct {
	Iteration int `json:"iteration"`
	Metrics
}
