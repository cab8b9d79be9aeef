package ingest

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// shopLevel is the level of global row k of the target-encoding tests:
// 22 levels of unequal frequency, NULL in every 23rd row.
func shopLevel(k int) string {
	if k%23 == 4 {
		return ""
	}
	if k%3 == 0 {
		return fmt.Sprintf("s%02d", (k*7)%5)
	}
	return fmt.Sprintf("s%02d", (k*11)%30)
}

// writeShops writes two CSV files of 37 and 64 rows (shop, x, y) whose y
// is yOf(k) for global row k, and returns their paths.
func writeShops(t *testing.T, yOf func(k int) string) []string {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	row := func(off int) func(i int) string {
		return func(i int) string {
			k := off + i
			return fmt.Sprintf("%s,%d,%s", shopLevel(k), k%5, yOf(k))
		}
	}
	writeText(t, a, "shop,x,y", 37, row(0))
	writeText(t, b, "shop,x,y", 64, row(37))
	return []string{a, b}
}

// oofWant is the definition of a stored row's target encoding: the mean
// of y over the rows of its level in the other folds (store row r in fold
// r mod 5), shrunk by 20 rows towards the mean of those folds.
func oofWant(levels []string, y []float64, r int) float64 {
	var n, s, ln, ls float64
	for i := range levels {
		if i%featenc.Folds == r%featenc.Folds {
			continue
		}
		n++
		s += y[i]
		if levels[i] == levels[r] {
			ln++
			ls += y[i]
		}
	}
	return (ls + featenc.Smooth*s/n) / (ln + featenc.Smooth)
}

// TestTargetEncoding: a column of more levels than MaxLevels, with a
// numeric target, becomes one feature whose stored value is each row's
// out-of-fold level mean (rows dropped for a NULL target are not rows of
// the store, nor of a fold), over two files read in batches; the encoding
// holds every row's means for predict; the column report says why; a
// distributed ingest gives the same store.
func TestTargetEncoding(t *testing.T) {
	yOf := func(k int) string {
		if k == 50 || k == 51 {
			return "" // dropped
		}
		return fmt.Sprint((k * 7) % 13)
	}
	inputs := writeShops(t, yOf)
	cfg := Config{Targets: []string{"y"}, MaxLevels: 4, BatchRows: 16, Nulls: "drop", ChunkRows: 32}
	res, st := mustIngest(t, inputs, cfg)
	if want := []string{"shop:target_mean", "x"}; !slices.Equal(res.Features, want) {
		t.Fatalf("features %q, want %q", res.Features, want)
	}
	var levels []string
	var y []float64
	for k := range 101 {
		if yOf(k) == "" {
			continue
		}
		levels = append(levels, shopLevel(k))
		var v float64
		fmt.Sscan(yOf(k), &v)
		y = append(y, v)
	}
	got := st.col(t, "shop:target_mean")
	if len(got) != len(y) {
		t.Fatalf("%d rows, want %d", len(got), len(y))
	}
	for r := range y {
		if want := oofWant(levels, y, r); math.Abs(got[r]-want) > 1e-12 {
			t.Fatalf("row %d (level %q): %v, want %v", r, levels[r], got[r], want)
		}
	}
	col := st.m.Encoding.Column("shop")
	distinct := map[string]bool{}
	for _, l := range levels {
		distinct[l] = l != ""
	}
	if col == nil || col.Kind != featenc.Target || col.Target != "y" || len(col.Levels) != 22 || len(distinct) != 23 || !col.Null {
		t.Fatalf("encoding %+v", col)
	}
	var all float64
	for _, v := range y {
		all += v
	}
	prior := all / float64(len(y))
	for i, l := range append(slices.Clone(col.Levels), "") {
		var n, s float64
		for r := range levels {
			if levels[r] == l {
				n, s = n+1, s+y[r]
			}
		}
		m := col.NullMean
		if l != "" {
			m = col.Means[i]
		}
		if want := (s + featenc.Smooth*prior) / (n + featenc.Smooth); math.Abs(m-want) > 1e-12 {
			t.Fatalf("level %q: mean %v, want %v", l, m, want)
		}
	}
	note := ""
	for _, c := range res.Columns {
		if c.Name == "shop" {
			note = c.Note
		}
	}
	if !strings.HasPrefix(note, "target: the mean of y per level over 22 distinct levels (exact), shrunk towards the overall mean by 20 rows, each stored row's from the other 4 of 5 folds (more levels than --max-levels 4, whose most frequent would cover ") ||
		!strings.HasSuffix(note, "% of the values as one-hot features), 4 NULL as a level of its own") {
		t.Fatalf("note %q", note)
	}
	for _, parts := range []int{1, 3} {
		sameIngest(t, inputs, cfg, parts)
	}
}

