package model

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/container"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// Model file format versions (docs/MODEL_FORMAT.md). A model is written
// as the lowest version that holds it: 1 without an Uncertainty, 2 with
// one, 3 when it needs a capability named in its "requires" list.
// Load reads MinVersion through Version.
const (
	Version    = 3
	MinVersion = 1
)

// magic starts and ends a model file.
const magic = "FKOM"

// formatName is the metadata's "format".
const formatName = "falkon-ooc model"

// ErrFormat is matched (errors.Is) by every error about a damaged or
// foreign model or checkpoint file; ErrVersion by a file of a format
// version, or needing a capability, that this build does not read.
var (
	ErrFormat  = container.ErrFormat
	ErrVersion = container.ErrVersion
)

// FileError reports a problem with a model or checkpoint file, naming it.
type FileError struct {
	Kind string // "model" or "checkpoint"
	Path string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s file %s: %v", e.Kind, e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// capabilities are the names a version-3 file may list in "requires"
// that this build knows how to predict with (docs/MODEL_FORMAT.md).
var capabilities = map[string]bool{capDecision: true, capEncoding: true, capConformal: true, capConformalOutputs: true, capTargetEncoding: true}

// capDecision is the capability of a binary model with a Decision: a
// reader that ignored it would label rows at another threshold.
const capDecision = "decision"

// capEncoding is the capability of a model with features made from
// categorical and time columns (meta.Encoding): a reader that ignored it
// would read the encoded features as input columns.
const capEncoding = "encoding"

// capTargetEncoding is the capability of a model whose encoding has a
// target-encoded column (featenc.Target): a reader that knew only
// "encoding" would refuse its kind, and one that knew neither would read
// its feature as an input column.
const capTargetEncoding = "target-encoding"

// capConformal is the capability of a model with a Conformal calibration
// of its intervals: a reader that ignored it would give Gaussian
// intervals, which miss their level when the errors are not Gaussian.
const capConformal = "conformal"

// capConformalOutputs is the capability of a model of several outputs
// whose Conformal calibrates each output on its own (Conformal.Outputs):
// a reader that ignored it would give every output the pooled
// multiplier, which misses the level on an output whose errors have
// another shape.
const capConformalOutputs = "conformal-outputs"

// meta is the JSON metadata of a model file (docs/MODEL_FORMAT.md); its
// keys and their order are those of format version 1, then the keys
// added since.
type meta struct {
	Format      string          `json:"format"`
	Precision   string          `json:"precision"`
	Kernel      kernel.Kernel   `json:"kernel"`
	Task        Task            `json:"task"`
	Classes     []float64       `json:"classes,omitempty"`
	Features    []string        `json:"features"`
	Targets     []string        `json:"targets"`
	FeatureMean []float64       `json:"feature_mean,omitempty"`
	FeatureStd  []float64       `json:"feature_std,omitempty"`
	TargetMean  []float64       `json:"target_mean"`
	M           int             `json:"centers"`
	D           int             `json:"features_count"`
	K           int             `json:"outputs"`
	Config      json.RawMessage `json:"config"`
	Training    json.RawMessage `json:"training"`
	// Added within version 1, absent from older files (which older
	// builds ignore): the label names of the classes and the
	// calibration of the probabilities.
	ClassNames  []string     `json:"class_names,omitempty"`
	Calibration *Calibration `json:"calibration,omitempty"`
	// Added in version 2: what predictive standard deviations need; the
	// M × Rank factor is the third array.
	Uncertainty *Uncertainty `json:"uncertainty,omitempty"`
	// Added in version 3: the capabilities a reader must know to predict
	// with the model, and so written only with one of them.
	Requires []string `json:"requires,omitempty"`
	// Capability "decision": a binary model's decision threshold.
	Decision *Decision `json:"decision,omitempty"`
	// Capability "encoding": how features were made from categorical and
	// time input columns.
	Encoding *featenc.Spec `json:"encoding,omitempty"`
	// Capability "conformal": the split-conformal multipliers of the
	// intervals; "conformal-outputs" when they are per output.
	Conformal *Conformal `json:"conformal,omitempty"`
	// Added within version 1 (older builds ignore it and keep predict's
	// strict default): the NULL policy of the training data, "mean".
	Nulls string `json:"nulls,omitempty"`
}

func (m *Model) meta() *meta {
	return &meta{
		Format: formatName, Precision: m.prec.String(), Kernel: m.kern, Task: m.task, Classes: m.classes,
		Features: m.features, Targets: m.targets, FeatureMean: m.featureMean, FeatureStd: m.featureStd,
		TargetMean: m.targetMean, M: m.m, D: m.d, K: m.k, Config: m.config, Training: m.training,
		ClassNames: m.classNames, Calibration: m.calibration, Uncertainty: m.uncertainty,
		Requires: m.requires(), Decision: m.decision, Encoding: m.encoding, Conformal: m.conformal, Nulls: m.nulls,
	}
}

// requires lists the capabilities of version 3 that m uses, sorted.
func (m *Model) requires() []string {
	var caps []string
	if m.conformal != nil {
		caps = append(caps, capConformal)
		if len(m.conformal.Outputs) > 0 {
			caps = append(caps, capConformalOutputs)
		}
	}
	if m.decision != nil {
		caps = append(caps, capDecision)
	}
	if m.encoding != nil {
		caps = append(caps, capEncoding)
		if slices.ContainsFunc(m.encoding.Columns, func(c featenc.Column) bool { return c.Kind == featenc.Target }) {
			caps = append(caps, capTargetEncoding)
		}
	}
	return caps
}

// version returns the lowest format version that holds m.
func (m *Model) version() uint8 {
	switch {
	case len(m.requires()) > 0:
		return 3
	case m.uncertainty != nil:
		return 2
	}
	return 1
}

// WriteTo writes the model in the model file format
// (docs/MODEL_FORMAT.md).
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	arrays := [][]float64{m.centres, m.alpha}
	if m.uncertainty != nil {
		arrays = append(arrays, m.uw)
	}
	err := container.Write(cw, magic, m.version(), m.meta(), arrays...)
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
	m, err := Parse(data)
	if err != nil {
		return nil, &FileError{Kind: "model", Path: path, Err: err}
	}
	return m, nil
}

