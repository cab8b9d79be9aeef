package ooc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/falkon-ooc/falkon-ooc/internal/procstat"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Defaults of TuneConfig, documented on its fields.
const (
	DefaultValFraction = 0.1
	DefaultPatience    = 3
)

// TuneConfig configures Tune: a search over a grid of σ × λ whose
// candidates share the centres and every pass over the data.
type TuneConfig struct {
	// Base is the configuration every candidate shares: centres, kernel
	// kind, Iterations (the most any candidate runs), precision, jitter,
	// preconditioner, seed, sampling and task. Each candidate replaces
	// Base.Kernel.Sigma and Base.Lambda with its own. How the search runs
	// (workers, a validation source) is Tune's RunOptions, whose
	// Checkpoint and Resume must be nil: a search is not resumable.
	Base Config
	// Sigmas are the length scales σ tried (distance kernels). nil means
	// the default (SigmaGrid): Base.Kernel alone when it gives a length
	// scale (Sigma or per-feature Sigmas), else DefaultSigmas(d).
	Sigmas []float64
	// Lambdas are the λ > 0 tried. nil means the default (LambdaGrid):
	// {Base.Lambda} when Base gives one, else DefaultLambdas().
	Lambdas []float64
	// ValFraction is the fraction of src's rows held out for validation
	// (stream.Holdout with Base.Seed) when RunOptions.Validation is nil; those
	// rows are scored in the same passes that fit the others. 0 means
	// DefaultValFraction.
	ValFraction float64
	// Patience stops a candidate after this many validations in a row
	// without a relative improvement of MinImprovement over the last
	// validation that made one; the candidate keeps its best validated
	// iterate (the lowest metric), the rule of Config.Patience. 0 means
	// DefaultPatience; a negative value never stops on patience.
	Patience int
	// MinImprovement is the relative improvement of the validation metric
	// that Patience counts as one (it does not decide the iterate kept).
	// 0 means DefaultMinImprovement, as in Config; it must be in [0, 1).
	// (Both commands' searches use 1e-4: a search's small M and subsample
	// make each pass cheap.)
	MinImprovement float64
	// Halving, when > 0, is successive halving: after iterations
	// Halving, 2·Halving, 4·Halving, … the worse half of the live
	// candidates (by best validation metric so far) stops. 0 means off.
	Halving int
	// SigmaHalving is successive halving over whole σ: after each of
	// the iterations SigmaSteps lists (when SigmaSteps is nil: after
	// SigmaHalving, 2·SigmaHalving, 4·SigmaHalving, …) the σ whose best
	// candidate (best validation metric so far, stopped candidates
	// included) is in the worse half of the σ still in the pass stop, all
	// their λ at once (Stop = StopSigmaHalving), so that their kernel
	// blocks — most of a pass's cost, one per σ — leave the pass; the
	// better ⌈half⌉ stay. With SigmaSteps nil, 0 means DefaultSigmaSteps
	// and a negative value turns σ halving off. It does nothing with one σ.
	SigmaHalving int
	// SigmaSteps, when not nil, lists the iterations (ascending, ≥ 1)
	// after which the σ are halved, and SigmaHalving is not read.
	SigmaSteps []int
	// Extend, when > 0, widens the grid when the pick lies on its edge:
	// a σ or λ that is the smallest or the largest of its grid (of two or
	// more values) gets two more values beyond it, spaced as the grid's
	// two outermost ones there, and the search runs again on the wider
	// grid, up to Extend times (each a whole search). TuneResult.Edges
	// says where the final pick lies on an edge.
	Extend int
	// ARD, when set, first learns per-feature length scales on a row
	// subsample of the training rows (gradient steps on a hold-out error,
	// on the codes a classification regresses on) and searches the
	// Lambdas with that kernel beside the Sigmas grid (when not nil), so
	// that the learned scales compete with the grid on the same
	// validation rows and the search never picks them when they are
	// worse. The kernel must be Gaussian.
	ARD *ARDConfig
	// Pick is how the model is picked among the candidates: PickTol (the
	// largest λ within a relative Base.MinImprovement of the lowest
	// stopping metric: RMSE, or 1 − AUC for classification), PickBest
	// (the lowest validation metric) or PickOneSE (the most regularised
	// within one standard error of it). "" means DefaultPick. TuneResult
	// names every rule's pick whichever is used.
	Pick PickRule
	// MaxPasses is the search's budget of passes over the training data
	// (the centre sampling, the right-hand side, one per CG iteration and
	// the final validation of held-out rows). With patience, a candidate
	// whose validation still improves at Base.Iterations continues by the
	// patience rule until the budget runs out (Stop = StopBudget, with its
	// LastImprovement). 0 means DefaultMaxPasses(Base.Iterations,
	// Patience, validation held out). It must be 0 or ≥ 4.
	MaxPasses int
}

// TuneProgress is one progress report of Tune.
type TuneProgress struct {
	Progress
	// Live is the number of candidates still in the pass.
	Live int
	// Stopped lists the candidates (indices in TuneResult.Candidates)
	// that stopped after the last validation.
	Stopped []int
	// Memory, in the first report only (before any pass), is the
	// estimate of the search's peak memory, for N training rows, ValRows
	// validation rows and M centres.
	Memory     *Memory
	N, ValRows int64
	M          int
	// MaxPasses, in the first report of the squared loss's search, is its
	// budget of passes (TuneConfig.MaxPasses).
	MaxPasses int
}

// ErrMemory is matched by the error of a fit or search whose estimated
// memory exceeds RunOptions.MaxMemory.
var ErrMemory = errors.New("not enough memory")

// Stop reasons of a candidate.
const (
	StopIterations = "iterations" // ran Base.Iterations
	// StopBudget: still improving by the patience rule when the search's
	// budget of passes (TuneConfig.MaxPasses) ran out.
	StopBudget   = "budget"
	StopPatience = "patience" // validation stopped improving
	StopHalving  = "halving"  // in the worse half at a halving step
	StopFailed   = "failed"   // its preconditioner could not be built
	// StopNoDescent: the logistic loss's objective did not fall along a
	// Newton step (Err says which); the candidate keeps the α before it.
	StopNoDescent = "no_descent"
)

