package chunkstore

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkReadChunk reads full chunks of 32 Ki rows × 28 features + 1
// target of realistic data (see testData) through the mmap path. MB/s counts
// decoded float64 bytes; steady state allocates nothing.
func BenchmarkReadChunk(b *testing.B) {
	const d, k, rows, chunks = 28, 1, DefaultChunkRows, 4
	rng := rand.New(rand.NewPCG(1, 2))
	cols := testData(rng, rows*chunks, d+k)
	for _, codec := range []string{"zstd+auto", "zstd", "s2", "none", "zstd+shuffle"} {
		b.Run("codec="+codec, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "s")
			writeStore(b, dir, cols, d, Options{Codec: codec}, rows)
			r, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			x := make([]float64, rows*d)
			y := make([]float64, rows*k)
			ctx := context.Background()
			// Warm the scratch buffers and every pooled zstd decoder
			// (DecodeAll takes them in turn).
			for i := range 4 * chunks {
				if err := r.ReadChunk(ctx, i%chunks, x, y); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(rows * (d + k) * 8))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := r.ReadChunk(ctx, i%chunks, x, y); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkReadChunkParallel reads chunks from all GOMAXPROCS goroutines.
func BenchmarkReadChunkParallel(b *testing.B) {
	const d, k, rows, chunks = 28, 1, DefaultChunkRows, 4
	rng := rand.New(rand.NewPCG(1, 2))
	cols := testData(rng, rows*chunks, d+k)
	dir := filepath.Join(b.TempDir(), "s")
	writeStore(b, dir, cols, d, Options{}, rows)
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(int64(rows * (d + k) * 8))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := make([]float64, rows*d)
		y := make([]float64, rows*k)
		i := 0
		for pb.Next() {
			if err := r.ReadChunk(context.Background(), i%chunks, x, y); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkAppend appends batches of 4096 rows × 29 columns; compression
// runs on GOMAXPROCS workers. MB/s counts raw float64 bytes appended.
func BenchmarkAppend(b *testing.B) {
	const d, k, batch = 28, 1, 4096
	rng := rand.New(rand.NewPCG(3, 4))
	cols := testData(rng, batch, d+k)
	for _, codec := range []string{"zstd+auto", "zstd", "s2", "none"} {
		b.Run("codec="+codec, func(b *testing.B) {
			w, err := Create(filepath.Join(b.TempDir(), "s"), specs("x", d), specs("y", k), Options{Codec: codec})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Abort()
			b.SetBytes(int64(batch * (d + k) * 8))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Append(cols); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestReadChunkAllocs holds ReadChunk to zero allocations in steady state.
func TestReadChunkAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const d, k, rows, chunks = 11, 2, 1000, 3
	rng := rand.New(rand.NewPCG(1, 2))
	cols := testData(rng, rows*chunks, d+k)
	for _, codec := range []string{"zstd", "s2+shuffle", "none"} {
		dir := filepath.Join(t.TempDir(), "s")
		writeStore(t, dir, cols, d, Options{ChunkRows: rows, Codec: codec}, rows*chunks)
		for _, open := range []func() (*Reader, error){
			func() (*Reader, error) { return Open(dir) },
			func() (*Reader, error) { return loadMem(t, dir).open() },
			func() (*Reader, error) { return open(dir, false, ioDirect) },
		} {
			r, err := open()
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, rows*d)
			y := make([]float64, rows*k)
			ctx := context.Background()
			i := 0
			read := func() {
				if err := r.ReadChunk(ctx, i%chunks, x, y); err != nil {
					t.Fatal(err)
				}
				i++
			}
			for range 4 * chunks {
				read()
			}
			if n := testing.AllocsPerRun(30, read); n != 0 {
				t.Errorf("%s: ReadChunk allocates %v times per call", codec, n)
			}
			r.Close()
		}
	}
}
