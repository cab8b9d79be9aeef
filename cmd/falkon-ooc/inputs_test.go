//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBounded runs the command with a deadline: a hang fails the test
// instead of stalling it.
func runBounded(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := runCLI(args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("falkon-ooc %s: still running after 20 s", strings.Join(args, " "))
		return 0, "", ""
	}
}

// TestFIFOInInputFolder: a named pipe called *.csv inside an input folder
// (or matched by a glob) is refused, naming it, by ingest, predict, fit
// and inspect, where reading it used to wait forever.
func TestFIFOInInputFolder(t *testing.T) {
	_, model, in, _ := predictFixture(t, 50)
	dir := t.TempDir()
	folder := filepath.Join(dir, "rows")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(in)
	if err := os.WriteFile(filepath.Join(folder, "a.csv"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(folder, "b.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	want := fifo + " is a named pipe (FIFO), not a regular file: reading it could wait forever; move it out of the input folder, or name the files to read"
	for _, args := range [][]string{
		{"ingest", "--out", filepath.Join(dir, "s.store"), "--target", "y", folder},
		{"ingest", "--out", filepath.Join(dir, "s.store"), "--target", "y", filepath.Join(folder, "*.csv")},
		{"predict", "--model", model, folder},
		{"predict", "--model", model, "--out", filepath.Join(dir, "p.csv"), filepath.Join(folder, "*.csv")},
		{"fit", "--out", filepath.Join(dir, "m.falkon"), "--target", "y", "--centers", "10", "--iters", "1", folder},
		{"inspect", folder},
	} {
		code, _, e := runBounded(t, args...)
		if code != 1 || !strings.Contains(e, "falkon-ooc "+args[0]+": ") || !strings.Contains(e, want) {
			t.Errorf("falkon-ooc %s: exit %d, stderr:\n%s\nwant exit 1 and %q", strings.Join(args, " "), code, e, want)
		}
	}
}

// TestSkipsPredictionFiles: files of predictions written by falkon-ooc
// inside an input folder are left out by every reader (predict, ingest,
// fit, inspect), which says how many; the predictions of the folder are
// then those made before the files were there. A file named as an input
// is read.
func TestSkipsPredictionFiles(t *testing.T) {
	_, model, in, _ := predictFixture(t, 60)
	dir := t.TempDir()
	folder := filepath.Join(dir, "rows", "year=2021")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(in)
	if err := os.WriteFile(filepath.Join(folder, "data_0.csv"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "rows")
	before := filepath.Join(dir, "before.csv")
	if code, _, e := runCLI("predict", "--quiet", "--model", model, "--keep", "id", "--out", before, root); code != 0 {
		t.Fatal(e)
	}
	// Predictions written as Parquet, then put beside the inputs (as
	// falkon-ooc-beam predict --beside does).
	pred := filepath.Join(dir, "p.parquet")
	if code, _, e := runCLI("predict", "--quiet", "--model", model, "--keep", "id", "--out", pred, root); code != 0 {
		t.Fatal(e)
	}
	for _, name := range []string{"data_0.pred.parquet", "data_1.pred.parquet"} {
		pb, _ := os.ReadFile(pred)
		if err := os.WriteFile(filepath.Join(folder, name), pb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const note = "falkon-ooc: skipped 2 files of predictions written by falkon-ooc (name a file to read it)"
	after := filepath.Join(dir, "after.csv")
	code, _, e := runCLI("predict", "--quiet", "--model", model, "--keep", "id", "--out", after, root)
	if code != 0 || !strings.Contains(e, note) {
		t.Fatalf("predict: exit %d, stderr:\n%s\nwant %q", code, e, note)
	}
	b1, _ := os.ReadFile(before)
	b2, _ := os.ReadFile(after)
	if len(b1) == 0 || string(b1) != string(b2) {
		t.Fatalf("predictions differ once the folder holds prediction files:\n%s\n---\n%s", b1, b2)
	}
	for _, args := range [][]string{
		{"ingest", "--out", filepath.Join(dir, "s.store"), "--target", "y", root},
		{"inspect", root},
		{"fit", "--out", filepath.Join(dir, "m2.falkon"), "--target", "y", "--centers", "10", "--iters", "1", root},
	} {
		code, _, e := runCLI(args...)
		if code != 0 || !strings.Contains(e, note) {
			t.Errorf("falkon-ooc %s: exit %d, stderr:\n%s\nwant %q", strings.Join(args, " "), code, e, note)
		}
	}
	// Named, a prediction file is read (inspect shows its columns).
	code, out, e := runCLI("inspect", filepath.Join(folder, "data_0.pred.parquet"))
	if code != 0 || !strings.Contains(out, "y_pred") || strings.Contains(e, "skipped") {
		t.Fatalf("inspect of a named prediction file: exit %d\n%s%s", code, out, e)
	}
	// A folder of predictions alone is an error that says why.
	only := filepath.Join(dir, "only")
	os.Mkdir(only, 0o755)
	pb, _ := os.ReadFile(pred)
	os.WriteFile(filepath.Join(only, "x.pred.parquet"), pb, 0o644)
	code, _, e = runCLI("predict", "--model", model, only)
	if code != 1 || !strings.Contains(e, only+": skipped 1 file of predictions written by falkon-ooc (name a file to read it), and no other data files") {
		t.Fatalf("a folder of predictions only: exit %d\n%s", code, e)
	}
}
