package ooc

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// FitPlan is what a fit of a source will do, resolved before any pass
// over the data: the Config with its defaults filled in, the shape of the
// problem and the predicted peak memory. Fit starts by calling Plan.
type FitPlan struct {
	// Config is the resolved configuration (defaults filled in).
	Config Config `json:"config"`
	// Precision is Config.Precision, by name.
	Precision kernel.Precision `json:"precision"`
	N         int64            `json:"n"` // training rows
	D         int              `json:"d"` // features
	// TargetColumns is the number of target columns of the source.
	TargetColumns int `json:"target_columns"`
	// Task is the resolved task, or TaskAuto when it is decided in the
	// sampling pass (the source does not report its target values).
	Task Task `json:"task"`
	// K is the number of outputs after encoding the targets; 0 for a
	// multiclass task whose classes are known only after the sampling
	// pass.
	K int `json:"k"`
	// Classes holds the class values of a classification task when known.
	Classes []float64 `json:"classes,omitempty"`
	// ClassNames holds the label names of the classes (in the order of
	// Classes) when the target holds codes of string labels
	// (stream.Labeler).
	ClassNames []string `json:"class_names,omitempty"`
	// Features and Targets are the column names (stream.ColumnsOf).
	Features []string `json:"features"`
	Targets  []string `json:"targets"`
	// Encoding is how some features were made from categorical and time
	// input columns (stream.Encoded), kept in the model; nil: none.
	Encoding *featenc.Spec `json:"encoding,omitempty"`
	// Nulls is the source's NULL policy (stream.NullPolicer), "mean" or
	// "", kept in the model for predict.
	Nulls string `json:"nulls,omitempty"`
	// Weight names the source's column of row weights
	// (stream.Weighter), or "" when every row weighs 1. With weights the
	// fit minimises Σᵢ wᵢ (f(xᵢ) − yᵢ)² / Σᵢ wᵢ + λ‖f‖²: n in
	// λ·n is the sum of the weights. The Cholesky preconditioner then sees
	// the weights (as it does balanced class weights): its A is
	// chol(T H Tᵀ/M + λI) with H the weights smoothed by the kernel around
	// each centre, from the right-hand side's own sums (no pass of its
	// own; bench/PASSES.md).
	Weight string `json:"weight,omitempty"`
	// WeightExp is the power of two every pass multiplies the weights by
	// as it reads them (PassJob.WeightExp): the one that brings their mean
	// (stream.WeightMean) into [½, 1), so that any positive scale of the
	// weights gives the same model; 0 when the source does not know the
	// mean. Sums of weights (the n of λ·n) are reported in the weights'
	// own scale.
	WeightExp int `json:"weight_exp,omitempty"`
	// Stats says whether the source supplied its feature statistics; if
	// not (and standardisation is on), or if classes must be found, the
	// sampling pass reads every chunk.
	Stats bool `json:"source_stats"`
	// Workers is the resolved worker count.
	Workers int `json:"workers"`
	// Memory is the predicted peak memory of the fit.
	Memory Memory `json:"memory"`

	src       stream.Source // the source as Fit reads it (spread)
	mean, std []float64     // from the source, or nil
	distinct  [][]float64   // from the source, or nil
	labels    []string      // label names of the first target, or nil
	chunkRows int           // largest chunk of src
	scratch   int64         // src's read scratch per reader
}

// MemoryWith returns the memory estimate of the plan with the
// preconditioner stored in precision prec.
func (p *FitPlan) MemoryWith(prec precond.Precision) Memory {
	cfg := p.Config
	cfg.PrecondPrecision = prec
	return estimateMemory(cfg, p.D, p.TargetColumns, max(p.K, 1), p.Workers, p.chunkRows, p.scratch, p.Weight != "")
}

