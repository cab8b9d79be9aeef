package beam

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestFitTunedOnBeam: fit --tune on Beam draws the search's row
// subsamples (training rows and held-out validation rows, with their
// targets and weights) with rows jobs, as the centres are drawn: the
// driver reads no chunk of the store. The subsamples are the rows a local
// FitTuned reads, so the search is the local search bit for bit (the
// same table, σ and λ); the final fit runs on Beam and equals the local
// one to rounding.
func TestFitTunedOnBeam(t *testing.T) {
	ctx := context.Background()
	const n, d, chunk = 6000, 3, 500
	dir := filepath.Join(t.TempDir(), "w.store")
	cols := writeWeightedStore(t, dir, n, d, chunk)
	tc := ooc.FitTunedConfig{
		Fit:    ooc.Config{Centers: 60, Iterations: 6, Seed: 7, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}},
		Search: ooc.TuneConfig{Sigmas: []float64{0.7, 1.4}, Lambdas: []float64{1e-2, 1e-3}, ValFraction: 0.2},
		Rows:   1500, Centers: 25, ValRows: 400,
	}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	local, err := ooc.FitTuned(ctx, r, tc, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 4, Temp: t.TempDir(),
		OnJob: func(s JobStats) { kinds = append(kinds, s.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var reads atomic.Int64
	remote, err := ooc.FitTuned(ctx, countingStore{e.Source(), &reads}, tc, ooc.RunOptions{Executor: e})
	if err != nil {
		t.Fatal(err)
	}
	// The two subsamples, the centres, then the final fit's passes.
	if reads.Load() != 0 || len(kinds) < 4 || kinds[0] != kindRows || kinds[1] != kindRows || kinds[2] != kindRows ||
		kinds[3] != string(pass.TargetProduct) {
		t.Fatalf("the driver read %d chunks of the store; jobs %v", reads.Load(), kinds)
	}

	lh, rh := local.Training().Handoff, remote.Training().Handoff
	if lh.Lambda != rh.Lambda || lh.Sigma != rh.Sigma || lh.SearchLambda != rh.SearchLambda || lh.SearchRows != rh.SearchRows ||
		lh.SearchValRows != rh.SearchValRows {
		t.Fatalf("hand-off on Beam %+v, locally %+v", *rh, *lh)
	}
	ls, rs := local.Training().Search, remote.Training().Search
	if len(ls.Candidates) != len(rs.Candidates) || ls.Best != rs.Best {
		t.Fatalf("search of %d candidates (best %d) on Beam, %d (best %d) locally", len(rs.Candidates), rs.Best, len(ls.Candidates), ls.Best)
	}
	for i, c := range rs.Candidates {
		lc := ls.Candidates[i]
		if c.Lambda != lc.Lambda || c.Kernel.Sigma != lc.Kernel.Sigma || c.BestMetric != lc.BestMetric || c.BestIteration != lc.BestIteration ||
			!slices.Equal(c.Residuals, lc.Residuals) {
			t.Fatalf("candidate %d: σ %v λ %v best %v at %d on Beam; σ %v λ %v best %v at %d locally", i, c.Kernel.Sigma, c.Lambda,
				c.BestMetric, c.BestIteration, lc.Kernel.Sigma, lc.Lambda, lc.BestMetric, lc.BestIteration)
		}
	}
	if !slices.Equal(remote.Centers(), local.Centers()) {
		t.Fatal("the final fit's centres differ from the local fit's")
	}
	lt, rt := local.Training(), remote.Training()
	if lt.Iterations != rt.Iterations || lt.BestIteration != rt.BestIteration || lt.Status != rt.Status {
		t.Fatalf("final fit: %d iterations (best %d, %s) on Beam, %d (best %d, %s) locally", rt.Iterations, rt.BestIteration, rt.Status,
			lt.Iterations, lt.BestIteration, lt.Status)
	}
	// 4 partitions group the final fit's sums otherwise than the local
	// passes do (the search runs in memory on the same rows, to the bit):
	// 1.2e-9 relative at most, measured. (With the grid's λ at 1e-5 the
	// hand-off's λ of 3e-6 lets CG on these weights, some of them 0, carry
	// that rounding to 8 % by the 12th iteration, locally as on Beam.)
	x := make([]float64, 0, 200*d)
	for i := range 200 {
		for j := range d {
			x = append(x, cols[j][i*11])
		}
	}
	pl, pr := make([]float64, 200), make([]float64, 200)
	local.PredictTo(pl, x, 200)
	remote.PredictTo(pr, x, 200)
	worst := 0.0
	for i := range pl {
		rel := math.Abs(pr[i]-pl[i]) / max(1, math.Abs(pl[i]))
		worst = max(worst, rel)
		if rel > 1e-8 {
			t.Errorf("prediction %d: %.15g on Beam, %.15g locally", i, pr[i], pl[i])
		}
	}
	t.Logf("largest relative prediction difference from the local fit: %.3g; the store has %d rows", worst, stream.Rows(r))
}
