package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/falkon-ooc/falkon-ooc/model"
)

// fitted adapts a *model.Model to Model.
type fitted struct{ m *model.Model }

// applies lists the capabilities of the model format (model.Requires)
// that the server applies: "decision", the threshold of a binary model,
// is applied by package model's Predictor to the classes it answers;
// "conformal" and "conformal-outputs", the calibration of the intervals
// (per output), by Info.IntervalZ; "encoding", the categorical and time
// features, and "target-encoding", categorical columns read as their
// levels' mean target, by the decoders (Info.Encoding, through
// featenc.Assembler).
var applies = map[string]bool{"decision": true, "conformal": true, "conformal-outputs": true, "encoding": true, "target-encoding": true}

// FromModel returns m as the server serves it. A model that uses a
// capability of the model format the server does not apply is refused,
// rather than answered wrongly.
func FromModel(m *model.Model) (Model, error) {
	for _, c := range m.Requires() {
		if !applies[c] {
			return nil, fmt.Errorf("the model uses %q, which this server does not apply", c)
		}
	}
	return fitted{m}, nil
}

func (f fitted) Info() Info {
	m := f.m
	in := Info{
		Features: m.Features(), Targets: m.Targets(), Task: string(m.Task()), K: m.K(),
		FeatureMean: m.FeatureMean(), Std: m.Uncertainty() != nil, Nulls: m.Nulls(), Encoding: m.Encoding(),
	}
	if m.Task() != model.TaskRegression {
		in.ClassNames, in.Labeled, in.Classes = m.ClassNames(), m.Labeled(), m.Classes()
		if in.Labeled {
			for i := range in.Classes {
				in.Classes[i] = float64(i)
			}
		}
	}
	if m.Uncertainty() != nil {
		in.IntervalZ = func(z []float64, level float64, method string) (string, error) {
			used, err := m.IntervalMultipliersTo(z, level, model.IntervalMethod(method))
			return string(used), err
		}
	}
	if s, err := m.SummaryJSON(); err == nil {
		in.Summary = s
	}
	return in
}

func (f fitted) NewScorer() Scorer {
	s := &predictor{p: f.m.NewPredictor()}
	if f.m.Task() != model.TaskRegression {
		s.want = model.WantProba
	}
	return s
}

// predictor is a Scorer over a model.Predictor, its predictions written
// straight into the caller's Result.
type predictor struct {
	p    *model.Predictor
	want model.Want
	pred model.Prediction
}

func (s *predictor) Score(dst *Result, x []float64, rows int, std bool) error {
	want := s.want
	if std {
		want |= model.WantStd
	}
	s.pred = model.Prediction{Scores: dst.Scores, Class: dst.Class, Proba: dst.Proba, Std: dst.Std}
	err := s.p.PredictTo(&s.pred, x, rows, want)
	dst.Scores, dst.Class, dst.Proba, dst.Std = s.pred.Scores, s.pred.Class, s.pred.Proba, s.pred.Std
	return err
}

// Load reads the model file at path. Its identity is the first 12 hex
// digits of the file's SHA-256: two files with the same bytes are the
// same model.
func Load(path string) (Model, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("load model: %w", err)
	}
	m, err := model.Parse(data)
	if err != nil {
		return nil, "", &model.FileError{Kind: "model", Path: path, Err: err}
	}
	fm, err := FromModel(m)
	if err != nil {
		return nil, "", &model.FileError{Kind: "model", Path: path, Err: err}
	}
	sum := sha256.Sum256(data)
	return fm, hex.EncodeToString(sum[:6]), nil
}
