//go:build linux && !nommap

package chunkstore

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mappingRSS returns the resident kilobytes of the mappings of file, from
// /proc/self/smaps.
func mappingRSS(t *testing.T, file string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	defer f.Close()
	var kb int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[len(fields)-1] == file
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			n, _ := strconv.ParseInt(fields[1], 10, 64)
			kb += n
		}
	}
	return kb
}

// TestResidentMemoryBounded reads a 16 MiB uncompressed segment chunk by
// chunk through a mapping and checks that the mapping's resident size
// stays near one chunk: ReadChunk releases the pages it has decoded.
// (Releasing only each chunk's own bytes let it grow to 8.7 MiB here: ext4
// maps large folios.) Open reads with pread and maps nothing.
func TestResidentMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 16 MiB")
	}
	const rows, chunkRows = 1 << 18, 1 << 13 // 2 MiB per column, 64 KiB per column chunk
	rng := rand.New(rand.NewPCG(1, 1))
	cols := make([][]float64, 8)
	for j := range cols {
		cols[j] = make([]float64, rows)
		for i := range cols[j] {
			cols[j][i] = rng.Float64()
		}
	}
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 8, Options{ChunkRows: chunkRows, Codec: "none"}, rows)
	r, err := open(dir, true, ioAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seg := filepath.Join(dir, segmentName(0))
	x := make([]float64, chunkRows*8)
	chunkKB := int64(chunkRows * 8 * 8 / 1024)
	var peak int64
	for i := range r.NumChunks() {
		if err := r.ReadChunk(context.Background(), i, x, nil); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, mappingRSS(t, seg))
	}
	total := int64(rows * 8 * 8 / 1024)
	t.Logf("segment %d KiB, chunk %d KiB, peak resident %d KiB", total, chunkKB, peak)
	if peak > 2*chunkKB+64 {
		t.Fatalf("resident mapping grew to %d KiB (store %d KiB, chunk %d KiB): pages are not released", peak, total, chunkKB)
	}
	// Open reads with pread: nothing of the segment is mapped.
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	for i := range r2.NumChunks() {
		if err := r2.ReadChunk(context.Background(), i, x, nil); err != nil {
			t.Fatal(err)
		}
	}
	if kb := mappingRSS(t, seg); kb > peak {
		t.Fatalf("after reading through Open, %d KiB of the segment resident in mappings (mapped reader's peak %d KiB)", kb, peak)
	}
}