// TuneCandidate is one point of the grid and what became of it.
type TuneCandidate struct {
	Sigma  float64       `json:"sigma,omitempty"`
	Lambda float64       `json:"lambda"`
	Kernel kernel.Kernel `json:"kernel"`
	// Validation holds the metrics after each CG iteration it ran.
	Validation []ValPoint `json:"validation"`
	// BestIteration is the iteration with the best validation metric as
	// the stopping rules watch it (RMSE for regression, 1 − AUC for
	// classification, as in Config.Patience), and BestMetric the metric
	// the search picks by there (RMSE for regression, error rate for
	// classification; +Inf when none was finite).
	BestIteration int     `json:"best_iteration"`
	BestMetric    float64 `json:"best_metric"`
	// BestSE is the standard error of BestMetric over the validation rows
	// (weighted by the row weights when there are any): for RMSE, that of
	// the rows' mean squared error over 2·RMSE; for an error rate, the
	// binomial √(p(1 − p)/n) with the weights' effective n. 0 when not
	// measured.
	BestSE float64 `json:"best_se,omitempty"`
	// Iterations is how many CG iterations it ran before it stopped, and
	// Stop why it stopped.
	Iterations int    `json:"iterations"`
	Stop       string `json:"stop"`
	// LastImprovement, for a candidate stopped by the cap (StopIterations
	// or StopBudget), is its last improvement of the validation metric
	// the stopping rules watch (RMSE, or 1 − AUC for classification), and
	// says whether it was still improving.
	LastImprovement *Improvement `json:"last_improvement,omitempty"`
	// Err says why a failed candidate failed.
	Err string `json:"error,omitempty"`
	// Seconds is the time from the start of Tune until it stopped.
	Seconds float64 `json:"seconds"`
	// Residuals are its CG residuals ‖r‖/‖b‖ by iteration.
	Residuals []float64 `json:"residuals"`

	model *Model
}

// Model returns the candidate's model at its best iteration (nil for a
// failed candidate): a complete model, the same one Fit returns with this
// candidate's σ and λ and Iterations = BestIteration.
func (c *TuneCandidate) Model() *Model { return c.model }

// TuneResult is the outcome of Tune.
type TuneResult struct {
	// Metric names the validation metric: "rmse" or "error_rate".
	Metric     string          `json:"metric"`
	Candidates []TuneCandidate `json:"candidates"`
	// Best indexes the picked candidate, whose model Model returns: Tol,
	// Lowest or OneSE as Pick says.
	Best int `json:"best"`
	// Pick is the rule that chose Best (TuneConfig.Pick).
	Pick PickRule `json:"pick"`
	// Lowest indexes the candidate with the lowest BestMetric (the first
	// such in grid order, σ major), OneSE the most regularised candidate
	// (largest λ, then largest σ) whose BestMetric is within the Lowest's
	// BestSE of it.
	Lowest int `json:"lowest"`
	OneSE  int `json:"one_se"`
	// Tol indexes PickTol's candidate: the largest λ whose TolMetric is
	// within a relative Tolerance (Base.MinImprovement) of the lowest
	// TolMetric. TolMetric is "1-auc" (1 − AUC at the kept iterate, for
	// classification) or Metric.
	Tol       int     `json:"tol"`
	Tolerance float64 `json:"tolerance"`
	TolMetric string  `json:"tol_metric"`
	// N is the number of training rows, ValRows the validation rows.
	N       int64 `json:"n"`
	ValRows int64 `json:"val_rows"`
	M       int   `json:"centers"`
	// Passes counts the passes over the training data (the centre
	// sampling pass, the right-hand side, one per CG iteration and the
	// final validation).
	Passes  int     `json:"passes"`
	Seconds float64 `json:"seconds"`
	Memory  Memory  `json:"memory_estimate"`
	// ARD is what the ARD step learned (nil without TuneConfig.ARD).
	ARD *ARDResult `json:"ard,omitempty"`
	// Phases are the wall and CPU seconds of the search's phases (sample,
	// ard, precond_rhs: the factorisations beside the right-hand side's
	// pass, then one iteration phase per CG iteration, each with its
	// validation, and a final validation), and PeakRSS the process's
	// peak resident memory at the end.
	Phases  []Phase `json:"phases,omitempty"`
	PeakRSS int64   `json:"peak_rss_bytes,omitempty"`
	// Edges names the edges of the grid the pick lies on ("smallest σ",
	// "largest λ", …): the best may lie beyond them. Extended counts the
	// searches run again on a wider grid (TuneConfig.Extend).
	Edges    []string `json:"edges,omitempty"`
	Extended int      `json:"extended,omitempty"`
}

// Model returns the best candidate's model.
func (r *TuneResult) Model() *Model { return r.Candidates[r.Best].model }

// metricName returns the selection metric of a task.
func metricName(t Task) string {
	if t == TaskRegression {
		return "rmse"
	}
	return "error_rate"
}

// selectionMetric extracts the selection metric; +Inf when missing.
func selectionMetric(t Task, m *Metrics) float64 {
	v := m.RMSE
	if t != TaskRegression {
		v = m.ErrorRate
	}
	if v == nil || math.IsNaN(*v) {
		return math.Inf(1)
	}
	return *v
}

// EstimateTuneMemory predicts the peak memory of a search over s values
// of σ and l of λ with M centres, d features and k outputs, with the
// preconditioners stored in precision p (Config.PrecondPrecision; ""
// means float64): one M × M buffer per candidate (precond.Bytes: T and
// A_λ in one buffer; K_MM is computed into the first λ's), a kernel
// workspace and a partial M × (l·k + 1) vector per σ per worker, and CG
// state for every candidate, on top of the chunk buffers of one fit
// (EstimateMemory).
func EstimateTuneMemory(m, d, k, s, l, workers, chunkRows int, p precond.Precision) Memory {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if p == "" {
		p = precond.Float64
	}
	mem := EstimateMemoryFor(m, d, k, workers, chunkRows, p)
	W := int64(workers)
	M, D, K, S, L := int64(m), int64(d), int64(k), int64(s), int64(l)
	C := S * L
	mem.Precond = C * precond.Bytes(m, p)
	mem.Centers = 8*M*D + S*2*8*M*D
	// Validation scores of a chunk: rows × C·k per partial in flight.
	mem.Chunks += 2 * W * 8 * int64(chunkRows) * (C*K + K)
	mem.Workspaces = W * S * 8 * (64*M + 64*(D+L*K+1) + 2*M*(L*K+1))
	mem.Partials = 2 * W * S * 8 * M * (L*K + 1)
	// CG state (β, r, p, W p) and the operator's v, u, z, w, α and the
	// best α of every candidate.
	mem.Vectors = 12 * 8 * M * C * K
	// The factorisations run one per worker, each with its own packing.
	mem.Packing = W * precond.PackBytes(m, 1)
	mem.Total = mem.Precond + mem.Centers + mem.Chunks + mem.Workspaces + mem.Partials + mem.Vectors + mem.Packing + mem.Runtime
	return mem
}

