package chunkstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// Write a tiny store of three rows in chunks of two, then read it back.
func Example() {
	tmp, err := os.MkdirTemp("", "chunkstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "houses")

	w, err := chunkstore.Create(dir,
		[]chunkstore.ColumnSpec{{Name: "rooms", Type: "int8"}, {Name: "area", Type: "float64"}},
		[]chunkstore.ColumnSpec{{Name: "price", Type: "float64"}},
		chunkstore.Options{ChunkRows: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort() // does nothing once Close has succeeded
	// Column by column: rooms, area, then the target price.
	if err := w.Append([][]float64{{3, 4, 2}, {71.5, 98, 45.25}, {250, 340, 180}}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := chunkstore.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println("chunks:", r.NumChunks(), "features:", r.FeatureNames(), "targets:", r.TargetNames())
	for i := range r.NumChunks() {
		x := make([]float64, r.ChunkRows(i)*r.Dim())        // row-major
		y := make([]float64, r.ChunkRows(i)*r.NumTargets()) // row-major
		if err := r.ReadChunk(context.Background(), i, x, y); err != nil {
			log.Fatal(err)
		}
		fmt.Println("chunk", i, "x:", x, "y:", y)
	}
	rooms := r.Manifest().Features[0]
	fmt.Printf("rooms: mean %.3f std %.3f distinct %v\n", rooms.Mean, rooms.Std, rooms.Distinct)
	// Output:
	// chunks: 2 features: [rooms area] targets: [price]
	// chunk 0 x: [3 71.5 4 98] y: [250 340]
	// chunk 1 x: [2 45.25] y: [180]
	// rooms: mean 3.000 std 0.816 distinct [2 3 4]
}
