package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The local passes of the exact variance that pass.Gram and
// varianceRows replaced, kept as the reference of
// TestExactVarianceThroughExecutor.

// SetLegacyUncertaintyPassesForTest makes Fit's variance use the legacy
// local passes until the returned function is called.
func SetLegacyUncertaintyPassesForTest() func() {
	gramFn, varianceRowsFn = legacyGram, legacyVarianceRows
	return func() { gramFn, varianceRowsFn = exactGram, varianceRows }
}

// legacyGram forms K_nMᵀ W K_nM in one local pass over the training
// source.
func legacyGram(ctx context.Context, plan *FitPlan, cs *centreSample, c64m *kernel.Centers, _ *fitOperator, _ RunOptions, report func(done, chunks int)) ([]float64, error) {
	src, m, weighted := plan.src, cs.m, plan.Weight != ""
	workers := max(plan.Workers, 1)
	const tile = 256
	g := make([]float64, m*m)
	chunks := src.NumChunks()
	done := 0
	err := stream.Run(ctx, src, stream.Options{Workers: workers, InFlight: workers}, stream.Job[[]float64]{
		Weights:    weighted,
		NewPartial: func() []float64 { return make([]float64, m*m) },
		NewWorker: func() func(context.Context, stream.Chunk, []float64) error {
			ws := c64m.NewWorkspace()
			blk := make([]float64, tile*m)
			return func(ctx context.Context, c stream.Chunk, p []float64) error {
				clear(p)
				d := len(c.X) / max(c.Rows, 1)
				for r0 := 0; r0 < c.Rows; r0 += tile {
					n := min(tile, c.Rows-r0)
					c64m.BlockTo(ws, blk, c.X[r0*d:(r0+n)*d], n)
					if r := ws.NonFinite(); r >= 0 {
						return fmt.Errorf("chunk %d row %d: a feature is not finite", c.Index, r0+r)
					}
					if c.W != nil {
						for i, w := range c.W[r0 : r0+n] {
							sw := math.Sqrt(w)
							for j := range blk[i*m : (i+1)*m] {
								blk[i*m+j] *= sw
							}
						}
					}
					dense.Gemm(true, false, m, m, n, 1, blk, m, blk, m, p, m, 1)
				}
				return nil
			}
		},
		Reduce: func(_ int, p []float64) error {
			for i, v := range p {
				g[i] += v
			}
			done++
			report(done, chunks)
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("uncertainty pass: %w", err)
	}
	return g, nil
}

// legacyVarianceRows scores the validation source locally with the
// model's own projections.
func legacyVarianceRows(ctx context.Context, m *Model, plan *FitPlan, _ *centreSample, _ *fitOperator, w []float64, rank int,
	opts RunOptions) (e, p2, check []float64, err error) {
	k, d := m.K(), plan.D
	u := &Uncertainty{Method: UncertaintyExact, Rank: rank, Prior: 1, Sigma: make([]float64, rank), Lambda: 1, FitLambda: 1,
		Scale: make([]float64, k), Noise: make([]float64, k)}
	mu, err := m.withUncertainty(u, w)
	if err != nil {
		return nil, nil, nil, err
	}
	type valPart struct {
		rows         int
		scores, p, y []float64
		x            []float64
	}
	err = stream.Run(ctx, opts.Validation, stream.Options{Workers: max(plan.Workers, 1)}, stream.Job[*valPart]{
		Targets:    true,
		NewPartial: func() *valPart { return &valPart{} },
		NewWorker: func() func(context.Context, stream.Chunk, *valPart) error {
			pr := mu.NewProjector()
			return func(_ context.Context, c stream.Chunk, p *valPart) error {
				p.rows = c.Rows
				p.scores = slices.Grow(p.scores[:0], c.Rows*k)[:c.Rows*k]
				p.p = slices.Grow(p.p[:0], c.Rows*rank)[:c.Rows*rank]
				if err := pr.ProjectTo(p.scores, p.p, c.X, c.Rows); err != nil {
					return err
				}
				p.y = append(p.y[:0], c.Y...)
				p.x = append(p.x[:0], c.X[:min(c.Rows, rankCheckRows)*d]...)
				return nil
			}
		},
		Reduce: func(_ int, p *valPart) error {
			nt := len(p.y) / max(p.rows, 1)
			for i := range p.rows {
				if len(p2) >= maxVarianceRows*rank {
					break
				}
				for j := range k {
					e = append(e, p.y[i*nt+j]-p.scores[i*k+j])
				}
				for _, x := range p.p[i*rank : (i+1)*rank] {
					p2 = append(p2, x*x)
				}
			}
			if c := rankCheckRows*d - len(check); c > 0 {
				check = append(check, p.x[:min(c, len(p.x))]...)
			}
			return nil
		},
	})
	return e, p2, check, err
}
