package ooc_test

import (
	"context"
	"fmt"
	"math"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
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
