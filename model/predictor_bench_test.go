package model_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
)

// benchModel returns a binary classifier with Platt calibration at
// M = 10⁴ centres and d = 28 features (the shape of higgs), with random
// centres and coefficients: prediction's cost does not depend on their
// values.
func benchModel(b *testing.B) *model.Model {
	const m, d = 10000, 28
	rng := rand.New(rand.NewPCG(1, 2))
	centres, alpha := make([]float64, m*d), make([]float64, m)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	for i := range alpha {
		alpha[i] = rng.NormFloat64() / m
	}
	features := make([]string, d)
	mean, std := make([]float64, d), make([]float64, d)
	for j := range d {
		features[j] = "f" + strconv.Itoa(j)
		mean[j], std[j] = 1, 2
	}
	mm, err := model.New(model.Params{
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(d)}, Precision: kernel.Float64,
		Task: model.TaskBinary, Classes: []float64{0, 1}, Features: features, Targets: []string{"y"},
		FeatureMean: mean, FeatureStd: std, TargetMean: []float64{0}, M: m, D: d, K: 1,
		Centers: centres, Alpha: alpha,
		Calibration: &model.Calibration{Method: model.CalibrationPlatt, A: 2, B: 0.1, Rows: 1},
	})
	if err != nil {
		b.Fatal(err)
	}
	return mm
}

// benchStdModel returns a regression model with an Uncertainty of rank
// 56 (the default rank at d = 28) at M = 10⁴, d = 28: the shape of a
// service answering standard deviations.
func benchStdModel(b *testing.B) *model.Model {
	const m, d, r = 10000, 28, 56
	rng := rand.New(rand.NewPCG(3, 4))
	centres, alpha, w := make([]float64, m*d), make([]float64, m), make([]float64, m*r)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	for i := range alpha {
		alpha[i] = rng.NormFloat64() / m
	}
	for i := range w {
		w[i] = rng.NormFloat64() / m
	}
	features := make([]string, d)
	for j := range d {
		features[j] = "f" + strconv.Itoa(j)
	}
	sigma := make([]float64, r)
	for i := range sigma {
		sigma[i] = float64(r - i)
	}
	mm, err := model.New(model.Params{
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(d)}, Precision: kernel.Float64,
		Task: model.TaskRegression, Features: features, Targets: []string{"y"},
		TargetMean: []float64{0}, M: m, D: d, K: 1, Centers: centres, Alpha: alpha,
		Uncertainty: &model.Uncertainty{Method: model.UncertaintyExact, Rank: r, Prior: 1, Sigma: sigma, Lambda: 1e-3,
			Scale: []float64{1}, Noise: []float64{0.1}, ResidualVar: []float64{1}},
		UncertaintyFactor: w,
	})
	if err != nil {
		b.Fatal(err)
	}
	return mm
}

// BenchmarkPredictorStd: one call with standard deviations at M = 10⁴,
// d = 28 (rank 56), for 1, 64 and 4096 rows. ns/row shows what a row
// costs alone against in a batch.
func BenchmarkPredictorStd(b *testing.B) {
	m := benchStdModel(b)
	for _, rows := range []int{1, 64, 4096} {
		x := probe(rows, m.D(), 7)
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			p := m.NewPredictor()
			var dst model.Prediction
			benchCalls(b, rows, func() {
				if err := p.PredictTo(&dst, x, rows, model.WantStd); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkPredictor: the latency of one call at M = 10⁴, d = 28, for 1,
// 64 and 4096 rows: a Predictor (scores, classes and calibrated
// probabilities, reused scratch) against Model.PredictTo followed by
// ProbaTo (a copy of x, a kernel workspace and the outputs per call).
// Beside the wall time it reports cpu-ns/op, the CPU time of the
// benchmark's own thread per call (Linux), which a loaded machine
// disturbs less; the garbage collector's work on other threads is not in
// it.
func BenchmarkPredictor(b *testing.B) {
	m := benchModel(b)
	for _, rows := range []int{1, 64, 4096} {
		x := probe(rows, m.D(), 7)
		b.Run(fmt.Sprintf("rows=%d/predictor", rows), func(b *testing.B) {
			p := m.NewPredictor()
			var dst model.Prediction
			benchCalls(b, rows, func() {
				if err := p.PredictTo(&dst, x, rows, model.WantProba); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("rows=%d/model.PredictTo", rows), func(b *testing.B) {
			benchCalls(b, rows, func() {
				out := make([]float64, rows)
				m.PredictTo(out, x, rows)
				proba := make([]float64, 2*rows)
				m.ProbaTo(proba, out, rows)
			})
		})
	}
}

// benchCalls runs call b.N times on a locked OS thread and reports
// allocations, ns/row and cpu-ns/op.
func benchCalls(b *testing.B, rows int, call func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0 := threadCPU()
	for b.Loop() {
		call()
	}
	cpu := threadCPU() - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
