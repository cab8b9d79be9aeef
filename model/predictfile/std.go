package predictfile

import (
	"fmt"
	"math"
	"sort"

	"github.com/falkon-ooc/falkon-ooc/model"
)

// StdReport is how the predictive standard deviations did on rows with
// known targets (predict --std or --interval on labelled data).
type StdReport struct {
	Rows int64 `json:"rows"`
	// Levels holds the central intervals 0.5, 0.9, 0.95 (and --interval's).
	Levels []LevelReport `json:"levels"`
	// NLPD is the mean negative log predictive density of the targets,
	// NLPDConstant that of the constant variance fitted on the validation
	// rows (the model's residual variance there): the baseline.
	NLPD         float64 `json:"nlpd"`
	NLPDConstant float64 `json:"nlpd_constant"`
}

// LevelReport is one interval level: the share of targets inside, the
// mean width, and the width of the constant-width interval (around the
// same predictions) that covers the same share.
type LevelReport struct {
	Level         float64 `json:"level"`
	Coverage      float64 `json:"coverage"`
	MeanWidth     float64 `json:"mean_width"`
	ConstantWidth float64 `json:"constant_width"`
	// Method is how the interval's multiplier was chosen ("gaussian" or
	// "conformal").
	Method model.IntervalMethod `json:"method,omitempty"`
}

// StdMetrics accumulates residuals and standard deviations.
type StdMetrics struct {
	resVar []float64 // the model's validation residual variance per output
	e, sd  []float64
	k      int
	m      *model.Model
	method model.IntervalMethod
}

// Add adds one residual e and its standard deviation sd.
func (s *StdMetrics) Add(e, sd float64) { s.e, s.sd = append(s.e, e), append(s.sd, sd) }

// Report summarises the residuals at the levels 0.5, 0.9, 0.95 and
// interval; nil without residuals.
func (s *StdMetrics) Report(interval float64) *StdReport {
	n := len(s.e)
	if n == 0 {
		return nil
	}
	r := &StdReport{Rows: int64(n / s.k)}
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
	z := make([]float64, s.k)
	for _, l := range levels {
		method := model.IntervalGaussian
		for j := range z {
			z[j] = model.IntervalZ(l)
		}
		if s.m != nil {
			if zm, used, err := s.m.IntervalMultipliers(l, s.method); err == nil {
				z, method = zm, used
			}
		}
		in, width := 0, 0.0
		for i, e := range s.e {
			zi := z[i%s.k]
			if math.Abs(e) <= zi*s.sd[i] {
				in++
			}
			width += 2 * zi * s.sd[i]
		}
		cov := float64(in) / float64(n)
		// The constant width covering the same share: twice the in-th
		// smallest |residual| (0 when no target is inside).
		q := 0.0
		if in > 0 {
			q = abs[in-1]
		}
		r.Levels = append(r.Levels, LevelReport{Level: l, Coverage: cov, MeanWidth: width / float64(n), ConstantWidth: 2 * q, Method: method})
	}
	return r
}

// Line is the summary's text.
func (r *StdReport) Line() string {
	s := ""
	for i, l := range r.Levels {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%g %% covers %.1f %%", 100*l.Level, 100*l.Coverage)
		if l.Method == model.IntervalConformal {
			s += " (conformal)"
		}
	}
	for _, l := range r.Levels {
		if l.Level == 0.9 {
			s += fmt.Sprintf("; 90 %% width %.4g (constant width for the same coverage %.4g)", l.MeanWidth, l.ConstantWidth)
		}
	}
	return s + fmt.Sprintf("; NLPD %.4g (constant variance %.4g)", r.NLPD, r.NLPDConstant)
}

// SplitZ returns the intervals' multiplier that every output shares, or,
// when the outputs' differ (a model calibrated output by output), 0 and
// the multipliers: a --json document's interval_z and interval_z_outputs.
func SplitZ(z []float64) (float64, []float64) {
	for _, v := range z {
		if v != z[0] {
			return 0, z
		}
	}
	if len(z) == 0 {
		return 0, nil
	}
	return z[0], nil
}

// IntervalLine is the summary's text of the central intervals of level
// set by method with the multipliers z of the outputs named targets:
// "90 % conformal: prediction ± 1.645 std", or with one multiplier per
// output "90 % conformal: prediction ± z·std, z = 1.7 (y1), 1.9 (y2)".
func IntervalLine(level float64, method model.IntervalMethod, z []float64, targets []string) string {
	s := fmt.Sprintf("%g %% %s: prediction ± ", 100*level, method)
	one, per := SplitZ(z)
	if per == nil {
		return s + fmt.Sprintf("%.4g std", one)
	}
	s += "z·std, z ="
	for j, v := range per {
		if j > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %.4g (%s)", v, targets[j])
	}
	return s
}
