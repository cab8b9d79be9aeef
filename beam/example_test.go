package beam_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/falkon-ooc/falkon-ooc/beam"
	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// Fit a store with every pass over the data a Beam job on Prism, in this
// process. On a cluster, Runner names it and Store and Temp are paths or
// URLs that the workers see.
func ExampleFit() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store := filepath.Join(dir, "sin.store")

	// A store of y = sin(x) on 4000 rows.
	x, y := make([]float64, 4000), make([]float64, 4000)
	for i := range x {
		x[i] = float64(i) / 500
		y[i] = math.Sin(x[i])
	}
	w, err := chunkstore.Create(store, []chunkstore.ColumnSpec{{Name: "x", Type: "float64"}},
		[]chunkstore.ColumnSpec{{Name: "y", Type: "float64"}}, chunkstore.Options{ChunkRows: 500})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Append([][]float64{x, y}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	jobs := 0
	m, err := beam.Fit(context.Background(), ooc.Config{Centers: 50, Iterations: 10}, ooc.RunOptions{},
		beam.Options{Runner: "prism", Store: store, Partitions: 4, OnJob: func(beam.JobStats) { jobs++ }})
	if err != nil {
		log.Fatal(err)
	}
	pred := make([]float64, 1)
	m.PredictTo(pred, []float64{math.Pi / 2}, 1)
	fmt.Printf("%d jobs; f(π/2) = %.3f\n", jobs, pred[0])
	// Output: 12 jobs; f(π/2) = 1.000
}
