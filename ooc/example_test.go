package ooc_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// waveSource is a user's own data source: it generates its rows on demand
// (a real one would read a database or files), 1000 rows per chunk, one
// feature t on [0, 2π) and the target sin(t).
type waveSource struct{ chunks int }

func (s waveSource) NumChunks() int      { return s.chunks }
func (s waveSource) Dim() int            { return 1 }
func (s waveSource) NumTargets() int     { return 1 }
func (s waveSource) ChunkRows(i int) int { return 1000 }

func (s waveSource) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := float64(s.chunks * 1000)
	for r := range x {
		t := 2 * math.Pi * float64(i*1000+r) / n
		x[r] = t
		if y != nil {
			y[r] = math.Sin(t)
		}
	}
	return nil
}

// Fit FALKON on a data source implemented by the caller, then predict.
func Example() {
	src := waveSource{chunks: 10}
	model, err := ooc.Fit(context.Background(), src, ooc.Config{
		Centers: 100,
		Kernel:  kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5},
		Lambda:  1e-8,
		Seed:    1,
	}, ooc.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float64{math.Pi / 2, 1, 3 * math.Pi / 2}
	pred := make([]float64, len(x))
	model.PredictTo(pred, x, len(x))
	for i, p := range pred {
		fmt.Printf("f(%.3f) = %.3f (sin: %.3f)\n", x[i], p, math.Sin(x[i]))
	}
	// Output:
	// f(1.571) = 1.000 (sin: 1.000)
	// f(1.000) = 0.841 (sin: 0.841)
	// f(4.712) = -1.000 (sin: -1.000)
}

// Predictive standard deviations: fit with Config.Uncertainty (fitted on
// the validation rows), then PredictStdTo gives each prediction's
// standard deviation, noise included. Far from the data it grows towards
// the prior.
func ExampleModel_PredictStdTo() {
	noisy := func(n int, seed uint64) *stream.MemSource {
		rng := rand.New(rand.NewPCG(seed, 1))
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = 2 * math.Pi * rng.Float64()
			y[i] = math.Sin(x[i]) + 0.1*rng.NormFloat64()
		}
		return stream.NewMemSource(x, 1, y, 1, 1000)
	}
	model, err := ooc.Fit(context.Background(), noisy(4000, 1), ooc.Config{
		Centers:     100,
		Kernel:      kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5},
		Lambda:      1e-6,
		Seed:        1,
		Uncertainty: ooc.UncertaintyPrecond,
	}, ooc.RunOptions{Validation: noisy(1000, 2)})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float64{1, 9} // inside the data, and beyond it
	pred, std := make([]float64, 2), make([]float64, 2)
	model.PredictStdTo(pred, std, x, 2)
	fmt.Printf("f(1) = %.1f ± %.1f\n", pred[0], std[0])
	fmt.Printf("at 9, the deviation is larger: %v\n", std[1] > 3*std[0])
	// Output:
	// f(1) = 0.8 ± 0.1
	// at 9, the deviation is larger: true
}
