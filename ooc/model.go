package ooc

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// Model format versions this build writes and reads.
const (
	modelMagic      = "FKOM"
	ModelVersion    = 2
	modelMinVersion = 1
)

// A model without an Uncertainty is written as format version 1, which
// every earlier build reads; version 2 adds the uncertainty's factor as a
// third array (docs/MODEL_FORMAT.md).

// Model is a fitted FALKON estimator
//
//	f(x) = Σ_j α_j K(z(x), c_j) + μ
//
// where z standardises x with the training statistics, c_j are the M
// centres (stored standardised) and μ the training mean of each output.
// A Model is immutable: Fit and Load return it complete (its kernel
// centres prepared), its state is read through accessors that return
// copies, and it is safe for concurrent use.
type Model struct {
	cfg                     Config
	kern                    kernel.Kernel
	prec                    kernel.Precision
	task                    Task
	classes                 []float64
	classNames              []string     // label names of the classes, or nil
	calibration             *Calibration // or nil
	features, targets       []string
	featureMean, featureStd []float64
	targetMean              []float64
	m, d, k                 int
	centres, alpha          []float64 // M × D standardised; M × K
	training                Training
	uncertainty             *Uncertainty // or nil
	uw                      []float64    // M × uncertainty.Rank, or nil

	// Derived from the above in newModel, never changed after.
	centers *kernel.Centers
	invStd  []float64
	// mapped shares centers' packed centres and standardises raw rows
	// as the kernel loads its tiles (kernel.Centers.WithInputMap), so a
	// streaming prediction touches each row once and never writes it.
	mapped *kernel.Centers
	// uaug is [α | W], M × (K + Rank), for predictions with standard
	// deviations (one kernel evaluation for both).
	uaug []float64
	// uwt is σᵢ/(σᵢ + λ) per direction of the uncertainty.
	uwt []float64
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

// newModel validates the model's parts and returns the complete model,
// with its kernel centres prepared (in the model's precision, unless
// prepared is given).
func newModel(meta *modelMeta, centres, alpha, uw []float64, prepared *kernel.Centers) (*Model, error) {
	m := &Model{
		cfg: meta.Config, kern: meta.Kernel, prec: meta.prec, task: meta.Task, classes: meta.Classes,
		classNames: meta.ClassNames, calibration: meta.Calibration, uncertainty: meta.Uncertainty, uw: uw,
		features: meta.Features, targets: meta.Targets, featureMean: meta.FeatureMean, featureStd: meta.FeatureStd,
		targetMean: meta.TargetMean, m: meta.M, d: meta.D, k: meta.K, training: meta.Training,
		centres: centres, alpha: alpha,
	}
	m.cfg.Precision = m.prec
	if err := m.validate(); err != nil {
		return nil, err
	}
	if len(centres) != m.m*m.d || len(alpha) != m.m*m.k {
		return nil, fmt.Errorf("%d centre values and %d coefficients for M=%d d=%d k=%d", len(centres), len(alpha), m.m, m.d, m.k)
	}
	if m.uncertainty != nil {
		if len(uw) != m.m*m.uncertainty.Rank {
			return nil, fmt.Errorf("%d uncertainty factor values for M=%d rank %d", len(uw), m.m, m.uncertainty.Rank)
		}
		m.uaug = augment(alpha, uw, m.m, m.k, m.uncertainty.Rank)
		m.uwt = directionWeights(m.uncertainty)
	}
	m.centers = prepared
	if m.centers == nil {
		m.centers = kernel.NewCenters(m.kern, m.centres, m.m, m.d, m.prec)
	}
	if m.featureStd != nil {
		m.invStd = invStdOf(m.featureStd)
	}
	m.mapped = m.centers
	if m.invStd != nil {
		m.mapped = m.centers.WithInputMap(m.featureMean, m.invStd)
	}
	return m, nil
}

// invStdOf returns 1/σ per feature, 1 for a zero or infinite σ: the one
// place where the standardisation's scale is computed.
func invStdOf(std []float64) []float64 {
	inv := make([]float64, len(std))
	for j, s := range std {
		inv[j] = 1
		if s > 0 && !math.IsInf(s, 0) {
			inv[j] = 1 / s
		}
	}
	return inv
}

// Training records how a model was fitted.
type Training struct {
	N int64 `json:"n"`
	// Weight names the column of row weights of a weighted fit and
	// WeightSum is their sum, the n of λ·n (absent when unweighted).
	Weight    string  `json:"weight,omitempty"`
	WeightSum float64 `json:"weight_sum,omitempty"`
	// ClassWeights are the classes' weights of Config.ClassWeight
	// "balanced", in the order of the classes.
	ClassWeights []float64 `json:"class_weights,omitempty"`
	// NewtonSteps are the logistic loss's Newton steps (Config.Loss).
	NewtonSteps []NewtonStep `json:"newton_steps,omitempty"`
	Iterations  int          `json:"iterations"`
	Status      Status       `json:"status"`
	// BestIteration is the iteration with the best validation metric
	// (0 without validation). With Config.Patience the model is that
	// iteration's; without, the last iteration's.
	BestIteration       int        `json:"best_iteration,omitempty"`
	Residuals           []float64  `json:"residuals"`
	Validation          []ValPoint `json:"validation,omitempty"`
	Seconds             float64    `json:"seconds"`
	SecondsPerIteration float64    `json:"seconds_per_iteration"`
	PrecondBytes        int64      `json:"precond_bytes"`
	// PrecondSeconds is the time to compute K_MM and factorise the
	// preconditioner (O(M³): minutes at M = 5·10⁴).
	PrecondSeconds float64 `json:"precond_seconds"`
	// Rank is the dimension of the preconditioned system: M, or fewer
	// with the eigen preconditioner on a rank-deficient K_MM.
	Rank   int     `json:"rank"`
	Jitter float64 `json:"jitter"`
	// NystromRank is the Nyström preconditioner's rank (0 for the
	// others), NystromResidual the fraction of tr(K_MM) its basis misses,
	// and PrecondCache what became of RunOptions.PrecondCache: "read",
	// "written", or why the file was not used, then "; written".
	NystromRank     int     `json:"nystrom_rank,omitempty"`
	NystromResidual float64 `json:"nystrom_residual,omitempty"`
	PrecondCache    string  `json:"precond_cache,omitempty"`
	// DuplicateCenters counts centres drawn twice (uniform: equal rows;
	// leverage draws distinct rows and counts only equal candidate rows).
	DuplicateCenters int `json:"duplicate_centers,omitempty"`
	// LambdaLeverage is, for leverage sampling, the λ at which the
	// leverage scores were computed: the one whose effective dimension
	// d_eff(λ) is M (0 for uniform sampling).
	LambdaLeverage float64 `json:"lambda_leverage,omitempty"`
	// Phases are the wall and CPU seconds of each phase of the fit, in
	// order, and PeakRSS the process's peak resident memory in bytes at
	// its end (both absent from models written before they existed).
	Phases  []Phase `json:"phases,omitempty"`
	PeakRSS int64   `json:"peak_rss_bytes,omitempty"`
	// Search is the search that chose σ and λ (FitTuned), without its
	// candidates' models.
	Search *TuneResult `json:"search,omitempty"`
	// Handoff is what FitTuned carried from the search to the fit.
	Handoff *Handoff `json:"handoff,omitempty"`
}

// modelMeta is the JSON metadata of a model file (docs/MODEL_FORMAT.md);
// its keys and their order are those of format version 1.
type modelMeta struct {
	Format      string        `json:"format"`
	Precision   string        `json:"precision"`
	Kernel      kernel.Kernel `json:"kernel"`
	Task        Task          `json:"task"`
	Classes     []float64     `json:"classes,omitempty"`
	Features    []string      `json:"features"`
	Targets     []string      `json:"targets"`
	FeatureMean []float64     `json:"feature_mean,omitempty"`
	FeatureStd  []float64     `json:"feature_std,omitempty"`
	TargetMean  []float64     `json:"target_mean"`
	M           int           `json:"centers"`
	D           int           `json:"features_count"`
	K           int           `json:"outputs"`
	Config      Config        `json:"config"`
	Training    Training      `json:"training"`
	// Added within version 1, absent from older files (which older
	// builds ignore): the label names of the classes and the
	// calibration of the probabilities.
	ClassNames  []string     `json:"class_names,omitempty"`
	Calibration *Calibration `json:"calibration,omitempty"`
	// Added in version 2: what predictive standard deviations need; the
	// M × Rank factor is the third array.
	Uncertainty *Uncertainty `json:"uncertainty,omitempty"`

	prec kernel.Precision
}

func (m *Model) meta() *modelMeta {
	return &modelMeta{
		Format: "falkon-ooc model", Precision: m.prec.String(), Kernel: m.kern, Task: m.task, Classes: m.classes,
		Features: m.features, Targets: m.targets, FeatureMean: m.featureMean, FeatureStd: m.featureStd,
		TargetMean: m.targetMean, M: m.m, D: m.d, K: m.k, Config: m.cfg, Training: m.training,
		ClassNames: m.classNames, Calibration: m.calibration, Uncertainty: m.uncertainty,
	}
}

// WriteTo writes the model in the model file format (see container.go and
// docs/MODEL_FORMAT.md).
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	var err error
	if m.uncertainty == nil {
		err = writeContainer(cw, modelMagic, 1, m.meta(), m.centres, m.alpha)
	} else {
		err = writeContainer(cw, modelMagic, ModelVersion, m.meta(), m.centres, m.alpha, m.uw)
	}
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Save writes the model to path atomically: path holds the old file or
// the complete new one, never a partial model.
func (m *Model) Save(path string) error {
	err := fileutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := m.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return nil
}

// SummaryJSON returns the model's metadata (everything but the arrays) as
// indented JSON, for humans and tools.
func (m *Model) SummaryJSON() ([]byte, error) {
	return json.MarshalIndent(m.meta(), "", "  ")
}

// Load reads a model file written by Save. Errors name the file and match
// ErrFormat (damaged or foreign files) or ErrVersion.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := ParseModel(data)
	if err != nil {
		return nil, &FileError{Kind: "model", Path: path, Err: err}
	}
	return m, nil
}

