package model

import (
	"context"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// A string target is stored as integer codes 0 … L−1 into its labels
// (stream.Labeler). A model keeps the label of each class (ClassNames);
// a source ingested on its own numbers only the labels it has, so its
// codes may differ from the model's, and from the training source's.
// Relabel and AlignLabels map them.

// TargetLabels returns the label names of src's first target
// (stream.Labeler), or nil.
func TargetLabels(src stream.Source) []string {
	if l, ok := src.(stream.Labeler); ok {
		if labels := l.TargetLabels(); len(labels) == src.NumTargets() && len(labels) > 0 {
			return labels[0]
		}
	}
	return nil
}

// LabelCodes maps label names to their codes, their positions in labels
// (nil for nil labels).
func LabelCodes(labels []string) map[string]float64 {
	if labels == nil {
		return nil
	}
	code := make(map[string]float64, len(labels))
	for j, l := range labels {
		code[l] = float64(j)
	}
	return code
}

// RelabelTo returns src with the codes of its first target's labels
// mapped to code[label], for a source whose label codes differ from
// code's. It returns src when it has no labels, code is nil or the codes
// already agree, and an error naming a label that code lacks (what
// names src in it, target the target column).
func RelabelTo(src stream.Source, what, target string, code map[string]float64) (stream.Source, error) {
	labels := TargetLabels(src)
	if labels == nil || code == nil {
		return src, nil
	}
	codes := make([]float64, len(labels))
	same := true
	for j, l := range labels {
		c, ok := code[l]
		if !ok {
			known := make([]string, 0, len(code))
			for k := range code {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("%s: target %q has the label %q, which the model's classes %q lack", what, target, l, known)
		}
		codes[j] = c
		same = same && c == float64(j)
	}
	if same {
		return src, nil
	}
	return &relabeled{Source: src, codes: codes}, nil
}

// relabeled maps the label codes of its source's first target.
type relabeled struct {
	stream.Source
	codes []float64
}

// WeightColumn and ReadWeights forward the source's row weights.
func (r *relabeled) WeightColumn() string { return stream.WeightColumn(r.Source) }
func (r *relabeled) ReadWeights(ctx context.Context, i int, w []float64) error {
	return r.Source.(stream.Weighter).ReadWeights(ctx, i, w)
}

func (r *relabeled) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if err := r.Source.ReadChunk(ctx, i, x, y); err != nil || y == nil {
		return err
	}
	k := r.NumTargets()
	for at := 0; at < len(y); at += k {
		if j := int(y[at]); y[at] == float64(j) && j >= 0 && j < len(r.codes) {
			y[at] = r.codes[j]
		}
	}
	return nil
}

// AlignLabels returns val with the codes of its label target mapped to
// those of train's (both as stream.Labeler reports them), for a
// validation source ingested apart from the training data, which numbers
// only the labels it has; val itself when neither has labels or the codes
// already agree. A label of val that train lacks is an error naming it.
func AlignLabels(train, val stream.Source) (stream.Source, error) {
	_, targets := stream.ColumnsOf(train)
	if len(targets) == 0 {
		return val, nil
	}
	return RelabelTo(val, "the validation data", targets[0], LabelCodes(TargetLabels(train)))
}

// modelCodes maps m's class names to its class values (nil when its
// classes are not labels).
func (m *Model) modelCodes() map[string]float64 {
	if m.classNames == nil {
		return nil
	}
	code := make(map[string]float64, len(m.classNames))
	for i, n := range m.classNames {
		code[n] = m.classes[i]
	}
	return code
}

// Relabel returns src with the codes of its label target (stream.Labeler)
// mapped to the model's, so that Evaluate and Predict's targets match the
// model's classes whatever order the source numbered its labels in; src
// itself when they already match or the source has no labels. A label
// that the model lacks is an error naming it.
func (m *Model) Relabel(src stream.Source) (stream.Source, error) {
	if len(m.targets) == 0 || m.task == TaskRegression {
		return src, nil
	}
	return RelabelTo(src, "the data", m.targets[0], m.modelCodes())
}
