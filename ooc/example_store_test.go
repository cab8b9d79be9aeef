package ooc_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// Fit a model on a chunk store (what 'falkon-ooc ingest' writes), save it,
// and predict with the saved model, as 'falkon-ooc fit' and 'predict' do.
// README.md shows the lines between the blank lines.
func ExampleFit_store() {
	dir, err := os.MkdirTemp("", "falkon-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	writeWaveStore(filepath.Join(dir, "data.store")) // y = sin(x), 20 000 rows

	src, err := chunkstore.Open(filepath.Join(dir, "data.store"))
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	fitted, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 200, Seed: 1}, ooc.RunOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := fitted.Save(filepath.Join(dir, "model.falkon")); err != nil {
		log.Fatal(err)
	}

	m, err := model.Load(filepath.Join(dir, "model.falkon"))
	if err != nil {
		log.Fatal(err)
	}
	x := []float64{1, 2} // two rows of one feature
	pred := make([]float64, 2)
	m.PredictTo(pred, x, 2)
	fmt.Printf("f(1) = %.2f, f(2) = %.2f\n", pred[0], pred[1])
	// Output: f(1) = 0.84, f(2) = 0.91
}

// writeWaveStore writes a store of one feature x on [0, 2π) and the target
// sin(x), in chunks of 4096 rows.
func writeWaveStore(dir string) {
	w, err := chunkstore.Create(dir, []chunkstore.ColumnSpec{{Name: "x", Type: "float64"}},
		[]chunkstore.ColumnSpec{{Name: "y", Type: "float64"}}, chunkstore.Options{ChunkRows: 4096})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	const n = 20000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 2 * math.Pi * float64(i) / n
		y[i] = math.Sin(x[i])
	}
	if err := w.Append([][]float64{x, y}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}
