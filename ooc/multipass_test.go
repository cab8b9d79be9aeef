package ooc_test

import (
	"context"
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// countingExecutor ships every job through JSON and runs it with
// LocalExecutor on view, the same rows as the pass's source in another
// chunking, as a remote executor reading the store would: the rows a job
// holds out must not depend on the chunking.
type countingExecutor struct {
	view  stream.Source
	kinds map[pass.Kind]int
}

func (e *countingExecutor) Pass(ctx context.Context, src stream.Source, job *pass.Job) ([]float64, error) {
	e.kinds[job.Kind]++
	remote, err := ship(job)
	if err != nil {
		return nil, err
	}
	view := e.view
	if view == nil {
		view = src
	}
	return pass.LocalExecutor{Workers: 1}.Pass(ctx, view, remote)
}

// TestTuneThroughExecutor runs Tune's passes through an Executor that
// ships each job as JSON: every pass over the training data goes
// through it, and the search is the local one — bit for bit on the same
// chunks, to rounding on another chunking of the same rows.
func TestTuneThroughExecutor(t *testing.T) {
	const n, d = 2000, 3
	x, y := synth(n, d, 21)
	src := stream.NewMemSource(x, d, y, 1, 100)
	cfg := ooc.TuneConfig{Base: ooc.Config{Centers: 60, Iterations: 6, Seed: 3}, Sigmas: []float64{1, 3},
		Lambdas: []float64{1e-3, 1e-6}, ValFraction: 0.2, SigmaHalving: -1, MaxPasses: 9}
	local, err := ooc.Tune(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := synth(200, d, 22)
	for _, tc := range []struct {
		name string
		view stream.Source
		tol  float64
	}{
		{"same chunks", nil, 0},
		{"other chunks", stream.NewMemSource(x, d, y, 1, 333), 1e-7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &countingExecutor{view: tc.view, kinds: map[pass.Kind]int{}}
			res, err := ooc.Tune(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, Executor: ex})
			if err != nil {
				t.Fatal(err)
			}
			if ex.kinds[pass.GroupTargetProduct] != 1 || ex.kinds[pass.GroupKernelProduct]+1 != res.Passes-1 {
				t.Errorf("passes through the executor %v; the search made %d (one local: the centres)", ex.kinds, res.Passes)
			}
			if res.Best != local.Best || res.Passes != local.Passes {
				t.Fatalf("best %d after %d passes, locally %d after %d", res.Best, res.Passes, local.Best, local.Passes)
			}
			for i, c := range res.Candidates {
				lc := local.Candidates[i]
				if c.BestIteration != lc.BestIteration || len(c.Validation) != len(lc.Validation) {
					t.Fatalf("candidate %d: best iteration %d of %d validations, locally %d of %d",
						i, c.BestIteration, len(c.Validation), lc.BestIteration, len(lc.Validation))
				}
				for v := range c.Validation {
					g, w := *c.Validation[v].RMSE, *lc.Validation[v].RMSE
					if math.Abs(g-w) > tc.tol*w {
						t.Fatalf("candidate %d, validation %d: RMSE %v, locally %v", i, v, g, w)
					}
				}
				pg, pw := make([]float64, 200), make([]float64, 200)
				c.Model().PredictTo(pg, tx, 200)
				lc.Model().PredictTo(pw, tx, 200)
				if e := maxRelDiff(pg, pw); e > tc.tol {
					t.Fatalf("candidate %d: predictions differ from the local search's by %.3g relative", i, e)
				}
			}
		})
	}
}
