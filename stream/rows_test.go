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
