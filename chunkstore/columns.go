package chunkstore

import (
	"errors"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// InputColumn records what ingest did with one column of its inputs: made
// it a feature or a target, or skipped it and why. Manifest.InputColumns
// lists them in input order, so that inspect and fit can show a store's
// provenance; chunkstore itself reads only the stored columns.
type InputColumn struct {
	Name string `json:"name"`
	// Type is the column's type in the input, as users see it in messages,
	// e.g. "int64", "utf8 (string)", "number" (a text column).
	Type string `json:"type"`
	// Role is RoleFeature, RoleTarget or RoleSkipped.
	Role string `json:"role"`
	// Reason says why a skipped column was skipped (one of the Skip…
	// constants); empty for features and targets.
	Reason string `json:"reason,omitempty"`
	// Note explains Reason, or anything worth knowing about a kept column,
	// in a sentence for people.
	Note string `json:"note,omitempty"`
	// FromPath says that the column's values come from the input files'
	// directory names (a Hive partition key, as region=3/), not from the
	// files themselves.
	FromPath bool `json:"from_path,omitempty"`
	// Nulls counts the feature's values that were NULL, NaN or ±Inf and
	// were filled with the mean of the others (ingest --nulls mean).
	Nulls int64 `json:"nulls,omitempty"`
	// Bad counts, in a report of what ingest would do (ingest.DryRun,
	// falkon-ooc inspect on Parquet/CSV), the column's NULL, NaN and ±Inf
	// values; nil when it holds none, and never in a store's manifest.
	Bad *BadCounts `json:"bad,omitempty"`
}

// BadCounts counts a column's values that are not finite numbers.
type BadCounts struct {
	Null   int64 `json:"null,omitempty"`
	NaN    int64 `json:"nan,omitempty"`
	PosInf int64 `json:"pos_inf,omitempty"`
	NegInf int64 `json:"neg_inf,omitempty"`
}

// Roles of an InputColumn.
const (
	RoleFeature = "feature"
	RoleTarget  = "target"
	RoleSkipped = "skipped"
	RoleWeight  = "weight"
)

// Reasons for skipping an input column (InputColumn.Reason).
const (
	SkipExcluded   = "excluded"   // named in --exclude
	SkipNotNamed   = "not named"  // --features lists the features, and not this one
	SkipString     = "string"     // strings and binary cannot be features
	SkipNested     = "nested"     // lists, structs, maps
	SkipDate       = "date"       // dates and timestamps are stored only when named
	SkipType       = "type"       // another type that cannot be stored
	SkipConstant   = "constant"   // one value in every row
	SkipIdentifier = "identifier" // looks like a row identifier
	SkipPartition  = "partition"  // a Hive partition key whose values are not numbers
)

var skipReasons = []string{SkipExcluded, SkipNotNamed, SkipString, SkipNested, SkipDate, SkipType,
	SkipConstant, SkipIdentifier, SkipPartition}

// LabelType is the Column.Type of a target whose input values were strings
// (class labels): the stored values are the codes 0, 1, …, len(Labels)-1,
// indexes into Column.Labels.
const LabelType = "string"

// MaxLabels is the most distinct labels a string target may have.
const MaxLabels = 100

// checkLabels checks the label names of a string target: sorted, distinct,
// at most MaxLabels.
func checkLabels(labels []string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels, more than %d", len(labels), MaxLabels)
	}
	for i := 1; i < len(labels); i++ {
		if labels[i-1] >= labels[i] {
			return errors.New("labels not sorted and distinct")
		}
	}
	return nil
}

