package ooc

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TaskAuto picks the task from the distinct values of the target
// (AutoTask): TaskBinary for a single target with exactly two distinct
// values (0/1, ±1, bool, 1/2, two labels…), TaskMulticlass for a single
// integer or string-label target with 3 to MaxAutoClasses distinct
// values, TaskRegression otherwise.

// MaxAutoClasses is the most distinct values of a target that TaskAuto
// takes for classes.
const MaxAutoClasses = 100

// AutoTask returns the task that TaskAuto picks for data with
// targetColumns target columns, the first of which has the sorted
// distinct values distinct (nil: more than stream.MaxDistinct of them):
//
//   - TaskBinary for one target column with exactly two values;
//   - TaskMulticlass for one target column with 3 to MaxAutoClasses
//     values that are all integers (string labels are stored as the
//     integer codes 0 … k−1, so they count as integers);
//   - TaskRegression otherwise: several target columns, more than
//     MaxAutoClasses values, or a value with a fractional part.
func AutoTask(targetColumns int, distinct []float64) Task {
	if targetColumns != 1 || distinct == nil {
		return TaskRegression
	}
	switch n := len(distinct); {
	case n == 2:
		return TaskBinary
	case n >= 3 && n <= MaxAutoClasses:
		for _, v := range distinct {
			if v != math.Trunc(v) || math.IsInf(v, 0) {
				return TaskRegression
			}
		}
		return TaskMulticlass
	}
	return TaskRegression
}

// Defaults, documented in the fields of Config.
const (
	DefaultLambda     = 1e-6
	DefaultIterations = 20
	// DefaultLogisticIterations is Config.Iterations' default with
	// LossLogistic: the CG iterations of each Newton step. On the susy
	// shape (9·10⁵ rows, M = 1000) and on a 5 %-positive table, 8 steps × 10
	// gave the test log-loss and AUC of 8 × 20 in about half the passes
	// (bench/ACCURACY.md, "The logistic loss's defaults").
	DefaultLogisticIterations = 10
	// DefaultMinImprovement is Config.MinImprovement's default.
	DefaultMinImprovement = 1e-3
	MinDefaultCenters     = 1000
	MaxDefaultCenters     = 10000
)

// DefaultCenters is the number of centres used when Config.Centers is 0:
// 10√n clamped to [1000, 10000], and at most n. FALKON's theory asks for
// M of order √n (times a log factor) for the optimal statistical rate.
func DefaultCenters(n int64) int {
	m := int(math.Ceil(10 * math.Sqrt(float64(n))))
	m = min(max(m, MinDefaultCenters), MaxDefaultCenters)
	return int(min(int64(m), n))
}

// DefaultSigma is the Gaussian length scale used when the kernel's Sigma
// is 0: √d. On standardised data the mean squared distance between two
// rows is 2d, so σ = √d puts typical kernel values near e⁻¹.
func DefaultSigma(d int) float64 { return math.Sqrt(float64(d)) }

