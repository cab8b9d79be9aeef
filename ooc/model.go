package ooc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Model is a fitted model as Fit, Tune and Load return it: the
// *model.Model it embeds (whose methods predict, evaluate and describe
// it; see package model) with the configuration and training record it
// was fitted with, typed (Config, Training). A program that only
// predicts needs the embedded model alone (m.Model, or model.Load), not
// this package. Save, WriteTo and SummaryJSON write the configuration
// and training record; the embedded model of a fresh fit carries neither
// (its Provenance is empty), so save through Model, not m.Model.
type Model struct {
	*model.Model
	cfg      Config
	training Training
}

// The model's types, defined in package model.
type (
	Task              = model.Task
	Loss              = model.Loss
	Calibration       = model.Calibration
	Uncertainty       = model.Uncertainty
	UncertaintyMethod = model.UncertaintyMethod
	PredictOptions    = model.PredictOptions
	Batch             = model.Batch
	Metrics           = model.Metrics
	Evaluator         = model.Evaluator
	FileError         = model.FileError
)

// Tasks, losses, uncertainty and calibration methods (package model).
const (
	TaskAuto               = model.TaskAuto
	TaskRegression         = model.TaskRegression
	TaskBinary             = model.TaskBinary
	TaskMulticlass         = model.TaskMulticlass
	LossSquared            = model.LossSquared
	LossLogistic           = model.LossLogistic
	UncertaintyPrecond     = model.UncertaintyPrecond
	UncertaintyExact       = model.UncertaintyExact
	CalibrationPlatt       = model.CalibrationPlatt
	CalibrationTemperature = model.CalibrationTemperature
	// ModelVersion is the newest model format version this build reads
	// (model.Version).
	ModelVersion = model.Version
)

// ErrFormat is matched (errors.Is) by every error about a damaged or
// foreign model or checkpoint file; ErrVersion by a file of a format
// version this build does not read (package model).
var (
	ErrFormat  = model.ErrFormat
	ErrVersion = model.ErrVersion
)

// ParseTask parses a task name; "auto" and "" give TaskAuto.
func ParseTask(s string) (Task, error) { return model.ParseTask(s) }

// IntervalMethod is model.IntervalMethod.
type IntervalMethod = model.IntervalMethod

// Interval methods (model.IntervalAuto, model.IntervalGaussian,
// model.IntervalConformal).
const (
	IntervalAuto      = model.IntervalAuto
	IntervalGaussian  = model.IntervalGaussian
	IntervalConformal = model.IntervalConformal
)

// ParseIntervalMethod is model.ParseIntervalMethod.
func ParseIntervalMethod(s string) (IntervalMethod, error) { return model.ParseIntervalMethod(s) }

// IntervalZ returns z with P(|N(0,1)| ≤ z) = level (model.IntervalZ).
func IntervalZ(level float64) float64 { return model.IntervalZ(level) }

// AlignLabels maps the label codes of a validation source to those of
// the training source (model.AlignLabels); Fit does this with
// RunOptions.Validation.
func AlignLabels(train, val stream.Source) (stream.Source, error) {
	return model.AlignLabels(train, val)
}

// Config returns the resolved configuration the model was fitted with.
func (m *Model) Config() Config {
	c := m.cfg
	c.Kernel.Sigmas = slices.Clone(c.Kernel.Sigmas)
	return c
}

// Training returns how the model was fitted.
func (m *Model) Training() Training {
	t := m.training
	t.Residuals = slices.Clone(t.Residuals)
	t.Validation = slices.Clone(t.Validation)
	return t
}

// with returns a model of mm with m's configuration and training record.
func (m *Model) with(mm *model.Model) *Model {
	return &Model{Model: mm, cfg: m.cfg, training: m.training}
}

// standalone returns the embedded model recording m's configuration and
// training record as they are now.
func (m *Model) standalone() (*model.Model, error) {
	cfg, err := json.Marshal(m.cfg)
	if err != nil {
		return nil, fmt.Errorf("model config: %w", err)
	}
	tr, err := json.Marshal(m.training)
	if err != nil {
		return nil, fmt.Errorf("model training record: %w", err)
	}
	return m.Model.WithProvenance(cfg, tr), nil
}

