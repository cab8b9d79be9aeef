package stream_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/stream"
	"github.com/falkon-ooc/falkon-ooc/stream/streamtest"
)

func randData(n, d, k int, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x = make([]float64, n*d)
	y = make([]float64, n*k)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	return x, y
}

func TestMemSource(t *testing.T) {
	for _, c := range []struct{ n, d, k, rows int }{
		{1, 1, 0, 1}, {10, 3, 1, 4}, {100, 5, 2, 100}, {101, 2, 3, 7},
	} {
		x, y := randData(c.n, c.d, c.k, 1)
		streamtest.SourceTest(t, stream.NewMemSource(x, c.d, y, c.k, c.rows), x, y)
	}
}

// sumJob sums, per chunk, the first feature of each row, then reduces by
// appending the per-chunk sums, so the order of reduction is visible.
func sumJob(order *[]int, sums *[]float64) stream.Job[*float64] {
	return stream.Job[*float64]{
		Targets:    true,
		NewPartial: func() *float64 { return new(float64) },
		NewWorker: func() func(context.Context, stream.Chunk, *float64) error {
			return func(_ context.Context, c stream.Chunk, p *float64) error {
				s := 0.0
				for i := range c.Rows {
					s += c.X[i*2] + c.Y[i]
				}
				*p = s
				return nil
			}
		},
		Reduce: func(chunk int, p *float64) error {
			*order = append(*order, chunk)
			*sums = append(*sums, *p)
			return nil
		},
	}
}

func TestRunOrderIndependentOfWorkers(t *testing.T) {
	x, y := randData(1000, 2, 1, 2)
	src := stream.NewMemSource(x, 2, y, 1, 13)
	var ref []float64
	for _, opt := range []stream.Options{
		{Workers: 1}, {Workers: 2}, {Workers: 8}, {Workers: 8, InFlight: 8}, {Workers: 3, InFlight: 50}, {},
	} {
		var order []int
		var sums []float64
		if err := stream.Run(context.Background(), src, opt, sumJob(&order, &sums)); err != nil {
			t.Fatal(err)
		}
		if len(order) != src.NumChunks() {
			t.Fatalf("%+v: reduced %d chunks, want %d", opt, len(order), src.NumChunks())
		}
		for i, c := range order {
			if c != i {
				t.Fatalf("%+v: reduction order %v", opt, order)
			}
		}
		if ref == nil {
			ref = sums
			continue
		}
		for i := range sums {
			if sums[i] != ref[i] {
				t.Fatalf("%+v: chunk %d sum %v, want %v", opt, i, sums[i], ref[i])
			}
		}
	}
}

func TestRunSubsetOfChunks(t *testing.T) {
	x, y := randData(100, 2, 1, 3)
	src := stream.NewMemSource(x, 2, y, 1, 10)
	var order []int
	var sums []float64
	job := sumJob(&order, &sums)
	job.Chunks = []int{7, 2, 5}
	if err := stream.Run(context.Background(), src, stream.Options{Workers: 2}, job); err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || order[0] != 7 || order[1] != 2 || order[2] != 5 {
		t.Fatalf("order = %v, want [7 2 5]", order)
	}
}

// The partials in flight never exceed Options.InFlight.
func TestRunBoundsPartials(t *testing.T) {
	x, y := randData(500, 2, 1, 4)
	src := stream.NewMemSource(x, 2, y, 1, 5)
	var made atomic.Int32
	var order []int
	var sums []float64
	job := sumJob(&order, &sums)
	job.NewPartial = func() *float64 { made.Add(1); return new(float64) }
	if err := stream.Run(context.Background(), src, stream.Options{Workers: 4, InFlight: 6}, job); err != nil {
		t.Fatal(err)
	}
	if got := made.Load(); got != 6 {
		t.Errorf("allocated %d partials, want 6", got)
	}
}