// TestTargetEncodingClasses: a two-class string target is encoded as the
// share of its second class (sorted), whichever label the files meet
// first; three classes keep one-hot features and the report says why, as
// it does for two targets; AboveMaxLevels "onehot" keeps one-hot without
// a word; a distributed ingest agrees.
func TestTargetEncodingClasses(t *testing.T) {
	for _, first := range []string{"yes", "no"} {
		other := map[string]string{"yes": "no", "no": "yes"}[first]
		label := func(k int) string {
			if (k*5)%7 < 3 {
				return other
			}
			return first
		}
		inputs := writeShops(t, label)
		cfg := Config{Targets: []string{"y"}, MaxLevels: 4, BatchRows: 16}
		_, st := mustIngest(t, inputs, cfg)
		var levels []string
		var yes []float64
		for k := range 101 {
			levels = append(levels, shopLevel(k))
			yes = append(yes, map[bool]float64{true: 1}[label(k) == "yes"])
		}
		got := st.col(t, "shop:target_mean")
		for r := range yes {
			if want := oofWant(levels, yes, r); math.Abs(got[r]-want) > 1e-12 {
				t.Fatalf("first label %q, row %d: %v, want %v (the share of yes)", first, r, got[r], want)
			}
		}
		sameIngest(t, inputs, cfg, 2)
	}

	three := writeShops(t, func(k int) string { return []string{"a", "b", "c"}[k%3] })
	two := writeShopsZ(t)
	for _, c := range []struct {
		inputs []string
		cfg    Config
		why    string
	}{
		{three, Config{Targets: []string{"y"}}, `; not target-encoded: the target "y" has 3 classes, and a target encoding is the mean of a number or of two classes`},
		{two, Config{Targets: []string{"y", "z"}}, "; not target-encoded: 2 targets, and a target encoding is the mean of one"},
		{two, Config{Targets: []string{"y"}, Exclude: []string{"z"}, AboveMaxLevels: "onehot"}, ""},
		{two, Config{Exclude: []string{"y", "z"}}, "; not target-encoded: no target to take the mean of"},
	} {
		c.cfg.MaxLevels = 4
		res, _ := mustIngest(t, c.inputs, c.cfg)
		note := ""
		for _, col := range res.Columns {
			if col.Name == "shop" {
				note = col.Note
			}
		}
		want := "one-hot: the 4 most frequent of 22 distinct levels (exact) cover "
		if !strings.HasPrefix(note, want) || !strings.HasSuffix(note, "5 NULL as the level (null)"+c.why) {
			t.Errorf("%+v: note %q, want %q…%q", c.cfg, note, want, c.why)
		}
		if !slices.Contains(res.Features, "shop=(other)") {
			t.Errorf("%+v: features %q", c.cfg, res.Features)
		}
	}
	if _, err := Run(context.Background(), three, Config{Out: filepath.Join(t.TempDir(), "s"), Targets: []string{"y"}, AboveMaxLevels: "hash"}); err == nil ||
		err.Error() != `the encoding above --max-levels must be "target" or "onehot", not "hash"` {
		t.Fatalf("AboveMaxLevels hash: %v", err)
	}
}

// writeShopsZ writes writeShops's files with two numeric targets y and z.
func writeShopsZ(t *testing.T) []string {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.csv")
	writeText(t, a, "shop,x,y,z", 101, func(k int) string {
		return fmt.Sprintf("%s,%d,%d,%d", shopLevel(k), k%5, k%3, k%4)
	})
	return []string{a}
}
