package ooc_test

import (
	"context"
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestEvaluatorMerge: the metrics of rows scored in parts, each part's
// Evaluator sent through MarshalBinary/UnmarshalBinary and merged in
// order, equal one Evaluator's over every row: exactly for a binary
// classifier (its rows are kept), within rounding for regression (merged
// compensated sums).
func TestEvaluatorMerge(t *testing.T) {
	const n, d = 3000, 3
	x, y := synth(n, d, 5)
	mean := 0.0
	for _, v := range y {
		mean += v / n
	}
	yb := make([]float64, n) // two classes: above the mean or not
	for i, v := range y {
		if v > mean {
			yb[i] = 1
		}
	}
	cfg := ooc.Config{Centers: 40, Iterations: 5, Seed: 1, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}}
	for _, c := range []struct {
		name string
		y    []float64
		task ooc.Task
	}{{"regression", y, ooc.TaskRegression}, {"binary", yb, ooc.TaskBinary}} {
		t.Run(c.name, func(t *testing.T) {
			cfg.Task = c.task
			m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, c.y, 1, 500), cfg, ooc.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			scores := make([]float64, n*m.K())
			m.PredictTo(scores, x, n)
			k := m.K()
			whole := m.NewEvaluator()
			if err := whole.Add(scores, c.y, n); err != nil {
				t.Fatal(err)
			}
			merged := m.NewEvaluator()
			for _, cut := range [][2]int{{0, 1}, {1, 1000}, {1000, 1000}, {1000, 3000}} {
				part := m.NewEvaluator()
				if err := part.Add(scores[cut[0]*k:cut[1]*k], c.y[cut[0]:cut[1]], cut[1]-cut[0]); err != nil {
					t.Fatal(err)
				}
				b, err := part.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				back := m.NewEvaluator()
				if err := back.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
				if err := merged.Merge(back); err != nil {
					t.Fatal(err)
				}
			}
			w, g := whole.Metrics(), merged.Metrics()
			if g.Rows != w.Rows {
				t.Fatalf("%d rows merged, %d whole", g.Rows, w.Rows)
			}
			pairs := [][2]*float64{{w.RMSE, g.RMSE}, {w.MSE, g.MSE}, {w.RelErr, g.RelErr}, {w.ErrorRate, g.ErrorRate}, {w.AUC, g.AUC}, {w.LogLoss, g.LogLoss}, {w.ECE, g.ECE}}
			seen := 0
			for i, p := range pairs {
				if (p[0] == nil) != (p[1] == nil) {
					t.Fatalf("metric %d: %v merged, %v whole", i, p[1], p[0])
				}
				if p[0] == nil {
					continue
				}
				seen++
				tol := 0.0
				if c.task == ooc.TaskRegression {
					tol = 1e-13 * math.Abs(*p[0])
				}
				if math.Abs(*p[0]-*p[1]) > tol {
					t.Fatalf("metric %d: %v merged, %v whole", i, *p[1], *p[0])
				}
			}
			if seen < 3 {
				t.Fatalf("only %d metrics compared", seen)
			}
			if err := m.NewEvaluator().UnmarshalBinary([]byte("FKEV\x01junk")); err == nil {
				t.Fatal("junk decoded")
			}
		})
	}
}
