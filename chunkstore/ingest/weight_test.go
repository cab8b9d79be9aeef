package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// Config.Weight stores a weight column: out of the features and the
// targets, read back by ReadWeights, reported with the role "weight";
// even with the features chosen by default (the weight is not one).
func TestIngestWeight(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(p, []byte("x,w,y\n1,0.5,3\n2,0,4\n3,2,5\n4,1,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "s")
	res, st := mustIngest(t, []string{p}, Config{Out: out, Targets: []string{"y"}, Weight: "w"})
	if res.Weight != "w" || !slices.Equal(res.Features, []string{"x"}) || !slices.Equal(res.Targets, []string{"y"}) {
		t.Fatalf("result: features %v targets %v weight %q", res.Features, res.Targets, res.Weight)
	}
	if !slices.Equal(st.names, []string{"x", "y"}) || st.m.Weight == nil || st.m.FormatVersion != 2 {
		t.Fatalf("store columns %v, weight %+v, version %d", st.names, st.m.Weight, st.m.FormatVersion)
	}
	roles := map[string]string{}
	for _, c := range res.Columns {
		roles[c.Name] = c.Role
	}
	if roles["w"] != chunkstore.RoleWeight || roles["x"] != chunkstore.RoleFeature {
		t.Fatalf("roles %v", roles)
	}
	r, err := chunkstore.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := make([]float64, 4)
	if err := r.ReadWeights(context.Background(), 0, w); err != nil || !slices.Equal(w, []float64{0.5, 0, 2, 1}) {
		t.Fatalf("weights %v, %v", w, err)
	}
}

// A negative weight is an error naming the file, row and column; a
// string column cannot be the weight.
func TestIngestWeightErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(p, []byte("x,w,y,s\n1,0.5,3,a\n2,-1,4,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Targets: []string{"y"}, Weight: "w", Features: []string{"x"}},
			p + `: row 2 (1-based, counted within this file, header line not counted): column "w" is -1, a negative weight (weights must be ≥ 0)`},
		{Config{Targets: []string{"y"}, Weight: "s", Features: []string{"x"}},
			p + `: column "s" (named in weight) has type string, which cannot be stored; numeric, bool, date and timestamp columns can`},
		{Config{Targets: []string{"y"}, Weight: "y", Features: []string{"x"}},
			`column "y" is named in both targets and weight`},
	} {
		tc.cfg.Out = filepath.Join(t.TempDir(), "s")
		_, err := Run(context.Background(), []string{p}, tc.cfg)
		if err == nil || err.Error() != tc.want {
			t.Errorf("weight %q: err = %v\nwant %s", tc.cfg.Weight, err, tc.want)
		}
		if _, serr := os.Stat(tc.cfg.Out); serr == nil {
			t.Errorf("weight %q: a store was left at %s", tc.cfg.Weight, tc.cfg.Out)
		}
	}
}

// A Hive key of the path can be the weight (h/w=5/, h/w=6/): each file's
// rows weigh its key's value, whatever the file's own columns hold (a
// negative target is no negative weight); a negative key is refused,
// naming the file and the key.
func TestIngestWeightHiveKey(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct{ dir, text string }{
		{"w=5", "x,y\n1,2\n2,3\n3,4\n"},
		{"w=6", "x,y\n4,5\n5,6\n6,-7\n"},
	} {
		if err := os.MkdirAll(filepath.Join(dir, "h", f.dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "h", f.dir, "a.csv"), []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "s")
	res, _ := mustIngest(t, []string{filepath.Join(dir, "h")}, Config{Out: out, Targets: []string{"y"}, Weight: "w"})
	if res.Weight != "w" || !slices.Equal(res.Features, []string{"x"}) {
		t.Fatalf("result: features %v weight %q", res.Features, res.Weight)
	}
	r, err := chunkstore.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var w []float64
	for i := range r.NumChunks() {
		c := make([]float64, r.ChunkRows(i))
		if err := r.ReadWeights(context.Background(), i, c); err != nil {
			t.Fatal(err)
		}
		w = append(w, c...)
	}
	if !slices.Equal(w, []float64{5, 5, 5, 6, 6, 6}) {
		t.Fatalf("weights %v", w)
	}

	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(filepath.Join(bad, "w=-5"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "w=-5", "a.csv"), []byte("x,y\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), []string{bad}, Config{Out: filepath.Join(dir, "s2"), Targets: []string{"y"}, Weight: "w"})
	want := filepath.Join(bad, "w=-5", "a.csv") + `: the weight column "w" is -5, from the path's partition key w=-5: weights must be finite and ≥ 0`
	if err == nil || err.Error() != want {
		t.Fatalf("a negative key: %v\nwant %s", err, want)
	}
}
