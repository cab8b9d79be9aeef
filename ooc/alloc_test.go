package ooc_test

import (
	"context"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// A CG iteration allocates a bounded amount per pass, nothing per chunk:
// one more iteration costs the same allocations over 40 chunks as over
// 400 (STYLE.md §5: the steady-state chunk allocates nothing).
func TestIterationAllocationsIndependentOfChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are skewed by the race detector")
	}
	x, y := synth(8000, 3, 51)
	perIteration := func(chunkRows int) float64 {
		src := stream.NewMemSource(x, 3, y, 1, chunkRows)
		fit := func(iters int) float64 {
			return testing.AllocsPerRun(3, func() {
				_, err := ooc.Fit(context.Background(), src, ooc.Config{
					Centers: 50, Iterations: iters, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2},
				}, ooc.RunOptions{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
		return (fit(6) - fit(2)) / 4
	}
	few, many := perIteration(200), perIteration(20) // 40 and 400 chunks
	t.Logf("allocations per CG iteration: %.0f over 40 chunks, %.0f over 400 chunks", few, many)
	if many > few+20 {
		t.Errorf("an iteration over 400 chunks allocates %.0f times, over 40 chunks %.0f: something allocates per chunk", many, few)
	}
}