// Config is what determines the estimator: with the same data, two fits
// with equal Configs give the same model, bit for bit, whatever their
// RunOptions. In every field the zero value means the default stated in
// its comment. The model persists its resolved Config (Model.Config), and
// it appears in --json output.
type Config struct {
	// Centers is M, the number of Nyström centres. 0 means
	// DefaultCenters(n).
	Centers int `json:"centers"`
	// Kernel is the kernel. A zero Kind means Gaussian; a zero Sigma for a
	// distance kernel (and no Sigmas) means DefaultSigma(d).
	Kernel kernel.Kernel `json:"kernel"`
	// Lambda is λ > 0, the ridge regularisation. 0 means DefaultLambda.
	Lambda float64 `json:"lambda"`
	// Iterations is t, the number of conjugate-gradient iterations, each
	// one pass over the data (with Patience, the most). 0 means
	// DefaultIterations (DefaultLogisticIterations per Newton step with
	// LossLogistic), or DefaultNystromIterations for a fit whose
	// memory plan chose the Nyström preconditioner (it stops by Patience).
	Iterations int `json:"iterations"`
	// Tolerance stops CG early once every output's residual ‖r‖/‖b‖ is
	// below it. 0 means run all Iterations.
	Tolerance float64 `json:"tolerance,omitempty"`
	// Patience stops CG once this many validations in a row bring no
	// relative improvement of MinImprovement in the validation metric
	// (RMSE, or 1 − AUC for classification) over the last validation
	// that made one; the model is then the one at the best validated
	// iteration (the lowest metric), and
	// Iterations is the cap. It needs validation rows: RunOptions.Validation,
	// or the rows a fit whose memory plan chose the Nyström
	// preconditioner (Preconditioner "") holds out of the data
	// (DefaultValFraction) when it has none. 0 means DefaultPatience
	// wherever there are validation rows, as in TuneConfig and FitTuned
	// (without them there is nothing to stop by: all Iterations, the last
	// iterate); a negative value never stops on patience. The logistic
	// loss validates after each Newton step: Patience counts Newton steps,
	// and the model is the best step's α.
	Patience int `json:"patience,omitempty"`
	// MinImprovement is the relative improvement of the validation metric
	// that Patience counts as one (it does not decide the iterate kept:
	// that is the lowest metric). 0 means DefaultMinImprovement (0.1 %:
	// each iteration of a large fit is a pass over all the data, and
	// gains below that are not worth one).
	MinImprovement float64 `json:"min_improvement,omitempty"`
	// Precision of the kernel blocks: kernel.Float64 (the zero value),
	// kernel.Float32, or kernel.BF16 (float32 with the cross term on the
	// AMX unit where the CPU has it). The preconditioner and the M-vectors
	// are float64 either way. A saved Config carries it ("precision", left
	// out for float64), so that the Config alone defines the model.
	Precision kernel.Precision `json:"precision,omitempty"`
	// Jitter is ε in T = chol(K_MM + εMI). 0 means precond.DefaultJitter.
	Jitter float64 `json:"jitter,omitempty"`
	// Preconditioner is precond.MethodCholesky, precond.MethodPivoted
	// (pivoted Cholesky) or precond.MethodEigen, for rank-deficient K_MM
	// (duplicate or nearly duplicate centres, low-rank kernels such as
	// linear), or precond.MethodNystrom, whose memory grows as M·r instead
	// of M² (for M beyond RAM; each iteration then also computes K_MM·u,
	// M² kernel entries). "" means the memory plan chooses (FitPlan's
	// MemoryPlan): MethodCholesky when it fits RunOptions.MaxMemory, in
	// memory or with its factors on disk (MemoryPlan.OutOfCore), else
	// MethodNystrom at the largest rank that fits. The resolved Config
	// (FitPlan.Config, Model.Config) records the choice. Tune's candidates
	// use MethodCholesky for "".
	Preconditioner precond.Method `json:"preconditioner,omitempty"`
	// PrecondRank is MethodNystrom's rank r. 0 means
	// precond.DefaultNystromRank(M) for an explicit MethodNystrom, and the
	// largest rank that fits RunOptions.MaxMemory when the memory plan
	// chooses MethodNystrom (Preconditioner "").
	PrecondRank int `json:"precond_rank,omitempty"`
	// PrecondPrecision stores the preconditioner's M × M buffer in
	// precond.Float64 (8M² bytes) or precond.Float32 (4M², with a default
	// jitter of precond.DefaultJitter32). CG's vectors stay float64 either
	// way. "" means the memory plan chooses: float64 unless only float32
	// fits RunOptions.MaxMemory (Cholesky only; the other preconditioners
	// are float64). The resolved Config records the choice.
	PrecondPrecision precond.Precision `json:"precond_precision,omitempty"`
	// Seed makes centre sampling reproducible.
	Seed uint64 `json:"seed"`
	// Sampling is how centres are drawn: SamplingUniform (the zero value
	// "" means uniform) or SamplingLeverage.
	Sampling Sampling `json:"sampling,omitempty"`
	// Candidates is, for leverage sampling, how many uniformly drawn rows
	// get a leverage score before the centres are drawn among them.
	// 0 means 10 M (at most n).
	Candidates int `json:"candidates,omitempty"`
	// Task says what the targets mean. TaskAuto (the zero value) infers it.
	Task Task `json:"task,omitempty"`
	// ClassWeight weighs the rows of each class for classification:
	// ClassWeightNone ("" or "none") leaves them, ClassWeightBalanced
	// gives the rows of class c the weight n/(C·n_c) — C classes, n_c
	// rows in class c, n rows — so that every class weighs the same in
	// the loss (scikit-learn's class_weight="balanced"). With row weights
	// (stream.Weighter) n and n_c are sums of weights and the two
	// multiply. The counts come from the right-hand side's pass: no pass
	// of their own. Validation metrics stay weighted by the row weights
	// only.
	ClassWeight ClassWeight `json:"class_weight,omitempty"`
	// Threshold is a binary classifier's decision threshold
	// (model.Decision): "" for model.DefaultThreshold (½ on the
	// calibrated probabilities), a number in (0, 1), or a rule that
	// chooses it on the validation rows after calibration: "f1",
	// "balanced" (equal recall of both classes) or "cost:FP:FN"
	// (model.ParseThreshold). A rule needs RunOptions.Validation.
	Threshold string `json:"threshold,omitempty"`
	// Loss is the loss the fit minimises: LossSquared ("" or "squared",
	// FALKON's) or LossLogistic, for classification: (1/n) Σᵢ wᵢ log(1 + e^(−yᵢ f(xᵢ)))
	// + (λ/2)‖f‖² with yᵢ = ±1, n the sum of the weights, per output (one
	// against the rest for multiclass, whose probabilities are the outputs'
	// σ(f_c) normalised) (LogisticFalkon: Meanti, Carratino, Rosasco,
	// Rudi 2020). It takes NewtonSteps Newton steps along a decreasing λ
	// path, each a weighted FALKON solve of Iterations CG iterations whose
	// passes compute the Newton weights themselves; the model's scores are
	// f and its probabilities σ(f). A checkpoint is written after each
	// Newton step (RunOptions.Checkpoint: its Iteration counts the steps
	// done), and Resume continues from it, also to more NewtonSteps.
	// Tune and FitTuned search it with the candidates sharing every pass
	// (one gradient pass per Newton step and one per CG iteration for the
	// whole grid; each candidate as its own Fit would be). Balanced class
	// weights take the first Newton step's pass as the right-hand side's
	// (at α = 0 the gradient is the class-weighted right-hand side). The
	// Cholesky or Nyström preconditioner; Patience counts Newton steps.
	Loss Loss `json:"loss,omitempty"`
	// NewtonSteps is the number of Newton steps of the logistic loss: the
	// first use λ·10³, λ·10², λ·10, then λ for the rest. 0 means
	// DefaultNewtonSteps.
	NewtonSteps int `json:"newton_steps,omitempty"`
	// NoStandardize turns off the z-scoring of features.
	NoStandardize bool `json:"no_standardize,omitempty"`
	// Uncertainty, when not "", keeps in the model what predictive
	// standard deviations need (Model.PredictStdTo, PredictOptions.Std),
	// fitted on the validation rows, which it requires
	// (RunOptions.Validation): UncertaintyPrecond from FALKON's
	// preconditioner (no extra pass) or UncertaintyExact (one more pass,
	// n·M² flops, (3 + workers)·8M² bytes). Regression with a distance
	// kernel only. It does not change α.
	Uncertainty UncertaintyMethod `json:"uncertainty,omitempty"`
	// UncertaintyRank is the rank r of the variance's factor: M·r more
	// flops per predicted row, 8·M·r more bytes in the model. 0 means
	// DefaultUncertaintyRank(d) (at most M).
	UncertaintyRank int `json:"uncertainty_rank,omitempty"`
}

