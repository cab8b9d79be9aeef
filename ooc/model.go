package ooc

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// Model format versions this build writes and reads.
const (
	modelMagic      = "FKOM"
	ModelVersion    = 1
	modelMinVersion = 1
)

// Model is a fitted FALKON estimator
//
//	f(x) = Σ_j α_j K(z(x), c_j) + μ
//
// where z standardises x with the training statistics, c_j are the M
// centres (stored standardised) and μ the training mean of each output.
// A Model is safe for concurrent use once returned by Fit or Load.
type Model struct {
	Kernel    kernel.Kernel    `json:"kernel"`
	Precision kernel.Precision `json:"-"`
	Task      Task             `json:"task"`
	// Classes holds the class values of a classification target, sorted:
	// binary scores > 0 mean Classes[1]; multiclass output j is Classes[j].
	Classes  []float64 `json:"classes,omitempty"`
	Features []string  `json:"features"`
	Targets  []string  `json:"targets"`
	// FeatureMean and FeatureStd standardise inputs; nil when the model was
	// fitted without standardisation.
	FeatureMean []float64 `json:"feature_mean,omitempty"`
	FeatureStd  []float64 `json:"feature_std,omitempty"`
	TargetMean  []float64 `json:"target_mean"`
	M           int       `json:"centers"`
	D           int       `json:"features_count"`
	K           int       `json:"outputs"`
	Centers     []float64 `json:"-"` // M × D, standardised
	Alpha       []float64 `json:"-"` // M × K
	Config      Config    `json:"config"`
	Training    Training  `json:"training"`

	centers *kernel.Centers
	invStd  []float64
}

// Training records how a model was fitted.
type Training struct {
	N                   int64      `json:"n"`
	Iterations          int        `json:"iterations"`
	Status              Status     `json:"status"`
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
	// DuplicateCenters counts centres drawn twice (uniform: equal rows;
	// leverage draws distinct rows and counts only equal candidate rows).
	DuplicateCenters int `json:"duplicate_centers,omitempty"`
	// LambdaLeverage is, for leverage sampling, the λ at which the
	// leverage scores were computed: the one whose effective dimension
	// d_eff(λ) is M (0 for uniform sampling).
	LambdaLeverage float64 `json:"lambda_leverage,omitempty"`
}

// modelMeta is the JSON metadata of a model file.
type modelMeta struct {
	Format    string `json:"format"`
	Precision string `json:"precision"`
	*Model
}

// prepare builds the kernel centres and inverse standard deviations used
// by prediction.
func (m *Model) prepare() {
	if m.centers == nil {
		m.centers = kernel.NewCenters(m.Kernel, m.Centers, m.M, m.D, m.Precision)
	}
	if m.FeatureStd != nil && m.invStd == nil {
		m.invStd = make([]float64, m.D)
		for j, s := range m.FeatureStd {
			m.invStd[j] = 1
			if s > 0 && !math.IsInf(s, 0) {
				m.invStd[j] = 1 / s
			}
		}
	}
}

// WriteTo writes the model in the model file format (see container.go and
// docs/MODEL_FORMAT.md).
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := writeContainer(cw, modelMagic, ModelVersion,
		modelMeta{Format: "falkon-ooc model", Precision: m.Precision.String(), Model: m}, m.Centers, m.Alpha)
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
	return json.MarshalIndent(modelMeta{Format: "falkon-ooc model", Precision: m.Precision.String(), Model: m}, "", "  ")
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
	m := &Model{}
	mm := modelMeta{Model: m}
	if err := json.Unmarshal(meta, &mm); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrFormat, err)
	}
	if mm.Format != "falkon-ooc model" {
		return nil, fmt.Errorf("%w: metadata format %q", ErrFormat, mm.Format)
	}
	switch mm.Precision {
	case kernel.Float64.String():
		m.Precision = kernel.Float64
	case kernel.Float32.String():
		m.Precision = kernel.Float32
	default:
		return nil, fmt.Errorf("%w: unknown precision %q", ErrFormat, mm.Precision)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	arrs, err := decodeArrays(payload, m.M*m.D, m.M*m.K)
	if err != nil {
		return nil, err
	}
	m.Centers, m.Alpha = arrs[0], arrs[1]
	m.prepare()
	return m, nil
}

// validate checks the metadata's internal consistency, so a damaged or
// hand-edited file cannot cause a panic later.
func (m *Model) validate() error {
	const maxDim = 1 << 24
	switch {
	case m.M < 1 || m.D < 1 || m.K < 1 || m.M > maxDim || m.D > maxDim || m.K > maxDim:
		return fmt.Errorf("implausible shape M=%d d=%d k=%d", m.M, m.D, m.K)
	case len(m.Features) != m.D:
		return fmt.Errorf("%d feature names for d = %d", len(m.Features), m.D)
	case len(m.TargetMean) != m.K:
		return fmt.Errorf("%d target means for k = %d", len(m.TargetMean), m.K)
	case m.FeatureMean != nil && (len(m.FeatureMean) != m.D || len(m.FeatureStd) != m.D):
		return fmt.Errorf("standardisation has %d means and %d deviations for d = %d", len(m.FeatureMean), len(m.FeatureStd), m.D)
	}
	switch m.Task {
	case TaskRegression:
	case TaskBinary:
		if len(m.Classes) != 2 || m.K != 1 {
			return fmt.Errorf("binary model with %d classes and %d outputs", len(m.Classes), m.K)
		}
	case TaskMulticlass:
		if len(m.Classes) != m.K {
			return fmt.Errorf("multiclass model with %d classes and %d outputs", len(m.Classes), m.K)
		}
	default:
		return fmt.Errorf("unknown task %q", m.Task)
	}
	if err := m.Kernel.Validate(m.D); err != nil {
		return err
	}
	return nil
}
