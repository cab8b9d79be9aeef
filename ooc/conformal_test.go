package ooc_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
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
		zg, mg, err := mdl.IntervalMultiplier(q, model.IntervalGaussian)
		if err != nil || mg != model.IntervalGaussian || zg != ooc.IntervalZ(q) {
			t.Fatalf("level %v: Gaussian multiplier %v %v %v", q, zg, mg, err)
		}
		zc, mc, err := mdl.IntervalMultiplier(q, model.IntervalAuto)
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
		a, _, _ := mdl.IntervalMultiplier(q, model.IntervalAuto)
		b, _, _ := back.IntervalMultiplier(q, model.IntervalAuto)
		if a != b {
			t.Errorf("level %v: multiplier %v after a round trip, %v before", q, b, a)
		}
	}
}