// DefaultNewtonSteps is Config.NewtonSteps when 0: three on the λ path
// down to λ, then five at λ.
const DefaultNewtonSteps = 8

// MaxNewtonSteps bounds Config.NewtonSteps: a fit records each step (and
// its λ path is made up front), and each step is 1 + Iterations passes.
const MaxNewtonSteps = 1000

// MaxPasses is the most passes over the training rows that a fit of c
// makes after the pass that samples the centres (defaults resolved: 0
// means the default): 1 + Iterations for the squared loss (the
// right-hand side, then one per CG iteration), and for the logistic loss
// NewtonSteps·(2 + Iterations): each Newton step's gradient pass and its
// CG passes, then the pass of its line search, which is the next step's
// gradient pass when the step is taken whole and one more pass when the
// search shortens it or the step is the last: 96 against 21 at the
// defaults, NewtonSteps·(1 + Iterations) + 1 (88 + 1) when no step is
// shortened. CG stopping at Config.Tolerance or patience makes fewer;
// UncertaintyExact adds one.
func (c Config) MaxPasses() int {
	if c.Loss != LossLogistic {
		return 1 + cmp.Or(c.Iterations, DefaultIterations)
	}
	iters := cmp.Or(c.Iterations, DefaultLogisticIterations)
	return cmp.Or(c.NewtonSteps, DefaultNewtonSteps) * (2 + iters)
}

// ClassWeight is Config.ClassWeight.
type ClassWeight string

// Class weightings.
const (
	ClassWeightNone     ClassWeight = "none"
	ClassWeightBalanced ClassWeight = "balanced"
)