// WriteTo writes the model in the model file format
// (docs/MODEL_FORMAT.md), with its configuration and training record.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	mm, err := m.standalone()
	if err != nil {
		return 0, err
	}
	return mm.WriteTo(w)
}

// Save writes the model to path atomically: path holds the old file or
// the complete new one, never a partial model.
func (m *Model) Save(path string) error {
	mm, err := m.standalone()
	if err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return mm.Save(path)
}

// SummaryJSON returns the model's metadata (everything but the arrays) as
// indented JSON, for humans and tools.
func (m *Model) SummaryJSON() ([]byte, error) {
	mm, err := m.standalone()
	if err != nil {
		return nil, err
	}
	return mm.SummaryJSON()
}

// Load reads a model file written by Save. Errors name the file and match
// ErrFormat (damaged or foreign files) or ErrVersion.
func Load(path string) (*Model, error) {
	mm, err := model.Load(path)
	if err != nil {
		return nil, err
	}
	m, err := fromModel(mm)
	if err != nil {
		return nil, &FileError{Kind: "model", Path: path, Err: err}
	}
	return m, nil
}

// ParseModel decodes a model file's bytes.
func ParseModel(data []byte) (*Model, error) {
	mm, err := model.Parse(data)
	if err != nil {
		return nil, err
	}
	return fromModel(mm)
}

func fromModel(mm *model.Model) (*Model, error) {
	m := &Model{Model: mm}
	cfg, tr := mm.Provenance()
	if len(cfg) > 0 {
		if err := json.Unmarshal(cfg, &m.cfg); err != nil {
			return nil, fmt.Errorf("%w: metadata config: %v", ErrFormat, err)
		}
	}
	if len(tr) > 0 {
		if err := json.Unmarshal(tr, &m.training); err != nil {
			return nil, fmt.Errorf("%w: metadata training: %v", ErrFormat, err)
		}
	}
	m.cfg.Precision = mm.Precision()
	return m, nil
}

// modelMeta is what a fit knows of its model besides the arrays.
type modelMeta struct {
	Kernel                  kernel.Kernel
	Task                    Task
	Classes                 []float64
	ClassNames              []string
	Features, Targets       []string
	Encoding                *featenc.Spec
	Nulls                   string
	FeatureMean, FeatureStd []float64
	TargetMean              []float64
	M, D, K                 int
	Config                  Config
	Training                Training
	prec                    kernel.Precision
}

// newModel returns the complete model of a fit, with its kernel centres
// prepared (in the model's precision, unless prepared is given).
func newModel(meta *modelMeta, centres, alpha, uw []float64, prepared *kernel.Centers) (*Model, error) {
	cfg := meta.Config
	cfg.Precision = meta.prec
	mm, err := model.New(model.Params{
		Kernel: meta.Kernel, Precision: meta.prec, Task: meta.Task, Loss: cfg.Loss, Classes: meta.Classes,
		ClassNames: meta.ClassNames, Features: meta.Features, Targets: meta.Targets,
		FeatureMean: meta.FeatureMean, FeatureStd: meta.FeatureStd, TargetMean: meta.TargetMean,
		M: meta.M, D: meta.D, K: meta.K, Centers: centres, Alpha: alpha, UncertaintyFactor: uw, Prepared: prepared,
		Encoding: meta.Encoding, Nulls: meta.Nulls,
	})
	if err != nil {
		return nil, err
	}
	return &Model{Model: mm, cfg: cfg, training: meta.Training}, nil
}

// invStdOf returns 1/σ per feature (model.InvStd): the one place where
// the standardisation's scale is computed.
func invStdOf(std []float64) []float64 { return model.InvStd(std) }

// evaluate predicts src, whose targets must be the model's, into an
// Evaluator.
func (m *Model) evaluate(ctx context.Context, src stream.Source, opt PredictOptions) (*Evaluator, error) {
	if want := len(m.Targets()); src.NumTargets() != want {
		return nil, fmt.Errorf("the data has %d target columns, the model has %d", src.NumTargets(), want)
	}
	ev := m.NewEvaluator()
	err := m.Predict(ctx, src, opt, true, func(b Batch) error {
		return ev.AddWeighted(b.Scores, b.Targets, b.Weights, b.Rows)
	})
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// newEvaluator returns an Evaluator of the scores of a model of that
// shape that is not built yet (model.NewEvaluator).
var newEvaluator = model.NewEvaluator
