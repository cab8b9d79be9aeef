package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// Model is what the server needs of a fitted model: its description and
// scorers for its rows. FromModel adapts a *model.Model; tests supply
// their own.
type Model interface {
	// Info describes the model. The server calls it once, when the model
	// is swapped in, and keeps the result.
	Info() Info
	// NewScorer returns a scorer for one goroutine at a time.
	NewScorer() Scorer
}

// Scorer predicts batches of rows of one model, reusing its scratch
// space from call to call. It is not safe for concurrent use.
type Scorer interface {
	// Score writes to dst the predictions of rows rows of raw features x
	// (rows × D, row-major, in the order of Info.Features): the scores,
	// the classes and probabilities of a classifier, and with std the
	// predictive standard deviations. dst's slices are reused when their
	// capacity suffices.
	Score(dst *Result, x []float64, rows int, std bool) error
}

// Result holds the predictions of a batch of rows.
type Result struct {
	Scores []float64 // rows × K
	Class  []int     // rows, classification: the index in Info.ClassNames
	Proba  []float64 // rows × len(ClassNames), classification
	Std    []float64 // rows × K, when asked for
}

// Info describes a model to the server: what a request holds and what
// an answer holds.
type Info struct {
	// Features are the feature names, in the order Scorer reads them.
	Features []string
	// Targets are the target names (one for classification).
	Targets []string
	// Task is "regression", "binary" or "multiclass".
	Task string
	// ClassNames are the classes' names of a classifier (its labels, or
	// its class values formatted as numbers); Labeled says they are
	// string labels, answered as strings.
	ClassNames []string
	Labeled    bool
	// Classes are the class values of a classifier, in the order of
	// ClassNames (the label codes 0, 1, … for a labelled one).
	Classes []float64
	// K is the number of scores per row.
	K int
	// FeatureMean are the training means that --nulls mean reads a
	// missing value as; nil for a model fitted without standardisation.
	FeatureMean []float64
	// Nulls is the NULL policy of the model's training data: "mean" when
	// its NULL features were filled with their means, which the server
	// then does too unless Options.Nulls says otherwise; "" otherwise.
	Nulls string
	// Encoding, when not nil, says how some features are made from
	// categorical and time input columns (package featenc): a request
	// then holds those input columns, as falkon-ooc predict reads them
	// from a file, and the server expands them into the features.
	Encoding *featenc.Spec
	// Std says the model gives predictive standard deviations.
	Std bool
	// Summary is the model's summary as inspect --json shows it.
	Summary json.RawMessage
	// IntervalZ, when not nil, writes into z, one per output, the number
	// of standard deviations of the central interval of a level by
	// method, as the model calibrates it, and returns the method used:
	// "conformal" (its conformal calibration), "gaussian" (the package's
	// IntervalZ), or "" for conformal when the calibration reaches the
	// level, else gaussian; an error when the method cannot give the
	// level. nil: the package's IntervalZ for every output, and "conformal"
	// refused.
	IntervalZ func(z []float64, level float64, method string) (string, error)
}

func (in *Info) classifier() bool { return in.Task == "binary" || in.Task == "multiclass" }

func (in *Info) classValue(c int) float64 { return in.Classes[c] }

func (in *Info) check() error {
	switch {
	case len(in.Features) == 0:
		return fmt.Errorf("serve: the model has no features")
	case in.K < 1 || len(in.Targets) == 0:
		return fmt.Errorf("serve: the model has %d outputs and %d targets", in.K, len(in.Targets))
	case in.Task != "regression" && in.Task != "binary" && in.Task != "multiclass":
		return fmt.Errorf("serve: unknown task %q", in.Task)
	case in.classifier() && (len(in.ClassNames) < 2 || len(in.Classes) != len(in.ClassNames)):
		return fmt.Errorf("serve: a %s model with %d classes and %d class names", in.Task, len(in.Classes), len(in.ClassNames))
	case in.FeatureMean != nil && len(in.FeatureMean) != len(in.Features):
		return fmt.Errorf("serve: %d feature means for %d features", len(in.FeatureMean), len(in.Features))
	case in.Nulls != "" && in.Nulls != "mean":
		return fmt.Errorf("serve: unknown NULL policy %q of the training data", in.Nulls)
	}
	seen := make(map[string]bool, len(in.Features))
	for _, f := range in.Features {
		if seen[f] {
			return fmt.Errorf("serve: feature %q appears twice", f)
		}
		seen[f] = true
	}
	return nil
}

