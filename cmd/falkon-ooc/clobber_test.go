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
	victims := takeSnapshot(t, d, pq, part, t1, t2, dj)
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
