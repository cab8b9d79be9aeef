package predictfile

import (
	"errors"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// Input says how predict reads its input files (its flags).
type Input struct {
	Keep     []string // columns copied beside the predictions
	Nulls    string   // error, drop, mean or zero (DefaultNulls when not given)
	NoHeader bool
	Names    []string // the columns of headerless text files
	MaxLine  int
}

// DefaultNulls is the NULL policy of predict when none is given: the
// training data's, which travels with the model (model.Nulls): "mean" for
// a model fitted on data whose NULL features were filled with their
// means, else "error".
func DefaultNulls(m *model.Model) string {
	if m.Nulls() == "mean" {
		return "mean"
	}
	return "error"
}

// TableOptions returns the tabular.Options that read the inputs of model
// m (from the file path) for in: its features, its targets when present,
// the kept columns, and its training means for Nulls "mean".
//
// A model with an encoding (Model.Encoding) reads the input columns its
// features were made from (featenc.Assembler): its numeric features,
// then the categorical columns as level codes and the time columns.
func TableOptions(m *model.Model, path string, in Input) (tabular.Options, error) {
	asm, err := featenc.NewAssembler(m.Encoding(), m.Features())
	if err != nil {
		return tabular.Options{}, fmt.Errorf("model %s: %w", path, err)
	}
	topt := tabular.Options{
		Numeric: asm.Columns, Categorical: asm.Categorical, Optional: m.Targets(), Keep: in.Keep, Nulls: in.Nulls,
		NoHeader: in.NoHeader || len(in.Names) > 0, Names: in.Names, MaxLine: in.MaxLine,
	}
	if in.Nulls == "mean" { // the training means: 0 in the model's standardised space
		mean := m.FeatureMean()
		if mean == nil {
			return topt, fmt.Errorf("--nulls mean: model %s was fitted without standardisation and keeps no feature means; use --nulls zero or drop", path)
		}
		// Each column read gets the training mean of the feature of its
		// name (a time column's is its days); a categorical column's
		// NULL is a level, never filled.
		topt.Nulls, topt.Fill = "fill", make([]float64, len(asm.Columns))
		for k, c := range asm.Columns {
			if j := slices.Index(m.Features(), c); j >= 0 {
				topt.Fill[k] = mean[j]
			}
		}
	}
	if m.Labeled() {
		topt.Labels = map[string][]string{m.Targets()[0]: m.ClassNames()}
	}
	return topt, nil
}

// ExplainMissing words a missing-column error of tabular.Open for
// predict.
func ExplainMissing(err error, features, keep []string) error {
	var me *tabular.MissingError
	if !errors.As(err, &me) {
		return err
	}
	var feat, kept []string
	for _, c := range me.Missing {
		switch {
		case slices.Contains(features, c):
			feat = append(feat, c)
		case slices.Contains(keep, c):
			kept = append(kept, c)
		}
	}
	have := fmt.Sprintf("%q", me.Have)
	if len(feat) > 0 {
		return fmt.Errorf("%s: the model's feature column(s) %q are missing; its columns are %s", me.File, feat, have)
	}
	if len(kept) > 0 {
		return fmt.Errorf("--keep: %s: no column(s) %q; its columns are %s", me.File, kept, have)
	}
	return err
}
