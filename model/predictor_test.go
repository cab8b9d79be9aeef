package model_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// fixture loads a model file of ooc's or the command's testdata.
func fixture(t testing.TB, path string) *model.Model {
	t.Helper()
	m, err := model.Load(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rebuilt returns m's parts with edit applied, as a new model.
func rebuilt(t testing.TB, m *model.Model, edit func(*model.Params)) *model.Model {
	t.Helper()
	cfg, tr := m.Provenance()
	p := model.Params{
		Kernel: m.Kernel(), Precision: m.Precision(), Task: m.Task(), Loss: m.Loss(), Classes: m.Classes(),
		Calibration: m.Calibration(), Features: m.Features(), Targets: m.Targets(),
		FeatureMean: m.FeatureMean(), FeatureStd: m.FeatureStd(), TargetMean: m.TargetMean(),
		M: m.M(), D: m.D(), K: m.K(), Centers: m.Centers(), Alpha: m.Alpha(),
		Uncertainty: m.Uncertainty(), UncertaintyFactor: m.UncertaintyFactor(), Config: cfg, Training: tr,
	}
	if m.Labeled() {
		p.ClassNames = m.ClassNames()
	}
	edit(&p)
	out, err := model.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type testModel struct {
	name string
	m    *model.Model
	want model.Want
}

// testModels are the fixtures, and variants with each kind of
// probability mapping: regression (float32 and float64 kernels, with
// standard deviations), binary with Platt calibration, uncalibrated and
// of the logistic loss, multiclass with and without a temperature.
func testModels(t testing.TB) []testModel {
	bin := fixture(t, "cmd/falkon-ooc/testdata/model_v1_binary.falkon")
	multi := fixture(t, "ooc/testdata/model_v1_multiclass_f64.fkom")
	return []testModel{
		{"regression_f32", fixture(t, "ooc/testdata/model_v1_regression_f32.fkom"), 0},
		{"regression_f64", fixture(t, "cmd/falkon-ooc/testdata/model_v1.falkon"), 0},
		{"regression_std", fixture(t, "ooc/testdata/model_v2_regression_std.fkom"), model.WantStd},
		{"binary", bin, model.WantProba},
		{"binary_platt", rebuilt(t, bin, func(p *model.Params) {
			p.Calibration = &model.Calibration{Method: model.CalibrationPlatt, A: 3.5, B: -0.25, Rows: 10}
		}), model.WantProba},
		{"binary_logistic", rebuilt(t, bin, func(p *model.Params) { p.Loss = model.LossLogistic }), model.WantProba},
		{"multiclass", multi, model.WantProba},
		{"multiclass_temperature", rebuilt(t, multi, func(p *model.Params) {
			p.Calibration = &model.Calibration{Method: model.CalibrationTemperature, Temperature: 0.3, Rows: 10}
		}), model.WantProba},
	}
}

// probe returns rows rows of features around the fixtures' training data.
func probe(rows, d int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := make([]float64, rows*d)
	for i := range x {
		x[i] = 3 + 2*rng.NormFloat64()
	}
	return x
}

func sameBits(a, b []float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestPredictorMatches: a Predictor's scores, classes, probabilities and
// standard deviations are those of Model.PredictTo, Model.Predict (the
// streaming path), ClassIndex, ProbaTo and PredictStdTo, bit for bit, on
// batches of several sizes (one row, part of a kernel tile, several
// tiles) predicted in turn with one Predictor and one Prediction.
func TestPredictorMatches(t *testing.T) {
	for _, tm := range testModels(t) {
		t.Run(tm.name, func(t *testing.T) {
			m := tm.m
			p := m.NewPredictor()
			var dst model.Prediction
			for _, rows := range []int{700, 1, 37, 300} {
				x := probe(rows, m.D(), uint64(rows))
				if err := p.PredictTo(&dst, x, rows, tm.want); err != nil {
					t.Fatal(err)
				}
				if dst.Rows != rows {
					t.Fatalf("Rows = %d, want %d", dst.Rows, rows)
				}
				want := make([]float64, rows*m.K())
				m.PredictTo(want, x, rows)
				var std []float64
				if tm.want&model.WantStd != 0 {
					// With standard deviations the scores come from the
					// augmented product, as in Model.PredictStdTo.
					std = make([]float64, rows*m.K())
					m.PredictStdTo(want, std, x, rows)
					if i := sameBits(dst.Std, std); i >= 0 {
						t.Fatalf("%d rows: std[%d] differs from PredictStdTo", rows, i)
					}
				}
				if i := sameBits(dst.Scores, want); i >= 0 {
					t.Fatalf("%d rows: score %d = %v, Model.PredictTo gives %v", rows, i, dst.Scores[i], want[i])
				}
				// The streaming path, in chunks of 50 rows.
				var streamed, streamedStd []float64
				err := m.Predict(context.Background(), stream.NewMemSource(x, m.D(), nil, 0, 50),
					model.PredictOptions{Workers: 2, Std: std != nil}, false, func(b model.Batch) error {
						streamed = append(streamed, b.Scores...)
						streamedStd = append(streamedStd, b.Std...)
						return nil
					})
				if err != nil {
					t.Fatal(err)
				}
				if i := sameBits(dst.Scores, streamed); i >= 0 {
					t.Fatalf("%d rows: score %d differs from Model.Predict's", rows, i)
				}
				if std != nil {
					if i := sameBits(dst.Std, streamedStd); i >= 0 {
						t.Fatalf("%d rows: std %d differs from Model.Predict's", rows, i)
					}
				}
				if m.Task() == model.TaskRegression {
					if len(dst.Class) != 0 || len(dst.Proba) != 0 {
						t.Fatalf("regression: %d classes, %d probabilities", len(dst.Class), len(dst.Proba))
					}
					continue
				}
				k := m.K()
				for r := range rows {
					if c := m.ClassIndex(want[r*k : (r+1)*k]); dst.Class[r] != c {
						t.Fatalf("row %d: class %d, ClassIndex %d", r, dst.Class[r], c)
					}
				}
				proba := make([]float64, rows*m.NumClasses())
				m.ProbaTo(proba, want, rows)
				if i := sameBits(dst.Proba, proba); i >= 0 {
					t.Fatalf("%d rows: probability %d differs from ProbaTo", rows, i)
				}
			}
		})
	}
}

// TestPredictorFixtureScores: the Predictor reproduces the scores that
// the fixtures' own builds computed (ooc/testdata/model_v*_predictions.json),
// within the tolerance of TestModelFixturesV1 (other SIMD kernels round
// exp and the sums differently).
func TestPredictorFixtureScores(t *testing.T) {
	probeX := readJSON[[]float64](t, "../ooc/testdata/model_v1_predictions.json", "probe")
	for _, c := range []struct {
		name string
		tol  float64
	}{{"regression_f32", 1e-5}, {"multiclass_f64", 1e-12}} {
		m := fixture(t, "ooc/testdata/model_v1_"+c.name+".fkom")
		want := readJSON[[]float64](t, "../ooc/testdata/model_v1_predictions.json", c.name)
		var dst model.Prediction
		if err := m.NewPredictor().PredictTo(&dst, probeX, len(probeX)/3, 0); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(dst.Scores[i]-want[i]) > c.tol*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%s: score %d = %v, the model's own build predicted %v", c.name, i, dst.Scores[i], want[i])
			}
		}
	}
}

// TestPredictorAllocs: after one call, PredictTo allocates nothing for
// batches of the same or fewer rows, whatever it is asked for.
func TestPredictorAllocs(t *testing.T) {
	for _, tm := range testModels(t) {
		t.Run(tm.name, func(t *testing.T) {
			m := tm.m
			p := m.NewPredictor()
			var dst model.Prediction
			x := probe(300, m.D(), 9)
			if err := p.PredictTo(&dst, x, 300, tm.want); err != nil {
				t.Fatal(err)
			}
			for _, rows := range []int{300, 64, 1} {
				allocs := testing.AllocsPerRun(20, func() {
					if err := p.PredictTo(&dst, x[:rows*m.D()], rows, tm.want); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 0 {
					t.Errorf("%d rows: %v allocations per call, want 0", rows, allocs)
				}
			}
		})
	}
}

// TestPredictorErrors: each misuse is an error saying what is wrong, and
// a NaN feature names its row and column.
func TestPredictorErrors(t *testing.T) {
	reg := fixture(t, "cmd/falkon-ooc/testdata/model_v1.falkon")
	var dst model.Prediction
	p := reg.NewPredictor()
	err := p.PredictTo(&dst, make([]float64, 7), 2, 0)
	if !errors.Is(err, model.ErrShape) || err.Error() != "model: wrong input shape: 7 values for 2 rows of 3 features" {
		t.Errorf("short x: %v", err)
	}
	if err := p.PredictTo(&dst, make([]float64, 6), 2, model.WantProba); err == nil || err.Error() != "model: a regression model has no class probabilities" {
		t.Errorf("proba of a regression: %v", err)
	}
	if err := p.PredictTo(&dst, make([]float64, 6), 2, model.WantStd); !errors.Is(err, model.ErrNoUncertainty) {
		t.Errorf("std without uncertainty: %v", err)
	}
	x := probe(40, 3, 1)
	x[17*3+2] = math.NaN()
	err = p.PredictTo(&dst, x, 40, 0)
	var ve *stream.ValueError
	if !errors.As(err, &ve) || ve.Row != 17 || ve.Column != reg.Features()[2] || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN feature: %v", err)
	}
	// The predictor is still usable after an error.
	if err := p.PredictTo(&dst, probe(3, 3, 2), 3, 0); err != nil {
		t.Errorf("after an error: %v", err)
	}
}

// TestPredictorPoolConcurrent: goroutines sharing a pool get the same
// predictions as one predictor (run with -race).
func TestPredictorPoolConcurrent(t *testing.T) {
	m := fixture(t, "ooc/testdata/model_v2_regression_std.fkom")
	x := probe(200, m.D(), 5)
	var want model.Prediction
	if err := m.NewPredictor().PredictTo(&want, x, 200, model.WantStd); err != nil {
		t.Fatal(err)
	}
	pool := model.NewPredictorPool(m, 2)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst model.Prediction
			for i := range 20 {
				rows := 1 + (g*20+i)%200
				p := pool.Get()
				err := p.PredictTo(&dst, x[:rows*m.D()], rows, model.WantStd)
				pool.Put(p)
				if err != nil {
					errs <- err
					return
				}
				if sameBits(dst.Scores, want.Scores[:rows*m.K()]) >= 0 || sameBits(dst.Std, want.Std[:rows*m.K()]) >= 0 {
					errs <- errors.New("a pooled predictor's predictions differ")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	other := fixture(t, "cmd/falkon-ooc/testdata/model_v1.falkon")
	defer func() {
		if recover() == nil {
			t.Error("Put of another model's predictor did not panic")
		}
	}()
	pool.Put(other.NewPredictor())
}

// TestProjector: a Projector's scores are the Predictor's bit for bit,
// and its projections give the Predictor's standard deviations through
// the variance's formula, Scale·max(Prior − Σ wᵢ(uᵢᵀk_x)², 0) + Noise
// with wᵢ = σᵢ/(σᵢ + λ).
func TestProjector(t *testing.T) {
	m := fixture(t, "ooc/testdata/model_v2_regression_std.fkom")
	u := m.Uncertainty()
	const rows = 37
	x := probe(rows, m.D(), 5)
	var dst model.Prediction
	if err := m.NewPredictor().PredictTo(&dst, x, rows, model.WantStd); err != nil {
		t.Fatal(err)
	}
	k := m.K()
	scores, proj := make([]float64, rows*k), make([]float64, rows*u.Rank)
	if err := m.NewProjector().ProjectTo(scores, proj, x, rows); err != nil {
		t.Fatal(err)
	}
	if i := sameBits(scores, dst.Scores); i >= 0 {
		t.Fatalf("score %d: projector %v, predictor %v", i, scores[i], dst.Scores[i])
	}
	for i := range rows {
		v := u.Prior
		for q, g := range proj[i*u.Rank : (i+1)*u.Rank] {
			v -= u.Sigma[q] / (u.Sigma[q] + u.Lambda) * g * g
		}
		for j := range k {
			want := math.Sqrt(u.Scale[j]*max(v, 0) + u.Noise[j])
			if got := dst.Std[i*k+j]; math.Abs(got-want) > 1e-12*want {
				t.Fatalf("row %d: std %v, from the projections %v", i, got, want)
			}
		}
	}
	bad := append([]float64(nil), x...)
	bad[3*m.D()+1] = math.NaN()
	var ve *stream.ValueError
	if err := m.NewProjector().ProjectTo(scores, proj, bad, rows); !errors.As(err, &ve) {
		t.Fatalf("a NaN feature: %v, want a *stream.ValueError", err)
	}
}
