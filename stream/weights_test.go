package stream_test

import (
	"context"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Run reads the row weights of a Weighter into Chunk.W, through Subdivide
// and Holdout, which forward them row for row; a negative weight is a
// *ValueError naming its chunk, row and column in the underlying source.
func TestRunWeights(t *testing.T) {
	x, y := randData(500, 2, 1, 12)
	w := make([]float64, 500)
	for i := range w {
		w[i] = float64(i) // each row's weight is its row number
	}
	base := stream.NewMemSource(x, 2, y, 1, 64).WithWeights(w, "wt")
	rest, _ := stream.Holdout(base, 0.3, 2)
	for _, src := range []stream.Source{base, stream.Subdivide(base, 5), rest, stream.Subdivide(rest, 3)} {
		if stream.WeightColumn(src) != "wt" {
			t.Fatalf("WeightColumn = %q", stream.WeightColumn(src))
		}
		var got, gx []float64
		err := stream.Run(context.Background(), src, stream.Options{Workers: 2}, stream.Job[*[]float64]{
			Weights:    true,
			NewPartial: func() *[]float64 { return new([]float64) },
			NewWorker: func() func(context.Context, stream.Chunk, *[]float64) error {
				return func(_ context.Context, c stream.Chunk, p *[]float64) error {
					*p = append((*p)[:0], c.W...)
					for r := range c.Rows {
						*p = append(*p, c.X[r*2])
					}
					return nil
				}
			},
			Reduce: func(_ int, p *[]float64) error {
				n := len(*p) / 2
				got, gx = append(got, (*p)[:n]...), append(gx, (*p)[n:]...)
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if x[int(v)*2] != gx[i] {
				t.Fatalf("row %d: weight %v does not belong to the row read", i, v)
			}
		}
		if !slices.IsSorted(got) || len(got) == 0 {
			t.Fatal("weights out of order")
		}
	}
	if err := stream.CheckWeights([]float64{1, 0, -2}, "wt"); err == nil ||
		err.Error() != `chunk 0, row 2, column "wt": value -2 is a negative weight` {
		t.Fatalf("err = %v", err)
	}
	noW := stream.NewMemSource(x, 2, y, 1, 64)
	err := stream.Run(context.Background(), noW, stream.Options{}, stream.Job[int]{Weights: true,
		NewPartial: func() int { return 0 },
		NewWorker: func() func(context.Context, stream.Chunk, int) error {
			return func(context.Context, stream.Chunk, int) error { return nil }
		},
		Reduce: func(int, int) error { return nil }})
	if err == nil {
		t.Fatal("a pass asking for weights ran on a source without them")
	}
}
