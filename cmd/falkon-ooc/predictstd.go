package main

import (
	"fmt"
	"math"
	"sort"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// checkStd refuses --std and --interval for a model without predictive
// standard deviations, and an interval level outside (0, 1).
func checkStd(o *predictOpts, m *ooc.Model) error {
	if !o.std && o.interval == 0 {
		return nil
	}
	flag := "--std"
	if !o.std {
		flag = "--interval"
	}
	switch {
	case o.interval != 0 && !(o.interval > 0 && o.interval < 1):
		return usagef("--interval must be a level in (0, 1) such as 0.9, got %g", o.interval)
	case m.Task() != ooc.TaskRegression:
		return fmt.Errorf("%s: %s is a %s model; predictive standard deviations are for regression (--proba gives a classifier's calibrated probabilities)", flag, o.model, m.Task())
	case m.Uncertainty() == nil:
		return fmt.Errorf("%s: model %s has no predictive standard deviations: it was fitted without --uncertainty; refit with fit --uncertainty", flag, o.model)
	}
	return nil
}

// stdColumns are the extra output columns of a regression with --std
// and --interval: TARGET_std per target, then TARGET_lower and
// TARGET_upper per target.
func stdColumns(targets []string, std bool, interval float64) []string {
	var cols []string
	if std {
		for _, t := range targets {
			cols = append(cols, t+"_std")
		}
	}
	if interval > 0 {
		for _, t := range targets {
			cols = append(cols, t+"_lower", t+"_upper")
		}
	}
	return cols
}

// appendStd appends one row's extra columns (see stdColumns) for its
// scores and standard deviations.
func appendStd(dst, scores, sd []float64, std bool, z float64) []float64 {
	if std {
		dst = append(dst, sd...)
	}
	if z > 0 {
		for j, s := range scores {
			dst = append(dst, s-z*sd[j], s+z*sd[j])
		}
	}
	return dst
}

// stdReport is how the predictive standard deviations did on rows with
// known targets (predict --std or --interval on labelled data).
type stdReport struct {
	Rows int64 `json:"rows"`
	// Levels holds the central intervals 0.5, 0.9, 0.95 (and --interval's).
	Levels []levelReport `json:"levels"`
	// NLPD is the mean negative log predictive density of the targets,
	// NLPDConstant that of the constant variance fitted on the validation
	// rows (the model's residual variance there): the baseline.
	NLPD         float64 `json:"nlpd"`
	NLPDConstant float64 `json:"nlpd_constant"`
}

// levelReport is one interval level: the share of targets inside, the
// mean width, and the width of the constant-width interval (around the
// same predictions) that covers the same share.
type levelReport struct {
	Level         float64 `json:"level"`
	Coverage      float64 `json:"coverage"`
	MeanWidth     float64 `json:"mean_width"`
	ConstantWidth float64 `json:"constant_width"`
}

// stdMetrics accumulates residuals and standard deviations.
type stdMetrics struct {
	resVar []float64 // the model's validation residual variance per output
	e, sd  []float64
	k      int
}

func (s *stdMetrics) add(e, sd float64) { s.e, s.sd = append(s.e, e), append(s.sd, sd) }

func (s *stdMetrics) report(interval float64) *stdReport {
	n := len(s.e)
	if n == 0 {
		return nil
	}
	r := &stdReport{Rows: int64(n / s.k)}
	levels := []float64{0.5, 0.9, 0.95}
	if interval > 0 && interval != 0.5 && interval != 0.9 && interval != 0.95 {
		levels = append(levels, interval)
		sort.Float64s(levels)
	}
	abs := make([]float64, n)
	for i, e := range s.e {
		abs[i] = math.Abs(e)
		v := s.sd[i] * s.sd[i]
		c := s.resVar[i%s.k]
		r.NLPD += 0.5*math.Log(2*math.Pi*v) + e*e/(2*v)
		r.NLPDConstant += 0.5*math.Log(2*math.Pi*c) + e*e/(2*c)
	}
	r.NLPD /= float64(n)
	r.NLPDConstant /= float64(n)
	sort.Float64s(abs)
	for _, l := range levels {
		z := ooc.IntervalZ(l)
		in, width := 0, 0.0
		for i, e := range s.e {
			if math.Abs(e) <= z*s.sd[i] {
				in++
			}
			width += 2 * z * s.sd[i]
		}
		cov := float64(in) / float64(n)
		q := abs[min(int(math.Ceil(cov*float64(n)))-1, n-1)]
		if in == 0 {
			q = 0
		}
		r.Levels = append(r.Levels, levelReport{Level: l, Coverage: cov, MeanWidth: width / float64(n), ConstantWidth: 2 * q})
	}
	return r
}

// line is the summary's text.
func (r *stdReport) line() string {
	s := ""
	for i, l := range r.Levels {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%g %% covers %.1f %%", 100*l.Level, 100*l.Coverage)
	}
	for _, l := range r.Levels {
		if l.Level == 0.9 {
			s += fmt.Sprintf("; 90 %% width %.4g (constant width for the same coverage %.4g)", l.MeanWidth, l.ConstantWidth)
		}
	}
	return s + fmt.Sprintf("; NLPD %.4g (constant variance %.4g)", r.NLPD, r.NLPDConstant)
}