// Tune searches the grid TuneConfig.Sigmas × TuneConfig.Lambdas for the
// model with the best validation metric, sharing the work between the
// candidates (DESIGN.md, "Choosing hyper-parameters without paying for
// each guess"):
//
//   - one set of centres for all candidates, drawn as Fit draws them;
//   - per σ one K_MM and one T = chol(K_MM + εMI); per (σ, λ) one
//     A = chol(TTᵀ/M + λI) and one CG state;
//   - each CG iteration is one pass over the training rows for all live
//     candidates: each chunk is decoded and standardised once; for each σ
//     the kernel block is computed once and multiplies the λ columns
//     together (the multi-output product);
//   - the validation rows held out of the same chunks are scored in the
//     same pass, so every candidate's validation curve costs no pass;
//   - a candidate whose validation metric stops improving (Patience), or
//     that falls in the worse half at a halving step (Halving), leaves the
//     pass; its model is kept at its best iteration;
//   - whole σ leave the pass by successive halving (SigmaSteps, on by
//     default), which removes their kernel blocks: with 5 σ × 6 λ the
//     search costs about 3–4 fits (bench/TUNE.md) instead of about 7.
//
// Every candidate's model is, up to rounding, the model Fit returns on the
// training rows with that σ, λ and Iterations = its best iteration.
func Tune(ctx context.Context, src stream.Source, tc TuneConfig, opts RunOptions) (*TuneResult, error) {
	if tc.Extend < 0 {
		return nil, configErr("TuneConfig.Extend", "extend must be ≥ 0, got %d", tc.Extend)
	}
	for ext := 0; ; ext++ {
		res, err := tuneOnce(ctx, src, tc, opts)
		if err != nil {
			return nil, err
		}
		res.Extended = ext
		best := res.Candidates[res.Best]
		var sig, lam []float64
		var edges []string
		if best.Kernel.Sigmas == nil {
			sig, edges = extendGrid(tc.Sigmas, best.Sigma, "σ", edges)
		}
		lam, edges = extendGrid(tc.Lambdas, best.Lambda, "λ", edges)
		res.Edges = edges
		if len(edges) == 0 || ext == tc.Extend {
			return res, nil
		}
		if sig != nil {
			tc.Sigmas = sig
		}
		if lam != nil {
			tc.Lambdas = lam
		}
	}
}

// extendGrid reports whether v lies on an edge of grid (two or more
// values), appending "smallest NAME" or "largest NAME" to edges, and
// returns the grid with two more values beyond that edge, spaced as its
// two outermost values there (geometrically); nil when v is inside.
func extendGrid(grid []float64, v float64, name string, edges []string) ([]float64, []string) {
	if len(grid) < 2 {
		return nil, edges
	}
	g := slices.Sorted(slices.Values(grid))
	n := len(g)
	// Six significant digits, as a user writes them: 0.01, not
	// 0.010000000000000002.
	round := func(x float64) float64 {
		y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
		return y
	}
	switch v {
	case g[0]:
		r := g[1] / g[0]
		return append([]float64{round(g[0] / (r * r)), round(g[0] / r)}, g...), append(edges, "smallest "+name)
	case g[n-1]:
		r := g[n-1] / g[n-2]
		return append(g, round(g[n-1]*r), round(g[n-1]*r*r)), append(edges, "largest "+name)
	}
	return nil, edges
}

// tuneOnce is one search over tc's grid.
func tuneOnce(ctx context.Context, src stream.Source, tc TuneConfig, opts RunOptions) (*TuneResult, error) {
	if tc.Base.Loss == LossLogistic {
		return tuneLogistic(ctx, src, tc, opts)
	}
	t, err := newTuner(ctx, src, tc, opts)
	if err != nil {
		return nil, err
	}
	if t.memNote != "" {
		t.progress(TuneProgress{Progress: Progress{Note: t.memNote}})
	}
	t.progress(TuneProgress{Memory: &t.mem, N: t.plan.N, ValRows: t.nval, M: t.plan.Config.Centers, MaxPasses: t.maxPasses()})
	t.ph.start("sample", 0)
	if t.cs, err = sampleCentres(ctx, t.plan, func(p Progress) { t.progress(TuneProgress{Progress: p}) }, rowReader(t.run.Executor)); err != nil {
		return nil, err
	}
	t.passes++
	if t.enc, err = t.plan.encoding(t.cs.distinct); err != nil {
		return nil, err
	}
	t.k = t.enc.k
	if tc.ARD != nil {
		t.ph.start("ard", 0)
		if t.ard, err = t.learnARD(ctx); err != nil {
			return nil, err
		}
		g := t.groups[0]
		g.kern.Sigma, g.kern.Sigmas = 0, t.ard.Sigmas
		for _, c := range g.cands {
			c.Kernel, c.Sigma = g.kern, 0
		}
	}
	// The right-hand side's pass needs the kernels only, not T and A: it
	// runs while the preconditioners are factorised, and each fills the
	// cores the other leaves idle (prepare's last σ, the pass's last
	// chunks).
	t.ph.start("precond_rhs", 0)
	t.kernels()
	t.gatherLive()
	t.progress(TuneProgress{Progress: Progress{Stage: StagePrecond}})
	var prepErr error
	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		prepErr = t.prepare(ctx)
	}()
	ws, sum, err := t.rhsPass(ctx)
	t.waitPrepared(prepared)
	if prepErr != nil {
		return nil, prepErr
	}
	if err != nil {
		return nil, err
	}
	t.progress(TuneProgress{Progress: Progress{Stage: StagePrecond, Fraction: 1}})
	if err := t.rhs(ws, sum); err != nil {
		return nil, err
	}
	if err := t.iterate(ctx); err != nil {
		return nil, err
	}
	res := t.result()
	res.Phases, res.PeakRSS = t.ph.done(), procstat.PeakRSS()
	return res, nil
}

// tuner is the state of one Tune.
type tuner struct {
	tc    TuneConfig
	plan  *FitPlan       // the fit on the training rows
	cs    *centreSample  // its centres and statistics
	enc   targetEncoding // its task
	run   RunOptions     // workers and executor only
	start time.Time
	// report is RunOptions.SearchProgress (nil: silent).
	report func(TuneProgress)
	pass   stream.Source // the source the passes read (training and held-out rows)
	frac   float64       // the fraction of pass's rows held out (0: Validation source)
	val    stream.Source // separate validation source, or nil
	// passFn runs a pass over pass through RunOptions.Executor (or
	// locally), valFn one over val locally.
	passFn, valFn scoredPass
	yv, wv, sc    []float64 // the validation rows' targets and weights, one candidate's scores
	n             float64   // n of λ·n: training rows, or their weights' sum
	classWeights  []float64 // balanced class weights (Config.ClassWeight), or nil
	nval          int64
	k             int
	groups        []*sigmaGroup
	cands         []*tuneCand
	ymean         []float64
	st            *cgState
	grid          *engine.Grid // the CG operator (iterate)
	passes        int
	budget        int // the most CG iterations (cgBudget)
	// prepared counts the σ groups prepare has finished (read by
	// waitPrepared on the caller's goroutine).
	prepared atomic.Int64
	mem      Memory
	memNote  string // what the memory check chose, for people ("": nothing)
	ard      *ARDResult
	ph       phaseClock
}