// Parse decodes a model file's bytes.
func Parse(data []byte) (*Model, error) {
	_, raw, payload, err := container.Read(data, magic, MinVersion, Version)
	if err != nil {
		return nil, err
	}
	var mm meta
	if err := json.Unmarshal(raw, &mm); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrFormat, err)
	}
	if mm.Format != formatName {
		return nil, fmt.Errorf("%w: metadata format %q", ErrFormat, mm.Format)
	}
	for _, r := range mm.Requires {
		if !capabilities[r] {
			return nil, fmt.Errorf("%w: the model needs %q, which this build does not know; upgrade falkon-ooc", ErrVersion, r)
		}
	}
	prec, err := kernel.ParsePrecision(mm.Precision)
	if err != nil {
		return nil, fmt.Errorf("%w: unknown precision %q", ErrFormat, mm.Precision)
	}
	// The loss is the one field of the trainer's configuration that
	// prediction reads.
	var cfg struct {
		Loss Loss `json:"loss"`
	}
	if len(mm.Config) > 0 {
		if err := json.Unmarshal(mm.Config, &cfg); err != nil {
			return nil, fmt.Errorf("%w: metadata config: %v", ErrFormat, err)
		}
	}
	p := Params{
		Kernel: mm.Kernel, Precision: prec, Task: mm.Task, Loss: cfg.Loss, Classes: mm.Classes,
		ClassNames: mm.ClassNames, Calibration: mm.Calibration, Decision: mm.Decision, Features: mm.Features, Targets: mm.Targets,
		FeatureMean: mm.FeatureMean, FeatureStd: mm.FeatureStd, TargetMean: mm.TargetMean,
		M: mm.M, D: mm.D, K: mm.K, Uncertainty: mm.Uncertainty, Conformal: mm.Conformal, Encoding: mm.Encoding, Nulls: mm.Nulls,
		Config: slices.Clip(mm.Config), Training: slices.Clip(mm.Training),
	}
	// Check the shapes before decoding the arrays they size.
	if err := (&Model{m: p.M, d: p.D, k: p.K, task: p.Task, loss: p.Loss, classes: p.Classes, classNames: p.ClassNames,
		calibration: p.Calibration, decision: p.Decision, uncertainty: p.Uncertainty, features: p.Features,
		targetMean: p.TargetMean, featureMean: p.FeatureMean, featureStd: p.FeatureStd, kern: p.Kernel}).validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	lens := []int{p.M * p.D, p.M * p.K}
	if p.Uncertainty != nil {
		lens = append(lens, p.M*p.Uncertainty.Rank)
	}
	arrs, err := container.DecodeArrays(payload, lens...)
	if err != nil {
		return nil, err
	}
	p.Centers, p.Alpha = arrs[0], arrs[1]
	if len(arrs) > 2 {
		p.UncertaintyFactor = arrs[2]
	}
	m, err := New(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return m, nil
}
