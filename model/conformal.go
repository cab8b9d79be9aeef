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
//
// A model of several outputs calibrates each output on its own residuals
// (Outputs; the model format's capability "conformal-outputs"), so that
// each output's intervals keep their level when the outputs' errors
// differ in shape; Z then pools the outputs for reference only. A model
// written before per-output calibration has one Z for every output.
type Conformal struct {
	Rows   int64     `json:"rows"`
	Levels []float64 `json:"levels"`
	Z      []float64 `json:"z"`
	// Coverage is how the Gaussian and the conformal intervals did on
	// the validation rows at ConformalReportLevels (with Outputs, each
	// output's residuals against its own multipliers).
	Coverage []ConformalCoverage `json:"coverage,omitempty"`
	// Outputs, when not empty, are the calibrations of each output in
	// turn (one per output of the model), which its intervals use.
	Outputs []Conformal `json:"outputs,omitempty"`
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
	share := func(z float64) float64 { return float64(inside(r, z)) / float64(max(n, 1)) }
	for _, q := range ConformalReportLevels {
		cc := ConformalCoverage{Level: q, Gaussian: share(IntervalZ(q)), TooFew: float64(n) < 20/(1-q)}
		if z, ok := c.Multiplier(q); ok {
			cc.Conformal = share(z)
		}
		c.Coverage = append(c.Coverage, cc)
	}
	return c
}

// NewConformalOutputs returns the calibration of the standardised
// residuals r (|y − ŷ|/std, rows × k, row-major) of a model of k
// outputs: NewConformal(r) for one output; for several, each output's
// own calibration (Outputs) and the pooled one, whose Coverage counts
// each residual against its output's multiplier.
func NewConformalOutputs(r []float64, k int) *Conformal {
	if k <= 1 {
		return NewConformal(r)
	}
	n := len(r) / k
	outs := make([]Conformal, k)
	col := make([]float64, n)
	for j := range k {
		for i := range n {
			col[i] = r[i*k+j]
		}
		outs[j] = *NewConformal(col) // sorts col, which the next output overwrites
	}
	cols := make([][]float64, k) // each output's sorted residuals
	for j := range k {
		cols[j] = make([]float64, n)
		for i := range n {
			cols[j][i] = r[i*k+j]
		}
		sort.Float64s(cols[j])
	}
	c := NewConformal(r)
	c.Outputs = outs
	for i, q := range ConformalReportLevels {
		cc := ConformalCoverage{Level: q, TooFew: float64(n) < 20/(1-q)}
		in, ok := 0, true
		for j := range k {
			in += inside(cols[j], IntervalZ(q))
		}
		cc.Gaussian = float64(in) / float64(max(n*k, 1))
		in = 0
		for j := range k {
			z, has := outs[j].Multiplier(q)
			ok = ok && has
			in += inside(cols[j], z)
		}
		if ok {
			cc.Conformal = float64(in) / float64(max(n*k, 1))
		}
		c.Coverage[i] = cc
	}
	return c
}

// inside is the number of the sorted values r that are ≤ z.
func inside(r []float64, z float64) int {
	return sort.Search(len(r), func(i int) bool { return r[i] > z })
}

// output is the calibration of output j: Outputs[j], or c itself when it
// serves every output.
func (c *Conformal) output(j int) *Conformal {
	if len(c.Outputs) == 0 {
		return c
	}
	return &c.Outputs[j]
}

// Multiplier returns the conformal z of a central interval of level
// (score ± z·std), and false when level is not in (0, 1) or above the
// last stored level. With Outputs it is the pooled z, which no interval
// uses: Model.IntervalMultipliers gives each output's.
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