// sigmaGroup is one σ: its kernel, centres, T and its candidates.
type sigmaGroup struct {
	kern kernel.Kernel
	cfit *kernel.Centers // with the standardisation as input map
	craw *kernel.Centers // without it: the candidates' models share it
	// kmmRows computes rows of K_MM (float64, for the preconditioner).
	kmmRows func(dst []float64, lo, hi int)
	pre     *precond.Preconditioner
	cands   []*tuneCand
	live    []*tuneCand // live candidates in this pass
}

// tuneCand is a candidate's working state.
type tuneCand struct {
	TuneCandidate
	idx  int
	g    *sigmaGroup
	pre  *precond.Preconditioner
	live bool
	stop engine.Tracker // the stopping rule's state
	rse  rowSE          // the current validation's rows, for BestSE
	best []float64      // M × k (rows past the rank 0), β at the best iteration
	ev   *Evaluator     // its validation of the current pass
	e    *engine.Cand   // its place in the grid (iterate)
}

// ValidateTune checks tc and opts as far as they can be checked without
// the data (Validate for tc.Base and opts, then the search's own fields),
// so that a program can reject bad settings before any expensive work;
// Tune checks again. The error is a *ConfigError.
func ValidateTune(tc TuneConfig, opts RunOptions) error {
	base := tc.Base
	if err := Validate(base, opts); err != nil {
		return err
	}
	if opts.Checkpoint != nil || opts.Resume != nil {
		return configErr("RunOptions.Checkpoint", "tune does not checkpoint or resume: RunOptions.Checkpoint and Resume must be nil")
	}
	if base.Preconditioner == precond.MethodNystrom {
		return configErr("Config.Preconditioner", "tune's candidates share one factorisation of K_MM per σ, at an M that fits in memory: the nystrom preconditioner is for the final fit (FitTuned uses it there)")
	}
	if base.Loss == LossLogistic && tc.ARD != nil {
		return configErr("TuneConfig.ARD", "ARD learns its length scales with the squared loss: give no TuneConfig.ARD with the logistic loss")
	}
	if tc.ValFraction < 0 || tc.ValFraction >= 1 || math.IsNaN(tc.ValFraction) {
		return configErr("TuneConfig.ValFraction", "validation fraction must be in [0, 1), got %g", tc.ValFraction)
	}
	if tc.ValFraction > 0 && opts.Validation != nil {
		return configErr("TuneConfig.ValFraction", "a validation fraction and a validation source exclude each other")
	}
	if tc.MinImprovement < 0 || tc.MinImprovement >= 1 || math.IsNaN(tc.MinImprovement) {
		return configErr("TuneConfig.MinImprovement", "minimum improvement must be in [0, 1), got %g", tc.MinImprovement)
	}
	if _, err := ParsePickRule(string(tc.Pick)); err != nil {
		return configErr("TuneConfig.Pick", "%v", err)
	}
	if tc.MaxPasses < 0 || (tc.MaxPasses > 0 && tc.MaxPasses < 4) {
		return configErr("TuneConfig.MaxPasses", "the budget of passes must be 0 (the default) or ≥ 4 (the centre sampling, the right-hand side, one iteration and the final validation), got %d", tc.MaxPasses)
	}
	if tc.Halving < 0 {
		return configErr("TuneConfig.Halving", "halving must be ≥ 0, got %d", tc.Halving)
	}
	for i, it := range tc.SigmaSteps {
		if it < 1 || (i > 0 && it <= tc.SigmaSteps[i-1]) {
			return configErr("TuneConfig.SigmaSteps", "σ-halving steps must be ascending iterations ≥ 1, got %v", tc.SigmaSteps)
		}
	}
	for _, l := range tc.Lambdas {
		if !(l > 0) || math.IsInf(l, 0) {
			return configErr("TuneConfig.Lambdas", "lambda must be > 0 and finite, got %g", l)
		}
	}
	if tc.ARD != nil && base.Kernel.Sigmas != nil {
		return configErr("TuneConfig.ARD", "ARD learns the per-feature length scales: give no Base.Kernel.Sigmas")
	}
	if tc.ARD != nil && base.Kernel.Kind != "" && base.Kernel.Kind != kernel.Gaussian {
		return configErr("TuneConfig.ARD", "ARD learns the length scales of the Gaussian kernel, not of the %s kernel", base.Kernel.Kind)
	}
	if len(tc.Sigmas) > 0 && base.Kernel.Kind != "" && !base.Kernel.Kind.IsDistance() {
		return configErr("TuneConfig.Sigmas", "the %s kernel has no length scale to search: give no sigmas", base.Kernel.Kind)
	}
	for _, s := range tc.Sigmas {
		if !(s > 0) || math.IsInf(s, 0) {
			return configErr("TuneConfig.Sigmas", "sigma must be > 0 and finite, got %g", s)
		}
	}
	return nil
}

// searchRows returns the rows a search trains on and validates on, for
// every loss: a validation source of its own (RunOptions.Validation), its
// labels aligned with src's and its shape checked (frac 0), or the
// fraction frac of src that TuneConfig.ValFraction (0: DefaultValFraction)
// holds out, which the passes over src then hold out too.
func searchRows(src stream.Source, tc TuneConfig, opts RunOptions) (train, val stream.Source, frac float64, err error) {
	if opts.Validation == nil {
		frac = cmp.Or(tc.ValFraction, DefaultValFraction)
		train, val, err = holdOut(src, frac, tc.Base.Seed, "TuneConfig.ValFraction")
		return train, val, frac, err
	}
	if val, err = AlignLabels(src, opts.Validation); err != nil {
		return nil, nil, 0, err
	}
	if val.Dim() != src.Dim() || val.NumTargets() != src.NumTargets() {
		return nil, nil, 0, configErr("RunOptions.Validation", "the validation data has %d features and %d targets, the training data %d and %d",
			val.Dim(), val.NumTargets(), src.Dim(), src.NumTargets())
	}
	return src, val, 0, nil
}