func TestRunErrors(t *testing.T) {
	x, y := randData(200, 2, 1, 5)
	src := stream.NewMemSource(x, 2, y, 1, 10)
	boom := errors.New("boom")

	t.Run("worker", func(t *testing.T) {
		var order []int
		var sums []float64
		job := sumJob(&order, &sums)
		job.NewWorker = func() func(context.Context, stream.Chunk, *float64) error {
			return func(_ context.Context, c stream.Chunk, p *float64) error {
				if c.Index == 11 {
					return boom
				}
				return nil
			}
		}
		err := stream.Run(context.Background(), src, stream.Options{Workers: 3}, job)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "chunk 11") {
			t.Fatalf("err = %v, want boom naming chunk 11", err)
		}
	})
	t.Run("reduce", func(t *testing.T) {
		var order []int
		var sums []float64
		job := sumJob(&order, &sums)
		job.Reduce = func(chunk int, p *float64) error {
			if chunk == 4 {
				return boom
			}
			return nil
		}
		err := stream.Run(context.Background(), src, stream.Options{Workers: 3}, job)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "chunk 4") {
			t.Fatalf("err = %v, want boom naming chunk 4", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var order []int
		var sums []float64
		job := sumJob(&order, &sums)
		reduce := job.Reduce
		job.Reduce = func(chunk int, p *float64) error {
			if chunk == 3 {
				cancel()
			}
			return reduce(chunk, p)
		}
		err := stream.Run(ctx, src, stream.Options{Workers: 2}, job)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if len(order) >= src.NumChunks() {
			t.Fatalf("pass did not stop: reduced %d chunks", len(order))
		}
	})
}

func TestSubdivide(t *testing.T) {
	x, y := randData(103, 3, 2, 9)
	src := stream.NewMemSource(x, 3, y, 2, 40)
	for _, parts := range []int{1, 2, 7, 50} {
		sub := stream.Subdivide(src, parts)
		streamtest.SourceTest(t, sub, x, y)
		if parts > 1 && sub.NumChunks() <= src.NumChunks() {
			t.Errorf("parts %d: %d chunks", parts, sub.NumChunks())
		}
	}
}

func TestHoldout(t *testing.T) {
	x, y := randData(1000, 2, 1, 10)
	src := stream.NewMemSource(x, 2, y, 1, 64)
	rest, held := stream.Holdout(src, 0.2, 7)
	// Reassemble the expected rows of each side by the same rule applied
	// through a second split with another chunking: the split must not
	// depend on chunking.
	rest2, held2 := stream.Holdout(stream.NewMemSource(x, 2, y, 1, 100), 0.2, 7)
	collect := func(s stream.Source) (xs, ys []float64) {
		for i := range s.NumChunks() {
			r := s.ChunkRows(i)
			cx, cy := make([]float64, r*2), make([]float64, r)
			if err := s.ReadChunk(context.Background(), i, cx, cy); err != nil {
				t.Fatal(err)
			}
			xs, ys = append(xs, cx...), append(ys, cy...)
		}
		return xs, ys
	}
	hx, hy := collect(held)
	rx, ry := collect(rest)
	streamtest.SourceTest(t, held, hx, hy)
	streamtest.SourceTest(t, rest, rx, ry)
	streamtest.SourceTest(t, held2, hx, hy)
	streamtest.SourceTest(t, rest2, rx, ry)
	if n := len(hy); n < 150 || n > 250 || n+len(ry) != 1000 {
		t.Errorf("held %d rows, rest %d, want about 200 + 800", n, len(ry))
	}
}

// HoldoutPair recognises the two sides of one Holdout call, and only them.
func TestHoldoutPair(t *testing.T) {
	x, y := randData(100, 2, 1, 11)
	src := stream.NewMemSource(x, 2, y, 1, 16)
	rest, held := stream.Holdout(src, 0.25, 3)
	root, frac, seed, ok := stream.HoldoutPair(rest, held)
	if !ok || root != stream.Source(src) || frac != 0.25 || seed != 3 {
		t.Fatalf("HoldoutPair(rest, held) = %v, %v, %v, %v; want the source, 0.25, 3, true", root, frac, seed, ok)
	}
	rest2, held2 := stream.Holdout(src, 0.25, 3) // the same split, another call
	for _, c := range []struct {
		name       string
		rest, held stream.Source
	}{
		{"swapped", held, rest},
		{"another call's held side", rest, held2},
		{"another call's rest", rest2, held},
		{"not a hold-out", src, held},
		{"a subdivided side", rest, stream.Subdivide(held, 2)},
	} {
		if _, _, _, ok := stream.HoldoutPair(c.rest, c.held); ok {
			t.Errorf("%s: HoldoutPair says ok", c.name)
		}
	}
}

