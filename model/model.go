package model

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// Model is a fitted FALKON estimator
//
//	f(x) = Σ_j α_j K(z(x), c_j) + μ
//
// where z standardises x with the training statistics, c_j are the M
// centres (stored standardised) and μ the training mean of each output.
// A Model is immutable: New and Load return it complete (its kernel
// centres prepared), its state is read through accessors that return
// copies, and it is safe for concurrent use.
type Model struct {
	kern                    kernel.Kernel
	prec                    kernel.Precision
	task                    Task
	loss                    Loss
	classes                 []float64
	classNames              []string // label names of the classes, or nil
	encoding                *featenc.Spec
	nulls                   string
	calibration             *Calibration // or nil
	decision                *Decision    // binary only, or nil: DefaultThreshold
	features, targets       []string
	featureMean, featureStd []float64
	targetMean              []float64
	m, d, k                 int
	centres, alpha          []float64    // M × D standardised; M × K
	uncertainty             *Uncertainty // or nil
	uw                      []float64    // M × uncertainty.Rank, or nil
	conformal               *Conformal   // with an uncertainty only, or nil
	config, training        json.RawMessage

	// Derived from the above in New, never changed after.
	centers *kernel.Centers
	invStd  []float64
	// mapped shares centers' packed centres and standardises raw rows
	// as the kernel loads its tiles (kernel.Centers.WithInputMap), so a
	// prediction touches each row once and never writes it.
	mapped *kernel.Centers
	// kvAlpha is α laid out for the kernel's products once
	// (kernel.Weights), so that a call of few rows does not lay it out
	// again; kvAug is [α | W], M × (K + Rank), laid out the same, for
	// predictions with standard deviations (one kernel evaluation for
	// both), or nil.
	kvAlpha, kvAug *kernel.Weights
	// uwt is σᵢ/(σᵢ + λ) per direction of the uncertainty.
	uwt []float64
}

// Params are the parts of a model, for New. New takes ownership of the
// slices: the caller must not change them afterwards.
type Params struct {
	Kernel    kernel.Kernel
	Precision kernel.Precision
	// Task is TaskRegression, TaskBinary or TaskMulticlass.
	Task Task
	// Loss is the loss the model was fitted with ("" is LossSquared).
	Loss Loss
	// Classes are the sorted class values (2 for binary, K for
	// multiclass, nil for regression), and ClassNames their label names
	// when the target was a string column (else nil).
	Classes    []float64
	ClassNames []string
	// Calibration maps a classifier's scores to probabilities, or nil.
	Calibration *Calibration
	// Decision labels a binary model's rows from their probabilities, or
	// nil for DefaultThreshold.
	Decision *Decision
	// Features names the D input columns, in order; Targets the target
	// columns.
	Features, Targets []string
	// FeatureMean and FeatureStd standardise the inputs (both nil: the
	// model takes its inputs as they are).
	FeatureMean, FeatureStd []float64
	// TargetMean is μ, per output (length K).
	TargetMean []float64
	// M centres, D features, K outputs.
	M, D, K int
	// Centers holds the M × D standardised centres, Alpha the M × K
	// coefficients, row-major.
	Centers, Alpha []float64
	// Uncertainty and its M × Uncertainty.Rank factor UncertaintyFactor
	// give predictive standard deviations (both nil: none).
	Uncertainty       *Uncertainty
	UncertaintyFactor []float64
	// Conformal, when not nil, calibrates the central intervals of an
	// Uncertainty (IntervalMultipliers).
	Conformal *Conformal
	// Config and Training are the trainer's record of how the model was
	// made, JSON documents that the model stores and writes back but does
	// not read (package ooc's Config and Training). nil is JSON null.
	Config, Training json.RawMessage
	// Encoding, when not nil, says how some features were made from
	// categorical and time input columns: predict reads those columns and
	// expands them (featenc.Assembler).
	Encoding *featenc.Spec
	// Nulls is the NULL policy of the training data's ingest: "mean"
	// when NULL feature values were filled with the column's mean, which
	// predict then does too by default; "" otherwise.
	Nulls string
	// Prepared, when not nil, is Centers already prepared by
	// kernel.NewCenters(Kernel, Centers, M, D, Precision); New then uses
	// it instead of preparing the centres again.
	Prepared *kernel.Centers
}

