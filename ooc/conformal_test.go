package ooc_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// heavyTailed returns n rows of 3 features uniform in [-2, 2] and a
// smooth target plus Student-t noise with 3 degrees of freedom.
func heavyTailed(n int, seed uint64) ([]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	const d = 3
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		for j := range d {
			x[i*d+j] = 4*rng.Float64() - 2
		}
		chi := 0.0
		for range 3 {
			g := rng.NormFloat64()
			chi += g * g
		}
		t3 := rng.NormFloat64() / math.Sqrt(chi/3)
		y[i] = math.Sin(1.5*x[i*d]) + 0.5*x[i*d+1]*x[i*d+2] + 0.3*t3
	}
	return x, y
}

// TestConformalHeavyTailed fits --uncertainty on Student-t noise: the
// Gaussian intervals miss their levels on fresh rows, the conformal
// ones are within 2 points of them.
func TestConformalHeavyTailed(t *testing.T) {
	const d = 3
	x, y := heavyTailed(3000, 1)
	vx, vy := heavyTailed(8000, 2)
	tx, ty := heavyTailed(40000, 3)
	cfg := ooc.Config{Centers: 200, Lambda: 1e-5, Iterations: 100, Seed: 3,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, Task: ooc.TaskRegression,
		Uncertainty: ooc.UncertaintyPrecond}
	mdl, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 97), cfg,
		ooc.RunOptions{Validation: stream.NewMemSource(vx, d, vy, 1, 64)})
	if err != nil {
		t.Fatal(err)
	}
	c := mdl.Conformal()
	if c == nil || c.Rows != 8000 || len(c.Levels) != len(model.ConformalLevels) {
		t.Fatalf("conformal calibration %+v: want all %d levels on 8000 rows", c, len(model.ConformalLevels))
	}
	out, std := make([]float64, len(ty)), make([]float64, len(ty))
	mdl.PredictStdTo(out, std, tx, len(ty))
	cover := func(z float64) float64 {
		in := 0
		for i := range ty {
			if math.Abs(ty[i]-out[i]) <= z*std[i] {
				in++
			}
		}
		return float64(in) / float64(len(ty))
	}
	worstGauss := 0.0
	for _, q := range model.ConformalReportLevels {
		zg, mg, err := oneOutput(mdl.IntervalMultipliers(q, model.IntervalGaussian))
		if err != nil || mg != model.IntervalGaussian || zg != ooc.IntervalZ(q) {
			t.Fatalf("level %v: Gaussian multiplier %v %v %v", q, zg, mg, err)
		}
		zc, mc, err := oneOutput(mdl.IntervalMultipliers(q, model.IntervalAuto))
		if err != nil || mc != model.IntervalConformal {
			t.Fatalf("level %v: default multiplier %v %v %v, want conformal", q, zc, mc, err)
		}
		cg, cc := cover(zg), cover(zc)
		t.Logf("level %2.0f %%: Gaussian z %.3f covers %5.2f %%, conformal z %.3f covers %5.2f %%", 100*q, zg, 100*cg, zc, 100*cc)
		if math.Abs(cc-q) > 0.02 {
			t.Errorf("level %v: conformal intervals cover %.4f of the test rows", q, cc)
		}
		worstGauss = max(worstGauss, math.Abs(cg-q))
	}
	// The noise's tails make the Gaussian reading miss by far more.
	if worstGauss < 0.05 {
		t.Errorf("Gaussian intervals within %.3f of every level: the test's noise is not heavy-tailed enough", worstGauss)
	}
	// The calibration travels with the model.
	var buf bytes.Buffer
	if _, err := mdl.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := model.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Requires(); len(got) != 1 || got[0] != "conformal" {
		t.Errorf("requires %v, want [conformal]", got)
	}
	for _, q := range []float64{0.5, 0.9, 0.93} {
		a, _, _ := oneOutput(mdl.IntervalMultipliers(q, model.IntervalAuto))
		b, _, _ := oneOutput(back.IntervalMultipliers(q, model.IntervalAuto))
		if a != b {
			t.Errorf("level %v: multiplier %v after a round trip, %v before", q, b, a)
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

// twoOutputs returns n rows of 3 features uniform in [-2, 2] and two
// targets: a smooth function plus Gaussian noise, and another plus
// Student-t noise with 3 degrees of freedom (rows × 2, row-major).
func twoOutputs(n int, seed uint64) ([]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	const d = 3
	x, y := make([]float64, n*d), make([]float64, 2*n)
	for i := range n {
		for j := range d {
			x[i*d+j] = 4*rng.Float64() - 2
		}
		chi := 0.0
		for range 3 {
			g := rng.NormFloat64()
			chi += g * g
		}
		y[2*i] = math.Sin(1.5*x[i*d]) + 0.3*rng.NormFloat64()
		y[2*i+1] = 0.5*x[i*d+1]*x[i*d+2] + 0.3*rng.NormFloat64()/math.Sqrt(chi/3)
	}
	return x, y
}

// TestConformalPerOutput fits --uncertainty on two outputs, one with
// Gaussian and one with heavy-tailed noise: each output gets its own
// conformal multipliers (capability "conformal-outputs"), whose intervals
// cover fresh rows within 2 points of their level on each output, where
// the pooled multiplier misses on both. The calibration survives the
// file; a pooled calibration (a model written before per-output ones)
// still serves every output; predictfile's intervals use each output's
// multiplier.
func TestConformalPerOutput(t *testing.T) {
	const d, k = 3, 2
	x, y := twoOutputs(3000, 1)
	vx, vy := twoOutputs(8000, 2)
	tx, ty := twoOutputs(40000, 3)
	cfg := ooc.Config{Centers: 200, Lambda: 1e-5, Iterations: 100, Seed: 3,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, Task: ooc.TaskRegression,
		Uncertainty: ooc.UncertaintyPrecond}
	mdl, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, k, 97), cfg,
		ooc.RunOptions{Validation: stream.NewMemSource(vx, d, vy, k, 64)})
	if err != nil {
		t.Fatal(err)
	}
	c := mdl.Conformal()
	if c == nil || len(c.Outputs) != k || c.Outputs[0].Rows != 8000 || c.Rows != 8000*k {
		t.Fatalf("conformal calibration %+v: want one per output on 8000 rows", c)
	}
	n := len(ty) / k
	out, std := make([]float64, n*k), make([]float64, n*k)
	mdl.PredictStdTo(out, std, tx, n)
	cover := func(j int, z float64) float64 {
		in := 0
		for i := range n {
			if math.Abs(ty[i*k+j]-out[i*k+j]) <= z*std[i*k+j] {
				in++
			}
		}
		return float64(in) / float64(n)
	}
	worstPooled := 0.0
	for _, q := range []float64{0.5, 0.8, 0.9, 0.95} {
		z, used, err := mdl.IntervalMultipliers(q, model.IntervalAuto)
		if err != nil || used != model.IntervalConformal || len(z) != k || z[0] == z[1] {
			t.Fatalf("level %v: multipliers %v %v %v, want two conformal ones", q, z, used, err)
		}
		pooled, _ := c.Multiplier(q)
		for j := range k {
			cc, cp := cover(j, z[j]), cover(j, pooled)
			t.Logf("level %2.0f %%, output %d: its z %.3f covers %5.2f %%, the pooled z %.3f %5.2f %%", 100*q, j, z[j], 100*cc, pooled, 100*cp)
			if math.Abs(cc-q) > 0.02 {
				t.Errorf("level %v, output %d: its conformal intervals cover %.4f of the test rows", q, j, cc)
			}
			worstPooled = max(worstPooled, math.Abs(cp-q))
		}
	}
	if worstPooled < 0.03 {
		t.Errorf("the pooled multiplier is within %.3f of every level on both outputs: the test's outputs do not differ enough", worstPooled)
	}
	// The file: the capability, the multipliers back bit for bit.
	var buf bytes.Buffer
	if _, err := mdl.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := model.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Requires(); len(got) != 2 || got[0] != "conformal" || got[1] != "conformal-outputs" {
		t.Errorf("requires %v, want [conformal conformal-outputs]", got)
	}
	for _, q := range []float64{0.5, 0.9, 0.93} {
		a, _, _ := mdl.IntervalMultipliers(q, model.IntervalAuto)
		b, _, _ := back.IntervalMultipliers(q, model.IntervalAuto)
		if a[0] != b[0] || a[1] != b[1] {
			t.Errorf("level %v: multipliers %v after a round trip, %v before", q, b, a)
		}
	}
	// A pooled calibration, as models written before per-output ones
	// hold: one multiplier for every output, and no new capability.
	r := make([]float64, 1000)
	for i := range r {
		r[i] = float64(i) / 300
	}
	pm, err := mdl.WithConformal(model.NewConformal(r))
	if err != nil {
		t.Fatal(err)
	}
	z, used, err := pm.IntervalMultipliers(0.9, model.IntervalAuto)
	if err != nil || used != model.IntervalConformal || z[0] != z[1] || z[0] != r[int(math.Ceil(1001*0.9))-1] {
		t.Errorf("pooled calibration: %v %v %v", z, used, err)
	}
	if got := pm.Requires(); len(got) != 1 || got[0] != "conformal" {
		t.Errorf("pooled calibration requires %v, want [conformal]", got)
	}
	bad := model.NewConformalOutputs(make([]float64, 30), 3)
	if _, err := mdl.WithConformal(bad); err == nil || err.Error() != "conformal calibration of 3 outputs for a model of 2" {
		t.Errorf("a calibration of 3 outputs: %v", err)
	}
	// predictfile writes each output's interval with its multiplier.
	p, err := predictfile.New(mdl.Model, predictfile.Options{Interval: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	z, _, _ = mdl.IntervalMultipliers(0.9, model.IntervalAuto)
	if got := p.Z(); p.IntervalMethod != model.IntervalConformal || len(got) != k || got[0] != z[0] || got[1] != z[1] {
		t.Fatalf("predictfile's multipliers %v (%s), want %v", got, p.IntervalMethod, z)
	}
	cols := p.Output(out[:3*k], std[:3*k], 3) // y0_pred, y1_pred, y0_lower, y0_upper, y1_lower, y1_upper
	for i := range 3 {
		for j := range k {
			lo, hi := cols[2+2*j][i], cols[3+2*j][i]
			if s, sd := out[i*k+j], std[i*k+j]; lo != s-z[j]*sd || hi != s+z[j]*sd {
				t.Errorf("row %d, output %d: [%v, %v], want %v ± %v·%v", i, j, lo, hi, s, z[j], sd)
			}
		}
	}
	if l := predictfile.IntervalLine(0.9, p.IntervalMethod, p.Z(), mdl.Targets()); l != fmt.Sprintf("90 %% conformal: prediction ± z·std, z = %.4g (y0), %.4g (y1)", z[0], z[1]) {
		t.Errorf("the summary line %q", l)
	}
}
