package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFitOnFilesReusesStore: fit on CSV/Parquet inputs ingests them into
// a store beside the model; a second fit on the unchanged files reuses it
// (no ingest), a touched file is ingested again, and --cache keeps the
// store elsewhere.
func TestFitOnFilesReusesStore(t *testing.T) {
	_, _, in, _ := predictFixture(t, 600)
	dir := t.TempDir()
	pq := filepath.Join(dir, "train.parquet")
	csvToParquet(t, in, pq, []string{"a", "b", "c", "y"}, []string{"id", "name"})
	model := filepath.Join(dir, "m.falkon")
	fit := func(extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"fit", pq, "--out", model, "--target", "y", "--exclude", "id", "--centers", "30", "--iters", "2"}, extra...)
		code, out, e := runCLI(args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, e)
		}
		return out, e
	}
	_, e := fit()
	if !strings.Contains(e, "ingest: 1 input files into "+model+".store") || !strings.Contains(e, "ingest: 600 rows") {
		t.Fatalf("first fit did not ingest; stderr:\n%s", e)
	}
	mtime := func() time.Time {
		st, err := os.Stat(filepath.Join(model+".store", "meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		return st.ModTime()
	}
	before := mtime()
	_, e = fit()
	if !strings.Contains(e, "ingest: reusing "+model+".store: the inputs are unchanged (1 file)") || strings.Contains(e, "into") {
		t.Fatalf("second fit on unchanged files did not reuse the store; stderr:\n%s", e)
	}
	if !mtime().Equal(before) {
		t.Errorf("the store was rewritten")
	}
	// Another target selection is another store.
	if _, e = fit("--features", "a,b"); !strings.Contains(e, "ingest: 1 input files into") {
		t.Errorf("--features changed but the store was reused:\n%s", e)
	}
	fit()
	// Touch the file: ingested again.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(pq, later, later); err != nil {
		t.Fatal(err)
	}
	if _, e = fit(); !strings.Contains(e, "ingest: 1 input files into") {
		t.Errorf("touched input not ingested again; stderr:\n%s", e)
	}
	if _, e = fit(); !strings.Contains(e, "reusing") {
		t.Errorf("not reused after the re-ingest:\n%s", e)
	}
	cache := filepath.Join(dir, "cache")
	_, e = fit("--cache", cache)
	ents, _ := os.ReadDir(cache)
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".store") || !strings.Contains(e, "into "+cache) {
		t.Errorf("--cache: %v\n%s", ents, e)
	}
	if _, e = fit("--cache", cache); !strings.Contains(e, "reusing "+cache) {
		t.Errorf("--cache not reused:\n%s", e)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fit", pq, "--out", model}, 2, "falkon-ooc fit: --target COL is required with Parquet or CSV inputs (a STORE names its targets)"},
		{[]string{"fit", model + ".store", "--out", model, "--target", "y"}, 2, "falkon-ooc fit: --target applies to Parquet/CSV inputs; " + model + ".store is a store"},
		{[]string{"fit", filepath.Join(dir, "nope.parquet"), "--out", model}, 1, "falkon-ooc fit: stat " + filepath.Join(dir, "nope.parquet") + ": no such file or directory"},
	} {
		code, _, e := runCLI(c.args...)
		if code != c.code || !strings.HasPrefix(e, c.want) {
			t.Errorf("%q: exit %d, stderr\n%s\nwant exit %d and\n%s", c.args, code, e, c.code, c.want)
		}
	}
}
