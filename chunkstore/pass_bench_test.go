package chunkstore

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadPass reads every chunk of a store of Gaussian doubles
// (d = 12 features + 1 target, 32 Ki-row chunks: a CG pass's reads of
// bench/fit's data), features only, in order, as a pass does: through
// the mapping (Open) and through pread (NewReader over the files). MB/s
// counts decoded feature bytes.
func BenchmarkReadPass(b *testing.B) {
	const d, k, rows, chunks = 12, 1, DefaultChunkRows, 8
	rng := rand.New(rand.NewPCG(5, 6))
	cols := make([][]float64, d+k)
	for j := range cols {
		cols[j] = make([]float64, rows*chunks)
		for i := range cols[j] {
			cols[j][i] = rng.NormFloat64()
		}
	}
	dir := filepath.Join(b.TempDir(), "s")
	writeStore(b, dir, cols, d, Options{Codec: "zstd"}, rows)
	open := map[string]func() (*Reader, func(), error){
		"Open":   func() (*Reader, func(), error) { r, err := Open(dir); return r, func() {}, err },
		"mapped": func() (*Reader, func(), error) { r, err := open(dir, true, ioAuto); return r, func() {}, err },
		"ReaderAt": func() (*Reader, func(), error) {
			meta, err := os.ReadFile(filepath.Join(dir, ManifestName))
			if err != nil {
				return nil, nil, err
			}
			f, err := os.Open(filepath.Join(dir, segmentName(0)))
			if err != nil {
				return nil, nil, err
			}
			st, _ := f.Stat()
			r, err := NewReader(meta, []SegmentData{{R: f, Size: st.Size()}})
			return r, func() { f.Close() }, err
		},
	}
	for _, name := range []string{"Open", "mapped", "ReaderAt"} {
		b.Run(name, func(b *testing.B) {
			r, done, err := open[name]()
			if err != nil {
				b.Fatal(err)
			}
			defer done()
			defer r.Close()
			x := make([]float64, rows*d)
			ctx := context.Background()
			pass := func() {
				for i := range r.NumChunks() {
					if err := r.ReadChunk(ctx, i, x, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			pass()
			b.SetBytes(int64(rows * d * 8 * chunks))
			b.ReportAllocs()
			c0, s0 := cpuSeconds(), sysSeconds()
			for b.Loop() {
				pass()
			}
			b.ReportMetric((cpuSeconds()-c0)*1e3/float64(b.N), "cpu-ms/op")
			b.ReportMetric((sysSeconds()-s0)*1e3/float64(b.N), "sys-ms/op")
		})
	}
}
