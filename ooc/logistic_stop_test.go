package ooc_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestLogisticPatience: Config.Patience stops a logistic fit whose
// validation metric (1 − AUC, after each Newton step) stops improving by
// MinImprovement, and the model is the best step's: bit for bit the fit
// that runs only that many steps. With a validation source of its own
// (scored in a pass of its own per step) the steps and the model are the
// same as with the rows held out.
func TestLogisticPatience(t *testing.T) {
	ctx := context.Background()
	x, y := classData(3000, 2, 7)
	src := stream.NewMemSource(x, 2, y, 1, 300)
	train, held, err := ooc.HoldOut(src, 0.2, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ooc.Config{Centers: 60, Iterations: 4, Seed: 1, Loss: ooc.LossLogistic, NewtonSteps: 12, Patience: 1, MinImprovement: 0.5,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.7}}
	m, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: 2, Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	tr := m.Training()
	n := len(tr.NewtonSteps)
	if tr.Status != ooc.StatusPatience || n >= cfg.NewtonSteps || len(tr.Validation) != n {
		t.Fatalf("status %s after %d of %d steps, %d validations", tr.Status, n, cfg.NewtonSteps, len(tr.Validation))
	}
	best := 0
	for i, v := range tr.Validation {
		if 1-*v.Metrics.AUC < 1-*tr.Validation[best].Metrics.AUC {
			best = i
		}
	}
	if tr.BestIteration != tr.Validation[best].Iteration {
		t.Fatalf("best iteration %d, the lowest 1 − AUC's is %d", tr.BestIteration, tr.Validation[best].Iteration)
	}
	short := cfg
	short.NewtonSteps, short.Patience = best+1, -1
	want, err := ooc.Fit(ctx, train, short, ooc.RunOptions{Workers: 2, Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Alpha(), want.Alpha()) {
		t.Fatalf("the model is not the fit of its best step %d's", best+1)
	}
	if got, w := *m.Training().ValidationFinal.LogLoss, *want.Training().ValidationFinal.LogLoss; got != w {
		t.Fatalf("final validation log-loss %v, the best step's fit's %v", got, w)
	}
	// A validation source of its own: the same stops and model.
	var tx, ty []float64
	for c0 := 0; c0 < 3000; c0 += 300 {
		for _, r := range stream.HeldOutRows(nil, int64(c0), 300, 0.2, 3) {
			i := c0 + int(r)
			tx, ty = append(tx, x[2*i:2*i+2]...), append(ty, y[i])
		}
	}
	if int64(len(ty)) != stream.Rows(held) {
		t.Fatalf("%d held-out rows, the hold-out has %d", len(ty), stream.Rows(held))
	}
	own, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: 2, Validation: stream.NewMemSource(tx, 2, ty, 1, 100)})
	if err != nil {
		t.Fatal(err)
	}
	ot := own.Training()
	if len(ot.NewtonSteps) != n || ot.BestIteration != tr.BestIteration || !slices.Equal(own.Alpha(), m.Alpha()) {
		t.Fatalf("with a validation source of its own: %d steps, best %d; held out: %d, %d", len(ot.NewtonSteps), ot.BestIteration, n, tr.BestIteration)
	}
	for i := range ot.Validation {
		if a, b := *ot.Validation[i].Metrics.LogLoss, *tr.Validation[i].Metrics.LogLoss; math.Abs(a-b) > 1e-12*b {
			t.Fatalf("validation %d: log-loss %v from its own source, %v held out", i, a, b)
		}
	}
	// Patience −1 never stops.
	never := cfg
	never.Patience = -1
	all, err := ooc.Fit(ctx, train, never, ooc.RunOptions{Workers: 2, Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	if at := all.Training(); len(at.NewtonSteps) != cfg.NewtonSteps || at.Status == ooc.StatusPatience || len(at.Validation) != cfg.NewtonSteps {
		t.Fatalf("Patience −1: %d steps, status %s", len(at.NewtonSteps), at.Status)
	}
}

// TestLogisticTuneStops: in a logistic search, Patience stops the
// candidates whose validation stops improving and Halving the worse half
// at Newton steps h, 2h, …: each candidate's model is then the logistic
// Fit's with the same stopping rule, and the search makes fewer passes.
func TestLogisticTuneStops(t *testing.T) {
	ctx := context.Background()
	x, y := classData(3000, 2, 9)
	src := stream.NewMemSource(x, 2, y, 1, 300)
	base := ooc.Config{Centers: 60, Iterations: 3, Seed: 1, Loss: ooc.LossLogistic, NewtonSteps: 8}
	grid := ooc.TuneConfig{Base: base, Sigmas: []float64{0.3, 0.7, 1.5, 3}, Lambdas: []float64{1e-3, 1e-6}, ValFraction: 0.2}
	never := grid
	never.Patience = -1
	all, err := ooc.Tune(ctx, src, never, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	stops := grid
	stops.Patience, stops.MinImprovement, stops.Halving = 2, 0.05, 1
	res, err := ooc.Tune(ctx, src, stops, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range res.Candidates {
		count[c.Stop]++
	}
	if count[ooc.StopPatience] == 0 || count[ooc.StopHalving] == 0 || res.Passes >= all.Passes {
		t.Fatalf("stops %v, %d passes (without stopping rules %d)", count, res.Passes, all.Passes)
	}
	train, val := stream.Holdout(src, 0.2, base.Seed)
	for i, c := range res.Candidates {
		if c.Stop == ooc.StopHalving {
			continue // the Fit has no halving
		}
		cfg := base
		cfg.Kernel, cfg.Lambda, cfg.Patience, cfg.MinImprovement = c.Kernel, c.Lambda, 2, 0.05
		want, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: 2, Validation: val})
		if err != nil {
			t.Fatal(err)
		}
		if err := relClose(c.Model().Alpha(), want.Alpha(), 1e-12); err != nil || c.BestIteration != want.Training().BestIteration {
			t.Fatalf("candidate %d (%s): best %d, the Fit's %d: %v", i, c.Stop, c.BestIteration, want.Training().BestIteration, err)
		}
	}
}

// TestLogisticPatienceResume: a patience-stopped logistic fit checkpoints
// the stopping rule's state with each Newton step; resuming from any of
// them gives the uninterrupted fit's model and stop, bit for bit.
func TestLogisticPatienceResume(t *testing.T) {
	ctx := context.Background()
	x, y := classData(3000, 2, 7)
	train, held, err := ooc.HoldOut(stream.NewMemSource(x, 2, y, 1, 300), 0.2, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ooc.Config{Centers: 60, Iterations: 4, Seed: 1, Loss: ooc.LossLogistic, NewtonSteps: 12, Patience: 2, MinImprovement: 0.2,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.7}}
	var ckpts []*ooc.Checkpoint
	full, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: 2, Validation: held, Checkpoint: func(c *ooc.Checkpoint) error {
		ckpts = append(ckpts, c)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ft := full.Training()
	// One per step, and one more with the stop.
	if ft.Status != ooc.StatusPatience || len(ckpts) != len(ft.NewtonSteps)+1 || len(ckpts) < 3 {
		t.Fatalf("status %s, %d checkpoints for %d steps", ft.Status, len(ckpts), len(ft.NewtonSteps))
	}
	for i, c := range ckpts {
		m, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: 2, Validation: held, Resume: c})
		if err != nil {
			t.Fatal(err)
		}
		rt := m.Training()
		if !slices.Equal(m.Alpha(), full.Alpha()) || rt.Status != ft.Status || rt.BestIteration != ft.BestIteration || len(rt.NewtonSteps) != len(ft.NewtonSteps) {
			t.Fatalf("resumed after step %d: status %s, best %d, %d steps; uninterrupted %s, %d, %d", i+1,
				rt.Status, rt.BestIteration, len(rt.NewtonSteps), ft.Status, ft.BestIteration, len(ft.NewtonSteps))
		}
	}
}

// TestLogisticTuneValidationShape: a logistic search checks its validation
// source's shape as the squared loss's search does (one set-up for both).
func TestLogisticTuneValidationShape(t *testing.T) {
	x, y := classData(400, 2, 9)
	src := stream.NewMemSource(x, 2, y, 1, 100)
	val := stream.NewMemSource(make([]float64, 30), 3, make([]float64, 10), 1, 10)
	for _, loss := range []ooc.Loss{ooc.LossSquared, ooc.LossLogistic} {
		_, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Centers: 20, Iterations: 2, Loss: loss, Task: ooc.TaskBinary}},
			ooc.RunOptions{Validation: val})
		want := "invalid configuration: the validation data has 3 features and 1 targets, the training data 2 and 1"
		var ce *ooc.ConfigError
		if err == nil || err.Error() != want || !errors.As(err, &ce) || ce.Field != "RunOptions.Validation" {
			t.Errorf("%s: err = %v, want %q naming RunOptions.Validation", loss, err, want)
		}
	}
}
