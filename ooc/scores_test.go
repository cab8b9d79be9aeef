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