func newTuner(ctx context.Context, src stream.Source, tc TuneConfig, opts RunOptions) (*tuner, error) {
	start := time.Now()
	base := tc.Base
	if err := ValidateTune(tc, opts); err != nil {
		return nil, err
	}
	if tc.Patience == 0 {
		tc.Patience = DefaultPatience
	}
	if tc.SigmaSteps == nil && tc.SigmaHalving == 0 {
		tc.SigmaSteps = DefaultSigmaSteps()
	}
	train, val, frac, err := searchRows(src, tc, opts)
	if err != nil {
		return nil, err
	}
	t := &tuner{tc: tc, start: start, pass: spread(src), frac: frac, nval: stream.Rows(val)}
	if frac == 0 {
		t.val = val // a source of its own
	}
	// The candidates' memory is the search's to check (below), and their
	// preconditioner is Cholesky.
	t.run = RunOptions{Workers: opts.Workers, Executor: opts.Executor, MaxMemory: -1}
	t.report = opts.SearchProgress
	base.Preconditioner = cmp.Or(base.Preconditioner, precond.MethodCholesky)
	t.passFn = scoredPassOver(t.pass, t.run)
	if t.val != nil {
		t.valFn = scoredPassOver(t.val, RunOptions{Workers: opts.Workers})
	}
	plan, err := Plan(train, base, t.run)
	if err != nil {
		return nil, err
	}
	t.plan = plan
	cfg := plan.Config
	// With ARD, the first group's kernel is the learned one (set by
	// Tune once learnARD has run): it competes with the grid's σ on the
	// same validation rows, and loses when it is worse.
	kernels, lambdas := searchGrid(tc, cfg, plan.D)
	for _, kn := range kernels {
		g := &sigmaGroup{kern: kn}
		for _, l := range lambdas {
			c := &tuneCand{idx: len(t.cands), g: g, live: true, stop: engine.NewTracker()}
			c.Lambda, c.Kernel, c.BestMetric = l, kn, math.Inf(1)
			if kn.Sigmas == nil && kn.Kind.IsDistance() {
				c.Sigma = kn.Sigma
			}
			g.cands = append(g.cands, c)
			t.cands = append(t.cands, c)
		}
		t.groups = append(t.groups, g)
	}
	// The memory check comes before any pass.
	k := max(plan.K, 1)
	maxRows := 0
	for i := range t.pass.NumChunks() {
		maxRows = max(maxRows, t.pass.ChunkRows(i))
	}
	est := func(prec precond.Precision) Memory {
		mem := EstimateTuneMemory(cfg.Centers, plan.D, k, len(kernels), len(lambdas), opts.Workers, maxRows, prec)
		add := func(b int64) { mem.Vectors += b; mem.Total += b }
		if seesWeights(plan) {
			// rhs replaces each candidate's A by one that sees the weights,
			// one at a time, while the first λ's buffer keeps T.
			b := precond.Bytes(cfg.Centers, prec)
			mem.Precond += b
			mem.Total += b
		}
		// The scores of the validation rows come back from each pass whole
		// (every candidate's k columns and the targets per row), beside their
		// targets and one candidate's scores.
		add(8 * t.nval * int64(len(kernels)*len(lambdas)*k+2*plan.TargetColumns+k))
		if tc.ARD != nil {
			// The subsample's dense matrices (ardProblem): K_nM and K_vM
			// (rows × centres), K_MM and H, scaled copies of the rows.
			ac := tc.ARD.resolved(plan.N)
			add(int64(8 * (2*ac.Rows*ac.Centers + 4*ac.Centers*ac.Centers + 6*ac.Rows*plan.D)))
		}
		return mem
	}
	grid := fmt.Sprintf("over %d σ × %d λ with M = %d", len(kernels), len(lambdas), cfg.Centers)
	var note string
	t.mem, plan.Config.PrecondPrecision, note, err = searchMemory(tc.Base.PrecondPrecision, opts.memoryLimit(), est, "search", grid,
		func(m Memory) string {
			return fmt.Sprintf("one M × M buffer for each of the %d candidates: %s", len(kernels)*len(lambdas), FormatBytes(m.Precond))
		})
	if err != nil {
		return nil, err
	}
	t.memNote = note
	return t, nil
}

func (t *tuner) progress(p TuneProgress) {
	if t.report != nil {
		p.Elapsed = time.Since(t.start)
		t.report(p)
	}
}

// prepare builds, per σ, K_MM and T, and per (σ, λ) A. A σ whose T
// cannot be built fails its candidates, not the search; the search fails
// only when every candidate has. The σ are prepared concurrently, each
// with its share of the workers: at the M of a search one factorisation
// per worker keeps the cores busier than all workers on one. It runs
// beside the right-hand side's pass (Tune), so it reports no progress
// and touches only the groups' preconditioners and its candidates' state.
func (t *tuner) prepare(ctx context.Context) error {
	conc := min(t.plan.Workers, len(t.groups))
	each := max(1, t.plan.Workers/conc)
	errs := make([]error, len(t.groups))
	parallel(len(t.groups), conc, func(i int) {
		errs[i] = t.prepareGroup(ctx, t.groups[i], each)
		t.prepared.Add(1)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	var firstErr error
	for _, err := range errs {
		firstErr = cmp.Or(firstErr, err)
	}
	if t.live() == 0 {
		return fmt.Errorf("every candidate failed: %w", firstErr)
	}
	return nil
}

// waitPrepared waits until done is closed (prepare has returned),
// reporting StagePrecond with the fraction of σ groups prepared when it
// changes, at most once a second: at large M the factorisations outlast
// the right-hand side's pass by minutes.
func (t *tuner) waitPrepared(done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := int64(-1)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if n := t.prepared.Load(); n != last && n < int64(len(t.groups)) {
				last = n
				t.progress(TuneProgress{Progress: Progress{Stage: StagePrecond, Fraction: float64(n) / float64(len(t.groups))}})
			}
		}
	}
}

// kernels sets every σ group's kernel centres: those of the passes (the
// standardisation as input map), those the models share, and K_MM's rows.
func (t *tuner) kernels() {
	cfg, cs := t.plan.Config, t.cs
	m, d := cs.m, t.plan.D
	for _, g := range t.groups {
		var c64 *kernel.Centers
		c64, g.kmmRows = kmmRows(g.kern, cs.centres, m, d)
		g.craw = c64
		if cfg.Precision != kernel.Float64 {
			g.craw = kernel.NewCenters(g.kern, cs.centres, m, d, cfg.Precision)
		}
		g.cfit = g.craw.WithInputMap(cs.std.mean, cs.std.invStd)
	}
}

// prepareGroup is prepare for one σ, on workers goroutines. It returns
// the first error of its candidates (which it has failed).
func (t *tuner) prepareGroup(ctx context.Context, g *sigmaGroup, workers int) error {
	cfg, cs := t.plan.Config, t.cs
	m, k := cs.m, t.k
	// K_MM goes block by block straight into the first λ's M × M buffer,
	// in the configured precision, as Fit's (precond.Build); T and
	// T Tᵀ/M are formed once for all λ (precond.BuildLambdas).
	lambdas := make([]float64, len(g.cands))
	for i, c := range g.cands {
		lambdas[i] = c.Lambda
	}
	pres, errs, err := precond.BuildLambdas(ctx, m, g.kmmRows, lambdas, precond.Options{
		Jitter: cfg.Jitter, Workers: workers, Weights: cs.weights, Method: cfg.Preconditioner,
		Precision: cfg.PrecondPrecision,
	})
	if err != nil {
		if ctx.Err() == nil {
			for _, c := range g.cands {
				t.fail(c, err)
			}
		}
		return err
	}
	// The group's T solves may use any of its λ's preconditioners (they
	// share T): the first whose A could be factorised.
	for _, p := range pres {
		if p != nil {
			g.pre = p
			break
		}
	}
	var firstErr error
	for i, c := range g.cands {
		if c.pre, err = pres[i], errs[i]; err != nil {
			firstErr = cmp.Or(firstErr, err)
			t.fail(c, err)
			continue
		}
		c.Kernel = g.kern
		c.best = make([]float64, m*k)
	}
	return firstErr
}

