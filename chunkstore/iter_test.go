package chunkstore

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

func TestIter(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	cols := testData(rng, 1234, 4)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 3, Options{ChunkRows: 100}, 1234)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, targets := range []bool{true, false} {
		it := r.Iter(targets)
		var row int64
		chunks := 0
		for it.Next(context.Background()) {
			b := it.At()
			if b.Chunk != chunks || b.Row != row || b.Rows != r.ChunkRows(chunks) || len(b.X) != b.Rows*3 {
				t.Fatalf("block %+v at chunk %d row %d", b, chunks, row)
			}
			if (b.Y != nil) != targets {
				t.Fatalf("targets %v but Y nil = %v", targets, b.Y == nil)
			}
			for k := range b.Rows {
				if math.Float64bits(b.X[k*3+1]) != math.Float64bits(cols[1][row+int64(k)]) {
					t.Fatalf("chunk %d row %d: wrong feature", b.Chunk, k)
				}
				if targets && b.Y[k] != cols[3][row+int64(k)] {
					t.Fatalf("chunk %d row %d: wrong target", b.Chunk, k)
				}
			}
			row += int64(b.Rows)
			chunks++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if row != 1234 || chunks != 13 {
			t.Fatalf("iterated %d rows in %d chunks", row, chunks)
		}
		it.Close()
		if it.Next(context.Background()) {
			t.Fatal("Next after Close")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	it := r.Iter(false)
	if it.Next(ctx) || !errors.Is(it.Err(), context.Canceled) {
		t.Fatalf("cancelled: Next went on, Err = %v", it.Err())
	}
	want := int64(9 * 8 * 100)
	if r.segs[0].data == nil {
		// pread: a read buffer too, and tiles that may hold a whole
		// uncompressed block with its trailer.
		want = int64(8*max(8*100, r.maxRead) + 8*100 + r.maxRead)
	}
	if got := r.ScratchBytes(); got != want {
		t.Fatalf("ScratchBytes = %d, want %d", got, want)
	}
}
