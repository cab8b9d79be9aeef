package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// cancelWriter cancels a context once what was written to it contains
// a marker.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

// TestResumeJustWorks: a fit with non-default flags, interrupted (as
// Ctrl-C does) after its second iteration, prints the command that
// continues it; that command, run as printed, continues it and gives the
// model of the uninterrupted fit. A flag that contradicts the checkpoint
// is refused before any work, naming both values.
func TestResumeJustWorks(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 3000, 5, "y")
	flags := []string{"--centers", "250", "--lambda", "1e-5", "--sigma", "1.3", "--iters", "7", "--seed", "4", "--val-fraction", "0.1"}
	full := filepath.Join(dir, "full.falkon")
	if code, _, errOut := runCLI(append([]string{"fit", "--out", full, "--quiet", train}, flags...)...); code != 0 {
		t.Fatalf("uninterrupted fit: exit %d: %s", code, errOut)
	}
	model := filepath.Join(dir, "m.falkon")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelWriter{marker: "iteration 2/7: done", cancel: cancel}
	var stdout bytes.Buffer
	if code := run(ctx, append([]string{"fit", "--out", model, train}, flags...), &stdout, stderr); code != exitInterrupted {
		t.Fatalf("interrupted fit: exit %d, want %d: %s", code, exitInterrupted, stderr.buf.String())
	}
	msg := stderr.buf.String()
	_, after, ok := strings.Cut(msg, "Continue with:\n  ")
	if !ok {
		t.Fatalf("the interrupted fit prints no command to continue it:\n%s", msg)
	}
	line, _, _ := strings.Cut(after, "\n")
	want := "falkon-ooc fit --resume --out " + model + " " + train
	if line != want {
		t.Fatalf("printed %q, want %q", line, want)
	}
	if !strings.Contains(msg, model+".ckpt holds iteration 2") {
		t.Errorf("the message does not name the checkpoint and its iteration:\n%s", msg)
	}
	args := strings.Fields(line)[1:]
	if code, _, errOut := runCLI(args...); code != 0 {
		t.Fatalf("%s: exit %d: %s", line, code, errOut)
	}
	a, err := ooc.Load(full)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if b.Training().Iterations != 7 || !slices.Equal(a.Alpha(), b.Alpha()) || !slices.Equal(a.Centers(), b.Centers()) {
		t.Errorf("the resumed model (%d iterations) differs from the uninterrupted one", b.Training().Iterations)
	}
	// Contradicting flags: refused, each named with both values.
	code, _, errOut := runCLI("fit", "--resume", "--out", model, "--lambda", "1e-3", "--centers", "300", train)
	wantMsg := "--resume: " + model + ".ckpt was written by a fit with other settings: --centers 300 (the checkpoint's: 250), --lambda 1e-3 (the checkpoint's: 1e-5)"
	if code != 2 || !strings.Contains(errOut, wantMsg) {
		t.Errorf("contradicting flags: exit %d, %q; want 2 and %q", code, errOut, wantMsg)
	}
	// --iters extends.
	if code, _, errOut := runCLI("fit", "--resume", "--out", model, "--iters", "9", "--quiet", train); code != 0 {
		t.Fatalf("extend: exit %d: %s", code, errOut)
	}
	if c, _ := ooc.Load(model); c.Training().Iterations != 9 {
		t.Errorf("extended to %d iterations, want 9", c.Training().Iterations)
	}
}

// TestResumeNystromBasis: with --precond nystrom fit keeps the basis in
// MODEL.ckpt.basis, a --resume that extends the fit reads it instead of
// building it (and ends with the model of one uninterrupted fit of as
// many iterations), a damaged basis is built again, and a file of the
// user's at that name is never replaced.
func TestResumeNystromBasis(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 5, "y")
	flags := []string{"--centers", "300", "--lambda", "1e-4", "--seed", "4", "--precond", "nystrom", "--precond-rank", "60", "--val-fraction", "0"}
	full := filepath.Join(dir, "full.falkon")
	if code, _, errOut := runCLI(append([]string{"fit", "--out", full, "--quiet", "--iters", "6", train}, flags...)...); code != 0 {
		t.Fatalf("uninterrupted fit: exit %d: %s", code, errOut)
	}
	model := filepath.Join(dir, "m.falkon")
	code, _, errOut := runCLI(append([]string{"fit", "--out", model, "--iters", "3", train}, flags...)...)
	if code != 0 || !strings.Contains(errOut, "fit: Nyström basis (rank 60, missing ") || !strings.Contains(errOut, "): written; kept in "+model+".ckpt.basis for --resume") {
		t.Fatalf("first fit: exit %d:\n%s", code, errOut)
	}
	code, _, errOut = runCLI("fit", "--resume", "--out", model, "--iters", "6", train)
	if code != 0 || !strings.Contains(errOut, "): read; kept in") {
		t.Fatalf("--resume: exit %d, no \"read\":\n%s", code, errOut)
	}
	a, err := ooc.Load(full)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if b.Training().Iterations != 6 || !slices.Equal(a.Alpha(), b.Alpha()) {
		t.Fatalf("the resumed fit (%d iterations) differs from the uninterrupted one", b.Training().Iterations)
	}
	basis := model + ".ckpt.basis"
	data, err := os.ReadFile(basis)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(basis, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI("fit", "--resume", "--out", model, "--iters", "7", train)
	if code != 0 || !strings.Contains(errOut, "not used: checksum mismatch: the file is damaged; written") {
		t.Fatalf("damaged basis: exit %d:\n%s", code, errOut)
	}
	other := filepath.Join(dir, "o.falkon")
	if err := os.WriteFile(other+".ckpt.basis", []byte("my notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(append([]string{"fit", "--out", other, "--iters", "2", train}, flags...)...)
	if want := "--out " + other + ": its Nyström basis " + other + ".ckpt.basis exists and is not a falkon-ooc Nyström basis: not replacing it; pass --force to replace it, or choose another --out"; code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("a user's file at MODEL.ckpt.basis: exit %d:\n%s\nwant %q", code, errOut, want)
	}
	if got, _ := os.ReadFile(other + ".ckpt.basis"); string(got) != "my notes" {
		t.Fatal("the user's file was changed")
	}
}
