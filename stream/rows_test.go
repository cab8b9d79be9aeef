package stream_test

import (
	"testing"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

func TestRows(t *testing.T) {
	x := make([]float64, 2*10)
	for _, tc := range []struct{ n, chunk int }{{10, 3}, {10, 10}, {10, 1}, {0, 4}} {
		src := stream.NewMemSource(x[:2*tc.n], 2, nil, 0, tc.chunk)
		if got := stream.Rows(src); got != int64(tc.n) {
			t.Errorf("%d rows in chunks of %d: Rows = %d", tc.n, tc.chunk, got)
		}
	}
}

// TestRootRows: rows of a hold-out's sides, subdivided, map to the rows of
// the source they came from: the same features, ascending.
func TestRootRows(t *testing.T) {
	const n, d = 1000, 2
	x := make([]float64, n*d)
	for i := range x {
		x[i] = float64(i)
	}
	root := stream.NewMemSource(x, d, nil, 0, 97)
	rest, held := stream.Holdout(root, 0.3, 5)
	for _, v := range []stream.Source{root, rest, held, stream.Subdivide(rest, 4), stream.Subdivide(root, 3)} {
		var idx []int64
		for i := int64(0); i < stream.Rows(v); i += 7 {
			idx = append(idx, i)
		}
		got, rows := stream.RootRows(v, idx)
		if got != stream.Source(root) || len(rows) != len(idx) {
			t.Fatalf("root %T, %d rows for %d", got, len(rows), len(idx))
		}
		// The view's rows, read in order, against the root's rows.
		var all []float64
		for c := range v.NumChunks() {
			buf := make([]float64, v.ChunkRows(c)*d)
			if err := v.ReadChunk(t.Context(), c, buf, nil); err != nil {
				t.Fatal(err)
			}
			all = append(all, buf...)
		}
		for k, i := range idx {
			if k > 0 && rows[k] <= rows[k-1] {
				t.Fatalf("rows not ascending at %d: %d after %d", k, rows[k], rows[k-1])
			}
			if all[i*d] != x[rows[k]*d] || all[i*d+1] != x[rows[k]*d+1] {
				t.Fatalf("view row %d maps to root row %d: %v, want %v", i, rows[k], x[rows[k]*d:rows[k]*d+d], all[i*d:i*d+d])
			}
		}
	}
}