func (t *tuner) fail(c *tuneCand, err error) {
	c.live, c.Stop, c.Err = false, StopFailed, err.Error()
	c.Seconds = time.Since(t.start).Seconds()
}

func (t *tuner) live() int {
	n := 0
	for _, c := range t.cands {
		if c.live {
			n++
		}
	}
	return n
}

// passJob returns a pass of kind over the live σ groups (in group
// order; groups lists them): every group's kernel on the shared centres,
// the standardisation as the centres' input map, the hold-out of the
// passes over the training source (nil for the validation source).
func (t *tuner) passJob(kind pass.Kind, holdout *pass.Holdout) (job *pass.Job, groups []*sigmaGroup) {
	plan, cs := t.plan, t.cs
	job = &pass.Job{
		Kind: kind, Precision: plan.Config.Precision, M: cs.m, D: plan.D, K: t.k,
		Centers: cs.centres, Mean: cs.std.mean, InvStd: cs.std.invStd,
		Task: t.enc.task, Classes: t.enc.classes, Features: plan.Features, Targets: plan.Targets,
		Holdout: holdout, Weight: plan.Weight, WeightExp: plan.WeightExp,
	}
	if t.enc.task != TaskRegression {
		job.Targets = plan.Targets[:1]
	}
	for _, g := range t.groups {
		if len(g.live) == 0 {
			continue
		}
		groups = append(groups, g)
		job.Groups = append(job.Groups, pass.Group{Kernel: g.kern})
		job.PreparedGroups = append(job.PreparedGroups, g.cfit)
	}
	return job, groups
}

// trainHoldout is the hold-out of the passes over the training source:
// nil when the validation rows are a source of their own.
func (t *tuner) trainHoldout() *pass.Holdout {
	if t.val != nil {
		return nil
	}
	return &pass.Holdout{Fraction: t.frac, Seed: t.plan.Config.Seed}
}

// passReport returns the progress report of a pass in stage at iteration
// shown, with live candidates.
func (t *tuner) passReport(stage Stage, shown, live int) func(done, chunks int, rows int64) {
	return func(done, chunks int, rows int64) {
		t.progress(TuneProgress{Progress: Progress{Stage: stage, Iteration: shown, Iterations: t.budget,
			Chunk: done, Chunks: chunks, Rows: rows}, Live: live})
	}
}

// rhsPass makes the pass for every σ's right-hand side, K_nMᵀ [Y 1]
// per group and the target sums (b = Bᵀ K_nMᵀ (Y − 1μᵀ) / n, as Fit's
// rhs, follows in rhs): one pass.GroupTargetProduct through the executor. It needs
// the groups' kernels only.
func (t *tuner) rhsPass(ctx context.Context) (ws [][]float64, sum []float64, err error) {
	m, k := t.cs.m, t.k
	job, groups := t.passJob(pass.GroupTargetProduct, t.trainHoldout())
	// prepare may be failing candidates meanwhile: count the live ones
	// from the groups' lists, which gatherLive made before it started.
	live := 0
	for _, g := range groups {
		live += len(g.live)
	}
	out, err := t.passFn(ctx, job, t.passReport(StageRHS, 0, live), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("right-hand side: %w", err)
	}
	t.passes++
	ws = make([][]float64, len(t.groups))
	n := m * (k + 1)
	for q, g := range groups {
		ws[slices.Index(t.groups, g)] = out[q*n : (q+1)*n]
	}
	sum = out[len(groups)*n : len(groups)*n+k]
	// n in λ·n: the training rows, or the sum of their weights.
	t.n = float64(t.plan.N)
	if job.Weight != "" {
		if t.n = out[len(groups)*n+k]; !(t.n > 0) {
			return nil, nil, fmt.Errorf("right-hand side: the weights of column %q sum to %v: no row weighs anything", job.Weight, t.n)
		}
	}
	return ws, sum, nil
}

// scoreRows adds the scores of a pass's scored rows (vals: rows of
// rowLen values, the live candidates' k columns each in the pass's
// order, then the targets, then, when weighted is 1, the row's weight)
// to the live candidates' evaluators.
func (t *tuner) scoreRows(vals []float64, rowLen, weighted int) {
	if rowLen == 0 || len(vals) == 0 {
		return
	}
	k, kt := t.k, t.plan.TargetColumns
	n := len(vals) / rowLen
	lk := rowLen - kt - weighted
	t.yv = slices.Grow(t.yv[:0], n*kt)[:n*kt]
	for r := range n {
		copy(t.yv[r*kt:(r+1)*kt], vals[r*rowLen+lk:r*rowLen+lk+kt])
	}
	var w []float64
	if weighted == 1 {
		t.wv = slices.Grow(t.wv[:0], n)[:n]
		for r := range n {
			t.wv[r] = vals[(r+1)*rowLen-1]
		}
		w = t.wv
	}
	col := 0
	for _, g := range t.groups {
		for _, c := range g.live {
			t.sc = c.addScores(vals, n, rowLen, col, k, t.ymean, t.yv, w, t.sc)
			c.addRowErrors(t.enc.task == TaskRegression, t.sc, t.yv, w, n, k, kt)
			col += k
		}
	}
}

// rhs sets, from rhsPass's sums, the target means and b = Bᵀ K_nMᵀ
// (Y − 1μᵀ) / n of every candidate whose preconditioner was built, and
// starts CG.
func (t *tuner) rhs(ws [][]float64, sum []float64) error {
	m, k := t.cs.m, t.k
	k1 := k + 1
	t.gatherLive() // without the candidates prepare failed
	if t.plan.Config.ClassWeight == ClassWeightBalanced {
		cw, counts, err := balancedWeights(t.enc.task, t.enc.classes, sum, t.n)
		if err != nil {
			return err
		}
		for i, g := range t.groups {
			if ws[i] != nil && len(g.live) > 0 {
				weighRHS(t.enc.task, cw, m, k, ws[i])
			}
		}
		t.n, t.classWeights = weighSums(t.enc.task, cw, counts, sum), cw
	}
	if seesWeights(t.plan) {
		// The preconditioners see the row weights, as Fit's
		// (smoothedWeights, from the same sums).
		ones := make([]float64, m)
		for i, g := range t.groups {
			if ws[i] == nil || len(g.live) == 0 {
				continue
			}
			for r := range m {
				ones[r] = ws[i][r*k1+k]
			}
			h := smoothedWeights(g.kern, t.cs, ones)
			if centreRowWeights != nil {
				h = meanOne(centreRowWeights(t.cs.centres, m, len(t.cs.centres)/m))
			}
			for _, c := range g.live {
				// From the group's T (every λ's preconditioner shares it):
				// the old A can go before the new one is made.
				c.pre = nil
				pre, err := g.pre.WithCenterWeights(h, c.Lambda)
				if err != nil {
					t.fail(c, err)
					continue
				}
				c.pre = pre
			}
		}
		t.gatherLive()
	}
	n := t.n
	t.ymean = make([]float64, k)
	for j := range k {
		t.ymean[j] = sum[j] / n
	}
	nc := len(t.cands) * k
	b := make([]float64, m*nc)
	bm := make([]float64, m*k)
	bc := make([]float64, m*k)
	for i, g := range t.groups {
		if ws[i] == nil || len(g.live) == 0 {
			continue
		}
		w := ws[i]
		for r := range m {
			ones := w[r*k1+k]
			for j := range k {
				bm[r*k+j] = (w[r*k1+j] - ones*t.ymean[j]) / n
			}
		}
		for _, c := range g.live {
			rk := c.pre.Rank() * k
			c.pre.ApplyBTTo(bc[:rk], bm, k)
			clear(bc[rk:])
			setCols(b, nc, c.idx*k, bc, k)
		}
	}
	t.st = newCGState(b, nc)
	return nil
}