// validate checks the calibration of a model of k outputs.
func (c *Conformal) validate(k int) error {
	if len(c.Outputs) != 0 && len(c.Outputs) != k {
		return fmt.Errorf("conformal calibration of %d outputs for a model of %d", len(c.Outputs), k)
	}
	for j := range c.Outputs {
		o := &c.Outputs[j]
		if len(o.Outputs) != 0 {
			return fmt.Errorf("conformal calibration of output %d has outputs of its own", j)
		}
		if err := o.validate(1); err != nil {
			return fmt.Errorf("output %d: %w", j, err)
		}
	}
	// ConformalLevels has more levels than a few rows reach (17 rows
	// reach 18 of them), so the rows bound only the presence of levels.
	if len(c.Levels) != len(c.Z) || len(c.Z) > 0 && c.Rows < 1 {
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
	return m.conformal.clone()
}

// clone is a deep copy of c.
func (c *Conformal) clone() *Conformal {
	d := *c
	d.Levels, d.Z, d.Coverage = slices.Clone(c.Levels), slices.Clone(c.Z), slices.Clone(c.Coverage)
	if c.Outputs != nil {
		d.Outputs = make([]Conformal, len(c.Outputs))
		for j := range c.Outputs {
			d.Outputs[j] = *c.Outputs[j].clone()
		}
	}
	return &d
}

// IntervalMultipliers returns, per output, z of the central interval of
// level (score ± z·std, level in (0, 1)) by method, and the method used:
// IntervalAuto is conformal when the model's calibration reaches the
// level (every output's, for a model calibrated output by output),
// Gaussian (IntervalZ) otherwise. It returns ErrNoUncertainty for a
// model without predictive standard deviations and ErrNoConformal when
// IntervalConformal cannot be had.
func (m *Model) IntervalMultipliers(level float64, method IntervalMethod) ([]float64, IntervalMethod, error) {
	z := make([]float64, m.k)
	used, err := m.IntervalMultipliersTo(z, level, method)
	if err != nil {
		return nil, "", err
	}
	return z, used, nil
}

// IntervalMultiplier is IntervalMultipliers for a model whose outputs
// share one multiplier (a model of one output, or a pooled calibration):
// that z; an error for a model whose outputs are calibrated one by one
// and differ at level.
func (m *Model) IntervalMultiplier(level float64, method IntervalMethod) (float64, IntervalMethod, error) {
	z, used, err := m.IntervalMultipliers(level, method)
	if err != nil {
		return 0, "", err
	}
	for _, v := range z[1:] {
		if v != z[0] {
			return 0, "", fmt.Errorf("the model's %d outputs have multipliers of their own at level %v: use IntervalMultipliers", m.k, level)
		}
	}
	return z[0], used, nil
}

// IntervalMultipliersTo is IntervalMultipliers into z (len K), with no
// allocation (a server's request path).
func (m *Model) IntervalMultipliersTo(z []float64, level float64, method IntervalMethod) (IntervalMethod, error) {
	if m.uncertainty == nil {
		return "", ErrNoUncertainty
	}
	if !(level > 0 && level < 1) {
		return "", fmt.Errorf("interval level %v: want a level in (0, 1)", level)
	}
	if len(z) != m.k {
		return "", fmt.Errorf("%d interval multipliers for a model of %d outputs", len(z), m.k)
	}
	if method != IntervalGaussian && m.conformal != nil {
		ok := true
		for j := range z {
			var has bool
			z[j], has = m.conformal.output(j).Multiplier(level)
			ok = ok && has
		}
		if ok {
			return IntervalConformal, nil
		}
	}
	if method == IntervalConformal {
		c := m.conformal
		if c == nil || len(c.output(0).Levels) == 0 {
			return "", ErrNoConformal
		}
		top := c.output(0).Levels
		return "", fmt.Errorf("%w (its %d validation rows reach %v)", ErrNoConformal, c.output(0).Rows, top[len(top)-1])
	}
	for j := range z {
		z[j] = IntervalZ(level)
	}
	return IntervalGaussian, nil
}

// WithConformal returns a copy of the model m, which has an Uncertainty,
// with the conformal calibration c (nil removes it). It takes ownership
// of c.
func (m *Model) WithConformal(c *Conformal) (*Model, error) {
	if c != nil {
		if m.uncertainty == nil {
			return nil, ErrNoUncertainty
		}
		if err := c.validate(m.k); err != nil {
			return nil, err
		}
	}
	cp := *m
	cp.conformal = c
	return &cp, nil
}
