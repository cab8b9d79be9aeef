package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// IntervalMethod is how a central interval's multiplier of the
// predictive standard deviation is chosen (Model.IntervalMultiplier).
type IntervalMethod string

// Interval methods. IntervalAuto, the default, is IntervalConformal when
// the model holds a Conformal calibration that reaches the level and
// IntervalGaussian otherwise.
const (
	IntervalAuto      IntervalMethod = ""
	IntervalGaussian  IntervalMethod = "gaussian"
	IntervalConformal IntervalMethod = "conformal"
)

// ParseIntervalMethod parses "gaussian", "conformal" or "" (IntervalAuto).
func ParseIntervalMethod(s string) (IntervalMethod, error) {
	switch m := IntervalMethod(s); m {
	case IntervalAuto, IntervalGaussian, IntervalConformal:
		return m, nil
	}
	return "", fmt.Errorf("unknown interval method %q (want gaussian or conformal)", s)
}

// ConformalLevels are the levels at which a fit stores the quantiles of
// its standardised validation residuals.
var ConformalLevels = []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7,
	0.75, 0.8, 0.85, 0.9, 0.95, 0.975, 0.99, 0.995}

// ConformalReportLevels are the levels whose validation coverage a fit
// reports.
var ConformalReportLevels = []float64{0.5, 0.8, 0.9, 0.95, 0.99}

// Conformal is a split-conformal calibration of the central intervals
// score ± z·std: Z[i] is the ⌈(n+1)·Levels[i]⌉-th smallest of the n
// standardised validation residuals |y − ŷ|/std (outputs pooled), so
// that a new row exchangeable with the validation rows falls inside the
// interval of level Levels[i] with probability at least Levels[i],
// whatever the distribution of the errors. Levels whose rank exceeds n
// are not stored. Between stored levels, and between level 0 (z = 0) and
// the first, the multiplier is linear in the level; above the last
// stored level there is none (Multiplier).
type Conformal struct {
	Rows   int64     `json:"rows"`
	Levels []float64 `json:"levels"`
	Z      []float64 `json:"z"`
	// Coverage is how the Gaussian and the conformal intervals did on
	// the validation rows at ConformalReportLevels.
	Coverage []ConformalCoverage `json:"coverage,omitempty"`
}

// ConformalCoverage is the share of validation residuals inside the
// central Gaussian and conformal intervals of Level. TooFew says the
// validation rows were fewer than 20/(1 − Level): too few to estimate the
// level's quantile well (Conformal is 0 when not stored).
type ConformalCoverage struct {
	Level     float64 `json:"level"`
	Gaussian  float64 `json:"gaussian"`
	Conformal float64 `json:"conformal"`
	TooFew    bool    `json:"too_few,omitempty"`
}

// NewConformal returns the calibration of the standardised residuals r
// (|y − ŷ|/std, one per row and output), at ConformalLevels; it sorts r.
func NewConformal(r []float64) *Conformal {
	sort.Float64s(r)
	n := len(r)
	c := &Conformal{Rows: int64(n)}
	for _, q := range ConformalLevels {
		k := int(math.Ceil(float64(n+1) * q))
		if k > n || k < 1 {
			break
		}
		c.Levels = append(c.Levels, q)
		c.Z = append(c.Z, r[k-1])
	}
	inside := func(z float64) float64 { // share of r ≤ z
		return float64(sort.Search(n, func(i int) bool { return r[i] > z })) / float64(max(n, 1))
	}
	for _, q := range ConformalReportLevels {
		cc := ConformalCoverage{Level: q, Gaussian: inside(IntervalZ(q)), TooFew: float64(n) < 20/(1-q)}
		if z, ok := c.Multiplier(q); ok {
			cc.Conformal = inside(z)
		}
		c.Coverage = append(c.Coverage, cc)
	}
	return c
}

// Multiplier returns the conformal z of a central interval of level
// (score ± z·std), and false when level is not in (0, 1) or above the
// last stored level.
func (c *Conformal) Multiplier(level float64) (float64, bool) {
	if c == nil || !(level > 0 && level < 1) || len(c.Levels) == 0 || level > c.Levels[len(c.Levels)-1] {
		return 0, false
	}
	i := sort.SearchFloat64s(c.Levels, level)
	if c.Levels[i] == level {
		return c.Z[i], true
	}
	l0, z0 := 0.0, 0.0
	if i > 0 {
		l0, z0 = c.Levels[i-1], c.Z[i-1]
	}
	return z0 + (c.Z[i]-z0)*(level-l0)/(c.Levels[i]-l0), true
}

func (c *Conformal) validate() error {
	if len(c.Levels) != len(c.Z) || c.Rows < int64(len(c.Z)) {
		return fmt.Errorf("conformal calibration has %d levels, %d multipliers and %d rows", len(c.Levels), len(c.Z), c.Rows)
	}
	for i, l := range c.Levels {
		z := c.Z[i]
		if !(l > 0 && l < 1) || !(z >= 0) || math.IsInf(z, 0) || i > 0 && !(l > c.Levels[i-1] && z >= c.Z[i-1]) {
			return fmt.Errorf("conformal calibration: level %v, multiplier %v", l, z)
		}
	}
	return nil
}

// ErrNoConformal is returned by IntervalMultiplier for IntervalConformal
// when the model has no conformal calibration reaching the level.
var ErrNoConformal = errors.New("the model has no conformal calibration at this level")

// Conformal returns the model's conformal calibration of its intervals,
// or nil.
func (m *Model) Conformal() *Conformal {
	if m.conformal == nil {
		return nil
	}
	c := *m.conformal
	c.Levels, c.Z, c.Coverage = slices.Clone(c.Levels), slices.Clone(c.Z), slices.Clone(c.Coverage)
	return &c
}

// IntervalMultiplier returns z of the central interval of level
// (score ± z·std, level in (0, 1)) by method, and the method used:
// IntervalAuto is conformal when the model's calibration reaches the
// level, Gaussian (IntervalZ) otherwise. It returns ErrNoUncertainty for
// a model without predictive standard deviations and ErrNoConformal
// when IntervalConformal cannot be had.
func (m *Model) IntervalMultiplier(level float64, method IntervalMethod) (float64, IntervalMethod, error) {
	if m.uncertainty == nil {
		return 0, "", ErrNoUncertainty
	}
	if !(level > 0 && level < 1) {
		return 0, "", fmt.Errorf("interval level %v: want a level in (0, 1)", level)
	}
	if method != IntervalGaussian {
		if z, ok := m.conformal.Multiplier(level); ok {
			return z, IntervalConformal, nil
		}
		if method == IntervalConformal {
			if m.conformal == nil {
				return 0, "", ErrNoConformal
			}
			return 0, "", fmt.Errorf("%w (its %d validation rows reach %v)", ErrNoConformal, m.conformal.Rows, m.conformal.Levels[len(m.conformal.Levels)-1])
		}
	}
	return IntervalZ(level), IntervalGaussian, nil
}

// WithConformal returns a copy of the model m, which has an Uncertainty,
// with the conformal calibration c (nil removes it). It takes ownership
// of c.
func (m *Model) WithConformal(c *Conformal) (*Model, error) {
	if c != nil {
		if m.uncertainty == nil {
			return nil, ErrNoUncertainty
		}
		if err := c.validate(); err != nil {
			return nil, err
		}
	}
	cp := *m
	cp.conformal = c
	return &cp, nil
}
