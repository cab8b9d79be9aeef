package ooc_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// kindLog is a LocalExecutor that records the kind of every pass.
type kindLog struct {
	mu    sync.Mutex
	kinds []pass.Kind
}

func (e *kindLog) Pass(ctx context.Context, src stream.Source, job *pass.Job) ([]float64, error) {
	e.mu.Lock()
	e.kinds = append(e.kinds, job.Kind)
	e.mu.Unlock()
	return pass.LocalExecutor{Workers: 2}.Pass(ctx, src, job)
}

// TestCalibrationThroughExecutor: a classifier whose validation rows are
// held out of its data (binary and 3-class, with and without row weights,
// with a threshold rule) is calibrated on scores that a pass.Scores pass
// computes through the fit's executor, and those scores, targets and
// weights are, bit for bit, the ones the model's own prediction of the
// held-out rows gives (the Evaluators encode to the same bytes).
func TestCalibrationThroughExecutor(t *testing.T) {
	for _, c := range []struct {
		k        int
		weighted bool
		cfg      ooc.Config
	}{
		{2, false, ooc.Config{Threshold: "f1"}},
		{2, true, ooc.Config{}},
		{3, true, ooc.Config{}},
	} {
		t.Run(fmt.Sprintf("k=%d/weighted=%v/threshold=%s", c.k, c.weighted, c.cfg.Threshold), func(t *testing.T) {
			x, y := classData(1500, c.k, 7)
			src := stream.NewMemSource(x, 2, y, 1, 100)
			if c.weighted {
				w := make([]float64, len(y))
				for i := range w {
					w[i] = 0.5 + float64(i%3)
				}
				src = src.WithWeights(w, "w")
			}
			rest, held, err := ooc.HoldOut(src, 0.2, 3)
			if err != nil {
				t.Fatal(err)
			}
			cfg := c.cfg
			cfg.Centers, cfg.Iterations, cfg.Seed = 60, 6, 2
			exec := &kindLog{}
			opts := ooc.RunOptions{Validation: held, Workers: 2, Executor: exec}
			m, err := ooc.Fit(context.Background(), rest, cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			if m.Calibration() == nil {
				t.Fatal("the fit's model has no calibration")
			}
			if n := slices.Index(exec.kinds, pass.Scores); n < 0 || n != len(exec.kinds)-1 {
				t.Errorf("the fit's passes %v: want one %s pass, the last", exec.kinds, pass.Scores)
			}
			viaPass, read, err := ooc.EvaluateValForTest(context.Background(), m, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(viaPass, read) {
				t.Errorf("the Scores pass's Evaluator (%d bytes) differs from the model's prediction's (%d bytes)", len(viaPass), len(read))
			}
		})
	}
}

// TestCalibrateWith: a search's pick calibrated (and given its threshold
// by a rule) with CalibrateWith on the rows the search held out is
// Calibrate's model to the bit, and its rows are scored in a pass.Scores
// pass through the executor; a separate validation source is read as
// Calibrate reads it. Its errors name what is missing.
func TestCalibrateWith(t *testing.T) {
	ctx := context.Background()
	x, y := classData(1200, 2, 9)
	src := stream.NewMemSource(x, 2, y, 1, 100)
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 30, Iterations: 5, Seed: 3, Threshold: "balanced"},
		Sigmas: []float64{0.5, 1}, Lambdas: []float64{1e-3, 1e-5}, ValFraction: 0.25}
	res, err := ooc.Tune(ctx, src, tc, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, held, err := ooc.HoldOut(src, tc.ValFraction, tc.Base.Seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, val := range []stream.Source{held, opaque{held}} {
		want, err := ooc.Calibrate(ctx, res.Model(), val, ooc.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		exec := &kindLog{}
		got, err := ooc.CalibrateWith(ctx, res.Model(), ooc.RunOptions{Validation: val, Executor: exec})
		if err != nil {
			t.Fatal(err)
		}
		if _, isOpaque := val.(opaque); isOpaque != (len(exec.kinds) == 0) || !isOpaque && !slices.Equal(exec.kinds, []pass.Kind{pass.Scores}) {
			t.Errorf("validation %T: passes %v", val, exec.kinds)
		}
		gd, _ := got.Decision()
		wd, _ := want.Decision()
		if *got.Calibration() != *want.Calibration() || gd != wd || *got.Training().ValidationFinal.LogLoss != *want.Training().ValidationFinal.LogLoss {
			t.Errorf("validation %T: calibration %+v, decision %+v; Calibrate's %+v, %+v", val, *got.Calibration(), gd, *want.Calibration(), wd)
		}
	}
	if _, err := ooc.CalibrateWith(ctx, res.Model(), ooc.RunOptions{}); err == nil || err.Error() != "invalid configuration: calibration needs validation rows" {
		t.Errorf("no validation rows: %v", err)
	}
}
