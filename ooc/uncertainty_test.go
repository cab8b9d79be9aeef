package ooc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// uncertaintyFit fits n training rows of synth data with validation rows
// and the given uncertainty method and rank.
func uncertaintyFit(t *testing.T, n, m int, method ooc.UncertaintyMethod, rank int, lambda float64) (*ooc.Model, []float64, []float64) {
	t.Helper()
	const d = 3
	x, y := synth(n, d, 11)
	vx, vy := synth(300, d, 12)
	cfg := ooc.Config{Centers: m, Lambda: lambda, Iterations: 200, Tolerance: 1e-13, Seed: 3,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, Task: ooc.TaskRegression,
		Uncertainty: method, UncertaintyRank: rank}
	mdl, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 97), cfg,
		ooc.RunOptions{Validation: stream.NewMemSource(vx, d, vy, 1, 64)})
	if err != nil {
		t.Fatal(err)
	}
	return mdl, x, y
}

// rawV returns v(x) per row, and checks that PredictStdTo's deviations
// are √(scale·v + noise) and its scores PredictTo's.
func rawV(t *testing.T, mdl *ooc.Model, x []float64) []float64 {
	t.Helper()
	rows := len(x) / mdl.D()
	out, std := make([]float64, rows), make([]float64, rows)
	mdl.PredictStdTo(out, std, x, rows)
	u := mdl.Uncertainty()
	v := ooc.VarianceForTest(mdl, x)
	for i, s := range std {
		if want := math.Sqrt(u.Scale[0]*v[i] + u.Noise[0]); math.Abs(s-want) > 1e-14*want {
			t.Fatalf("row %d: std %v, want %v", i, s, want)
		}
	}
	// The scores are PredictTo's.
	want := make([]float64, rows)
	mdl.PredictTo(want, x, rows)
	for i := range want {
		if math.Abs(want[i]-out[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("row %d: PredictStdTo's score %v, PredictTo's %v", i, out[i], want[i])
		}
	}
	return v
}

// kernelMats returns K(Z, C) for the standardised rows of x and K_MM.
func kernelMats(mdl *ooc.Model, x []float64) (*mat.Dense, *mat.Dense) {
	d, M := mdl.D(), mdl.M()
	z := standardized(mdl, x)
	n := len(z) / d
	c := mdl.Centers()
	k := mdl.Kernel()
	kx := mat.NewDense(n, M, nil)
	for i := range n {
		for j := range M {
			kx.Set(i, j, k.Eval(z[i*d:(i+1)*d], c[j*d:(j+1)*d]))
		}
	}
	kmm := mat.NewDense(M, M, nil)
	for i := range M {
		for j := range M {
			kmm.Set(i, j, k.Eval(c[i*d:(i+1)*d], c[j*d:(j+1)*d]))
		}
	}
	return kx, kmm
}

// quad returns k_iᵀ S⁻¹ k_i for each row k_i of kx, by a dense solve.
func quad(t *testing.T, kx *mat.Dense, s *mat.Dense) []float64 {
	t.Helper()
	n, _ := kx.Dims()
	var sol mat.Dense
	if err := sol.Solve(s, kx.T()); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range n {
		out[i] = mat.Dot(kx.RowView(i), sol.ColView(i))
	}
	return out
}

func TestUncertaintyExactIsDTC(t *testing.T) {
	const n, M, lambda = 400, 40, 1e-3
	mdl, x, _ := uncertaintyFit(t, n, M, ooc.UncertaintyExact, M, lambda)
	tx, _ := synth(50, 3, 99)
	rawV(t, mdl, tx)
	got := ooc.VarianceAtForTest(mdl, tx, lambda) // at the fit's λ
	// v(x) = k(x,x) − k_xᵀK_MM⁻¹k_x + λn·k_xᵀ H⁻¹ k_x, H = K_nMᵀK_nM + λn·K_MM.
	kx, kmm := kernelMats(mdl, tx)
	knm, _ := kernelMats(mdl, x)
	lamN := lambda * n
	var h mat.Dense
	h.Mul(knm.T(), knm)
	var lk mat.Dense
	lk.Scale(lamN, kmm)
	h.Add(&h, &lk)
	// K_MM⁻¹ with the fit's jitter εM on the diagonal, as the fit's T.
	for i := range M {
		kmm.Set(i, i, kmm.At(i, i)+mdl.Training().Jitter*M)
	}
	q1, q2 := quad(t, kx, kmm), quad(t, kx, &h)
	for i := range got {
		want := 1 - q1[i] + lamN*q2[i]
		if math.Abs(got[i]-want) > 1e-8*want {
			t.Errorf("row %d: v = %.12g, exact DTC %.12g (rel %.2g)", i, got[i], want, math.Abs(got[i]-want)/want)
		}
	}
	u := mdl.Uncertainty()
	if u.Rank != M || u.RankError != 0 || u.Rows != 300 || u.FitLambda != lambda || !(u.Lambda > 0) || !(u.EffectiveDim > 0 && u.EffectiveDim < M) {
		t.Errorf("uncertainty %+v: want full rank, 300 rows", u)
	}
}

func TestUncertaintyPrecondIsCentresGP(t *testing.T) {
	// FALKON's preconditioner replaces K_nMᵀK_nM by (n/M)·K_MM², so its
	// variance is a GP's on the centres alone with noise λM:
	// v(x) = k(x,x) − k_xᵀ(K_MM + λM·I)⁻¹k_x.
	const n, M, lambda = 400, 40, 1e-3
	mdl, _, _ := uncertaintyFit(t, n, M, ooc.UncertaintyPrecond, M, lambda)
	tx, _ := synth(50, 3, 98)
	rawV(t, mdl, tx)
	got := ooc.VarianceAtForTest(mdl, tx, lambda)
	kx, kmm := kernelMats(mdl, tx)
	for i := range M {
		kmm.Set(i, i, kmm.At(i, i)+lambda*M)
	}
	q := quad(t, kx, kmm)
	for i := range got {
		want := 1 - q[i]
		if math.Abs(got[i]-want) > 1e-8*want {
			t.Errorf("row %d: v = %.12g, want %.12g", i, got[i], want)
		}
	}
}

func TestUncertaintyLowRank(t *testing.T) {
	// At rank r < M/2 the randomized factor keeps part of C: v can only
	// grow, and the reported rank error is what a full-rank model says.
	const n, M, lambda = 2000, 300, 1e-4
	full, _, _ := uncertaintyFit(t, n, M, ooc.UncertaintyPrecond, M, lambda)
	low, _, _ := uncertaintyFit(t, n, M, ooc.UncertaintyPrecond, 40, lambda)
	u := low.Uncertainty()
	if u.Rank != 40 || len(u.Sigma) != 40 || !(u.Sigma[0] >= u.Sigma[39]) {
		t.Fatalf("rank %d, σ %v", u.Rank, u.Sigma)
	}
	tx, _ := synth(200, 3, 97)
	rawV(t, low, tx)
	vf, vl := ooc.VarianceAtForTest(full, tx, u.Lambda), ooc.VarianceAtForTest(low, tx, u.Lambda)
	worst := 0.0
	for i := range vf {
		if vl[i] < vf[i]*(1-1e-6)-1e-12 {
			t.Errorf("row %d: rank-40 v %.6g below full rank %.6g", i, vl[i], vf[i])
		}
		worst = math.Max(worst, (vl[i]-vf[i])/vf[i])
	}
	if u.RankErrorMax <= 0 || u.RankError > u.RankErrorMax {
		t.Errorf("rank error %v, max %v", u.RankError, u.RankErrorMax)
	}
	t.Logf("rank 40 of %d: λ %.3g (fit's %g), effective dimension %.3g, validation rank error median %.3g max %.3g; test rows max %.3g",
		M, u.Lambda, lambda, u.EffectiveDim, u.RankError, u.RankErrorMax, worst)
}

func TestUncertaintyCalibration(t *testing.T) {
	// Homoscedastic noise: the intervals cover what they say on the
	// validation rows they were fitted on, and on fresh rows.
	const n, M = 3000, 200
	mdl, _, _ := uncertaintyFit(t, n, M, ooc.UncertaintyPrecond, 0, 1e-5)
	u := mdl.Uncertainty()
	if u.Rank != ooc.DefaultUncertaintyRank(3) {
		t.Errorf("default rank %d", u.Rank)
	}
	if math.Abs(u.Coverage90-0.9) > 0.05 || math.Abs(u.Coverage50-0.5) > 0.07 || u.NLPD > u.NLPDConstant+0.01 {
		t.Errorf("validation coverage 50 %% %.3f, 90 %% %.3f, NLPD %.3f (constant %.3f)", u.Coverage50, u.Coverage90, u.NLPD, u.NLPDConstant)
	}
	tx, ty := synth(4000, 3, 55)
	out, std := make([]float64, len(ty)), make([]float64, len(ty))
	mdl.PredictStdTo(out, std, tx, len(ty))
	in := 0
	z := ooc.IntervalZ(0.9)
	for i := range ty {
		if math.Abs(ty[i]-out[i]) <= z*std[i] {
			in++
		}
	}
	if c := float64(in) / float64(len(ty)); math.Abs(c-0.9) > 0.04 {
		t.Errorf("test coverage of the 90 %% interval %.3f", c)
	}
}

func TestFitVarianceRecovers(t *testing.T) {
	// Residuals drawn with variance 2·v + 0.5: the fit finds both.
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 40000
	v, e := make([]float64, n), make([]float64, n)
	for i := range n {
		v[i] = rng.Float64()
		e[i] = math.Sqrt(2*v[i]+0.5) * rng.NormFloat64()
	}
	scale, noise, _ := ooc.FitVarianceForTest(e, v, 1)
	if math.Abs(scale[0]-2)/2 > 0.08 || math.Abs(noise[0]-0.5)/0.5 > 0.08 {
		t.Errorf("scale %v, noise %v; want 2 and 0.5", scale[0], noise[0])
	}
	// Constant variance: the scale goes to (nearly) zero.
	for i := range n {
		e[i] = rng.NormFloat64()
	}
	scale, noise, _ = ooc.FitVarianceForTest(e, v, 1)
	if scale[0]*0.5 > 0.05*noise[0] || math.Abs(noise[0]-1) > 0.05 {
		t.Errorf("constant noise: scale %v, noise %v", scale[0], noise[0])
	}
}

func TestUncertaintySaveLoad(t *testing.T) {
	mdl, _, _ := uncertaintyFit(t, 500, 60, ooc.UncertaintyPrecond, 20, 1e-4)
	path := filepath.Join(t.TempDir(), "m.falkon")
	if err := mdl.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := synth(30, 3, 5)
	o1, s1, o2, s2 := make([]float64, 30), make([]float64, 30), make([]float64, 30), make([]float64, 30)
	mdl.PredictStdTo(o1, s1, tx, 30)
	back.PredictStdTo(o2, s2, tx, 30)
	for i := range o1 {
		if o1[i] != o2[i] || s1[i] != s2[i] {
			t.Fatalf("row %d: (%v, %v) after load (%v, %v)", i, o1[i], s1[i], o2[i], s2[i])
		}
	}
	// Version 3 with an uncertainty and its conformal calibration,
	// version 2 without the calibration, version 1 (what older builds
	// read) without uncertainty.
	var buf bytes.Buffer
	if _, err := back.WriteTo(&buf); err != nil || buf.Bytes()[4] != 3 {
		t.Errorf("version %d, err %v; want 3", buf.Bytes()[4], err)
	}
	gauss, err := back.WithConformal(nil)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if _, err := gauss.WriteTo(&buf); err != nil || buf.Bytes()[4] != 2 {
		t.Errorf("without the calibration: version %d, err %v; want 2", buf.Bytes()[4], err)
	}
	plain, _, _ := uncertaintyFit(t, 500, 60, "", 0, 1e-4)
	buf.Reset()
	if _, err := plain.WriteTo(&buf); err != nil || buf.Bytes()[4] != 1 {
		t.Errorf("without uncertainty: version %d, err %v; want 1", buf.Bytes()[4], err)
	}
	if plain.Uncertainty() != nil {
		t.Error("a model without uncertainty reports one")
	}
}

func TestUncertaintyErrors(t *testing.T) {
	x, y := synth(300, 3, 1)
	src := stream.NewMemSource(x, 3, y, 1, 100)
	val := stream.NewMemSource(x[:300], 3, y[:100], 1, 50)
	cases := []struct {
		name string
		cfg  ooc.Config
		opts ooc.RunOptions
		want string
	}{
		{"no validation", ooc.Config{Centers: 30, Uncertainty: ooc.UncertaintyPrecond}, ooc.RunOptions{},
			"predictive standard deviations are fitted on validation rows: set RunOptions.Validation"},
		{"linear kernel", ooc.Config{Centers: 30, Uncertainty: ooc.UncertaintyPrecond, Kernel: kernel.Kernel{Kind: kernel.Linear}},
			ooc.RunOptions{Validation: val}, "predictive standard deviations need a distance kernel (gaussian, laplacian, matern12/32/52), not linear"},
		{"unknown method", ooc.Config{Centers: 30, Uncertainty: "bayes"}, ooc.RunOptions{Validation: val},
			`unknown uncertainty method "bayes" (want precond or exact)`},
		{"negative rank", ooc.Config{Centers: 30, Uncertainty: ooc.UncertaintyExact, UncertaintyRank: -1}, ooc.RunOptions{Validation: val},
			"uncertainty rank must be ≥ 0 (0: the default), got -1"},
	}
	for _, c := range cases {
		_, err := ooc.Fit(context.Background(), src, c.cfg, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ooc.ErrConfig) {
			t.Errorf("%s: %v; want a config error with %q", c.name, err, c.want)
		}
	}
	// Classification.
	yc := make([]float64, len(y))
	for i, v := range y {
		if v > 5 {
			yc[i] = 1
		}
	}
	_, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 3, yc, 1, 100), ooc.Config{Centers: 30, Uncertainty: ooc.UncertaintyPrecond},
		ooc.RunOptions{Validation: stream.NewMemSource(x[:300], 3, yc[:100], 1, 50)})
	if want := "predictive standard deviations are for regression; a binary model's probabilities (Model.ProbaTo) are its uncertainty"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("binary: %v; want %q", err, want)
	}
	// Predict with Std on a model without.
	plain, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 30}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = plain.Predict(context.Background(), src, ooc.PredictOptions{Std: true}, false, func(ooc.Batch) error { return nil })
	if want := "the model has no predictive standard deviations: it was fitted without an uncertainty (Config.Uncertainty)"; err == nil || err.Error() != want {
		t.Errorf("Predict Std: %v; want %q", err, want)
	}
}

