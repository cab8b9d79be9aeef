package ingest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// TestCategorical: a string column and an integer column named in
// Categorical become one-hot features over two files and small batches:
// the most frequent levels up to MaxLevels, the rest as (other), NULL as a
// level of its own; the manifest keeps the encoding and the reader scales
// the one-hot features by √2.
func TestCategorical(t *testing.T) {
	dir := t.TempDir()
	// region: a 40 %, b 30 %, c 20 %, d and e 5 % each, NULL in every 50th
	// row; k: 1, 2, 3 in turn.
	region := func(i int) string {
		switch r := i % 20; {
		case i%50 == 7:
			return "" // NULL
		case r < 8:
			return "a"
		case r < 14:
			return "b"
		case r < 18:
			return "c"
		case r == 18:
			return "d"
		}
		return "e"
	}
	row := func(off int) func(i int) string {
		return func(i int) string {
			k := off + i
			return fmt.Sprintf("%s,%d,%g,%g", region(k), 1+k%3, float64(k%7), float64(k))
		}
	}
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeText(t, a, "region,k,x,y", 700, row(0))
	writeText(t, b, "region,k,x,y", 300, row(700))
	out := filepath.Join(dir, "store")
	res, st := mustIngest(t, []string{a, b}, Config{Out: out, Targets: []string{"y"}, Categorical: []string{"k"}, MaxLevels: 3, BatchRows: 128, AboveMaxLevels: "onehot"})

	wantFeat := []string{"region=a", "region=b", "region=c", "region=(other)", "region=(null)", "k=1", "k=2", "k=3", "x"}
	if !slices.Equal(res.Features, wantFeat) {
		t.Fatalf("features %q, want %q", res.Features, wantFeat)
	}
	for i := range 1000 {
		want := map[string]float64{}
		switch l := region(i); l {
		case "":
			want["region=(null)"] = 1
		case "d", "e":
			want["region=(other)"] = 1
		default:
			want["region="+l] = 1
		}
		want[fmt.Sprintf("k=%d", 1+i%3)] = 1
		for _, f := range wantFeat[:8] {
			if got := st.col(t, f)[i]; got != want[f] {
				t.Fatalf("row %d (region %q): %s = %v, want %v", i, region(i), f, got, want[f])
			}
		}
	}
	notes := map[string]string{}
	for _, c := range res.Columns {
		notes[c.Name] = c.Note
	}
	if want := "one-hot: the 3 most frequent of 5 distinct levels (exact) cover 89.8 % of the values, the rest as (other) (more levels than --max-levels 3), 20 NULL as the level (null)"; notes["region"] != want {
		t.Errorf("region: note %q, want %q", notes["region"], want)
	}
	if want := "one-hot: 3 levels (exact)"; notes["k"] != want {
		t.Errorf("k: note %q, want %q", notes["k"], want)
	}

	// The manifest's encoding, and the one-hot features' scale.
	if st.m.FormatVersion != 3 || st.m.Encoding == nil || len(st.m.Encoding.Columns) != 2 {
		t.Fatalf("format version %d, encoding %+v", st.m.FormatVersion, st.m.Encoding)
	}
	rc := st.m.Encoding.Columns[0]
	if rc.Source != "region" || !slices.Equal(rc.Levels, []string{"a", "b", "c"}) || !rc.Other || !rc.Null || rc.Scale != featenc.Scale {
		t.Fatalf("region's encoding %+v", rc)
	}
	r, err := chunkstore.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, std := r.FeatureStats()
	for j, f := range r.FeatureNames() {
		if onehot := strings.Contains(f, "="); onehot != (std[j] == math.Sqrt2) {
			t.Errorf("feature %s: std %v", f, std[j])
		}
	}
}

// TestCategoricalDrop: the levels of a row dropped for a NULL elsewhere
// are taken back, so a level seen only there gets no feature.
func TestCategoricalDrop(t *testing.T) {
	p := writeTestCSV(t, t.TempDir(), "c,x,y\nu,1,1\nv,2,2\nonly,3,NA\nu,4,4\n")
	res, st := mustIngest(t, []string{p}, Config{Targets: []string{"y"}, Nulls: "drop"})
	if want := []string{"c=u", "c=v", "x"}; !slices.Equal(res.Features, want) || res.Dropped != 1 {
		t.Fatalf("features %q (dropped %d), want %q", res.Features, res.Dropped, want)
	}
	if got := st.col(t, "c=u"); !slices.Equal(got, []float64{1, 0, 1}) {
		t.Fatalf("c=u = %v", got)
	}
}

