package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// TestChunkAndBatchRows: wide inputs get fewer rows per chunk and batch,
// within their bounds, so that a chunk holds at most MaxChunkBytes.
func TestChunkAndBatchRows(t *testing.T) {
	for _, c := range []struct{ cols, chunk, batch int }{
		{1, chunkstore.DefaultChunkRows, 65536},
		{100, chunkstore.DefaultChunkRows, 10485},
		{10000, 419, 128},
		{1000000, 256, 128},
	} {
		if got := ChunkRowsFor(c.cols); got != c.chunk {
			t.Errorf("ChunkRowsFor(%d) = %d, want %d", c.cols, got, c.chunk)
		}
		if got := batchRowsFor(c.cols); got != c.batch {
			t.Errorf("batchRowsFor(%d) = %d, want %d", c.cols, got, c.batch)
		}
		if c.cols >= 128 && ChunkRowsFor(c.cols) > 256 && ChunkRowsFor(c.cols)*c.cols*8 > MaxChunkBytes {
			t.Errorf("%d columns: a chunk of %d rows exceeds MaxChunkBytes", c.cols, ChunkRowsFor(c.cols))
		}
	}
	if got, want := InspectMemory(0), int64(memoryBase+textCopies*DefaultMaxLine); got != want {
		t.Errorf("InspectMemory(0) = %d, want %d", got, want)
	}
}

// TestMemoryEstimate: Run reports its estimate in the first Progress and
// in the Result, by the formula's terms, and a text file's reader term is
// textCopies × its size when that is below MaxLine.
func TestMemoryEstimate(t *testing.T) {
	dir := t.TempDir()
	in := writeTestCSV(t, dir, "a,b,y\n1,2,3\n4,5,6\n7,8,9\n")
	var first *Memory
	calls := 0
	cfg := Config{Out: filepath.Join(dir, "s.store"), Targets: []string{"y"}, Workers: 2,
		Progress: func(p Progress) {
			if calls == 0 {
				first = p.Memory
			} else if p.Memory != nil {
				t.Error("Memory in a later Progress")
			}
			calls++
		}}
	res, err := Run(context.Background(), []string{in}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if first == nil || *first != res.Memory {
		t.Fatalf("first Progress.Memory = %v, Result.Memory = %v", first, res.Memory)
	}
	m := res.Memory
	if m.Readers != textCopies*24 {
		t.Errorf("Readers = %d, want %d (7 × the 24-byte file)", m.Readers, textCopies*24)
	}
	rows, cols := int64(res.ChunkRows), int64(3)
	if want := 2*4*rows*cols*8 + 5*cols*statsBytes; m.Chunks != want {
		t.Errorf("Chunks = %d, want %d", m.Chunks, want)
	}
	if m.Total != m.Base+m.Readers+m.Batches+m.Chunks || m.Base != memoryBase {
		t.Errorf("Total %d ≠ the sum of %+v", m.Total, m)
	}
}

func writeTestCSV(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