// errAllStopped ends CG once no candidate is live.
var errAllStopped = errors.New("all candidates stopped")

// iterate runs CG for every candidate together on the grid of the σ
// groups and their λ (engine.Grid: one pass per iteration for all live
// candidates, which also scores the held-out rows with the previous
// iterate), then the final validation.
func (t *tuner) iterate(ctx context.Context) error {
	cfg := t.plan.Config
	t.budget = t.cgBudget()
	cfg.Iterations = t.budget // progress reports show the budget
	m, k := t.cs.m, t.k
	groups := make([]*engine.Group, len(t.groups))
	for i, g := range t.groups {
		eg := &engine.Group{T: g.pre}
		for _, c := range g.cands {
			c.e = &engine.Cand{Lambda: c.Lambda, A: c.pre, Live: c.live}
			eg.Cands = append(eg.Cands, c.e)
		}
		groups[i] = eg
	}
	t.grid = engine.NewGrid(m, k, t.n, t.plan.Workers, groups)
	t.grid.Iter = t.st.Iter
	t.grid.Pass, t.grid.After = t.cgPass, t.afterPass
	t.ph.start("iteration", t.st.Iter+1)
	after := func(st *cgState) error {
		t.ph.start("iteration", st.Iter+1)
		t.grid.StepAlpha(st.Step)
		for _, c := range t.cands {
			if c.live {
				c.Iterations = st.Iter
				c.Residuals = append(c.Residuals, st.ColResidual(c.idx*t.k, t.k))
			}
		}
		t.progress(TuneProgress{Progress: Progress{Stage: StageIterate, Iteration: st.Iter, Iterations: cfg.Iterations,
			Residual: st.RelResidual()}, Live: t.live()})
		if t.live() == 0 {
			return errAllStopped
		}
		return nil
	}
	_, err := conjugateGradient(ctx, t.grid, t.st, t.grid.NCols, cfg.Iterations, cfg.Tolerance, after)
	if n := len(t.ph.phases); n > 0 && t.ph.phases[n-1].Name == "iteration" && t.ph.phases[n-1].Iteration > t.st.Iter {
		t.ph.phases = t.ph.phases[:n-1] // opened after the last iteration, never run
	}
	if err != nil && !errors.Is(err, errAllStopped) {
		return err
	}
	if t.live() == 0 {
		return nil
	}
	t.ph.start("validation", t.st.Iter)
	// The last iterate of the candidates still live has not been
	// validated: one pass over the validation rows only.
	if err := t.validate(ctx); err != nil {
		return err
	}
	stop := capStop(t.st.Iter, t.budget, t.plan.Config.Iterations)
	for _, c := range t.cands {
		if c.live {
			c.live = false
			c.Stop = stop
			c.Seconds = time.Since(t.start).Seconds()
			c.LastImprovement = lastImprovement(t.enc.task, c.Validation, c.BestIteration)
		}
	}
	return nil
}

// cgPass is the grid's pass: one PassMulti, K_σᵀ K_σ u for every live σ
// over the training rows and, after the first iteration, the held-out
// rows' scores by the current α (the previous iterate's validation) in
// the same pass.
func (t *tuner) cgPass(ctx context.Context) ([]float64, error) {
	iter := t.st.Iter
	t.gatherLive()
	t.startEval(iter)
	withVal := t.val == nil && iter > 0
	job, _ := t.passJob(pass.GroupKernelProduct, t.trainHoldout())
	job.ClassWeights = t.classWeights
	for q, g := range t.grid.LiveGroups() {
		job.Groups[q].Cols, job.Groups[q].U = len(g.Live)*t.k, g.U
		if withVal {
			job.Groups[q].Alpha = g.Alpha
		}
	}
	if withVal {
		job.ScoreRows = t.nval
	}
	rowLen, weighted := job.RowLen(), weightValues(job)
	out, err := t.passFn(ctx, job, t.passReport(StageIterate, iter+1, t.live()), func(v []float64) { t.scoreRows(v, rowLen, weighted) })
	if err != nil {
		return nil, fmt.Errorf("CG pass: %w", err)
	}
	t.passes++
	return out, nil
}

// afterPass validates on a validation source of its own, then applies
// the stopping rules to the iterate the pass scored: a candidate they
// stop is frozen before its step.
func (t *tuner) afterPass(ctx context.Context) error {
	iter := t.st.Iter
	if t.val != nil && iter > 0 {
		if err := t.validatePass(ctx, iter, false); err != nil {
			return err
		}
	}
	stopped := t.endEval(iter, false)
	for _, c := range t.cands {
		c.e.Live = c.live
	}
	if len(stopped) > 0 {
		t.progress(TuneProgress{Progress: Progress{Stage: StageValidate, Iteration: iter, Iterations: t.budget},
			Live: t.live(), Stopped: stopped})
	}
	return nil
}

// validatePass scores the live candidates by their α (packed by the
// grid's Gather) on the validation rows: the separate validation source
// (locally: the executor's passes read the training source) or, with
// final, the rows held out of the training source.
func (t *tuner) validatePass(ctx context.Context, iter int, final bool) error {
	run, holdout := t.valFn, (*pass.Holdout)(nil)
	if t.val == nil {
		run, holdout = t.passFn, t.trainHoldout()
	}
	job, _ := t.passJob(pass.GroupKernelProduct, holdout)
	if t.val != nil {
		job.Weight, job.WeightExp = stream.WeightColumn(t.val), weightExp(t.val)
	}
	for q, g := range t.grid.LiveGroups() {
		job.Groups[q].Cols, job.Groups[q].Alpha = len(g.Live)*t.k, g.Alpha
	}
	job.ScoreRows = t.nval
	rowLen, weighted := job.RowLen(), weightValues(job)
	_, err := run(ctx, job, t.passReport(StageValidate, iter, t.live()), func(v []float64) { t.scoreRows(v, rowLen, weighted) })
	if err != nil {
		return fmt.Errorf("validation after iteration %d: %w", iter, err)
	}
	return nil
}