// MaxCenters returns the largest M whose estimate (MemoryWith(prec), with
// Centers = M) is at most limit bytes, and at most N; 0 when not even one
// centre fits.
func (p *FitPlan) MaxCenters(limit int64, prec precond.Precision) int {
	fits := func(m int) bool {
		cfg := p.Config
		cfg.Centers, cfg.PrecondPrecision = m, prec
		return estimateMemory(cfg, p.D, p.TargetColumns, max(p.K, 1), p.Workers, p.chunkRows, p.scratch, p.Weight != "").Total <= limit
	}
	if !fits(1) {
		return 0
	}
	lo, hi := 1, 2
	for fits(hi) && int64(hi) < p.N {
		lo, hi = hi, hi*2
	}
	if fits(hi) {
		return int(min(int64(hi), p.N))
	}
	for hi-lo > 1 { // fits(lo), !fits(hi)
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int(min(int64(lo), p.N))
}

// Plan validates cfg and opts against src and resolves the fit: n, d,
// the outputs, the task, the column names and the memory estimate. It
// reads no data (only what the source reports through its optional
// interfaces: stream.Columner, stream.Statser, stream.TargetValuer,
// stream.ScratchSizer). Errors match ErrConfig (a *ConfigError naming the
// field) or ErrNoTargets.
func Plan(src stream.Source, cfg Config, opts RunOptions) (*FitPlan, error) {
	p := &FitPlan{src: spread(src), D: src.Dim(), TargetColumns: src.NumTargets()}
	p.N = stream.Rows(src)
	if p.D < 1 {
		return nil, configErr("", "the training data has no feature columns")
	}
	if p.N == 0 {
		return nil, configErr("", "the training data has no rows")
	}
	if p.TargetColumns == 0 {
		return nil, fmt.Errorf("%w: fit needs targets (ingest with --target COLUMN)", ErrNoTargets)
	}
	var err error
	if p.Config, err = cfg.resolved(p.N, p.D); err != nil {
		return nil, err
	}
	p.Precision = p.Config.Precision
	if err := Validate(p.Config, opts); err != nil {
		return nil, err
	}
	if p.Config.Uncertainty != "" && opts.Validation == nil {
		return nil, configErr("Config.Uncertainty", "predictive standard deviations are fitted on validation rows: set RunOptions.Validation (fit --val-fraction or --val)")
	}
	if opts.Resume != nil && p.Config.Loss == LossLogistic {
		if steps := cmp.Or(p.Config.NewtonSteps, DefaultNewtonSteps); opts.Resume.Iteration > steps {
			return nil, configErr("RunOptions.Resume", "the checkpoint is after Newton step %d, beyond the %d steps asked for",
				opts.Resume.Iteration, steps)
		}
	} else if opts.Resume != nil && opts.Resume.Iteration > p.Config.Iterations {
		return nil, configErr("RunOptions.Resume", "the checkpoint is after iteration %d, beyond the %d iterations asked for",
			opts.Resume.Iteration, p.Config.Iterations)
	}
	if v := opts.Validation; v != nil && (v.Dim() != p.D || v.NumTargets() != p.TargetColumns) {
		return nil, configErr("RunOptions.Validation", "the validation data has %d features and %d targets, the training data %d and %d",
			v.Dim(), v.NumTargets(), p.D, p.TargetColumns)
	}
	p.Workers = opts.Workers
	if p.Workers == 0 {
		p.Workers = runtime.GOMAXPROCS(0)
	}
	p.Features, p.Targets = stream.ColumnsOf(src)
	p.Encoding = stream.EncodingOf(src)
	if stream.NullPolicyOf(src) == "mean" {
		p.Nulls = "mean"
	}
	p.Weight = stream.WeightColumn(src)
	if p.Weight != "" {
		if mean := stream.WeightMean(src); mean > 0 {
			if !math.IsInf(mean, 0) && math.IsInf(mean*float64(p.N), 0) { // an infinite weight is the passes' to name
				return nil, fmt.Errorf("the weights of column %q sum beyond the float64 range (%d rows of mean %.3g): "+
					"divide the column by a constant (any positive scale gives the same model)", p.Weight, p.N, mean)
			}
			p.WeightExp = weightExp(src)
		}
	}
	if s, ok := src.(stream.Statser); ok {
		if mean, std := s.FeatureStats(); len(mean) == p.D && len(std) == p.D {
			p.mean, p.std = mean, std
		}
	}
	if t, ok := src.(stream.TargetValuer); ok {
		if dv := t.TargetDistinct(); len(dv) == p.TargetColumns {
			p.distinct = dv
		}
	}
	p.labels = targetLabels(src)
	p.Stats = p.mean != nil
	if err := p.resolveTask(p.distinct); err != nil {
		return nil, err
	}
	for i := range p.src.NumChunks() {
		p.chunkRows = max(p.chunkRows, p.src.ChunkRows(i))
	}
	p.scratch = stream.ScratchOf(p.src)
	p.Memory = p.MemoryWith(p.Config.PrecondPrecision)
	return p, nil
}

// needFullSample reports whether the sampling pass must read every chunk
// (for statistics or class values the source did not give).
func (p *FitPlan) needFullSample() bool {
	needClasses := p.Config.Task != TaskRegression && p.distinct == nil
	return (!p.Config.NoStandardize && p.mean == nil) || needClasses
}

// resolveTask decides the task and the outputs from the distinct target
// values (nil: unknown yet).
func (p *FitPlan) resolveTask(distinct [][]float64) (err error) {
	task := p.Config.Task
	var cls []float64
	known := distinct != nil
	if known {
		cls = distinct[0]
	}
	if task == TaskAuto {
		if !known {
			p.Task, p.K = TaskAuto, p.TargetColumns
			return nil
		}
		task = AutoTask(p.TargetColumns, cls)
	}
	p.Task = task
	switch task {
	case TaskRegression:
		if p.Config.Loss == LossLogistic {
			return configErr("Config.Loss", "the logistic loss is for classification; target %q is regression (set --task binary or multiclass)", p.Targets[0])
		}
		if p.Config.ClassWeight == ClassWeightBalanced {
			return configErr("Config.ClassWeight", "class weights need a classification task; target %q is regression (%s)",
				p.Targets[0], "set the task, or give no class weights")
		}
		p.K = p.TargetColumns
		return nil
	}
	if p.TargetColumns != 1 {
		return configErr("Config.Task", "%s classification needs exactly one target column, the data has %d", task, p.TargetColumns)
	}
	p.K = 1
	if !known {
		if task == TaskMulticlass {
			p.K = 0
		}
		return nil
	}
	if cls == nil {
		return configErr("", "target %q has more than %d distinct values: it cannot be a class label", p.Targets[0], stream.MaxDistinct)
	}
	if task == TaskBinary && len(cls) != 2 {
		return configErr("Config.Task", "binary classification needs exactly two classes in target %q, found %d: %v",
			p.Targets[0], len(cls), cls)
	}
	if task == TaskMulticlass && len(cls) < 2 {
		return configErr("Config.Task", "multiclass classification needs at least two classes in target %q, found %d",
			p.Targets[0], len(cls))
	}
	p.Classes = slices.Clone(cls)
	if p.ClassNames, err = classNames(p.Targets[0], p.labels, cls); err != nil {
		return err
	}
	if task == TaskMulticlass {
		p.K = len(cls)
	}
	return nil
}

// weightExp is the power of two that brings the mean of src's weights
// into [½, 1) (FitPlan.WeightExp); 0 without weights, when src does not
// know their mean, or when it is not finite.
func weightExp(src stream.Source) int {
	mean := stream.WeightMean(src)
	if stream.WeightColumn(src) == "" || !(mean > 0) || math.IsInf(mean, 0) {
		return 0
	}
	_, e := math.Frexp(mean)
	return -e
}
