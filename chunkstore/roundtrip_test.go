package chunkstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// testColumns returns d features and k targets of realistic-looking data:
// rounded decimals, small integers, a constant, random doubles.
func testData(rng *rand.Rand, n, ncol int) [][]float64 {
	cols := make([][]float64, ncol)
	for j := range cols {
		c := make([]float64, n)
		for i := range c {
			switch j % 5 {
			case 0:
				c[i] = math.Round(rng.NormFloat64()*1000) / 100
			case 1:
				c[i] = float64(rng.IntN(7))
			case 2:
				c[i] = rng.Float64()*2 - 1
			case 3:
				c[i] = 42
			case 4:
				c[i] = math.Round(rng.ExpFloat64()*1e5) / 1e3
			}
		}
		cols[j] = c
	}
	return cols
}

func specs(prefix string, n int) []ColumnSpec {
	s := make([]ColumnSpec, n)
	for i := range s {
		s[i] = ColumnSpec{Name: fmt.Sprintf("%s%d", prefix, i), Type: "float64"}
	}
	return s
}

// writeStore writes cols (d features then the rest targets) to dir in
// appends of the given batch size.
func writeStore(t testing.TB, dir string, cols [][]float64, d int, opt Options, batch int) {
	t.Helper()
	w, err := Create(dir, specs("x", d), specs("y", len(cols)-d), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	n := len(cols[0])
	part := make([][]float64, len(cols))
	for off := 0; off < n || off == 0 && n == 0; off += batch {
		end := min(off+batch, n)
		for j := range cols {
			part[j] = cols[j][off:end]
		}
		if err := w.Append(part); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if w.Rows() != int64(n) {
		t.Fatalf("Rows = %d, want %d", w.Rows(), n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var segBytes int64
	for _, s := range w.Manifest().Segments {
		segBytes += s.Bytes
	}
	if w.BytesWritten() != segBytes {
		t.Fatalf("BytesWritten = %d, segments hold %d", w.BytesWritten(), segBytes)
	}
}

// checkStore reads every chunk and compares with cols bit for bit.
func checkStore(t testing.TB, r *Reader, cols [][]float64, d int) {
	t.Helper()
	k := len(cols) - d
	n := len(cols[0])
	if r.Dim() != d || r.NumTargets() != k {
		t.Fatalf("Dim, NumTargets = %d, %d; want %d, %d", r.Dim(), r.NumTargets(), d, k)
	}
	row := 0
	for i := range r.NumChunks() {
		rows := r.ChunkRows(i)
		x := make([]float64, rows*d)
		var y []float64
		if k > 0 {
			y = make([]float64, rows*k)
		}
		if err := r.ReadChunk(context.Background(), i, x, y); err != nil {
			t.Fatalf("ReadChunk(%d): %v", i, err)
		}
		for rr := range rows {
			for j := range d {
				if math.Float64bits(x[rr*d+j]) != math.Float64bits(cols[j][row+rr]) {
					t.Fatalf("chunk %d row %d feature %d: got %v, want %v", i, rr, j, x[rr*d+j], cols[j][row+rr])
				}
			}
			for j := range k {
				if math.Float64bits(y[rr*k+j]) != math.Float64bits(cols[d+j][row+rr]) {
					t.Fatalf("chunk %d row %d target %d: got %v, want %v", i, rr, j, y[rr*k+j], cols[d+j][row+rr])
				}
			}
		}
		row += rows
	}
	if row != n {
		t.Fatalf("read %d rows, want %d", row, n)
	}
	if err := r.Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	codecs := []string{"none", "s2", "s2-better", "zstd", "zstd-fastest", "zstd+shuffle", "s2+shuffle", "zstd+auto", "s2+auto"}
	cases := []struct {
		n, d, k, chunk, batch int
	}{
		{1000, 3, 1, 100, 1000},  // exact chunks
		{1001, 3, 1, 100, 7},     // final partial chunk, odd batches
		{50, 2, 0, 100, 50},      // rows < one chunk, no targets
		{777, 5, 3, 64, 100},     // several targets
		{1, 1, 0, 1, 1},          // one row
		{300, 4, 2, 1, 300},      // one row per chunk
		{0, 2, 1, 10, 1},         // empty store
		{4099, 6, 1, 4096, 1024}, // partial last chunk of 3 rows
		{500, 17, 9, 128, 500},   // full and partial column tiles
	}
	for _, codec := range codecs {
		for _, c := range cases {
			name := fmt.Sprintf("%s/n=%d,d=%d,k=%d,chunk=%d", codec, c.n, c.d, c.k, c.chunk)
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, uint64(c.n)))
				cols := testData(rng, c.n, c.d+c.k)
				dir := filepath.Join(t.TempDir(), "store")
				writeStore(t, dir, cols, c.d, Options{ChunkRows: c.chunk, Codec: codec, Workers: 3, SegmentBytes: 4096}, c.batch)
				r, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if r.Manifest().Rows != int64(c.n) {
					t.Fatalf("Manifest().Rows = %d, want %d", r.Manifest().Rows, c.n)
				}
				if want := (c.n + c.chunk - 1) / c.chunk; r.NumChunks() != want {
					t.Fatalf("NumChunks = %d, want %d", r.NumChunks(), want)
				}
				checkStore(t, r, cols, c.d)
			})
		}
	}
}

// TestAutoShuffle checks that "+auto" shuffles exactly the blocks whose
// values are all integers or exact float32s.
func TestAutoShuffle(t *testing.T) {
	n := 100
	cols := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	for i := range n {
		cols[0][i] = float64(i % 7)                   // integers: shuffle
		cols[1][i] = float64(i) / 100                 // decimals: no shuffle
		cols[2][i] = float64(float32(i) / 3)          // float32 values: shuffle
		cols[3][i] = float64(i%2) + float64(i/50)*0.1 // integral in chunk 0 only
	}
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 4, Options{ChunkRows: 50, Codec: "zstd+auto"}, n)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := [2][4]byte{
		{codecZstd | codecShuffle, codecZstd, codecZstd | codecShuffle, codecZstd | codecShuffle},
		{codecZstd | codecShuffle, codecZstd, codecZstd | codecShuffle, codecZstd},
	}
	for i := range 2 {
		for j, e := range r.chunks[i].ci.entries {
			if e.codec != want[i][j] {
				t.Errorf("chunk %d column %d: codec byte %#02x, want %#02x", i, j, e.codec, want[i][j])
			}
		}
	}
	checkStore(t, r, cols, 4)
	if r.Manifest().Codec != "zstd+auto" {
		t.Errorf("manifest codec %q", r.Manifest().Codec)
	}
}