// validate scores the final iterate of the live candidates.
func (t *tuner) validate(ctx context.Context) error {
	iter := t.st.Iter
	t.grid.Gather(true)
	t.gatherLive()
	t.startEval(iter)
	if err := t.validatePass(ctx, iter, true); err != nil {
		return err
	}
	if t.val == nil {
		t.passes++
	}
	t.endEval(iter, true)
	return nil
}

// gatherLive lists each group's live candidates, in the order of the
// grid's (Gather), which is the order of a pass's columns.
func (t *tuner) gatherLive() {
	for _, g := range t.groups {
		g.live = g.live[:0]
		for _, c := range g.cands {
			if c.live {
				g.live = append(g.live, c)
			}
		}
	}
}

// startEval resets the evaluators of the live candidates.
func (t *tuner) startEval(iter int) {
	if iter == 0 {
		return
	}
	for _, c := range t.cands {
		if c.live {
			c.ev = t.enc.evaluator(t.plan.Targets)
			c.rse = rowSE{}
		}
	}
}

// addScores adds the candidate's columns [col, col+k) of the validation
// scores (n rows of rowLen values, without the target mean) to its
// evaluator, with the rows' targets y (n × target columns) and weights w
// (nil: unweighted), and returns sc, its scratch.
func (c *tuneCand) addScores(vals []float64, n, rowLen, col, k int, ymean, y, w, sc []float64) []float64 {
	sc = slices.Grow(sc[:0], n*k)[:n*k]
	for r := range n {
		for j := range k {
			sc[r*k+j] = vals[r*rowLen+col+j] + ymean[j]
		}
	}
	// Errors (a class not in the training data) cannot occur for rows
	// already encoded in the RHS pass; a validation source may have them.
	if err := c.ev.AddWeighted(sc, y, w, n); err != nil && c.Err == "" {
		c.Err = "validation: " + err.Error()
	}
	return sc
}

// endEval records the validation point of every live candidate and
// applies the stopping rules, unless final (the last iterate, after
// which every candidate stops anyway). It returns the candidates that
// stopped.
func (t *tuner) endEval(iter int, final bool) []int {
	if iter == 0 {
		return nil
	}
	task := t.enc.task
	var stopped []int
	now := time.Since(t.start).Seconds()
	rule := stopRule(t.tc.Patience, t.tc.MinImprovement)
	for _, c := range t.cands {
		if !c.live || c.ev == nil {
			continue
		}
		met := c.ev.Metrics()
		c.Validation = append(c.Validation, ValPoint{Iteration: iter, Metrics: met.Brief()})
		best, stop := c.stop.Observe(rule, iter, stoppingMetric(task, met))
		if best {
			v := selectionMetric(task, met)
			c.BestMetric, c.BestIteration = v, iter
			c.BestSE = candidateSE(task, v, &c.rse)
			getCols(c.best, t.k, t.st.Beta, len(t.cands)*t.k, c.idx*t.k)
		}
		if stop && !final {
			c.live, c.Stop, c.Seconds = false, StopPatience, now
			stopped = append(stopped, c.idx)
		}
	}
	if h := t.tc.Halving; !final && engine.IsHalvingStep(iter, h) {
		var live []*tuneCand
		var best []float64
		for _, c := range t.cands {
			if c.live {
				live, best = append(live, c), append(best, c.BestMetric)
			}
		}
		for _, i := range engine.WorseHalf(best) {
			c := live[i]
			c.live, c.Stop, c.Seconds = false, StopHalving, now
			stopped = append(stopped, c.idx)
		}
	}
	if !final {
		stopped = append(stopped, t.sigmaHalving(iter, now)...)
	}
	return stopped
}

// result builds the models and picks the best candidate.
func (t *tuner) result() *TuneResult {
	res := &TuneResult{Metric: metricName(t.enc.task), N: t.plan.N, ValRows: t.nval, M: t.cs.m, Passes: t.passes,
		Seconds: time.Since(t.start).Seconds(), Memory: t.mem, ARD: t.ard}
	// The models are immutable: they share one copy of the centres and,
	// per σ, the kernel's prepared centres.
	centres := slices.Clone(t.cs.centres)
	for _, c := range t.cands {
		if c.Stop != StopFailed && c.BestIteration > 0 {
			c.model = t.model(c, centres)
		}
		res.Candidates = append(res.Candidates, c.TuneCandidate)
	}
	applyPick(res, t.tc.Pick, t.tc.Base.MinImprovement)
	return res
}

// model builds candidate c's model at its best iteration.
func (t *tuner) model(c *tuneCand, centres []float64) *Model {
	cfg := t.plan.Config
	cfg.Lambda, cfg.Kernel, cfg.Iterations = c.Lambda, c.Kernel, c.BestIteration
	tr := Training{
		Iterations: c.BestIteration, Status: StatusIterationLimit,
		Residuals:  slices.Clone(c.Residuals[:min(c.BestIteration, len(c.Residuals))]),
		Validation: slices.Clone(c.Validation[:c.bestPoint()+1]),
		Seconds:    c.Seconds,
	}
	tr.setUp(t.plan, t.cs, c.pre, t.n, t.classWeights)
	if c.Iterations > 0 {
		tr.SecondsPerIteration = c.Seconds / float64(c.Iterations)
	}
	meta := newModelMeta(t.plan, t.cs, t.enc, cfg, t.ymean, tr)
	meta.Kernel = c.Kernel
	alpha := make([]float64, len(c.best))
	c.pre.ApplyBTo(alpha, c.best[:c.pre.Rank()*t.k], t.k)
	mdl, err := newModel(meta, centres, alpha, nil, c.g.craw)
	if err != nil {
		panic(err) // the search's own parts are consistent
	}
	return mdl
}

// bestPoint is the index in Validation of the best iteration (the last
// point when none matches).
func (c *TuneCandidate) bestPoint() int {
	for i, p := range c.Validation {
		if p.Iteration == c.BestIteration {
			return i
		}
	}
	return len(c.Validation) - 1
}

// HoldoutProblem says what is wrong with holding out a fraction frac of
// n rows that left nt training and nv validation rows, and what to do;
// "" when both have rows.
func HoldoutProblem(frac float64, n, nt, nv int64) string {
	if nt > 0 && nv > 0 {
		return ""
	}
	what := "a larger fraction"
	if nt == 0 {
		what = "a smaller fraction"
	}
	return fmt.Sprintf("holding out %g of %d rows leaves %d training and %d validation rows, and both need some: "+
		"give %s, the validation rows apart (RunOptions.Validation), or more rows", frac, n, nt, nv, what)
}
