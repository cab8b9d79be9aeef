package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/stream"
	"github.com/falkon-ooc/falkon-ooc/stream/streamtest"
)

// The Reader and its views report their columns and statistics through
// stream's optional interfaces.
var (
	_ stream.Columner     = (*chunkstore.Reader)(nil)
	_ stream.Statser      = (*chunkstore.Reader)(nil)
	_ stream.TargetValuer = (*chunkstore.Reader)(nil)
	_ stream.ScratchSizer = (*chunkstore.Reader)(nil)
	_ stream.Source       = (*chunkstore.View)(nil)
	_ stream.Columner     = (*chunkstore.View)(nil)
	_ stream.Statser      = (*chunkstore.View)(nil)
	_ stream.TargetValuer = (*chunkstore.View)(nil)
	_ stream.ScratchSizer = (*chunkstore.View)(nil)
)

// Select picks columns by name, in any order, from features and targets
// alike; each view passes the shared Source suite.
func TestSelect(t *testing.T) {
	const n = 700
	names := []string{"a", "b", "c", "d", "label"}
	rng := rand.New(rand.NewPCG(3, 4))
	cols := make([][]float64, len(names))
	for j := range cols {
		cols[j] = make([]float64, n)
		for i := range cols[j] {
			cols[j][i] = float64(rng.IntN(1000)) / 8
			if j == 4 {
				cols[j][i] = float64(i % 3)
			}
		}
	}
	var fs []chunkstore.ColumnSpec
	for _, nm := range names[:4] {
		fs = append(fs, chunkstore.ColumnSpec{Name: nm, Type: "float64"})
	}
	dir := filepath.Join(t.TempDir(), "s")
	w, err := chunkstore.Create(dir, fs, []chunkstore.ColumnSpec{{Name: "label", Type: "int64"}}, chunkstore.Options{ChunkRows: 128})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	idx := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3, "label": 4}
	for _, c := range []struct{ features, targets []string }{
		{[]string{"a", "b", "c", "d"}, []string{"label"}}, // the store's own layout
		{[]string{"a", "b", "c", "d"}, nil},
		{[]string{"d", "a"}, []string{"label"}},
		{[]string{"label", "c"}, []string{"b", "a"}},
	} {
		v, err := r.Select(c.features, c.targets)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, 0, n*len(c.features))
		y := make([]float64, 0, n*len(c.targets))
		for i := range n {
			for _, f := range c.features {
				x = append(x, cols[idx[f]][i])
			}
			for _, g := range c.targets {
				y = append(y, cols[idx[g]][i])
			}
		}
		streamtest.SourceTest(t, v, x, y)
		f, g := v.Columns()
		if !reflect.DeepEqual(f, c.features) || len(g) != len(c.targets) {
			t.Errorf("Columns() = %v, %v", f, g)
		}
		mean, std := v.FeatureStats()
		m := r.Manifest()
		for j, name := range c.features {
			var col chunkstore.Column
			if name == "label" {
				col = m.Targets[0]
			} else {
				col = m.Features[idx[name]]
			}
			if mean[j] != col.Mean || std[j] != col.Std {
				t.Errorf("%s: stats %v %v, manifest %v %v", name, mean[j], std[j], col.Mean, col.Std)
			}
		}
		if len(c.targets) == 1 && !reflect.DeepEqual(v.TargetDistinct(), [][]float64{{0, 1, 2}}) {
			t.Errorf("TargetDistinct() = %v", v.TargetDistinct())
		}
	}
	_, err = r.Select([]string{"a", "zz", "b", "yy"}, []string{"label"})
	var mc *chunkstore.MissingColumnsError
	if !errors.As(err, &mc) || err.Error() != `chunkstore: column(s) ["zz" "yy"] are missing; the store's columns are ["a" "b" "c" "d" "label"]` {
		t.Fatalf("err = %v", err)
	}
	rf, rt := r.Columns()
	if !reflect.DeepEqual(rf, names[:4]) || !reflect.DeepEqual(rt, names[4:]) {
		t.Errorf("Reader.Columns() = %v, %v", rf, rt)
	}
}