// RunOptions is how one fit executes: none of it changes the model, and
// none of it is persisted. The zero value runs locally on GOMAXPROCS
// goroutines, silently, without checkpoints or validation.
type RunOptions struct {
	// Workers is the number of goroutines of the local passes, K_MM and
	// the preconditioner. 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, receives a fit's progress reports (Fit, and
	// FitTuned's final fit) on the goroutine that called it. It must
	// return quickly.
	Progress func(Progress)
	// SearchProgress, when set, receives a search's progress reports
	// (Tune, and FitTuned's search with its subsampling pass) on the
	// goroutine that called it. It must return quickly.
	SearchProgress func(TuneProgress)
	// Checkpoint, when set, is called after every CG iteration with the
	// solver state, for Resume. An error stops the fit.
	Checkpoint func(*Checkpoint) error
	// Resume, when set, continues from this checkpoint instead of
	// starting CG afresh. It must come from the same source and a Config
	// that differs at most in Iterations (which may be larger than the
	// checkpoint's iteration, to extend a finished fit) and Tolerance.
	// nil starts from the beginning.
	Resume *Checkpoint
	// Validation, when set, is a source with the same columns whose
	// metric is computed every ValEvery iterations. When it and the
	// training source are the two sides of one stream.Holdout (the rows
	// held out and the rest), the CG passes score its rows as they
	// compute the product (iteration i's pass scores iterate i − 1, and
	// one pass of its own the last iterate), so that a CG iteration is
	// one pass over the data; any other source is scored by a local pass
	// of its own over it.
	Validation stream.Source
	// ValEvery is how often to evaluate Validation. 0 means every
	// iteration.
	ValEvery int
	// PrecondCache, when set, is the path of the Nyström preconditioner's
	// basis (Config.Preconditioner nystrom): Fit reads it from there when
	// the file holds the basis of the same centres, weights, kernel, rank,
	// seed and jitter and its checksum holds, and otherwise builds it and
	// writes it there (temporary name, fsync, rename), so that a resumed
	// fit does not redo the set-up. Training.PrecondCache says which.
	PrecondCache string
	// TempDir is the directory of the preconditioner's factors when the
	// memory plan keeps them on disk (MemoryPlan.OutOfCore); "" means
	// os.TempDir() ($TMPDIR). The files are unlinked as soon as they are
	// open, so nothing is left there after the fit, a crash or a kill.
	TempDir string
	// MaxMemory bounds, in bytes, the estimated peak memory of the run
	// (FitPlan.Memory, TuneResult.Memory), checked before any pass. Where
	// the Config leaves the preconditioner or its precision to choose
	// (Config.Preconditioner or Config.PrecondPrecision ""), Plan chooses
	// what fits (FitPlan.MemoryPlan); otherwise a run that does not fit
	// fails with ErrMemory. 0 means DefaultMaxMemory(); a negative value
	// means no bound.
	MaxMemory int64
	// Executor runs the right-hand-side pass and the CG passes (of Fit,
	// and of Tune, whose passes over the training source also score its
	// held-out rows). nil means the local pipeline (stream.Run on Workers
	// goroutines). The sampling pass and a validation source's passes
	// always run locally.
	Executor pass.Executor
}

// Stage names a phase of Fit in progress reports.
type Stage string

// Stages of a fit, in order.
const (
	StageSample   Stage = "sample"   // drawing centres (and statistics)
	StageLeverage Stage = "leverage" // leverage scores of the candidates
	StageKernel   Stage = "kernel"   // K_MM
	StagePrecond  Stage = "precond"  // Cholesky factorisations
	StageRHS      Stage = "rhs"      // the pass for the right-hand side
	StageIterate  Stage = "iterate"  // CG iterations, one pass each
	// StageKMM: after an iteration's pass, the λ·K_MM·u term of the
	// Nyström preconditioner (computed by the kernel: M² entries);
	// Fraction is the share of K_MM's rows done.
	StageKMM      Stage = "kmm"
	StageValidate Stage = "validate" // a validation pass
	// StageUncertainty: the variance's factor (Config.Uncertainty); with
	// UncertaintyExact first a pass (Chunk, Chunks), then Fraction 0 and 1.
	StageUncertainty Stage = "uncertainty"
	StageDone        Stage = "done"
)

