package ooc

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"reflect"
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
	// as it reads them (pass.Job.WeightExp): the one that brings their mean
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
	// MemoryPlan says what Plan chose where the Config left the
	// preconditioner or its precision to choose, against which bound;
	// nil when the Config chose both.
	MemoryPlan *MemoryPlan `json:"memory_plan,omitempty"`

	src       stream.Source // the source as Fit reads it (spread)
	mean, std []float64     // from the source, or nil
	distinct  [][]float64   // from the source, or nil
	labels    []string      // label names of the first target, or nil
	chunkRows int           // largest chunk of src
	scratch   int64         // src's read scratch per reader
	// train and held are the two sides of the hold-out the plan made
	// (Sources), or nil.
	train, held stream.Source
	// disk, when not nil, keeps the preconditioner's factors on disk
	// (MemoryPlan.OutOfCore).
	disk *precond.OutOfCore
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
		return nil, fmt.Errorf("%w: fit needs targets (a source with a target column)", ErrNoTargets)
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
		return nil, configErr("Config.Uncertainty", "predictive standard deviations are fitted on validation rows: set RunOptions.Validation")
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
	if err := p.planMemory(opts.memoryLimit(), opts.TempDir); err != nil {
		return nil, err
	}
	if p.MemoryPlan != nil && p.MemoryPlan.Reduced && p.Config.Preconditioner == precond.MethodNystrom &&
		p.Config.Loss != LossLogistic && cfg.Patience == 0 {
		// A Nyström preconditioner of rank r < M needs more iterations
		// than a count made for the exact one: the fit stops when its
		// validation rows stop improving, held out of src when it has
		// none.
		if opts.Validation == nil {
			train, held, err := HoldOut(src, DefaultValFraction, cfg.Seed)
			if err != nil {
				return nil, err
			}
			opts.Validation = held
			q, err := Plan(train, cfg, opts)
			if err != nil {
				return nil, err
			}
			q.train, q.held = train, held
			return q, nil
		}
		if cfg.Iterations == 0 {
			p.Config.Iterations = DefaultNystromIterations
		}
	}
	if p.Config.Patience == 0 && opts.Validation != nil {
		// Config.Patience 0: a fit with validation rows stops by them.
		p.Config.Patience = DefaultPatience
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
	return p, nil
}

// Sources returns what Fit reads for the data src that Plan was given:
// src itself and RunOptions.Validation, or, when the plan holds out
// validation rows of its own (a Nyström preconditioner chosen by the
// memory plan stops by them), the rest of src and the rows held out.
func (p *FitPlan) Sources(src stream.Source, opts RunOptions) (stream.Source, RunOptions) {
	if p.held != nil {
		src, opts.Validation = p.train, p.held
	}
	return src, opts
}

// DefaultNystromIterations is the cap on CG iterations (Config.Iterations
// 0) of a fit that the memory plan gave a Nyström preconditioner and its
// validation rows stop.
const DefaultNystromIterations = 100

// HoldOut splits src into the rows a fit trains on and a fraction frac
// (in (0, 1)) held out for validation, chosen by seed (stream.Holdout):
// the one split of Fit, Tune, FitTuned and the commands, so that a
// validation source made by it is scored inside the fit's passes
// (RunOptions.Validation). The error, a *ConfigError, says when either
// side has no rows.
func HoldOut(src stream.Source, frac float64, seed uint64) (train, val stream.Source, err error) {
	return holdOut(src, frac, seed, "ValFraction")
}

