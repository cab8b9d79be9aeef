package beam

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
)

// TestTuneMatchesLocal: on Prism, a search over 2 σ × 2 λ with 10 % of
// the rows held out picks what ooc.Tune picks on the same store, after the
// same passes, with every candidate's validation curve and predictions
// within 1e-8 relative (the sums are associated differently, and CG at
// λ = 1e-5 amplifies that rounding to about 1e-9); every pass is a Beam
// job: the centres' rows, the right-hand sides, one per iteration (which
// scores the held-out rows), and the final validation.
func TestTuneMatchesLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tune.store")
	cols := writeStore(t, dir, 20_000, 3, 1024, 5)
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 80, Iterations: 5, Seed: 3},
		Sigmas: []float64{1, 2.5}, Lambdas: []float64{1e-3, 1e-5}, ValFraction: 0.1, SigmaHalving: -1,
		// A budget of the 5 iterations (2 + 5 + the held-out rows' final
		// pass): past them, CG at λ = 1e-5 amplifies the partitions' other
		// summation order beyond the 1e-8 this test holds Beam to.
		MaxPasses: 8}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	local, err := ooc.Tune(context.Background(), r, tc, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var jobs []JobStats
	res, err := Tune(context.Background(), tc, ooc.RunOptions{}, Options{Store: dir, Partitions: 4, Temp: t.TempDir(),
		OnJob: func(s JobStats) { jobs = append(jobs, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Best != local.Best || res.Passes != local.Passes || len(jobs) != res.Passes {
		t.Fatalf("best %d after %d passes (%d Beam jobs), locally %d after %d", res.Best, res.Passes, len(jobs), local.Best, local.Passes)
	}
	if jobs[0].Kind != kindRows || jobs[1].Kind != string(pass.GroupTargetProduct) || jobs[2].Kind != string(pass.GroupKernelProduct) {
		t.Errorf("jobs %s, %s, %s, …; want rows, group_target_product, group_kernel_product, …", jobs[0].Kind, jobs[1].Kind, jobs[2].Kind)
	}
	const rows = 500
	x := make([]float64, rows*3)
	for i := range rows {
		for j := range 3 {
			x[i*3+j] = cols[j][i*31]
		}
	}
	for i, c := range res.Candidates {
		lc := local.Candidates[i]
		if c.BestIteration != lc.BestIteration || len(c.Validation) != len(lc.Validation) {
			t.Fatalf("candidate %d: best iteration %d of %d validations, locally %d of %d",
				i, c.BestIteration, len(c.Validation), lc.BestIteration, len(lc.Validation))
		}
		for v := range c.Validation {
			g, w := *c.Validation[v].RMSE, *lc.Validation[v].RMSE
			if math.Abs(g-w) > 1e-8*w {
				t.Errorf("candidate %d, validation %d: RMSE %v, locally %v", i, v, g, w)
			}
		}
		got, want := make([]float64, rows), make([]float64, rows)
		c.Model().PredictTo(got, x, rows)
		lc.Model().PredictTo(want, x, rows)
		worst, scale := 0.0, 0.0
		for k := range want {
			worst, scale = math.Max(worst, math.Abs(got[k]-want[k])), math.Max(scale, math.Abs(want[k]))
		}
		if worst > 1e-8*scale {
			t.Errorf("candidate %d: predictions differ from the local search's by %.3g relative", i, worst/scale)
		}
	}
}