// Progress is one progress report.
type Progress struct {
	Stage      Stage
	Iteration  int // current CG iteration (1-based) in StageIterate
	Iterations int // total planned
	Chunk      int // chunks done in the current pass
	Chunks     int // chunks in the current pass
	Rows       int64
	Residual   float64 // worst relative residual after the last iteration
	// Fraction is, in StagePrecond, the fraction of the factorisations'
	// work done (0 to 1; they take minutes at M = 5·10⁴).
	Fraction float64
	Val      *ValPoint
	// Centers and Duplicates are set in the last StageSample report of
	// uniform sampling: the number of distinct centres drawn (M, or
	// fewer when the data holds fewer distinct rows) and how many rows
	// drawn repeated another (each replaced by another row while the
	// data had one to give).
	Centers, Duplicates int
	Elapsed             time.Duration
	// Note, when set, is a message for the user about the fit (the
	// logistic loss's Newton steps stopped because the objective could
	// not fall, and what to do); the other fields say where it was.
	Note string
}

// Errors returned for invalid configurations. Each error's message says
// which value was wrong; match with errors.Is, and with errors.As for a
// *ConfigError to learn which field.
var (
	ErrConfig    = errors.New("invalid configuration")
	ErrNoTargets = errors.New("the data has no target column")
)

// ConfigError is every error of this package that matches ErrConfig: a
// value of Config, RunOptions or TuneConfig that is invalid, or data that
// does not fit them. Field names the value by its Go path,
// "Config.Lambda", "RunOptions.Workers", "TuneConfig.Halving"; it is ""
// when no one field is at fault (the data has no rows, say). Msg says
// what is wrong, starting with the value's name: "lambda must be > 0,
// got -1". A program maps Field to its own name for the value (a
// command-line flag) and shows Msg.
type ConfigError struct {
	Field string
	Msg   string
}

// Error returns "invalid configuration: " followed by Msg.
func (e *ConfigError) Error() string { return ErrConfig.Error() + ": " + e.Msg }

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func configErr(field, format string, a ...any) error {
	return &ConfigError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// Validate checks cfg and opts as far as they can be checked without the
// data: everything Plan checks except Centers against the number of rows,
// the kernel against the number of features, Resume and Validation. A
// program calls it to reject bad settings before any expensive work such
// as converting its input; Plan (and so Fit) checks again. The error is a
// *ConfigError.
func Validate(cfg Config, opts RunOptions) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	switch {
	case opts.Workers < 0:
		return configErr("RunOptions.Workers", "workers must be ≥ 0, got %d", opts.Workers)
	case opts.ValEvery < 0:
		return configErr("RunOptions.ValEvery", "validation interval must be ≥ 1, got %d", opts.ValEvery)
	}
	return nil
}

