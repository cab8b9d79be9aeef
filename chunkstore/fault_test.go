//go:build unix && !nommap

package chunkstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncatedAfterOpen truncates a segment under an open Reader: reading
// the lost bytes gives a short read (Open) or, through a mapping, faults
// (SIGBUS), which ReadChunk and Verify must report as corruption instead
// of crashing the process.
func TestTruncatedAfterOpen(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("mapped=%v", mapped), func(t *testing.T) { testTruncatedAfterOpen(t, mapped, ioBuffered) })
	}
	t.Run("direct", func(t *testing.T) { testTruncatedAfterOpen(t, false, ioDirect) })
}

func testTruncatedAfterOpen(t *testing.T, mapped bool, mode ioMode) {
	cols := [][]float64{benchColumn("random", 40000, 1), benchColumn("random", 40000, 2)}
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 2, Options{ChunkRows: 10000, Codec: "none"}, 40000)
	r, err := open(dir, mapped, mode)
	if err != nil {
		t.Fatal(err)
	}
	if mode == ioDirect && r.direct == nil {
		t.Skip("O_DIRECT not supported here")
	}
	defer r.Close()
	if err := os.Truncate(filepath.Join(dir, segmentName(0)), 4096); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 10000*2)
	err = r.ReadChunk(context.Background(), 3, x, nil)
	msg := "read block: unexpected EOF"
	if mapped {
		msg = "memory fault reading the mapped file"
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("ReadChunk on a truncated mapping: %v", err)
	}
	t.Log(err)
	if err := r.Verify(context.Background()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify on a truncated mapping: %v", err)
	}
	if err := r.ReadColumns(context.Background(), 2, []int{1}, [][]float64{make([]float64, 10000)}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadColumns on a truncated mapping: %v", err)
	}
}
