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

// The same for the passes of a weighted search, of a weighted fit with
// balanced class weights and of the logistic loss: one more CG iteration
// (or Newton step) allocates as much over 400 chunks as over 40.
func TestPassAllocationsIndependentOfChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are skewed by the race detector")
	}
	x, y := synth(8000, 3, 52)
	cls := make([]float64, len(y))
	w := make([]float64, len(y))
	for i, v := range y {
		if v > 5 {
			cls[i] = 1
		}
		w[i] = float64(1 + i%3)
	}
	for _, tc := range []struct {
		name string
		run  func(src stream.Source, n int) error
	}{
		{"weighted tune", func(src stream.Source, n int) error {
			_, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Centers: 40, Iterations: n},
				Sigmas: []float64{1, 2}, Lambdas: []float64{1e-3, 1e-5}, Patience: -1, SigmaHalving: -1}, ooc.RunOptions{Workers: 2})
			return err
		}},
		{"balanced classes", func(src stream.Source, n int) error {
			_, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 40, Iterations: n, ClassWeight: ooc.ClassWeightBalanced},
				ooc.RunOptions{Workers: 2})
			return err
		}},
		{"logistic", func(src stream.Source, n int) error {
			_, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 40, Iterations: 2, NewtonSteps: n, Loss: ooc.LossLogistic},
				ooc.RunOptions{Workers: 2})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := func(chunkRows int) float64 {
				src := stream.NewMemSource(x, 3, cls, 1, chunkRows).WithWeights(w, "w")
				count := func(n int) float64 {
					return testing.AllocsPerRun(2, func() {
						if err := tc.run(src, n); err != nil {
							t.Fatal(err)
						}
					})
				}
				return (count(6) - count(2)) / 4
			}
			few, many := per(200), per(20)
			t.Logf("allocations per step: %.0f over 40 chunks, %.0f over 400 chunks", few, many)
			if many > few+40 {
				t.Errorf("a step over 400 chunks allocates %.0f times, over 40 chunks %.0f: something allocates per chunk", many, few)
			}
		})
	}
}