// validate checks the fields of c that need no data.
func (c Config) validate() error {
	switch c.ClassWeight {
	case "", ClassWeightNone, ClassWeightBalanced:
	default:
		return configErr("Config.ClassWeight", "unknown class weighting %q (want none or balanced)", c.ClassWeight)
	}
	switch c.Loss {
	case "", LossSquared:
		if c.NewtonSteps != 0 {
			return configErr("Config.NewtonSteps", "Newton steps are for the logistic loss")
		}
	case LossLogistic:
		switch {
		case c.Task == TaskRegression:
			return configErr("Config.Loss", "the logistic loss is for classification, not regression")
		case c.NewtonSteps < 0 || c.NewtonSteps > MaxNewtonSteps:
			return configErr("Config.NewtonSteps", "Newton steps must be in [1, %d] (0: %d; each step is 1 + Iterations passes over the data), got %d",
				MaxNewtonSteps, DefaultNewtonSteps, c.NewtonSteps)
		case c.Preconditioner != "" && c.Preconditioner != precond.MethodCholesky && c.Preconditioner != precond.MethodNystrom:
			return configErr("Config.Preconditioner", "the logistic loss uses the Cholesky or the Nyström preconditioner")
		case c.Uncertainty != "":
			return configErr("Config.Uncertainty", "predictive standard deviations are for regression")
		}
	default:
		return configErr("Config.Loss", "unknown loss %q (want squared or logistic)", c.Loss)
	}
	if c.Threshold != "" {
		if _, _, err := model.ParseThreshold(c.Threshold); err != nil {
			return configErr("Config.Threshold", "%v", err)
		}
		if c.Task == TaskRegression || c.Task == TaskMulticlass {
			return configErr("Config.Threshold", "a decision threshold is for binary classification, not %s", c.Task)
		}
	}
	if c.ClassWeight == ClassWeightBalanced && c.Task == TaskRegression {
		return configErr("Config.ClassWeight", "class weights need a classification task, not regression")
	}
	if c.Lambda < 0 || math.IsNaN(c.Lambda) || math.IsInf(c.Lambda, 0) {
		return configErr("Config.Lambda", "lambda must be > 0, got %g", c.Lambda)
	}
	if c.Centers < 0 {
		return configErr("Config.Centers", "centers must be ≥ 0 (0: the default), got %d", c.Centers)
	}
	if c.Iterations < 0 {
		return configErr("Config.Iterations", "iterations must be ≥ 1, got %d", c.Iterations)
	}
	if c.MinImprovement < 0 || c.MinImprovement >= 1 || math.IsNaN(c.MinImprovement) {
		return configErr("Config.MinImprovement", "minimum improvement must be in [0, 1), got %g", c.MinImprovement)
	}
	if c.Tolerance < 0 || math.IsNaN(c.Tolerance) {
		return configErr("Config.Tolerance", "tolerance must be ≥ 0, got %g", c.Tolerance)
	}
	if c.Jitter < 0 || math.IsNaN(c.Jitter) {
		return configErr("Config.Jitter", "jitter must be ≥ 0, got %g", c.Jitter)
	}
	switch c.Preconditioner {
	case "", precond.MethodCholesky, precond.MethodEigen, precond.MethodPivoted, precond.MethodNystrom:
	default:
		return configErr("Config.Preconditioner", "unknown preconditioner %q (want cholesky, eigen, pivoted or nystrom)", c.Preconditioner)
	}
	if c.PrecondRank < 0 {
		return configErr("Config.PrecondRank", "the preconditioner's rank must be ≥ 0 (0: the default), got %d", c.PrecondRank)
	}
	if c.PrecondRank > 0 && c.Preconditioner != "" && c.Preconditioner != precond.MethodNystrom {
		return configErr("Config.PrecondRank", "a rank is for the nystrom preconditioner, not %s", cmp.Or(c.Preconditioner, precond.MethodCholesky))
	}
	if !c.PrecondPrecision.Valid() {
		return configErr("Config.PrecondPrecision", "unknown preconditioner precision %q (want float64 or float32)", c.PrecondPrecision)
	}
	switch c.Sampling {
	case "", SamplingUniform, SamplingLeverage:
	default:
		return configErr("Config.Sampling", "unknown centre sampling %q (want uniform or leverage)", c.Sampling)
	}
	if c.Candidates < 0 {
		return configErr("Config.Candidates", "candidates must be ≥ 0, got %d", c.Candidates)
	}
	switch c.Task {
	case TaskAuto, TaskRegression, TaskBinary, TaskMulticlass:
	default:
		return configErr("Config.Task", "unknown task %q (want auto, regression, binary or multiclass)", c.Task)
	}
	if !c.Precision.Valid() {
		return configErr("Config.Precision", "unknown precision %v (want float64, float32 or bf16)", c.Precision)
	}
	switch c.Uncertainty {
	case "", UncertaintyPrecond, UncertaintyExact:
	default:
		return configErr("Config.Uncertainty", "unknown uncertainty method %q (want precond or exact)", c.Uncertainty)
	}
	if c.UncertaintyRank < 0 {
		return configErr("Config.UncertaintyRank", "uncertainty rank must be ≥ 0 (0: the default), got %d", c.UncertaintyRank)
	}
	return nil
}

// resolved returns the config with defaults filled in for a source of n
// rows and d features, or an error naming the offending value.
func (c Config) resolved(n int64, d int) (Config, error) {
	if err := c.validate(); err != nil {
		return c, err
	}
	if c.Lambda == 0 {
		c.Lambda = DefaultLambda
	}
	if c.Centers == 0 {
		c.Centers = DefaultCenters(n)
	}
	if int64(c.Centers) > n {
		return c, configErr("Config.Centers", "centers (M = %d) must not exceed the number of training rows (n = %d)", c.Centers, n)
	}
	if c.Iterations == 0 {
		c.Iterations = DefaultIterations
		if c.Loss == LossLogistic {
			c.Iterations = DefaultLogisticIterations
		}
	}
	if c.Kernel.Kind == "" {
		c.Kernel.Kind = kernel.Gaussian
	}
	if c.Kernel.Kind.IsDistance() && c.Kernel.Sigma == 0 && c.Kernel.Sigmas == nil {
		c.Kernel.Sigma = DefaultSigma(d)
	}
	if err := c.Kernel.Validate(d); err != nil {
		return c, configErr("Config.Kernel", "%v", err)
	}
	return c, nil
}