// New validates p and returns the complete model, its kernel centres
// prepared. An inconsistent p is an error saying what does not fit.
func New(p Params) (*Model, error) {
	m := &Model{
		kern: p.Kernel, prec: p.Precision, task: p.Task, loss: p.Loss, classes: p.Classes,
		classNames: p.ClassNames, calibration: p.Calibration, decision: p.Decision, uncertainty: p.Uncertainty, uw: p.UncertaintyFactor, conformal: p.Conformal,
		encoding: p.Encoding, nulls: p.Nulls,
		features: p.Features, targets: p.Targets, featureMean: p.FeatureMean, featureStd: p.FeatureStd,
		targetMean: p.TargetMean, m: p.M, d: p.D, k: p.K, centres: p.Centers, alpha: p.Alpha,
		config: p.Config, training: p.Training,
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	if len(m.centres) != m.m*m.d || len(m.alpha) != m.m*m.k {
		return nil, fmt.Errorf("%d centre values and %d coefficients for M=%d d=%d k=%d", len(m.centres), len(m.alpha), m.m, m.d, m.k)
	}
	if m.uncertainty != nil {
		if len(m.uw) != m.m*m.uncertainty.Rank {
			return nil, fmt.Errorf("%d uncertainty factor values for M=%d rank %d", len(m.uw), m.m, m.uncertainty.Rank)
		}
		m.uwt = directionWeights(m.uncertainty)
	} else if m.uw != nil {
		return nil, fmt.Errorf("an uncertainty factor without an uncertainty")
	}
	m.centers = p.Prepared
	if m.centers == nil {
		m.centers = kernel.NewCenters(m.kern, m.centres, m.m, m.d, m.prec)
	}
	if m.featureStd != nil {
		m.invStd = InvStd(m.featureStd)
	}
	m.mapped = m.centers
	if m.invStd != nil {
		m.mapped = m.centers.WithInputMap(m.featureMean, m.invStd)
	}
	m.kvAlpha = m.centers.NewWeights(m.alpha, m.k)
	if m.uncertainty != nil {
		m.kvAug = m.centers.NewWeights(augment(m.alpha, m.uw, m.m, m.k, m.uncertainty.Rank), m.k+m.uncertainty.Rank)
	}
	return m, nil
}

// InvStd returns the scale by which a model standardises each feature:
// 1/σ, or 1 for a zero or infinite σ. A trainer standardises its rows
// with it, so that they match the model's bit for bit.
func InvStd(std []float64) []float64 {
	inv := make([]float64, len(std))
	for j, s := range std {
		inv[j] = 1
		if s > 0 && !math.IsInf(s, 0) {
			inv[j] = 1 / s
		}
	}
	return inv
}

// Kernel returns the kernel.
func (m *Model) Kernel() kernel.Kernel {
	k := m.kern
	k.Sigmas = slices.Clone(k.Sigmas)
	return k
}

// Precision returns the precision of the kernel blocks.
func (m *Model) Precision() kernel.Precision { return m.prec }

// Task returns what the targets mean (never TaskAuto).
func (m *Model) Task() Task { return m.task }

// Loss returns the loss the model was fitted with ("" for a model
// written before losses were recorded: the squared loss).
func (m *Model) Loss() Loss { return m.loss }

// Classes returns the class values of a classification target, sorted:
// binary scores > 0 mean Classes()[1]; multiclass output j is
// Classes()[j]. nil for regression.
func (m *Model) Classes() []float64 { return slices.Clone(m.classes) }

// ClassNames returns the names of the classes, in the order of Classes:
// the label names of a string target, else the class values formatted
// as numbers ("0", "1", "2.5"). nil for regression.
func (m *Model) ClassNames() []string {
	if m.task == TaskRegression {
		return nil
	}
	if m.classNames != nil {
		return slices.Clone(m.classNames)
	}
	names := make([]string, len(m.classes))
	for i, c := range m.classes {
		names[i] = strconv.FormatFloat(c, 'g', -1, 64)
	}
	return names
}

// Encoding returns how the model's features were made from categorical
// and time input columns, or nil. The caller must not modify it.
func (m *Model) Encoding() *featenc.Spec { return m.encoding }

// Nulls returns the NULL policy of the training data: "mean" when NULL
// feature values were filled with the training means (FeatureMean), or
// "".
func (m *Model) Nulls() string { return m.nulls }

// Labeled reports whether the classes are string labels (ClassNames
// then holds the names the training data used).
func (m *Model) Labeled() bool { return m.classNames != nil }

// Calibration returns the calibration of the model's probabilities
// fitted on validation rows, or nil when the model has none (regression,
// or a fit without validation rows).
func (m *Model) Calibration() *Calibration {
	if m.calibration == nil {
		return nil
	}
	c := *m.calibration
	return &c
}

// Features returns the feature names, in the order PredictTo reads them.
func (m *Model) Features() []string { return slices.Clone(m.features) }

// Targets returns the target names of the training data.
func (m *Model) Targets() []string { return slices.Clone(m.targets) }

// FeatureMean returns the training means that standardise inputs; nil
// when the model was fitted without standardisation.
func (m *Model) FeatureMean() []float64 { return slices.Clone(m.featureMean) }

// FeatureStd returns the training standard deviations that standardise
// inputs; nil when the model was fitted without standardisation.
func (m *Model) FeatureStd() []float64 { return slices.Clone(m.featureStd) }

// TargetMean returns μ, the training mean of each output.
func (m *Model) TargetMean() []float64 { return slices.Clone(m.targetMean) }

// M returns the number of centres.
func (m *Model) M() int { return m.m }

// D returns the number of features.
func (m *Model) D() int { return m.d }

// K returns the number of outputs (scores per row).
func (m *Model) K() int { return m.k }

// Centers returns a copy of the M × D centres, row-major, standardised.
func (m *Model) Centers() []float64 { return slices.Clone(m.centres) }

// Alpha returns a copy of the M × K coefficients α, row-major.
func (m *Model) Alpha() []float64 { return slices.Clone(m.alpha) }

// UncertaintyFactor returns a copy of the M × Rank factor W of the
// model's Uncertainty (see Uncertainty), row-major; nil without one.
func (m *Model) UncertaintyFactor() []float64 { return slices.Clone(m.uw) }

// Requires returns the capabilities of the model file format the model
// uses (docs/MODEL_FORMAT.md, "requires"), sorted: what any other
// implementation of its prediction, such as an exporter, must know. nil
// for a model that needs none.
func (m *Model) Requires() []string { return m.requires() }

// Provenance returns the trainer's record of how the model was made: its
// configuration and training record as JSON (see Params), nil when the
// model has none.
func (m *Model) Provenance() (config, training json.RawMessage) {
	return slices.Clone(m.config), slices.Clone(m.training)
}

// WithProvenance returns a copy of m that records config and training
// (JSON documents; see Params) instead of m's.
func (m *Model) WithProvenance(config, training json.RawMessage) *Model {
	cp := *m
	cp.config, cp.training = config, training
	return &cp
}

// validate checks the parts' internal consistency, so that a damaged or
// hand-edited file cannot cause a panic later.
func (m *Model) validate() error {
	const maxDim = 1 << 24
	switch {
	case m.m < 1 || m.d < 1 || m.k < 1 || m.m > maxDim || m.d > maxDim || m.k > maxDim:
		return fmt.Errorf("implausible shape M=%d d=%d k=%d", m.m, m.d, m.k)
	case len(m.features) != m.d:
		return fmt.Errorf("%d feature names for d = %d", len(m.features), m.d)
	case len(m.targetMean) != m.k:
		return fmt.Errorf("%d target means for k = %d", len(m.targetMean), m.k)
	case (m.featureMean != nil || m.featureStd != nil) && (len(m.featureMean) != m.d || len(m.featureStd) != m.d):
		return fmt.Errorf("standardisation has %d means and %d deviations for d = %d", len(m.featureMean), len(m.featureStd), m.d)
	}
	switch m.task {
	case TaskRegression:
	case TaskBinary:
		if len(m.classes) != 2 || m.k != 1 {
			return fmt.Errorf("binary model with %d classes and %d outputs", len(m.classes), m.k)
		}
	case TaskMulticlass:
		if len(m.classes) != m.k {
			return fmt.Errorf("multiclass model with %d classes and %d outputs", len(m.classes), m.k)
		}
	default:
		return fmt.Errorf("unknown task %q", m.task)
	}
	switch m.loss {
	case "", LossSquared, LossLogistic:
	default:
		return fmt.Errorf("unknown loss %q", m.loss)
	}
	if m.encoding != nil {
		if err := m.encoding.Validate(); err != nil {
			return err
		}
	}
	if m.nulls != "" && m.nulls != "mean" {
		return fmt.Errorf("unknown NULL policy %q", m.nulls)
	}
	if m.classNames != nil && len(m.classNames) != len(m.classes) {
		return fmt.Errorf("%d class names for %d classes", len(m.classNames), len(m.classes))
	}
	if err := m.calibration.validate(m.task); err != nil {
		return err
	}
	if err := m.decision.validate(m.task); err != nil {
		return err
	}
	if err := m.uncertainty.validate(m.m, m.k, m.task); err != nil {
		return err
	}
	if m.conformal != nil {
		if m.uncertainty == nil {
			return fmt.Errorf("a conformal calibration without an uncertainty")
		}
		if err := m.conformal.validate(m.k); err != nil {
			return err
		}
	}
	if err := m.kern.Validate(m.d); err != nil {
		return err
	}
	return nil
}
