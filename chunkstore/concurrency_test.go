package chunkstore

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentReads reads every chunk from several goroutines at once,
// through the mmap path and the ReaderAt path, with distinct buffers.
func TestConcurrentReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	cols := testData(rng, 3000, 5)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 4, Options{ChunkRows: 100, SegmentBytes: 8000}, 3000)
	mapped, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	mem, err := loadMem(t, dir).open()
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, r := range []*Reader{mapped, mem} {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				x := make([]float64, 100*4)
				y := make([]float64, 100)
				for rep := range 3 {
					for i := range r.NumChunks() {
						c := (i + g*7 + rep) % r.NumChunks()
						if err := r.ReadChunk(context.Background(), c, x, y); err != nil {
							errs <- err
							return
						}
						for row := range 100 {
							if math.Float64bits(x[row*4+2]) != math.Float64bits(cols[2][c*100+row]) ||
								math.Float64bits(y[row]) != math.Float64bits(cols[4][c*100+row]) {
								t.Errorf("goroutine %d chunk %d row %d: wrong value", g, c, row)
								return
							}
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

func TestReadColumnsAndMemReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 10))
	cols := testData(rng, 250, 4)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 3, Options{ChunkRows: 64, Codec: "zstd+shuffle"}, 100)
	r, err := loadMem(t, dir).open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkStore(t, r, cols, 3)
	for i := range r.NumChunks() {
		n := r.ChunkRows(i)
		dst := [][]float64{make([]float64, n), make([]float64, n)}
		if err := r.ReadColumns(context.Background(), i, []int{3, 1}, dst); err != nil {
			t.Fatal(err)
		}
		for row := range n {
			if dst[0][row] != cols[3][i*64+row] || dst[1][row] != cols[1][i*64+row] {
				t.Fatalf("chunk %d row %d: wrong value", i, row)
			}
		}
	}
	if err := r.ReadColumns(context.Background(), 0, []int{4}, [][]float64{make([]float64, 64)}); err == nil {
		t.Fatal("column 4 of 4 accepted")
	}
	if r.StoreID() != r.Manifest().StoreID || len(r.StoreID()) != 32 {
		t.Fatalf("StoreID %q", r.StoreID())
	}
}
