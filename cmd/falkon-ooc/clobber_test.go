package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot records the bytes of files, to check after a refused command
// that none of them changed.
type snapshot map[string][]byte

func takeSnapshot(t *testing.T, paths ...string) snapshot {
	t.Helper()
	s := snapshot{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s[p] = b
	}
	return s
}

func (s snapshot) check(t *testing.T, what string) {
	t.Helper()
	for p, want := range s {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: victim %s: %v", what, p, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: victim %s changed: now starts %q", what, p, got[:min(len(got), 16)])
		}
	}
}

// TestInputClobber (issue 21 item 2): fit, tune and predict refuse, before
// any work and with exit 2, an --out or a side file of fit (MODEL.json)
// that is one of their inputs, however it is named: the file itself, a
// Parquet file, a file found by a directory walk or a glob, a hard link.
// Each victim's bytes are unchanged and nothing was ingested.
func TestInputClobber(t *testing.T) {
	_, model, in, _ := predictFixture(t, 300)
	dir := t.TempDir()
	cp := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d := cp("d.csv")
	pq := filepath.Join(dir, "d.parquet")
	csvToParquet(t, in, pq, []string{"a", "b", "c", "y"}, []string{"id", "name"})
	part := cp("dd/part.csv")
	t1, t2 := cp("t1.csv"), cp("t2.csv")
	dj := cp("j.json") // CSV text under another name, given explicitly
	hl := filepath.Join(dir, "hard.csv")
	if err := os.Link(d, hl); err != nil {
		t.Fatal(err)
	}
	png := cp("t.png") // CSV text under a .png name, given explicitly
	victims := takeSnapshot(t, d, pq, part, t1, t2, dj, png)
	fitArgs := []string{"--target", "y", "--exclude", "id", "--centers", "30", "--iters", "2"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"fit csv", append([]string{"fit", "--out", d, d}, fitArgs...), "--out " + d + " is the input " + d + ": writing it would destroy the input; choose another --out"},
		{"fit parquet", append([]string{"fit", "--out", pq, pq}, fitArgs...), "--out " + pq + " is the input " + pq},
		{"tune csv", append([]string{"tune", "--out", d, d}, fitArgs...), "--out " + d + " is the input " + d},
		{"fit directory", append([]string{"fit", "--out", part, filepath.Join(dir, "dd")}, fitArgs...), "--out " + part + " is the input " + part},
		{"fit glob", append([]string{"fit", "--out", t1, filepath.Join(dir, "t*.csv")}, fitArgs...), "--out " + t1 + " is the input " + t1},
		{"tune glob", append([]string{"tune", "--out", t2, filepath.Join(dir, "t*.csv")}, fitArgs...), "--out " + t2 + " is the input " + t2},
		{"fit hard link", append([]string{"fit", "--out", hl, d}, fitArgs...), "--out " + hl + " is the input " + d},
		{"fit summary", append([]string{"fit", "--out", filepath.Join(dir, "j"), dj}, fitArgs...),
			"--out " + filepath.Join(dir, "j") + ": its summary " + dj + " is the input " + dj + ": writing it would destroy the input; choose another --out"},
		{"fit --val", append([]string{"fit", "--out", t1, d, "--val", filepath.Join(dir, "t*.csv")}, fitArgs...), "--out " + t1 + " is the input " + t1},
		{"tune --plot", append([]string{"tune", "--out", filepath.Join(dir, "x.falkon"), "--plot", png, png}, fitArgs...), "--plot " + png + " is the input " + png},
		{"predict glob", []string{"predict", "--model", model, "--out", t1, filepath.Join(dir, "t*.csv")}, "--out " + t1 + " is the input " + t1},
		{"predict directory", []string{"predict", "--model", model, "--out", part, filepath.Join(dir, "dd")}, "--out " + part + " is the input " + part},
	} {
		code, _, e := runCLI(c.args...)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%s: %q: exit %d, stderr\n%s\nwant exit 2 and %q", c.name, c.args, code, e, c.want)
		}
		if strings.Contains(e, "ingest") || strings.Contains(e, "iteration") {
			t.Errorf("%s: work started before the check:\n%s", c.name, e)
		}
		victims.check(t, c.name)
	}
	for _, p := range []string{d, pq, t1, filepath.Join(dir, "j")} {
		if _, err := os.Stat(p + ".store"); err == nil {
			t.Errorf("%s.store was ingested before the check", p)
		}
	}
}

