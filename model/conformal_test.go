package model_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/model"
)

// TestNewConformal checks the finite-sample ranks ⌈(n+1)q⌉, the levels
// left out for too few rows, the interpolation and the coverage report.
func TestNewConformal(t *testing.T) {
	// r = 1, 2, …, 39, shuffled: rank k holds k.
	const n = 39
	r := make([]float64, n)
	for i := range r {
		r[i] = float64((i*7)%n + 1)
	}
	c := model.NewConformal(r)
	// ⌈40q⌉ ≤ 39 up to q = 0.95 (38); 0.975 needs rank 39, 0.99 rank 40.
	if c.Rows != n || len(c.Levels) != 20 || c.Levels[19] != 0.975 {
		t.Fatalf("levels %v", c.Levels)
	}
	for i, q := range c.Levels {
		if want := math.Ceil(40 * q); c.Z[i] != want {
			t.Errorf("level %v: z %v, want rank %v", q, c.Z[i], want)
		}
	}
	if z, ok := c.Multiplier(0.5); !ok || z != 20 {
		t.Errorf("Multiplier(0.5) = %v, %v; want 20", z, ok)
	}
	// Linear between 0.5 (20) and 0.55 (22); between 0 (0) and 0.05 (2).
	if z, _ := c.Multiplier(0.52); math.Abs(z-20.8) > 1e-9 {
		t.Errorf("Multiplier(0.52) = %v, want 20.8", z)
	}
	if z, _ := c.Multiplier(0.025); math.Abs(z-1) > 1e-9 {
		t.Errorf("Multiplier(0.025) = %v, want 1", z)
	}
	for _, q := range []float64{0.98, 0.99, 1, 0, -1, math.NaN()} {
		if z, ok := c.Multiplier(q); ok {
			t.Errorf("Multiplier(%v) = %v, want none", q, z)
		}
	}
	// Coverage on the rows: 50 % has z = 20, 20 of 39 rows inside; 99 %
	// is not calibrated; every level has fewer than 20/(1 − q) rows.
	if len(c.Coverage) != 5 {
		t.Fatalf("coverage %+v", c.Coverage)
	}
	if cv := c.Coverage[0]; cv.Level != 0.5 || cv.Conformal != 20.0/39 || cv.Gaussian != 0 || !cv.TooFew {
		t.Errorf("coverage at 50 %%: %+v", cv)
	}
	if cv := c.Coverage[4]; cv.Level != 0.99 || cv.Conformal != 0 || !cv.TooFew {
		t.Errorf("coverage at 99 %%: %+v", cv)
	}
	// 1999 rows are too few for 99 % (2000) only.
	big := model.NewConformal(make([]float64, 1999))
	for _, cv := range big.Coverage {
		if cv.TooFew != (cv.Level > 0.99-1e-9) {
			t.Errorf("1999 rows, level %v: too few %v", cv.Level, cv.TooFew)
		}
	}
	if model.NewConformal(make([]float64, 2000)).Coverage[4].TooFew {
		t.Error("2000 rows too few for 99 %")
	}
}

// TestIntervalMultiplierOldModel checks that a model written before the
// conformal calibration gives the Gaussian multiplier by default, and
// that conformal is refused there.
func TestIntervalMultiplierOldModel(t *testing.T) {
	m := fixture(t, "ooc/testdata/model_v2_regression_std.fkom")
	if m.Conformal() != nil {
		t.Fatal("a version-2 fixture has a conformal calibration")
	}
	for _, q := range []float64{0.5, 0.9, 0.95} {
		z, used, err := oneOutput(m.IntervalMultipliers(q, model.IntervalAuto))
		if err != nil || used != model.IntervalGaussian || z != model.IntervalZ(q) {
			t.Errorf("level %v: %v %v %v, want the Gaussian %v", q, z, used, err, model.IntervalZ(q))
		}
	}
	if _, _, err := oneOutput(m.IntervalMultipliers(0.9, model.IntervalConformal)); !errors.Is(err, model.ErrNoConformal) {
		t.Errorf("conformal on an old model: %v", err)
	}
	if _, _, err := oneOutput(m.IntervalMultipliers(1.5, model.IntervalAuto)); err == nil || err.Error() != "interval level 1.5: want a level in (0, 1)" {
		t.Errorf("level 1.5: %v", err)
	}
	plain := fixture(t, "ooc/testdata/model_v1_regression_f32.fkom")
	if _, _, err := oneOutput(plain.IntervalMultipliers(0.9, model.IntervalAuto)); !errors.Is(err, model.ErrNoUncertainty) {
		t.Errorf("model without uncertainty: %v", err)
	}
	if _, err := plain.WithConformal(model.NewConformal([]float64{1, 2, 3})); !errors.Is(err, model.ErrNoUncertainty) {
		t.Errorf("WithConformal without uncertainty: %v", err)
	}
	if _, err := model.ParseIntervalMethod("student"); err == nil || err.Error() != `unknown interval method "student" (want gaussian or conformal)` {
		t.Errorf("ParseIntervalMethod: %v", err)
	}
	// The old file is written back byte for byte (no capability added).
	raw, err := os.ReadFile(filepath.Join("..", "ooc/testdata/model_v2_regression_std.fkom"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), raw) {
		t.Error("the version-2 fixture is not written back byte for byte")
	}
}