func TestPredictStdStreams(t *testing.T) {
	// Predict with Std gives PredictStdTo's values, chunk by chunk.
	mdl, _, _ := uncertaintyFit(t, 500, 60, ooc.UncertaintyPrecond, 20, 1e-4)
	tx, ty := synth(700, 3, 8)
	want, wstd := make([]float64, 700), make([]float64, 700)
	mdl.PredictStdTo(want, wstd, tx, 700)
	row := 0
	err := mdl.Predict(context.Background(), stream.NewMemSource(tx, 3, ty, 1, 128), ooc.PredictOptions{Std: true, Workers: 3}, false, func(b ooc.Batch) error {
		for i := range b.Rows {
			if math.Abs(b.Scores[i]-want[row]) > 1e-12 || math.Abs(b.Std[i]-wstd[row]) > 1e-12 {
				t.Fatalf("row %d: (%v, %v), want (%v, %v)", row, b.Scores[i], b.Std[i], want[row], wstd[row])
			}
			row++
		}
		return nil
	})
	if err != nil || row != 700 {
		t.Fatalf("err %v after %d rows", err, row)
	}
}

// TestModelFixtureV2 loads the version-2 fixture (a model with an
// Uncertainty, two outputs) and checks its scores and standard
// deviations against what its own build computed. FALKON_WRITE_FIXTURES=1
// writes the fixture anew (only when the format changes).
func TestModelFixtureV2(t *testing.T) {
	const path, preds = "testdata/model_v2_regression_std.fkom", "testdata/model_v2_predictions.json"
	probe, _ := synth(12, 3, 77)
	if os.Getenv("FALKON_WRITE_FIXTURES") == "1" {
		x, y := synth(600, 3, 70)
		y2 := make([]float64, 2*len(y))
		for i, v := range y {
			y2[2*i], y2[2*i+1] = v, math.Cos(x[3*i])
		}
		vx, vy := synth(200, 3, 71)
		vy2 := make([]float64, 2*len(vy))
		for i, v := range vy {
			vy2[2*i], vy2[2*i+1] = v, math.Cos(vx[3*i])
		}
		m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 3, y2, 2, 100),
			ooc.Config{Centers: 25, Lambda: 1e-4, Iterations: 10, Seed: 1, Task: ooc.TaskRegression,
				Uncertainty: ooc.UncertaintyExact, UncertaintyRank: 8},
			ooc.RunOptions{Validation: stream.NewMemSource(vx, 3, vy2, 2, 100)})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		out, std := make([]float64, 24), make([]float64, 24)
		m.PredictStdTo(out, std, probe, 12)
		b, _ := json.Marshal(map[string][]float64{"scores": out, "std": std})
		if err := os.WriteFile(preds, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	u := m.Uncertainty()
	if u == nil || u.Method != ooc.UncertaintyExact || u.Rank != 8 || m.K() != 2 || m.M() != 25 {
		t.Fatalf("uncertainty %+v, K %d, M %d", u, m.K(), m.M())
	}
	b, err := os.ReadFile(preds)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]float64
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	out, std := make([]float64, 24), make([]float64, 24)
	m.PredictStdTo(out, std, probe, 12)
	for i := range out {
		// Float64 kernel blocks: the AVX2 and pure-Go kernels round exp
		// and the sums differently, about 1e-13 (see TestModelFixturesV1).
		if math.Abs(out[i]-want["scores"][i]) > 1e-11*math.Max(1, math.Abs(out[i])) ||
			math.Abs(std[i]-want["std"][i]) > 1e-9*std[i] {
			t.Fatalf("row %d: (%v, %v), its own build (%v, %v)", i, out[i], std[i], want["scores"][i], want["std"][i])
		}
	}
}

