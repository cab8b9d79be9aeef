package ooc_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestWeightScale: a uniform row weight of any positive scale, from the
// smallest denormal to 1e300, gives the same model (the passes scale the
// weights by a power of two near 1/mean as they read them): squared loss,
// logistic loss and FitTuned predict within 1e-8 relative of the unit
// weights' model (5e-324 is a power of two from 1, and gives the same
// bits; other scales round differently, which CG amplifies to about
// 1e-9), and report the weights' sum in their own scale. Before, 5e-324
// gave a test RMSE of 1.2e6. Weights whose sum overflows are refused,
// naming the column.
func TestWeightScale(t *testing.T) {
	const n, d = 1000, 2
	x, y := synth(n, d, 17)
	cls := make([]float64, n)
	for i, v := range y {
		if v > 5.1 {
			cls[i] = 1
		}
	}
	scales := []float64{5e-324, 1e-320, 1, 1e300}
	weighted := func(y []float64, c float64) stream.Source {
		w := make([]float64, n)
		for i := range w {
			w[i] = c
		}
		return stream.NewMemSource(x, d, y, 1, 250).WithWeights(w, "w")
	}
	kn := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	fits := map[string]func(src stream.Source) (*ooc.Model, error){
		"squared": func(src stream.Source) (*ooc.Model, error) {
			return ooc.Fit(context.Background(), src, ooc.Config{Centers: 50, Kernel: kn, Lambda: 1e-4, Iterations: 60, Seed: 3}, ooc.RunOptions{Workers: 2})
		},
		"logistic": func(src stream.Source) (*ooc.Model, error) {
			return ooc.Fit(context.Background(), src, ooc.Config{Centers: 50, Kernel: kn, Lambda: 1e-4, Iterations: 40, Seed: 3,
				Loss: ooc.LossLogistic, NewtonSteps: 4}, ooc.RunOptions{Workers: 2})
		},
		"tuned": func(src stream.Source) (*ooc.Model, error) {
			return ooc.FitTuned(context.Background(), src, ooc.FitTunedConfig{Fit: ooc.Config{Centers: 50, Iterations: 60, Seed: 3, Patience: 100},
				Rows: 400, Centers: 30, Search: ooc.TuneConfig{Sigmas: []float64{0.5, 2}, Lambdas: []float64{1e-3, 1e-2}}}, ooc.RunOptions{Workers: 2})
		},
	}
	for name, fit := range fits {
		targets := y
		if name == "logistic" {
			targets = cls
		}
		var ref []float64
		var refSum float64
		for _, c := range scales {
			m, err := fit(weighted(targets, c))
			if err != nil {
				t.Fatalf("%s, weights %g: %v", name, c, err)
			}
			pred := make([]float64, n)
			m.PredictTo(pred, x, n)
			if c == 1 {
				ref, refSum = pred, m.Training().WeightSum
			}
			// The training rows' weights, in the weights' own scale.
			defer func(ws, c float64) {
				if math.Abs(ws-c*refSum) > 1e-9*c*refSum {
					t.Errorf("%s, weights %g: the weights sum to %g, want %g", name, c, ws, c*refSum)
				}
			}(m.Training().WeightSum, c)
			defer func(a []float64, c float64) {
				if err := relClose(a, ref, 1e-8); err != nil {
					t.Errorf("%s: weights %g against 1: %v", name, c, err)
				}
			}(pred, c)
		}
	}

	_, err := fits["squared"](weighted(y, 1e307))
	want := fmt.Sprintf(`the weights of column "w" sum beyond the float64 range (%d rows of mean 1e+307): divide the column by a constant (any positive scale gives the same model)`, n)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("weights of 1e307: %v\nwant %s", err, want)
	}
}

// TestBalancedClassWithoutWeight: --class-weight balanced with a class
// whose rows all weigh 0 is refused, naming the class (it fitted a
// constant model after "balanced weights 0.5, 0"): Fit, the logistic
// loss and Tune.
func TestBalancedClassWithoutWeight(t *testing.T) {
	const n, d = 400, 2
	x, y := synth(n, d, 19)
	cls, w := make([]float64, n), make([]float64, n)
	for i, v := range y {
		w[i] = 1
		if v > 5.1 {
			cls[i], w[i] = 1, 0
		}
	}
	src := stream.NewMemSource(x, d, cls, 1, 100).WithWeights(w, "w")
	want := "invalid configuration: balanced class weights: class 1 weighs nothing in the training rows (its rows' weights sum to 0), " +
		"so no weight balances it: give its rows a weight > 0, leave the class out, or use no class weights"
	base := ooc.Config{Centers: 20, Iterations: 3, Seed: 1, Task: ooc.TaskBinary, ClassWeight: ooc.ClassWeightBalanced}
	logistic := base
	logistic.Loss, logistic.NewtonSteps = ooc.LossLogistic, 2
	for name, run := range map[string]func() error{
		"fit":      func() error { _, err := ooc.Fit(context.Background(), src, base, ooc.RunOptions{}); return err },
		"logistic": func() error { _, err := ooc.Fit(context.Background(), src, logistic, ooc.RunOptions{}); return err },
		"tune": func() error {
			_, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Lambdas: []float64{1e-3, 1e-4}}, ooc.RunOptions{})
			return err
		},
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", name, err, want)
		}
	}
}
