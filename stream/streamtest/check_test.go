package streamtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/stream"
	"github.com/falkon-ooc/falkon-ooc/stream/streamtest"
)

// yDependent breaks the contract the way a user's Source did: it fills x
// differently when y is nil (here it skips the first row of the chunk).
type yDependent struct{ *stream.MemSource }

func (s yDependent) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if y != nil {
		return s.MemSource.ReadChunk(ctx, i, x, y)
	}
	full := make([]float64, len(x))
	if err := s.MemSource.ReadChunk(ctx, i, full, nil); err != nil {
		return err
	}
	copy(x, full[s.Dim():])
	return nil
}

// random breaks determinism: every read differs.
type random struct {
	*stream.MemSource
	calls *int
}

func (s random) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if err := s.MemSource.ReadChunk(ctx, i, x, y); err != nil {
		return err
	}
	*s.calls++
	x[0] += float64(*s.calls)
	return nil
}

func TestCheck(t *testing.T) {
	x := make([]float64, 40*2)
	y := make([]float64, 40)
	for i := range x {
		x[i] = float64(i)
	}
	mem := stream.NewMemSource(x, 2, y, 1, 16)
	if err := streamtest.Check(context.Background(), mem); err != nil {
		t.Fatalf("MemSource: %v", err)
	}
	calls := 0
	for _, tc := range []struct {
		name string
		src  stream.Source
		want string
	}{
		{"x depends on y", yDependent{mem}, "the features read with y nil differ from those read with targets"},
		{"not deterministic", random{mem, &calls}, "the second read differs"},
	} {
		err := streamtest.Check(context.Background(), tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