func TestFitTunedUncertainty(t *testing.T) {
	// The search ignores Config.Uncertainty; the final fit keeps it.
	x, y := synth(2000, 3, 21)
	m, err := ooc.FitTuned(context.Background(), stream.NewMemSource(x, 3, y, 1, 250), ooc.FitTunedConfig{
		Fit:    ooc.Config{Centers: 100, Iterations: 15, Uncertainty: ooc.UncertaintyPrecond, UncertaintyRank: 16},
		Search: ooc.TuneConfig{Sigmas: []float64{1, 2}, Lambdas: []float64{1e-6, 1e-4}},
	}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := m.Uncertainty(); u == nil || u.Rank != 16 || u.Rows == 0 {
		t.Fatalf("uncertainty %+v", u)
	}
}

func TestUncertaintyExactWeighted(t *testing.T) {
	// With row weights the exact variance is the DTC variance of the
	// weighted problem: H = K_nMᵀ W K_nM + λn·K_MM, n = Σw.
	const n, M, lambda = 400, 40, 1e-3
	const d = 3
	x, y := synth(n, d, 11)
	vx, vy := synth(300, d, 12)
	w := make([]float64, n)
	rng := rand.New(rand.NewPCG(5, 6))
	sum := 0.0
	for i := range w {
		w[i] = 2 * rng.Float64()
		sum += w[i]
	}
	cfg := ooc.Config{Centers: M, Lambda: lambda, Iterations: 200, Tolerance: 1e-13, Seed: 3,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, Task: ooc.TaskRegression,
		Uncertainty: ooc.UncertaintyExact, UncertaintyRank: M}
	mdl, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 97).WithWeights(w, "w"), cfg,
		ooc.RunOptions{Validation: stream.NewMemSource(vx, d, vy, 1, 64)})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := synth(50, 3, 99)
	got := ooc.VarianceAtForTest(mdl, tx, lambda)
	kx, kmm := kernelMats(mdl, tx)
	knm, _ := kernelMats(mdl, x)
	lamN := lambda * sum
	for i := range n {
		r := knm.RawRowView(i)
		for j := range r {
			r[j] *= math.Sqrt(w[i])
		}
	}
	var h mat.Dense
	h.Mul(knm.T(), knm)
	var lk mat.Dense
	lk.Scale(lamN, kmm)
	h.Add(&h, &lk)
	for i := range M {
		kmm.Set(i, i, kmm.At(i, i)+mdl.Training().Jitter*M)
	}
	q1, q2 := quad(t, kx, kmm), quad(t, kx, &h)
	for i := range got {
		want := 1 - q1[i] + lamN*q2[i]
		if math.Abs(got[i]-want) > 1e-8*want {
			t.Errorf("row %d: v = %.12g, weighted DTC %.12g", i, got[i], want)
		}
	}
}
