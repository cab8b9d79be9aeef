package chunkstore_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/stream"
	"github.com/falkon-ooc/falkon-ooc/stream/streamtest"
)

// *chunkstore.Reader is a stream.Source.
var _ stream.Source = (*chunkstore.Reader)(nil)

// TestSourceContract runs the shared stream.Source suite on stores of
// several shapes and codecs.
func TestSourceContract(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, d, k int
		chunk   int
		codec   string
	}{
		{"zstd+auto", 1000, 5, 2, 128, ""},
		{"no targets", 333, 3, 0, 50, "s2"},
		{"one chunk", 20, 9, 1, 100, "none"},
		{"wide", 300, 20, 3, 64, "zstd+shuffle"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.n), uint64(c.d)))
			cols := make([][]float64, c.d+c.k)
			for j := range cols {
				cols[j] = make([]float64, c.n)
				for i := range cols[j] {
					if j%2 == 0 {
						cols[j][i] = math.Round(rng.NormFloat64()*1000) / 100
					} else {
						cols[j][i] = float64(rng.IntN(10))
					}
				}
			}
			features := make([]chunkstore.ColumnSpec, c.d)
			targets := make([]chunkstore.ColumnSpec, c.k)
			for j := range features {
				features[j] = chunkstore.ColumnSpec{Name: "x" + string(rune('a'+j)), Type: "float64"}
			}
			for j := range targets {
				targets[j] = chunkstore.ColumnSpec{Name: "y" + string(rune('a'+j)), Type: "float64"}
			}
			dir := filepath.Join(t.TempDir(), "s")
			w, err := chunkstore.Create(dir, features, targets, chunkstore.Options{ChunkRows: c.chunk, Codec: c.codec})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Append(cols); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := chunkstore.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			x := make([]float64, c.n*c.d)
			y := make([]float64, c.n*c.k)
			for i := range c.n {
				for j := range c.d {
					x[i*c.d+j] = cols[j][i]
				}
				for j := range c.k {
					y[i*c.k+j] = cols[c.d+j][i]
				}
			}
			streamtest.SourceTest(t, r, x, y)
		})
	}
}
