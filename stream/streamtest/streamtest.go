// Package streamtest checks implementations of stream.Source against the
// contract every implementation must meet, in the manner of
// testing/fstest.TestFS.
package streamtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// SourceTest checks that src holds exactly the rows x (n × src.Dim(),
// row-major) and targets y (n × src.NumTargets()), bit for bit, and that
// it meets the Source contract: chunk row counts add up to n and are
// known without reading, reads may skip targets, concurrent reads with
// distinct buffers agree with sequential ones, and a cancelled context
// is honoured.
func SourceTest(t *testing.T, src stream.Source, x, y []float64) {
	t.Helper()
	d, k := src.Dim(), src.NumTargets()
	if d <= 0 {
		t.Fatalf("Dim() = %d, want > 0", d)
	}
	n := len(x) / d
	if len(y) != n*k {
		t.Fatalf("test data: len(y) = %d, want %d", len(y), n*k)
	}
	total := 0
	offsets := make([]int, src.NumChunks())
	for i := range src.NumChunks() {
		r := src.ChunkRows(i)
		if r <= 0 {
			t.Fatalf("ChunkRows(%d) = %d, want > 0", i, r)
		}
		offsets[i] = total
		total += r
	}
	if total != n {
		t.Fatalf("chunk rows add up to %d, want %d", total, n)
	}
	ctx := context.Background()
	check := func(i int, gx, gy []float64) error {
		lo := offsets[i]
		for j, v := range gx {
			if math.Float64bits(v) != math.Float64bits(x[lo*d+j]) {
				return fmt.Errorf("chunk %d row %d col %d: x = %v, want %v", i, lo+j/d, j%d, v, x[lo*d+j])
			}
		}
		for j, v := range gy {
			if math.Float64bits(v) != math.Float64bits(y[lo*k+j]) {
				return fmt.Errorf("chunk %d row %d target %d: y = %v, want %v", i, lo+j/k, j%k, v, y[lo*k+j])
			}
		}
		return nil
	}
	for i := range src.NumChunks() {
		r := src.ChunkRows(i)
		gx := make([]float64, r*d)
		gy := make([]float64, r*k)
		if err := src.ReadChunk(ctx, i, gx, gy); err != nil {
			t.Fatalf("ReadChunk(%d): %v", i, err)
		}
		if err := check(i, gx, gy); err != nil {
			t.Fatal(err)
		}
		gx2 := make([]float64, r*d)
		if err := src.ReadChunk(ctx, i, gx2, nil); err != nil {
			t.Fatalf("ReadChunk(%d) without targets: %v", i, err)
		}
		if err := check(i, gx2, nil); err != nil {
			t.Fatalf("without targets: %v", err)
		}
	}
	// Concurrent reads, each goroutine with its own buffers.
	var wg sync.WaitGroup
	errs := make(chan error, 4*src.NumChunks())
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range src.NumChunks() {
				i := (j + g) % src.NumChunks()
				r := src.ChunkRows(i)
				gx := make([]float64, r*d)
				gy := make([]float64, r*k)
				if err := src.ReadChunk(ctx, i, gx, gy); err != nil {
					errs <- err
					return
				}
				if err := check(i, gx, gy); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent read: %v", err)
	}
	// A cancelled context is an error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r := src.ChunkRows(0)
	if err := src.ReadChunk(cctx, 0, make([]float64, r*d), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadChunk with a cancelled context: err = %v, want context.Canceled", err)
	}
}

// Check reads every chunk of src and returns an error describing the
// first way src breaks the Source contract, for a Source a program writes
// over its own data (no expected rows needed): a chunk must read the same
// bits every time (deterministic), its features must not depend on
// whether targets are read (y nil or not: a Source that breaks this
// silently trains on other rows than it validates on), concurrent reads
// into distinct buffers must agree with sequential ones, and a cancelled
// context must be returned. It reads src about four times.
func Check(ctx context.Context, src stream.Source) error {
	d, k := src.Dim(), src.NumTargets()
	if d < 1 {
		return fmt.Errorf("Dim() = %d: a source needs at least one feature", d)
	}
	if k < 0 {
		return fmt.Errorf("NumTargets() = %d", k)
	}
	n := src.NumChunks()
	type chunk struct{ x, y []float64 }
	first := make([]chunk, n)
	for i := range n {
		r := src.ChunkRows(i)
		if r < 0 {
			return fmt.Errorf("ChunkRows(%d) = %d", i, r)
		}
		c := chunk{make([]float64, r*d), make([]float64, r*k)}
		if err := src.ReadChunk(ctx, i, c.x, c.y); err != nil {
			return fmt.Errorf("ReadChunk(%d): %w", i, err)
		}
		first[i] = c
	}
	same := func(what string, i int, a, b []float64, cols int) error {
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				return fmt.Errorf("chunk %d row %d column %d: %s: %v, first read %v", i, j/cols, j%cols, what, a[j], b[j])
			}
		}
		return nil
	}
	for i := range n {
		r := src.ChunkRows(i)
		x, y := make([]float64, r*d), make([]float64, r*k)
		if err := src.ReadChunk(ctx, i, x, y); err != nil {
			return fmt.Errorf("ReadChunk(%d), second read: %w", i, err)
		}
		if err := same("the second read differs (chunks must read the same every time)", i, x, first[i].x, d); err != nil {
			return err
		}
		if err := same("the second read's targets differ", i, y, first[i].y, max(k, 1)); err != nil {
			return err
		}
		clear(x)
		if err := src.ReadChunk(ctx, i, x, nil); err != nil {
			return fmt.Errorf("ReadChunk(%d) with y nil: %w", i, err)
		}
		if err := same("the features read with y nil differ from those read with targets (they must not depend on y)", i, x, first[i].x, d); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				i := (j + g) % n
				r := src.ChunkRows(i)
				x, y := make([]float64, r*d), make([]float64, r*k)
				if err := src.ReadChunk(ctx, i, x, y); err != nil {
					errs <- fmt.Errorf("concurrent ReadChunk(%d): %w", i, err)
					return
				}
				if err := same("a concurrent read differs from a sequential one", i, x, first[i].x, d); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if n > 0 {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		r := src.ChunkRows(0)
		if err := src.ReadChunk(cctx, 0, make([]float64, r*d), nil); !errors.Is(err, context.Canceled) {
			return fmt.Errorf("ReadChunk with a cancelled context returned %v, want context.Canceled", err)
		}
	}
	return nil
}
