package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// sameValues compares the feature of a store with the column of the CSV
// file the store was ingested from, row by row (the store's rows in the
// file's order): the target encoding ingest computed against the one
// bench/tables wrote (shop_te), which follow the same definition.
func sameValues(store, feature, path, column string) {
	r, err := chunkstore.Open(store)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	j := slices.Index(r.FeatureNames(), feature)
	if j < 0 {
		log.Fatalf("%s: no feature %q among %q", store, feature, r.FeatureNames())
	}
	var got []float64
	for i := range r.NumChunks() {
		col := make([]float64, r.ChunkRows(i))
		if err := r.ReadColumns(context.Background(), i, []int{j}, [][]float64{col}); err != nil {
			log.Fatal(err)
		}
		got = append(got, col...)
	}
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	head, err := cr.Read()
	if err != nil {
		log.Fatal(err)
	}
	c := slices.Index(head, column)
	if c < 0 {
		log.Fatalf("%s: no column %q among %q", path, column, head)
	}
	var worst float64
	n := 0
	for ; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		v, err := strconv.ParseFloat(rec[c], 64)
		if err != nil || n >= len(got) {
			log.Fatalf("%s: row %d: %v (store rows %d)", path, n+2, err, len(got))
		}
		worst = max(worst, math.Abs(v-got[n]))
	}
	if n != len(got) {
		log.Fatalf("%s has %d rows, the store %d", path, n, len(got))
	}
	fmt.Printf("rows %d  largest |%s − %s| %.3g\n", n, feature, column, worst)
}
