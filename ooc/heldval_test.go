package ooc_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// readCounter counts the chunks read from its source.
type readCounter struct {
	stream.Source
	reads *atomic.Int64
}

func (r readCounter) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	r.reads.Add(1)
	return r.Source.ReadChunk(ctx, i, x, y)
}

// opaque hides that its source is a side of a hold-out: Fit then
// validates on it in passes of their own (the reference path).
type opaque struct{ stream.Source }

// heldFits fits rest with the validation rows held (scored in the CG
// passes) and with the same rows behind opaque (passes of their own),
// each at iterations 4 and 8, and returns the models at 8 and the
// chunks each path read per CG iteration.
func heldFits(t *testing.T, x, y []float64, d, chunkRows int, cfg ooc.Config) (inPass, own *ooc.Model, perIterIn, perIterOwn float64) {
	t.Helper()
	var reads atomic.Int64
	src := readCounter{stream.NewMemSource(x, d, y, 1, chunkRows), &reads}
	chunks := float64(src.NumChunks())
	rest, held := stream.Holdout(src, 0.2, 9)
	fit := func(iters int, val stream.Source) (*ooc.Model, int64) {
		c := cfg
		c.Iterations = iters
		reads.Store(0)
		m, err := ooc.Fit(context.Background(), rest, c, ooc.RunOptions{Validation: val, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return m, reads.Load()
	}
	_, in4 := fit(4, held)
	inPass, in8 := fit(8, held)
	_, own4 := fit(4, opaque{held})
	own, own8 := fit(8, opaque{held})
	return inPass, own, float64(in8-in4) / 4 / chunks, float64(own8-own4) / 4 / chunks
}

// TestFitValidatesInThePass: a fit whose validation rows are held out of
// its own data scores them in the passes that compute the CG products —
// one pass over the data per CG iteration, against two when they are a
// source of their own — and its model and validation curve are the
// reference path's: α to the bit (on 32 chunks or more the training rows
// of each pass are the same), the metrics to rounding (the scores come
// from the pass's kernel blocks, with α carried by the CG steps).
func TestFitValidatesInThePass(t *testing.T) {
	const n, d = 3200, 3
	x, y := synth(n, d, 5)
	cfg := ooc.Config{Centers: 200, Lambda: 1e-6, Seed: 3, Kernel: kernelSigma(0.6)}
	in, own, perIn, perOwn := heldFits(t, x, y, d, 100, cfg)
	t.Logf("passes over the data per CG iteration: %v with the validation in the pass, %v with passes of its own", perIn, perOwn)
	if perIn != 1 || perOwn != 2 {
		t.Errorf("passes per CG iteration: %v in the pass (want 1), %v on their own (want 2)", perIn, perOwn)
	}
	if !slices.Equal(in.Alpha(), own.Alpha()) {
		t.Errorf("α differs from the reference path's by %.3g relative", maxRelDiff(in.Alpha(), own.Alpha()))
	}
	vi, vo := in.Training().Validation, own.Training().Validation
	if len(vi) != 8 || len(vo) != 8 {
		t.Fatalf("%d and %d validations, want 8 each", len(vi), len(vo))
	}
	for i := range vi {
		if vi[i].Iteration != vo[i].Iteration || math.Abs(*vi[i].RMSE-*vo[i].RMSE) > 1e-12**vo[i].RMSE {
			t.Errorf("validation %d: iteration %d RMSE %v, reference iteration %d RMSE %v", i, vi[i].Iteration, *vi[i].RMSE, vo[i].Iteration, *vo[i].RMSE)
		}
	}
	// Two large chunks: stream.Spread cuts the whole data's chunks into
	// 4 ranges each and the training rows' into 3, so the sums of each
	// pass are grouped otherwise, and α moves by rounding.
	x, y = synth(8192, d, 5)
	in, own, perIn, _ = heldFits(t, x, y, d, 4096, cfg)
	if perIn != 1 {
		t.Errorf("2 chunks: %v passes per CG iteration, want 1", perIn)
	}
	if e := maxRelDiff(in.Alpha(), own.Alpha()); e > 1e-9 {
		t.Errorf("2 chunks: α differs from the reference path's by %.3g relative", e)
	} else {
		t.Logf("2 chunks: α differs from the reference path's by %.3g relative", e)
	}
}

// TestFitValidatesInThePassClassifier: a binary classifier with balanced
// class weights and patience, its validation in the pass, stops at the
// reference path's iteration with its α and its calibrated
// probabilities, to the bit.
func TestFitValidatesInThePassClassifier(t *testing.T) {
	x, y := classData(3200, 2, 8)
	for i := range y {
		if y[i] == 0 && i%3 == 0 {
			y[i] = 1 // unbalanced classes
		}
	}
	cfg := ooc.Config{Centers: 150, Lambda: 1e-9, Seed: 2, Kernel: kernelSigma(0.5), Patience: 2, Iterations: 40,
		ClassWeight: ooc.ClassWeightBalanced}
	src := stream.NewMemSource(x, 2, y, 1, 100)
	rest, held := stream.Holdout(src, 0.25, 4)
	in, err := ooc.Fit(context.Background(), rest, cfg, ooc.RunOptions{Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	own, err := ooc.Fit(context.Background(), rest, cfg, ooc.RunOptions{Validation: opaque{held}})
	if err != nil {
		t.Fatal(err)
	}
	ti, to := in.Training(), own.Training()
	t.Logf("%s after %d iterations, best %d", ti.Status, ti.Iterations, ti.BestIteration)
	if ti.Iterations != to.Iterations || ti.BestIteration != to.BestIteration || ti.Status != to.Status {
		t.Fatalf("in the pass: %d iterations, best %d, %s; reference: %d, best %d, %s",
			ti.Iterations, ti.BestIteration, ti.Status, to.Iterations, to.BestIteration, to.Status)
	}
	if !slices.Equal(in.Alpha(), own.Alpha()) {
		t.Errorf("α differs from the reference path's by %.3g relative", maxRelDiff(in.Alpha(), own.Alpha()))
	}
	xt, _ := classData(200, 2, 9)
	si, so := make([]float64, 200), make([]float64, 200)
	in.PredictTo(si, xt, 200)
	own.PredictTo(so, xt, 200)
	pi, po := make([]float64, 400), make([]float64, 400)
	in.ProbaTo(pi, si, 200)
	own.ProbaTo(po, so, 200)
	if !slices.Equal(pi, po) {
		t.Errorf("calibrated probabilities differ by %.3g relative", maxRelDiff(pi, po))
	}
	for i := range ti.Validation {
		a, b := ti.Validation[i], to.Validation[i]
		if a.Iteration != b.Iteration || math.Abs(*a.AUC-*b.AUC) > 1e-12 {
			t.Errorf("validation %d: iteration %d AUC %v, reference iteration %d AUC %v", i, a.Iteration, *a.AUC, b.Iteration, *b.AUC)
		}
	}
}

// TestFitValidatesThroughExecutor: the passes that score the held-out
// rows run through the executor, as every pass over the training data
// does: the right-hand side, one pass.GroupKernelProduct per CG iteration and one for
// the last iterate; the model is the local fit's.
func TestFitValidatesThroughExecutor(t *testing.T) {
	const d = 3
	x, y := synth(3200, d, 6)
	src := stream.NewMemSource(x, d, y, 1, 100)
	rest, held := stream.Holdout(src, 0.2, 5)
	cfg := ooc.Config{Centers: 100, Iterations: 6, Seed: 1, Kernel: kernelSigma(0.7)}
	e := &countingExecutor{kinds: map[pass.Kind]int{}}
	got, err := ooc.Fit(context.Background(), rest, cfg, ooc.RunOptions{Validation: held, Executor: e})
	if err != nil {
		t.Fatal(err)
	}
	want := map[pass.Kind]int{pass.TargetProduct: 1, pass.GroupKernelProduct: cfg.Iterations + 1}
	if fmt.Sprint(e.kinds) != fmt.Sprint(want) {
		t.Errorf("passes through the executor %v, want %v", e.kinds, want)
	}
	local, err := ooc.Fit(context.Background(), rest, cfg, ooc.RunOptions{Validation: held, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Alpha(), local.Alpha()) {
		t.Errorf("α differs from the local fit's by %.3g relative", maxRelDiff(got.Alpha(), local.Alpha()))
	}
	if len(got.Training().Validation) != cfg.Iterations {
		t.Errorf("%d validations, want %d", len(got.Training().Validation), cfg.Iterations)
	}
}
