package ooc_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// remoteKey marks the context of the reads an executor makes, as if on
// another machine.
type remoteKey struct{}

// driverReads is a source that counts the chunks read from it by the
// driver, that is, not by driverExecutor's passes and rows. It knows its
// feature statistics, as a chunk store's manifest does.
type driverReads struct {
	stream.Source
	reads     *atomic.Int64
	mean, std []float64
}

func (s driverReads) FeatureStats() (mean, std []float64) { return s.mean, s.std }

func (s driverReads) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if ctx.Value(remoteKey{}) == nil {
		s.reads.Add(1)
	}
	return s.Source.ReadChunk(ctx, i, x, y)
}

// driverExecutor ships every job through its encoding and runs it, and
// reads rows, with a context that marks the reads as its own.
type driverExecutor struct {
	kinds map[pass.Kind]int
	rows  int
}

func (e *driverExecutor) Pass(ctx context.Context, src stream.Source, job *pass.Job) ([]float64, error) {
	e.kinds[job.Kind]++
	remote, err := ship(job)
	if err != nil {
		return nil, err
	}
	return pass.LocalExecutor{Workers: 1}.Pass(context.WithValue(ctx, remoteKey{}, true), src, remote)
}

func (e *driverExecutor) ReadRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error) {
	e.rows += len(idx)
	return readRows(context.WithValue(ctx, remoteKey{}, true), src, idx)
}

// TestExactVarianceThroughExecutor: with the validation rows held out of
// the data, fit --uncertainty-method exact makes its passes (the Gram
// matrix over the training rows, the validation rows' scores and
// projections) through the executor, and reads the rank check's rows
// through it: the driver reads no chunk of the data. The uncertainty is
// the one of the local passes these replaced (legacy, kept in
// uncertainty_legacy_test.go) to 1e-12, and so are the standard
// deviations it predicts.
func TestExactVarianceThroughExecutor(t *testing.T) {
	const n, d, M = 4000, 3, 60
	x, y := synth(n, d, 41)
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.5 + float64(i%7)/4
	}
	for _, weighted := range []bool{false, true} {
		name := map[bool]string{false: "unweighted", true: "weighted"}[weighted]
		t.Run(name, func(t *testing.T) {
			mem := stream.NewMemSource(x, d, y, 1, 100)
			if weighted {
				mem = mem.WithWeights(w, "w")
			}
			cfg := ooc.Config{Centers: M, Lambda: 1e-4, Iterations: 30, Seed: 5, Task: ooc.TaskRegression,
				Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, Uncertainty: ooc.UncertaintyExact, UncertaintyRank: 12}
			var reads atomic.Int64
			mean, std := make([]float64, d), make([]float64, d)
			for j := range d {
				for i := range n {
					mean[j] += x[i*d+j] / n
				}
				for i := range n {
					std[j] += (x[i*d+j] - mean[j]) * (x[i*d+j] - mean[j]) / n
				}
				std[j] = math.Sqrt(std[j])
			}
			var src stream.Source = driverReads{mem, &reads, mean, std}
			if weighted {
				src = weightedReads{driverReads{mem, &reads, mean, std}, mem}
			}
			rest, held := stream.Holdout(src, 0.25, 7)
			ex := &driverExecutor{kinds: map[pass.Kind]int{}}
			got, err := ooc.Fit(context.Background(), rest, cfg, ooc.RunOptions{Workers: 2, Validation: held, Executor: ex})
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() != 0 || ex.kinds[pass.Gram] != 1 || ex.rows == 0 {
				t.Errorf("the driver read %d chunks; jobs %v; %d rows read through the executor", reads.Load(), ex.kinds, ex.rows)
			}
			restore := ooc.SetLegacyUncertaintyPassesForTest()
			lrest, lheld := stream.Holdout(src, 0.25, 7)
			want, err := ooc.Fit(context.Background(), lrest, cfg, ooc.RunOptions{Workers: 2, Validation: lheld})
			restore()
			if err != nil {
				t.Fatal(err)
			}
			gu, wu := got.Uncertainty(), want.Uncertainty()
			if gu.Rows != wu.Rows || gu.Rank != wu.Rank || gu.Rows == 0 {
				t.Fatalf("%d validation rows at rank %d, the local passes %d at %d", gu.Rows, gu.Rank, wu.Rows, wu.Rank)
			}
			for _, c := range []struct {
				name      string
				got, want []float64
			}{
				{"σ", gu.Sigma, wu.Sigma}, {"scale", gu.Scale, wu.Scale}, {"noise", gu.Noise, wu.Noise},
				{"λ, NLPD, coverage, rank error", []float64{gu.Lambda, gu.NLPD, gu.Coverage90, gu.RankError},
					[]float64{wu.Lambda, wu.NLPD, wu.Coverage90, wu.RankError}},
			} {
				if e := maxRelDiff(c.got, c.want); !(e <= 1e-12) || len(c.got) != len(c.want) {
					t.Errorf("%s: %v, the local passes %v (rel %.3g)", c.name, c.got, c.want, e)
				}
			}
			tx, _ := synth(100, d, 42)
			gs, ws := ooc.VarianceForTest(got, tx), ooc.VarianceForTest(want, tx)
			if e := maxRelDiff(gs, ws); !(e <= 1e-12) {
				t.Errorf("v(x) differs from the local passes' by %.3g relative", e)
			}
		})
	}
}

// weightedReads is driverReads over a weighted source.
type weightedReads struct {
	driverReads
	w stream.Weighter
}

func (s weightedReads) WeightColumn() string { return s.w.WeightColumn() }
func (s weightedReads) ReadWeights(ctx context.Context, i int, w []float64) error {
	return s.w.ReadWeights(ctx, i, w)
}