// HoldoutOf recognises either side of a Holdout call, through Subdivide,
// and nothing else.
func TestHoldoutOf(t *testing.T) {
	x, y := randData(100, 2, 1, 11)
	src := stream.NewMemSource(x, 2, y, 1, 16)
	rest, held := stream.Holdout(src, 0.25, 3)
	for _, c := range []struct {
		name string
		side stream.Source
		held bool
	}{
		{"rest", rest, false}, {"held", held, true},
		{"a subdivided rest", stream.Subdivide(stream.Subdivide(rest, 2), 3), false},
	} {
		parent, frac, seed, h, ok := stream.HoldoutOf(c.side)
		if !ok || parent != stream.Source(src) || frac != 0.25 || seed != 3 || h != c.held {
			t.Errorf("%s: HoldoutOf = %v, %v, %v, %v, %v; want the source, 0.25, 3, %v, true", c.name, parent, frac, seed, h, ok, c.held)
		}
	}
	for name, s := range map[string]stream.Source{"the source": src, "a subdivided source": stream.Subdivide(src, 2)} {
		if _, _, _, _, ok := stream.HoldoutOf(s); ok {
			t.Errorf("%s: HoldoutOf says ok", name)
		}
	}
}

// A ValueError from a worker names the chunk and row of the underlying
// source, through Subdivide and Holdout.
func TestRunValueErrorLocation(t *testing.T) {
	x, y := randData(1000, 2, 1, 9)
	base := stream.NewMemSource(x, 2, y, 1, 250).WithColumns([]string{"a", "b"}, []string{"t"})
	rest, _ := stream.Holdout(base, 0.3, 1)
	for name, src := range map[string]stream.Source{
		"plain": base, "subdivided": stream.Subdivide(base, 4), "holdout": stream.Subdivide(rest, 3),
	} {
		t.Run(name, func(t *testing.T) {
			if f, _ := stream.ColumnsOf(src); f[1] != "b" {
				t.Fatalf("names not forwarded: %v", f)
			}
			// The worker flags row 111 of base's chunk 2, found by value.
			const wantChunk, wantRow = 2, 111
			err := stream.Run(context.Background(), src, stream.Options{Workers: 3}, stream.Job[*int]{
				NewPartial: func() *int { return new(int) },
				NewWorker: func() func(context.Context, stream.Chunk, *int) error {
					return func(ctx context.Context, c stream.Chunk, _ *int) error {
						for r := range c.Rows {
							if c.X[r*2] == x[(2*250+wantRow)*2] {
								return fmt.Errorf("wrapped: %w", &stream.ValueError{Row: r, Column: "a", Value: math.NaN()})
							}
						}
						return nil
					}
				},
				Reduce: func(int, *int) error { return nil },
			})
			var ve *stream.ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v", err)
			}
			if ve.Chunk != wantChunk || ve.Row != wantRow || err.Error() != `chunk 2, row 111, column "a": value NaN is not a finite number` {
				t.Fatalf("%v: want chunk %d, row %d", err, wantChunk, wantRow)
			}
		})
	}
}

// HeldOutRows splits one chunk as Holdout splits the whole source.
func TestHeldOutRows(t *testing.T) {
	x, y := randData(1000, 1, 1, 11)
	for i := range x {
		x[i] = float64(i) // each row holds its row number
	}
	src := stream.NewMemSource(x, 1, y, 1, 64)
	_, held := stream.Holdout(src, 0.3, 9)
	var want []float64
	for i := range held.NumChunks() {
		r := held.ChunkRows(i)
		cx, cy := make([]float64, r), make([]float64, r)
		if err := held.ReadChunk(context.Background(), i, cx, cy); err != nil {
			t.Fatal(err)
		}
		want = append(want, cx...)
	}
	var got []float64
	for first := int64(0); first < 1000; first += 37 { // another chunking
		n := int(min(37, 1000-first))
		for _, r := range stream.HeldOutRows(nil, first, n, 0.3, 9) {
			got = append(got, float64(first)+float64(r))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("HeldOutRows gives %d rows, Holdout %d (or other ones)", len(got), len(want))
	}
}
