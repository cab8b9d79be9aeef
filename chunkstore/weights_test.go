package chunkstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// A store with a weight column: format version 2, the weights out of
// the targets (NumTargets, Columns) and read back by ReadWeights, also
// through a Select view; features and targets read as without weights;
// Verify checks the weight blocks.
func TestWeightColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n, d = 1000, 3
	cols := testData(rng, n, d+2)
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(rng.IntN(4)) / 2
	}
	dir := filepath.Join(t.TempDir(), "s")
	cw, err := Create(dir, specs("x", d), append(specs("y", 1), ColumnSpec{Name: "wt", Type: "float64"}),
		Options{ChunkRows: 128, Weight: "wt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cw.Append(append(slices.Clone(cols[:d+1]), w)); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := r.Manifest()
	if m.FormatVersion != 2 || m.Weight == nil || m.Weight.Name != "wt" || len(m.Targets) != 1 || r.NumTargets() != 1 {
		t.Fatalf("version %d, weight %+v, %d targets", m.FormatVersion, m.Weight, len(m.Targets))
	}
	if stream.WeightColumn(r) != "wt" {
		t.Fatalf("WeightColumn = %q", stream.WeightColumn(r))
	}
	if err := r.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got, gy []float64
	for i := range r.NumChunks() {
		rows := r.ChunkRows(i)
		cw, x, y := make([]float64, rows), make([]float64, rows*d), make([]float64, rows)
		if err := r.ReadWeights(context.Background(), i, cw); err != nil {
			t.Fatal(err)
		}
		if err := r.ReadChunk(context.Background(), i, x, y); err != nil {
			t.Fatal(err)
		}
		got, gy = append(got, cw...), append(gy, y...)
	}
	if !slices.Equal(got, w) || !slices.Equal(gy, cols[d]) {
		t.Fatal("weights or targets read back differ from those written")
	}
	v, err := r.Select([]string{"x1", "x0"}, []string{"y0"})
	if err != nil {
		t.Fatal(err)
	}
	vw := make([]float64, r.ChunkRows(3))
	if err := v.ReadWeights(context.Background(), 3, vw); err != nil || !slices.Equal(vw, w[3*128:4*128]) || v.WeightColumn() != "wt" {
		t.Fatalf("the view's weights: %v", err)
	}
	// A store without weights is still version 1.
	plain := filepath.Join(t.TempDir(), "p")
	writeStore(t, plain, cols, d, Options{ChunkRows: 128}, 1000)
	rp, err := Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	if rp.Manifest().FormatVersion != 1 || stream.WeightColumn(rp) != "" {
		t.Fatalf("a store without weights: version %d, weight %q", rp.Manifest().FormatVersion, stream.WeightColumn(rp))
	}
	if err := rp.ReadWeights(context.Background(), 0, make([]float64, 128)); err == nil {
		t.Fatal("ReadWeights on a store without weights succeeded")
	}
}

// A negative weight is refused by Append, naming the column and row; a
// weight column that is not the last target is refused by Create.
func TestWeightColumnErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	cw, err := Create(dir, specs("x", 1), []ColumnSpec{{Name: "y", Type: "float64"}, {Name: "w", Type: "float64"}},
		Options{Weight: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Abort()
	err = cw.Append([][]float64{{1, 2, 3}, {0, 1, 0}, {1, 0, -2}})
	if want := `chunkstore: append: column "w" row 2 (store row 2): weight -2 is negative`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	_, err = Create(filepath.Join(t.TempDir(), "t"), specs("x", 1), []ColumnSpec{{Name: "w", Type: "float64"}, {Name: "y", Type: "float64"}},
		Options{Weight: "w"})
	if err == nil || !strings.Contains(err.Error(), `the weight column "w" is not the last target column`) || errors.Is(err, ErrBusy) {
		t.Fatalf("err = %v", err)
	}
}
