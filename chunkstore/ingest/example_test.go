package ingest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
)

// Ingest a CSV file with a header into a store, with column "y" as the
// target; the string column is left out of the default features and the
// row with a NULL is dropped.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "ingest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "houses.csv")
	csv := "rooms,area,city,y\n3,72.5,Lyon,210\n4,,Paris,480\n2,40,Nice,150\n"
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		log.Fatal(err)
	}
	res, err := ingest.Run(context.Background(), []string{in}, ingest.Config{
		Out:     filepath.Join(dir, "store"),
		Targets: []string{"y"},
		Nulls:   "drop",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Rows, "rows,", res.Dropped, "dropped; features", res.Features, "targets", res.Targets)

	r, err := chunkstore.Open(filepath.Join(dir, "store"))
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	x := make([]float64, r.ChunkRows(0)*r.Dim())
	y := make([]float64, r.ChunkRows(0)*r.NumTargets())
	if err := r.ReadChunk(context.Background(), 0, x, y); err != nil {
		log.Fatal(err)
	}
	fmt.Println("x", x, "y", y)
	// Output:
	// 2 rows, 1 dropped; features [rooms area city=Lyon city=Nice] targets [y]
	// x [3 72.5 1 0 2 40 0 1] y [210 150]
}

// See what ingest would make of a CSV file without writing a store: the
// rows, the features, and why each column is kept or not. With Nulls
// "mean" the NULL area is filled with the mean of the other two.
func ExampleDryRun() {
	dir, err := os.MkdirTemp("", "ingest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "houses.csv")
	csv := "rooms,area,city,y\n3,72.5,Lyon,210\n4,,Paris,480\n2,40,Nice,150\n"
	if err := os.WriteFile(in, []byte(csv), 0o644); err != nil {
		log.Fatal(err)
	}
	res, err := ingest.DryRun(context.Background(), []string{in}, ingest.Config{Targets: []string{"y"}, Nulls: "mean"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Rows, "rows; features", res.Features, "targets", res.Targets)
	for _, c := range res.Columns {
		fmt.Println(strings.Join(slices.DeleteFunc([]string{c.Name + ":", c.Role, c.Reason, c.Note}, func(s string) bool { return s == "" }), " "))
	}
	// Output:
	// 3 rows; features [rooms area city=Lyon city=Nice city=Paris] targets [y]
	// rooms: feature
	// area: feature 1 NULL, NaN or ±Inf value filled with the mean of the others, 56.25
	// city: feature one-hot: 3 levels (exact)
	// y: target
}