// checkColumnsAnnex checks the InputColumns and the label fields of m.
func (m *Manifest) checkColumnsAnnex() error {
	for _, c := range m.Features {
		if c.Type == LabelType || c.Labels != nil {
			return fmt.Errorf("feature %q: labels are only for targets", c.Name)
		}
	}
	for _, c := range m.Targets {
		if (c.Type == LabelType) != (len(c.Labels) > 0) && !(c.Type == LabelType && m.Rows == 0) {
			return fmt.Errorf("target %q: type %q with %d labels", c.Name, c.Type, len(c.Labels))
		}
		if err := checkLabels(c.Labels); err != nil {
			return fmt.Errorf("target %q: %v", c.Name, err)
		}
		if len(c.Labels) > 0 && m.Rows > 0 && (!c.Integral || c.Min < 0 || c.Max > float64(len(c.Labels)-1)) {
			return fmt.Errorf("target %q: codes outside [0, %d]", c.Name, len(c.Labels)-1)
		}
	}
	for i, c := range m.InputColumns {
		if c.Name == "" {
			return fmt.Errorf("input column %d: empty name", i)
		}
		switch c.Role {
		case RoleFeature, RoleTarget, RoleWeight:
			if c.Reason != "" {
				return fmt.Errorf("input column %q: a %s with a skip reason", c.Name, c.Role)
			}
		case RoleSkipped:
			if !slices.Contains(skipReasons, c.Reason) {
				return fmt.Errorf("input column %q: unknown skip reason %q", c.Name, c.Reason)
			}
		default:
			return fmt.Errorf("input column %q: unknown role %q", c.Name, c.Role)
		}
	}
	return nil
}

// SetInputColumns records what ingest did with each input column, for the
// manifest written by Close. Call it before Close.
func (w *Writer) SetInputColumns(cols []InputColumn) {
	w.opt.InputColumns = slices.Clone(cols)
}

// SetLabels records the label names of a target column of type LabelType,
// for the manifest written by Close: the stored values must be the codes
// 0 … len(labels)-1. Labels must be sorted, distinct and at most MaxLabels.
// Call it before Close.
func (w *Writer) SetLabels(target string, labels []string) error {
	j := slices.IndexFunc(w.targets, func(c ColumnSpec) bool { return c.Name == target })
	if j < 0 || w.targets[j].Type != LabelType {
		return fmt.Errorf("chunkstore: set labels: no target %q of type %q", target, LabelType)
	}
	if err := checkLabels(labels); err != nil {
		return fmt.Errorf("chunkstore: set labels of %q: %w", target, err)
	}
	if w.opt.Labels == nil {
		w.opt.Labels = map[string][]string{}
	}
	w.opt.Labels[target] = slices.Clone(labels)
	return nil
}

// TargetLabels returns, for each target in store order, its label names
// (the stored value k stands for label k), or nil for a numeric target.
func (r *Reader) TargetLabels() [][]string {
	out := make([][]string, len(r.m.Targets))
	for j, c := range r.m.Targets {
		out[j] = slices.Clone(c.Labels)
	}
	return out
}

// InputColumns returns what ingest did with each column of the store's
// inputs, in input order; nil for a store written without that record.
func (r *Reader) InputColumns() []InputColumn { return slices.Clone(r.m.InputColumns) }

// checkEncoding checks m's encoding: valid, and each of its features a
// feature of the store.
func (m *Manifest) checkEncoding() error {
	if m.Encoding == nil {
		return nil
	}
	if err := m.Encoding.Validate(); err != nil {
		return err
	}
	have := make(map[string]bool, len(m.Features))
	for _, c := range m.Features {
		have[c.Name] = true
	}
	for _, c := range m.Encoding.Columns {
		for _, f := range c.Features {
			if !have[f] {
				return fmt.Errorf("encoding: column %q: feature %q is not a feature of the store", c.Source, f)
			}
		}
	}
	return nil
}

// encodedScale maps each feature of a one-hot column of spec to its scale.
func encodedScale(spec *featenc.Spec) map[string]float64 {
	if spec == nil {
		return nil
	}
	out := map[string]float64{}
	for _, c := range spec.Columns {
		if c.Kind == featenc.OneHot {
			for _, f := range c.Features {
				out[f] = c.Scale
			}
		}
	}
	return out
}

// Encoding returns the store's encoding of categorical and time input
// columns (Manifest.Encoding), or nil (stream.Encoded).
func (r *Reader) Encoding() *featenc.Spec { return r.m.Encoding }

// Encoding implements stream.Encoded.
func (v *View) Encoding() *featenc.Spec { return v.r.m.Encoding }

// NullPolicy returns the NULL policy of the ingest that wrote the store
// ("drop" or "mean"), or "" (stream.NullPolicer).
func (r *Reader) NullPolicy() string { return r.m.Nulls }

// NullPolicy implements stream.NullPolicer.
func (v *View) NullPolicy() string { return v.r.m.Nulls }
