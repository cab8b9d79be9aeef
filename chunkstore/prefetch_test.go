package chunkstore

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// ReadChunk asks for read-ahead up to prefetchBytes past the chunk it
// reads, each range once per pass: the segment's mark only moves forward
// within a pass and starts again at a new pass.
func TestPrefetchWindow(t *testing.T) {
	const d, rows, chunks = 2, 1000, 20
	rng := rand.New(rand.NewPCG(1, 1))
	cols := make([][]float64, d+1)
	for j := range cols {
		cols[j] = make([]float64, rows*chunks)
		for i := range cols[j] {
			cols[j][i] = rng.Float64()
		}
	}
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, d, Options{ChunkRows: rows, Codec: "none"}, rows*chunks)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := prefetchBytes
	defer func() { prefetchBytes = old }()
	chunkBytes := r.chunks[1].start - r.chunks[0].start
	prefetchBytes = 5 * chunkBytes // about five chunks ahead
	s := r.segs[0]
	x := make([]float64, rows*d)
	for pass := range 2 {
		last := int64(0)
		for i := range chunks {
			if err := r.ReadChunk(context.Background(), i, x, nil); err != nil {
				t.Fatal(err)
			}
			a := s.ahead.Load()
			if a < r.chunks[min(i+1, chunks-1)].end || a > r.chunks[i].start+prefetchBytes+chunkBytes {
				t.Fatalf("pass %d, chunk %d: read-ahead mark at %d, want past chunk %d (ends %d) and within %d of its start %d",
					pass, i, a, i+1, r.chunks[min(i+1, chunks-1)].end, prefetchBytes, r.chunks[i].start)
			}
			if i > 0 && a < last {
				t.Fatalf("pass %d, chunk %d: read-ahead mark moved back from %d to %d", pass, i, last, a)
			}
			last = a
		}
	}
}