// TestConformalCapability checks that a calibration is written as the
// capability "conformal", read back, and refused when damaged.
func TestConformalCapability(t *testing.T) {
	m := fixture(t, "ooc/testdata/model_v2_regression_std.fkom")
	r := make([]float64, 1000)
	for i := range r {
		r[i] = float64(i) / 100
	}
	cm, err := m.WithConformal(model.NewConformal(r))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := cm.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := model.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Requires(); len(got) != 1 || got[0] != "conformal" {
		t.Errorf("requires %v", got)
	}
	z, used, err := oneOutput(back.IntervalMultipliers(0.9, model.IntervalAuto))
	if err != nil || used != model.IntervalConformal || z != r[int(math.Ceil(1001*0.9))-1] {
		t.Errorf("0.9: %v %v %v", z, used, err)
	}
	// 1000 rows reach 0.99 (rank 991) but not 0.995 (rank 996 ≤ 1000: yes).
	if _, _, err := oneOutput(back.IntervalMultipliers(0.999, model.IntervalConformal)); !errors.Is(err, model.ErrNoConformal) ||
		!strings.Contains(err.Error(), "its 1000 validation rows reach 0.995") {
		t.Errorf("0.999 conformal: %v", err)
	}
	if z, used, _ := oneOutput(back.IntervalMultipliers(0.999, model.IntervalAuto)); used != model.IntervalGaussian || z != model.IntervalZ(0.999) {
		t.Errorf("0.999 by default: %v %v, want the Gaussian", z, used)
	}
	// A decreasing multiplier, or a calibration without an uncertainty,
	// is refused.
	m2 := rebuilt(t, m, func(*model.Params) {})
	cfg, tr := m2.Provenance()
	for name, edit := range map[string]func(*model.Params){
		"decreasing": func(p *model.Params) {
			p.Conformal = &model.Conformal{Rows: 10, Levels: []float64{0.5, 0.9}, Z: []float64{2, 1}}
		},
		"no uncertainty": func(p *model.Params) {
			p.Conformal, p.Uncertainty, p.UncertaintyFactor = model.NewConformal(r), nil, nil
		},
	} {
		p := model.Params{
			Kernel: m.Kernel(), Precision: m.Precision(), Task: m.Task(), Loss: m.Loss(), Features: m.Features(), Targets: m.Targets(),
			FeatureMean: m.FeatureMean(), FeatureStd: m.FeatureStd(), TargetMean: m.TargetMean(),
			M: m.M(), D: m.D(), K: m.K(), Centers: m.Centers(), Alpha: m.Alpha(),
			Uncertainty: m.Uncertainty(), UncertaintyFactor: m.UncertaintyFactor(), Config: cfg, Training: tr,
		}
		edit(&p)
		if _, err := model.New(p); err == nil {
			t.Errorf("%s: New accepts the calibration", name)
		}
	}
}

// oneOutput is IntervalMultipliers' result for a model of one output.
func oneOutput(z []float64, used model.IntervalMethod, err error) (float64, model.IntervalMethod, error) {
	if len(z) == 0 {
		return 0, used, err
	}
	return z[0], used, err
}