// TestCategoricalErrors: what Categorical may name, and a one-hot name
// that clashes with another column.
func TestCategoricalErrors(t *testing.T) {
	p := writeTestCSV(t, t.TempDir(), "c,x,c=u,y\nu,1.5,1,1\nv,2,2,2\n")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Targets: []string{"y"}, Categorical: []string{"z"}}, p + `: no column "z" (named in categorical); its columns are: "c", "x", "c=u", "y"`},
		{Config{Targets: []string{"y"}, Categorical: []string{"y"}}, `column "y" is named in both targets and categorical`},
		{Config{Targets: []string{"y"}, Exclude: []string{"c=u"}, Categorical: []string{"c", "c"}}, `column "c" is named twice in categorical`},
		{Config{Targets: []string{"y"}}, `column "c": its one-hot feature "c=u" has the name of another column; rename one of them or leave one out with --exclude`},
	} {
		tc.cfg.Out = filepath.Join(t.TempDir(), "s")
		_, err := Run(t.Context(), []string{p}, tc.cfg)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v: err = %v\nwant %s", tc.cfg.Categorical, err, tc.want)
		}
		if _, serr := os.Stat(tc.cfg.Out); serr == nil {
			t.Errorf("a store was left at %s", tc.cfg.Out)
		}
	}
}

// TestCategoricalWorkers: levels come from per-file counters merged in
// file order, so 1 and 4 workers choose the same levels.
func TestCategoricalWorkers(t *testing.T) {
	dir := t.TempDir()
	var ins []string
	for f := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("p%d.csv", f))
		writeText(t, p, "c,y", 500, func(i int) string { return fmt.Sprintf("l%d,%d", (i*(f+3))%97, i) })
		ins = append(ins, p)
	}
	var first []string
	for _, w := range []int{1, 4} {
		res, _ := mustIngest(t, ins, Config{Targets: []string{"y"}, Workers: w, MaxLevels: 10, BatchRows: 128})
		if first == nil {
			first = res.Features
		} else if !slices.Equal(first, res.Features) {
			t.Fatalf("workers %d: features %q, with 1: %q", w, res.Features, first)
		}
	}
}

// TestTimeFeatures: with TimeFeatures a date column is a default feature
// (days since 1970-01-01) with the sine and cosine of its cyclic
// features, recorded in the manifest's encoding.
func TestTimeFeatures(t *testing.T) {
	p := writeTestCSV(t, t.TempDir(), "d,x,y\n2024-03-04,1,1\n2024-03-07,2,2\n2024-03-10,3,3\n")
	if _, err := Run(t.Context(), []string{p}, Config{Out: filepath.Join(t.TempDir(), "s"), TimeFeatures: []string{"week"}}); err == nil || err.Error() != `unknown time feature "week": the time features are hour, dow and doy` {
		t.Fatalf("err = %v", err)
	}
	res, st := mustIngest(t, []string{p}, Config{Targets: []string{"y"}, TimeFeatures: []string{"dow"}})
	if want := []string{"d", "d:dow_sin", "d:dow_cos", "x"}; !slices.Equal(res.Features, want) {
		t.Fatalf("features %q, want %q", res.Features, want)
	}
	days := st.col(t, "d")
	for i, want := range []float64{19786, 19789, 19792} { // a Monday, a Thursday, a Sunday
		if days[i] != want {
			t.Fatalf("d[%d] = %v, want %v", i, days[i], want)
		}
		ph := featenc.Phase(featenc.DoW, want)
		if s, c := st.col(t, "d:dow_sin")[i], st.col(t, "d:dow_cos")[i]; math.Abs(s-math.Sin(2*math.Pi*ph)) > 1e-15 || math.Abs(c-math.Cos(2*math.Pi*ph)) > 1e-15 {
			t.Fatalf("row %d: sin %v cos %v, phase %v", i, s, c, ph)
		}
	}
	if got := featenc.Phase(featenc.DoW, 19786); got != 0 {
		t.Fatalf("Monday's phase %v, want 0", got)
	}
	if c := st.m.Encoding.Column("d"); c == nil || c.Kind != featenc.Time || !slices.Equal(c.Cyclic, []string{"dow"}) {
		t.Fatalf("encoding %+v", st.m.Encoding)
	}
}