// ParseModel decodes a model file's bytes.
func ParseModel(data []byte) (*Model, error) {
	_, meta, payload, err := readContainer(data, modelMagic, modelMinVersion, ModelVersion)
	if err != nil {
		return nil, err
	}
	var mm modelMeta
	if err := json.Unmarshal(meta, &mm); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrFormat, err)
	}
	if mm.Format != "falkon-ooc model" {
		return nil, fmt.Errorf("%w: metadata format %q", ErrFormat, mm.Format)
	}
	if mm.prec, err = kernel.ParsePrecision(mm.Precision); err != nil {
		return nil, fmt.Errorf("%w: unknown precision %q", ErrFormat, mm.Precision)
	}
	// Check the shapes before decoding the arrays they size.
	if err := (&Model{m: mm.M, d: mm.D, k: mm.K, task: mm.Task, classes: mm.Classes, classNames: mm.ClassNames,
		calibration: mm.Calibration, uncertainty: mm.Uncertainty, features: mm.Features,
		targetMean: mm.TargetMean, featureMean: mm.FeatureMean, featureStd: mm.FeatureStd, kern: mm.Kernel}).validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	lens := []int{mm.M * mm.D, mm.M * mm.K}
	if mm.Uncertainty != nil {
		lens = append(lens, mm.M*mm.Uncertainty.Rank)
	}
	arrs, err := decodeArrays(payload, lens...)
	if err != nil {
		return nil, err
	}
	var uw []float64
	if len(arrs) > 2 {
		uw = arrs[2]
	}
	m, err := newModel(&mm, arrs[0], arrs[1], uw, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return m, nil
}

// validate checks the metadata's internal consistency, so a damaged or
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
	if m.classNames != nil && len(m.classNames) != len(m.classes) {
		return fmt.Errorf("%d class names for %d classes", len(m.classNames), len(m.classes))
	}
	if err := m.calibration.validate(m.task); err != nil {
		return err
	}
	if err := m.uncertainty.validate(m.m, m.k, m.task); err != nil {
		return err
	}
	if err := m.kern.Validate(m.d); err != nil {
		return err
	}
	return nil
}