// intervalZ writes the multipliers of ask's interval into z (one per
// output) and returns the method used; a *RequestError naming
// interval_method when the model cannot give it.
func (in *Info) intervalZ(z []float64, ask Ask) (string, error) {
	if in.IntervalZ != nil {
		used, err := in.IntervalZ(z, ask.Interval, ask.IntervalMethod)
		if err != nil {
			return "", &RequestError{Status: 400, Row: -1, Field: "interval_method",
				Msg: fmt.Sprintf("interval_method=%s: %v; ask for interval_method=gaussian, or fit the model again with --uncertainty and more validation rows", ask.IntervalMethod, err)}
		}
		return used, nil
	}
	if ask.IntervalMethod == "conformal" {
		return "", &RequestError{Status: 400, Row: -1, Field: "interval_method",
			Msg: "interval_method=conformal: the model has no conformal calibration of its intervals; ask for interval_method=gaussian"}
	}
	for j := range z {
		z[j] = IntervalZ(ask.Interval)
	}
	return "gaussian", nil
}

// IntervalZ returns the number of standard deviations of a central
// interval of the normal distribution holding level of its mass (1.645
// for 0.9), as falkon-ooc predict --interval computes it.
func IntervalZ(level float64) float64 { return math.Sqrt2 * math.Erfinv(level) }

// Ask says what a request asks for beside the predictions.
type Ask struct {
	// Proba answers calibrated class probabilities instead of scores.
	Proba bool
	// Std answers the predictive standard deviations; Interval > 0 the
	// central interval of that level (0 < Interval < 1).
	Std      bool
	Interval float64
	// IntervalMethod is how the interval's bounds are set: "conformal",
	// "gaussian", or "" for the model's conformal calibration when it
	// reaches the level, else gaussian (falkon-ooc predict
	// --interval-method).
	IntervalMethod string
}

// columns returns the names of the answer's columns for ask, as
// falkon-ooc predict names its output columns: TARGET_pred, then the
// scores (score, score_CLASS) or probabilities (p_CLASS), then
// TARGET_std and TARGET_lower, TARGET_upper.
func (in *Info) columns(ask Ask) []string {
	var cols []string
	if !in.classifier() {
		for _, t := range in.Targets {
			cols = append(cols, t+"_pred")
		}
	} else {
		cols = append(cols, in.Targets[0]+"_pred")
		switch {
		case ask.Proba:
			for _, c := range in.ClassNames {
				cols = append(cols, "p_"+c)
			}
		case in.Task == "binary":
			cols = append(cols, "score")
		default:
			for _, c := range in.ClassNames {
				cols = append(cols, "score_"+c)
			}
		}
	}
	if ask.Std {
		for _, t := range in.Targets {
			cols = append(cols, t+"_std")
		}
	}
	if ask.Interval > 0 {
		for _, t := range in.Targets {
			cols = append(cols, t+"_lower", t+"_upper")
		}
	}
	return cols
}

// parseAsk reads the query parameters proba, std and interval.
func (in *Info) parseAsk(raw string) (Ask, error) {
	get := func(name string) string { return queryValue(raw, name) }
	var a Ask
	var err error
	boolParam := func(name string) bool {
		v := get(name)
		if v == "" || err != nil {
			return false
		}
		b, e := strconv.ParseBool(v)
		if e != nil {
			err = &RequestError{Status: 400, Row: -1, Field: name, Msg: fmt.Sprintf("query parameter %s=%q is not true or false", name, v)}
		}
		return b
	}
	a.Proba = boolParam("proba")
	a.Std = boolParam("std")
	if err != nil {
		return a, err
	}
	if v := get("interval"); v != "" {
		l, e := strconv.ParseFloat(v, 64)
		if e != nil || !(l > 0 && l < 1) {
			return a, &RequestError{Status: 400, Row: -1, Field: "interval", Msg: fmt.Sprintf("query parameter interval=%q is not a level between 0 and 1 (0.9: the central 90 %% interval)", v)}
		}
		a.Interval = l
	}
	if v := get("interval_method"); v != "" {
		if v != "conformal" && v != "gaussian" {
			return a, &RequestError{Status: 400, Row: -1, Field: "interval_method", Msg: fmt.Sprintf("query parameter interval_method=%q is not conformal or gaussian", v)}
		}
		if a.Interval == 0 {
			return a, &RequestError{Status: 400, Row: -1, Field: "interval_method", Msg: "interval_method sets how the bounds of an interval are found: ask for one with interval too (interval=0.9)"}
		}
		a.IntervalMethod = v
	}
	switch {
	case a.Proba && !in.classifier():
		return a, &RequestError{Status: 400, Row: -1, Field: "proba", Msg: "proba: a regression model has no class probabilities"}
	case (a.Std || a.Interval > 0) && !in.Std:
		f := "std"
		if !a.Std {
			f = "interval"
		}
		return a, &RequestError{Status: 400, Row: -1, Field: f, Msg: f + ": the model has no predictive standard deviations (fit it with --uncertainty)"}
	}
	return a, nil
}