// TestStrayNumber: a text column of numbers with one value that is not a
// number would be read as text, and so become categorical: ingest refuses
// it naming the file, column, row and value; named categorical or
// excluded it is taken; a dry run (inspect) notes it instead; a column
// with many non-numbers is categorical as before.
func TestStrayNumber(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "w.csv")
	writeText(t, in, "weight,x,y", 300, func(i int) string {
		w := fmt.Sprintf("%.1f", 50+float64(i%40)/2)
		if i == 56 {
			w = "4.2kg"
		}
		return fmt.Sprintf("%s,%d,%d", w, i%9, i%4)
	})
	want := in + `: column "weight" holds numbers, but row 57 (1-based, counted within this file, header line not counted) holds "4.2kg", which is not a number; ` +
		`as text the column would be categorical, each number a level. Correct the value or leave the field empty (a NULL, see --nulls), ` +
		`leave the column out with --exclude, or name it in --categorical to take its values as levels`
	for _, cfg := range []Config{{Targets: []string{"y"}}, {Targets: []string{"y"}, Features: []string{"weight", "x"}}} {
		cfg.Out = filepath.Join(dir, "s")
		if _, err := Run(t.Context(), []string{in}, cfg); err == nil || err.Error() != want {
			t.Fatalf("features %q: err = %v\nwant %s", cfg.Features, err, want)
		}
		if _, err := os.Stat(cfg.Out); err == nil {
			t.Fatal("a store was written")
		}
	}
	res, _ := mustIngest(t, []string{in}, Config{Targets: []string{"y"}, Categorical: []string{"weight"}})
	if !slices.Contains(res.Features, "weight=4.2kg") && !slices.Contains(res.Features, "weight=(other)") {
		t.Fatalf("named categorical: features %q", res.Features)
	}
	if res, _ := mustIngest(t, []string{in}, Config{Targets: []string{"y"}, Exclude: []string{"weight"}}); !slices.Equal(res.Features, []string{"x"}) {
		t.Fatalf("excluded: features %q", res.Features)
	}
	dry, err := DryRun(t.Context(), []string{in}, Config{Targets: []string{"y"}, Nulls: "error"})
	if err != nil {
		t.Fatal(err)
	}
	if note := dry.Columns[0].Note; !strings.HasPrefix(note, `numbers, but row 57 (1-based, counted within this file, header line not counted) holds "4.2kg": ingest refuses the column`) {
		t.Fatalf("dry run note %q", note)
	}
	// Two sizes in ten are words: a categorical column, no error.
	mixed := filepath.Join(dir, "m.csv")
	writeText(t, mixed, "size,x,y", 100, func(i int) string {
		s := fmt.Sprint(36 + i%5)
		if i%10 < 2 {
			s = []string{"S", "XL"}[i%10]
		}
		return fmt.Sprintf("%s,%d,%d", s, i%9, i%4)
	})
	if res, _ := mustIngest(t, []string{mixed}, Config{Targets: []string{"y"}}); !slices.Contains(res.Features, "size=XL") {
		t.Fatalf("mixed: features %q", res.Features)
	}
}

// TestIdentifierLevels: a string column whose values are all distinct
// is a row identifier: left out of the default features with the reason
// and a note in the column report; named in Features it is kept, and a
// small file's distinct levels are not taken for one.
func TestIdentifierLevels(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv")
	row := func(i int) string {
		return fmt.Sprintf("t%05d-%x,%s,%d,%d", i, i*7919, string(rune('a'+i%5)), i%9, i%4)
	}
	writeText(t, in, "token,shop,x,y", 150, row)
	res, _ := mustIngest(t, []string{in}, Config{Targets: []string{"y"}})
	if got := report(res.Columns); got != "token:skipped(identifier) shop:feature x:feature y:target" {
		t.Fatalf("report %s", got)
	}
	want := "looks like a row identifier: 150 distinct levels (exact) in 150 values; name it in --features or --categorical to keep it as its target encoding (one feature)"
	if note := res.Columns[0].Note; note != want {
		t.Fatalf("note %q\nwant %q", note, want)
	}
	if slices.ContainsFunc(res.Features, func(f string) bool { return strings.HasPrefix(f, "token=") }) {
		t.Fatalf("features %q", res.Features)
	}
	for _, cfg := range []Config{{Features: []string{"token", "x"}}, {Categorical: []string{"token"}}} {
		cfg.Targets = []string{"y"}
		if res, _ := mustIngest(t, []string{in}, cfg); !slices.Contains(res.Features, "token:target_mean") {
			t.Fatalf("named: features %q", res.Features)
		}
		cfg.AboveMaxLevels = "onehot"
		if res, _ := mustIngest(t, []string{in}, cfg); !slices.Contains(res.Features, "token=(other)") {
			t.Fatalf("named, onehot: features %q", res.Features)
		}
	}
	onehot, _ := mustIngest(t, []string{in}, Config{Targets: []string{"y"}, AboveMaxLevels: "onehot"})
	if want := "looks like a row identifier: 150 distinct levels (exact) in 150 values; name it in --features or --categorical to keep it as one-hot features of its 64 most frequent levels"; onehot.Columns[0].Note != want {
		t.Fatalf("onehot: note %q\nwant %q", onehot.Columns[0].Note, want)
	}
	small := filepath.Join(dir, "s.csv")
	writeText(t, small, "token,shop,x,y", 30, row)
	if res, _ := mustIngest(t, []string{small}, Config{Targets: []string{"y"}}); !slices.Contains(res.Features, "token=t00000-0") {
		t.Fatalf("30 rows: features %q", res.Features)
	}
	// Only identifiers and a constant: nothing left, with the reasons.
	only := filepath.Join(dir, "o.csv")
	writeText(t, only, "token,c,y", 150, func(i int) string { return fmt.Sprintf("t%d,5,%d", i, i%3) })
	_, err := Run(t.Context(), []string{only}, Config{Out: filepath.Join(dir, "o"), Targets: []string{"y"}})
	if want := `no feature columns left: "token" (identifier), "c" (constant); name columns in --features to keep them`; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}