// TestSideFilesNotOwn (issue 21 item 4): fit replaces MODEL, MODEL.json,
// MODEL.ckpt and MODEL.store(.key) only when they are its own; a store
// made by ingest, a user's model.json, checkpoint or --out are refused,
// before any work, naming the file and the flag that allows it, and keep
// their bytes. A second fit over its own files, and --force, go on.
func TestSideFilesNotOwn(t *testing.T) {
	_, _, in, _ := predictFixture(t, 300)
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	fitArgs := []string{"--target", "y", "--exclude", "id", "--centers", "30", "--iters", "2", "--quiet"}
	fit := func(extra ...string) (int, string) {
		code, _, e := runCLI(append(append([]string{"fit", "--out", model, in}, fitArgs...), extra...)...)
		return code, e
	}
	// A store made by ingest from other data where fit keeps its own.
	other := filepath.Join(dir, "other.csv")
	writeScaledCSV(t, other, 1, 1, 1)
	if code, _, e := runCLI("ingest", "--quiet", "--out", model+".store", "--target", "y", other); code != 0 {
		t.Fatal(e)
	}
	meta := filepath.Join(model+".store", "meta.json")
	snap := takeSnapshot(t, meta)
	code, e := fit()
	if want := "--out " + model + ": its store of the ingested inputs " + model + ".store exists and is not fit's (no " + model + ".store.key beside it): not replacing it; pass --cache DIR to keep fit's store elsewhere, --force to replace it, or choose another --out"; code != 1 || !strings.Contains(e, want) {
		t.Fatalf("fit over ingest's store: exit %d\n%s\nwant %q", code, e, want)
	}
	snap.check(t, "fit over ingest's store")
	if code, e := fit("--cache", filepath.Join(dir, "cache")); code != 0 {
		t.Fatalf("--cache: exit %d\n%s", code, e)
	}
	snap.check(t, "fit --cache")
	if err := os.RemoveAll(model + ".store"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, text, want string
	}{
		{model + ".json", `{"mine": true}`, "--out " + model + ": its summary " + model + ".json exists and is not the summary of a falkon-ooc model: not replacing it; pass --force to replace it, or choose another --out"},
		{model + ".ckpt", "my checkpoint", "its checkpoint " + model + ".ckpt exists and is not a falkon-ooc checkpoint"},
		{model, "my notes", "--out " + model + " exists and is not a falkon-ooc model: not replacing it; pass --force to replace it"},
		{model + ".store.key", "a key of mine\n", "its store's key " + model + ".store.key exists and is not a key written by fit"},
	} {
		if err := os.WriteFile(c.file, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		snap := takeSnapshot(t, c.file)
		code, e := fit()
		if code != 1 || !strings.Contains(e, c.want) {
			t.Errorf("%s: exit %d\n%s\nwant %q", c.file, code, e, c.want)
		}
		if strings.Contains(e, "ingest") {
			t.Errorf("%s: work started before the check:\n%s", c.file, e)
		}
		snap.check(t, filepath.Base(c.file))
		if _, err := os.Stat(model + ".store"); err == nil {
			t.Errorf("%s: the inputs were ingested before the check", c.file)
		}
		os.Remove(c.file)
	}
	// fit's own files are replaced without a word; --force replaces a
	// user's.
	if code, e := fit(); code != 0 {
		t.Fatalf("first fit: %s", e)
	}
	if code, e := fit("--iters", "3"); code != 0 {
		t.Fatalf("second fit over its own files: %s", e)
	}
	os.WriteFile(model+".json", []byte("mine"), 0o644)
	if code, e := fit("--force"); code != 0 {
		t.Fatalf("--force: %s", e)
	}
	if b, _ := os.ReadFile(model + ".json"); !strings.Contains(string(b), `"format": "falkon-ooc model"`) {
		t.Fatal("--force did not write the summary")
	}
}