// holdOut is HoldOut whose error names field.
func holdOut(src stream.Source, frac float64, seed uint64, field string) (train, val stream.Source, err error) {
	if !(frac > 0 && frac < 1) {
		return nil, nil, configErr(field, "validation fraction must be in (0, 1), got %g", frac)
	}
	train, val = stream.Holdout(src, frac, seed)
	if train.NumChunks() == 0 || val.NumChunks() == 0 {
		return nil, nil, configErr(field, "%s", HoldoutProblem(frac, stream.Rows(src), stream.Rows(train), stream.Rows(val)))
	}
	return train, val, nil
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
			return configErr("Config.Loss", "the logistic loss is for classification; target %q is regression (set Config.Task binary or multiclass)", p.Targets[0])
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

// MemoryPlan is what Plan chose where the Config left the preconditioner
// (Config.Preconditioner "") or its precision (Config.PrecondPrecision
// "") to choose: the exact preconditioner, Cholesky in float64, when it
// fits the bound (RunOptions.MaxMemory); else Cholesky in float32 when
// λ is large enough for it; else Cholesky in float64 with its factors on
// disk (OutOfCore); else in float32; else the Nyström preconditioner of
// the largest rank that fits. A Nyström
// preconditioner of rank r < M leaves out part of K_MM (Training's
// NystromResidual says how much), so CG needs more iterations to reach
// the same model: the fit then stops by its validation rows (Config's
// Patience, ValFraction and Iterations say how).
type MemoryPlan struct {
	// Limit is the bound in bytes; 0 means none.
	Limit int64 `json:"limit"`
	// Exact is the estimate of the fit with the exact preconditioner
	// (Cholesky, float64), what it would use without the bound.
	Exact int64 `json:"exact"`
	// Preconditioner, PrecondPrecision and PrecondRank are the choice
	// (as in the resolved Config).
	Preconditioner   precond.Method    `json:"preconditioner"`
	PrecondPrecision precond.Precision `json:"precond_precision"`
	PrecondRank      int               `json:"precond_rank,omitempty"`
	// Reduced is true when the bound made the choice something other than
	// the exact preconditioner in memory in float64.
	Reduced bool `json:"reduced"`
	// OutOfCore is true when the preconditioner is the exact one with its
	// factors on disk (precond.OutOfCore), DiskBytes of them in Dir
	// (RunOptions.TempDir), each read twice per CG iteration.
	OutOfCore bool   `json:"out_of_core,omitempty"`
	DiskBytes int64  `json:"disk_bytes,omitempty"`
	Dir       string `json:"dir,omitempty"`
	// Note says for people what was chosen and why ("" when not Reduced).
	Note string `json:"note,omitempty"`
}

// memoryOf is the memory estimate of the plan with cfg in place of its
// Config.
func (p *FitPlan) memoryOf(cfg Config) Memory {
	return estimateMemory(cfg, p.D, p.TargetColumns, max(p.K, 1), p.Workers, p.chunkRows, p.scratch, p.Weight != "")
}

// maxNystromRank is the largest rank r ≤ M of a Nyström preconditioner
// for which the fit of cfg fits limit bytes; 0 when not even rank 1 does.
func (p *FitPlan) maxNystromRank(cfg Config, limit int64) int {
	cfg.Preconditioner = precond.MethodNystrom
	fits := func(r int) bool {
		cfg.PrecondRank = r
		return p.memoryOf(cfg).Total <= limit
	}
	m := cfg.Centers
	if !fits(1) {
		return 0
	}
	if fits(m) {
		return m
	}
	lo, hi := 1, m // fits(lo), !fits(hi)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// memoryError is the error of a fit whose estimate exceeds
// RunOptions.MaxMemory; it matches ErrMemory.
type memoryError struct{ msg string }

func (e *memoryError) Error() string        { return e.msg }
func (e *memoryError) Is(target error) bool { return target == ErrMemory }

// float32Safe reports whether a float32 Cholesky preconditioner gives the
// fit of cfg about the float64 one's: its jitter ε regularises T, which
// changes the fit unless λ ≥ 10ε (bench/RESULTS.md §8: at λ = 10ε 0.6 %
// of test MSE, below it 1 % and more).
func float32Safe(cfg Config) bool {
	return cfg.Lambda >= 10*cmp.Or(cfg.Jitter, precond.DefaultJitter32)
}

// onDisk is the plan of the Cholesky preconditioner of cho (in float64)
// with its factors on disk in dir (precond.OutOfCore): its panels get
// what limit leaves after the rest of the fit. ok is false when not even
// one panel fits, or the disk lacks the space (then why says so).
func (p *FitPlan) onDisk(cho Config, limit int64, dir string) (mem Memory, ooc *precond.OutOfCore, why string, ok bool) {
	if limit <= 0 {
		return Memory{}, nil, "", false
	}
	cho.Preconditioner, cho.PrecondPrecision, cho.PrecondRank = precond.MethodCholesky, precond.Float64, 0
	m := cho.Centers
	mem = p.memoryOf(cho)
	buffers := mem.Precond / precond.Bytes(m, precond.Float64) // 2 when A sees weights
	rest := mem.Total - mem.Precond
	h := precond.DiskPanelRows(m, limit-rest)
	if h == 0 {
		return Memory{}, nil, "", false
	}
	disk := precond.DiskBytes(m, h)
	if buffers > 1 {
		disk += disk / 2 // a second A
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if free, err := precond.DiskFree(dir); err != nil {
		return Memory{}, nil, fmt.Sprintf("its factors cannot go to disk in %s (RunOptions.TempDir, $TMPDIR): %v", dir, err), false
	} else if free >= 0 && free < disk {
		return Memory{}, nil, fmt.Sprintf("its factors on disk need %s, and %s (RunOptions.TempDir, $TMPDIR) has %s free",
			FormatBytes(disk), dir, FormatBytes(free)), false
	}
	mem.Precond = precond.DiskMemoryBytes(m, h)
	mem.Total = rest + mem.Precond
	mem.Disk = disk
	return mem, &precond.OutOfCore{Dir: dir, MaxBytes: limit - rest}, "", true
}

// planMemory makes the memory plan (MemoryPlan) under limit bytes (0:
// none): it fills in the preconditioner and its precision where the
// Config left them to choose, sets Memory, and fails with ErrMemory when
// the fit does not fit, naming the largest M that would. The exact
// preconditioner (Cholesky) comes first, in this order: float64 in
// memory; float32 in memory when λ allows it (float32Safe); float64 with
// its factors on disk in tempDir; float32 in memory. Only then, with the
// Config's preconditioner left to choose, the Nyström preconditioner of
// the largest rank that fits.
func (p *FitPlan) planMemory(limit int64, tempDir string) error {
	cfg := &p.Config
	autoMethod, autoPrec := cfg.Preconditioner == "", cfg.PrecondPrecision == ""
	fits := func(c Config) bool { return limit <= 0 || p.memoryOf(c).Total <= limit }
	exact := *cfg
	exact.Preconditioner, exact.PrecondPrecision, exact.PrecondRank = precond.MethodCholesky, precond.Float64, 0
	f32Note := func() string {
		return fmt.Sprintf("M = %d needs ≈ %s with a float64 preconditioner, over the memory limit of %s: storing it in float32",
			cfg.Centers, FormatBytes(p.memoryOf(exact).Total), FormatBytes(limit))
	}
	var note, diskWhy string
	var diskMem Memory
	// exactRoute chooses among the Cholesky routes for cho, setting cfg,
	// note and p.disk; false when none fits.
	exactRoute := func(cho Config) bool {
		cho.Preconditioner, cho.PrecondRank = precond.MethodCholesky, 0
		with := func(pr precond.Precision) Config {
			c := cho
			c.PrecondPrecision = pr
			return c
		}
		var ooc *precond.OutOfCore
		var mem Memory
		disk := func() bool {
			var ok bool
			mem, ooc, diskWhy, ok = p.onDisk(cho, limit, tempDir)
			return ok
		}
		pr, onDisk, ok := exactPrecision(cho.PrecondPrecision, func(pr precond.Precision) bool { return fits(with(pr)) }, float32Safe(cho), disk)
		if !ok {
			return false
		}
		*cfg = with(pr)
		switch {
		case onDisk:
			p.disk, diskMem = ooc, mem
			note = fmt.Sprintf("M = %d needs ≈ %s with the Cholesky preconditioner in memory, over the memory limit of %s: "+
				"the same preconditioner with its factors on disk instead (%s in %s, read twice per CG iteration; ≈ %s in memory)",
				cfg.Centers, FormatBytes(p.memoryOf(exact).Total), FormatBytes(limit), FormatBytes(mem.Disk), ooc.Dir, FormatBytes(mem.Total))
		case autoPrec && pr == precond.Float32:
			note = f32Note()
		}
		return true
	}
	if autoMethod {
		cho := *cfg
		f32 := cho
		f32.Preconditioner, f32.PrecondPrecision, f32.PrecondRank = precond.MethodCholesky, precond.Float32, 0
		switch {
		case exactRoute(cho):
		case !autoPrec && fits(f32):
			// An explicit float64 that would fit in float32 fails below,
			// naming float32, rather than go to Nyström.
			cho.Preconditioner, cho.PrecondRank = precond.MethodCholesky, 0
			*cfg = cho
		default:
			ny := *cfg
			ny.Preconditioner = precond.MethodNystrom
			if autoPrec {
				ny.PrecondPrecision = precond.Float64
			}
			if ny.PrecondRank == 0 {
				ny.PrecondRank = p.maxNystromRank(ny, limit)
			}
			cho.Preconditioner, cho.PrecondRank = precond.MethodCholesky, 0
			cho.PrecondPrecision = cmp.Or(cho.PrecondPrecision, precond.Float32)
			if ny.PrecondRank > 0 {
				note = fmt.Sprintf("M = %d needs ≈ %s with the Cholesky preconditioner in %s, over the memory limit of %s: "+
					"the Nyström preconditioner of rank %d instead (≈ %s), which leaves out part of K_MM and needs more iterations",
					cfg.Centers, FormatBytes(p.memoryOf(cho).Total), cho.PrecondPrecision, FormatBytes(limit),
					ny.PrecondRank, FormatBytes(p.memoryOf(ny).Total))
				if diskWhy != "" {
					note += " (" + diskWhy + ")"
				}
				*cfg = ny
			} else { // nothing fits: the error below names the largest M
				*cfg = cho
			}
		}
	} else if autoPrec {
		cfg.PrecondPrecision = precond.Float64
		if cfg.Preconditioner == precond.MethodCholesky {
			exactRoute(*cfg)
		}
	}
	p.Memory = p.memoryOf(*cfg)
	if p.disk != nil {
		p.Memory = diskMem
	}
	if autoMethod || autoPrec {
		p.MemoryPlan = &MemoryPlan{Limit: limit, Exact: p.memoryOf(exact).Total, Preconditioner: cfg.Preconditioner,
			PrecondPrecision: cfg.PrecondPrecision, PrecondRank: cfg.PrecondRank, Reduced: note != "", Note: note}
		if p.disk != nil {
			p.MemoryPlan.OutOfCore, p.MemoryPlan.DiskBytes, p.MemoryPlan.Dir = true, diskMem.Disk, p.disk.Dir
		}
	}
	if limit <= 0 || p.Memory.Total <= limit {
		return nil
	}
	if cfg.Preconditioner == precond.MethodNystrom {
		return &memoryError{fmt.Sprintf("M = %d centres need ≈ %s with a Nyström preconditioner of rank %d, over the memory limit of %s (RunOptions.MaxMemory): lower Config.PrecondRank or Config.Centers",
			cfg.Centers, FormatBytes(p.Memory.Total), cmp.Or(cfg.PrecondRank, precond.DefaultNystromRank(cfg.Centers)), FormatBytes(limit))}
	}
	m64 := p.MaxCenters(limit, precond.Float64)
	m32 := p.MaxCenters(limit, precond.Float32)
	return &memoryError{fmt.Sprintf("M = %d centres need ≈ %s, over the memory limit of %s (RunOptions.MaxMemory): at most M = %d fit with a float64 preconditioner, M = %d with Config.PrecondPrecision float32, more with Config.Preconditioner nystrom",
		cfg.Centers, FormatBytes(p.Memory.Total), FormatBytes(limit), m64, m32)}
}

// searchMemory is the memory check of a search (Tune, for either loss),
// before any pass: est gives its estimate with the candidates'
// preconditioners stored in a precision. Where the base Config leaves the
// precision to choose (asked ""), float32 is chosen when float64 does not
// fit limit bytes (0: no bound), and note says so. kind names the search
// ("search", "logistic search"), grid its grid and buffers its M × M
// buffers, for the error of a search that does not fit (ErrMemory).
func searchMemory(asked precond.Precision, limit int64, est func(precond.Precision) Memory, kind, grid string,
	buffers func(Memory) string) (mem Memory, prec precond.Precision, note string, err error) {
	fits := func(pr precond.Precision) bool { return limit <= 0 || est(pr).Total <= limit }
	// A search's candidates keep their factors in memory (no disk), and
	// are compared with each other, all in the same precision.
	prec, _, ok := exactPrecision(asked, fits, true, nil)
	mem = est(prec)
	if ok {
		if asked == "" && prec == precond.Float32 {
			note = fmt.Sprintf("with float64 preconditioners the %s is over the memory limit of %s: storing them in float32 (Config.PrecondPrecision float32)",
				kind, FormatBytes(limit))
		}
		return mem, prec, note, nil
	}
	fix := "use fewer centres, sigmas or lambdas"
	if prec == precond.Float64 {
		fix += ", or float32 preconditioners"
	}
	return mem, prec, "", fmt.Errorf("%w: the %s %s needs about %s with %s preconditioners (%s), more than the limit of %s: %s",
		ErrMemory, kind, grid, FormatBytes(mem.Total), prec, buffers(mem), FormatBytes(limit), fix)
}

// exactPrecision is the one memory check of the exact (Cholesky)
// preconditioner, shared by a fit's plan (planMemory) and a search's
// (searchMemory). Where the precision was asked, that one if it fits
// (fits), else for float64 its factors on disk if disk says they fit
// (disk nil: no disk route). Where it was left to choose (asked ""):
// float64 if it fits; float32 if f32ok (λ allows its jitter,
// float32Safe) and it fits; the factors on disk; float32 if it fits. ok
// is false when none fits; prec is then the precision the error names
// (asked, or float32).
func exactPrecision(asked precond.Precision, fits func(precond.Precision) bool, f32ok bool, disk func() bool) (prec precond.Precision, onDisk, ok bool) {
	f64, f32 := precond.Float64, precond.Float32
	switch {
	case asked != "":
		if fits(asked) {
			return asked, false, true
		}
		if asked == f64 && disk != nil && disk() {
			return f64, true, true
		}
		return asked, false, false
	case fits(f64):
		return f64, false, true
	case f32ok && fits(f32):
		return f32, false, true
	case disk != nil && disk():
		return f64, true, true
	}
	return f32, false, fits(f32)
}

// DefaultSigmas is the σ grid a search tries when TuneConfig.Sigmas is
// nil and its base kernel is a distance kernel that gives no length scale
// (Sigma 0, no Sigmas): √d × {1/4, 1/2, 1, 2, 4} (features are
// standardised, so that σ = √d puts typical kernel values near e⁻¹).
func DefaultSigmas(d int) []float64 {
	s := DefaultSigma(d)
	return []float64{s / 4, s / 2, s, 2 * s, 4 * s}
}

// DefaultLambdas is a search's λ grid when its Lambdas is nil and its
// base Config gives no λ (TuneConfig.LambdaGrid): 1e-8 … 1e-3, one value
// a decade.
func DefaultLambdas() []float64 { return []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3} }

// SigmaGrid returns the length scales σ the search of tc tries on data of
// d features: Sigmas, or when it is nil DefaultSigmas(d) for a distance
// kernel whose Base gives no length scale; nil (Base.Kernel alone) for a
// Base that gives one (Sigma or per-feature Sigmas) or a kernel without
// one.
func (tc TuneConfig) SigmaGrid(d int) []float64 {
	k := tc.Base.Kernel
	if tc.Sigmas != nil || !cmp.Or(k.Kind, kernel.Gaussian).IsDistance() || k.Sigma != 0 || k.Sigmas != nil {
		return tc.Sigmas
	}
	return DefaultSigmas(d)
}

// LambdaGrid returns the λ the search of tc tries: Lambdas, or when it
// is nil {Base.Lambda} for a Base that gives one, else DefaultLambdas()
// (as SigmaGrid does for σ).
func (tc TuneConfig) LambdaGrid() []float64 {
	switch {
	case tc.Lambdas != nil:
		return tc.Lambdas
	case tc.Base.Lambda != 0:
		return []float64{tc.Base.Lambda}
	}
	return DefaultLambdas()
}

// searchGrid is the grid of a search of tc whose base Config resolved to
// cfg on data of d features: its kernels (one per σ of SigmaGrid, or
// cfg's kernel alone; with ARD, cfg's kernel first, whose learned scales
// replace it later) and its λ (LambdaGrid).
func searchGrid(tc TuneConfig, cfg Config, d int) (kernels []kernel.Kernel, lambdas []float64) {
	kernels = []kernel.Kernel{cfg.Kernel}
	if sigmas := tc.SigmaGrid(d); sigmas != nil {
		if tc.ARD == nil {
			kernels = kernels[:0]
		}
		for _, s := range sigmas {
			kn := cfg.Kernel
			kn.Sigma, kn.Sigmas = s, nil
			kernels = append(kernels, kn)
		}
	}
	return kernels, tc.LambdaGrid()
}

// isZero reports whether v is its type's zero value.
func isZero[T any](v T) bool { return reflect.ValueOf(&v).Elem().IsZero() }
