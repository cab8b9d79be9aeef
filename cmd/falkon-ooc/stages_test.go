package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneLinePerStage: each stage's line appears once on stderr, however
// many progress reports the stage sends (the factorisations report their
// fraction done many times; the demo printed its line 63 times).
func TestOneLinePerStage(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 3000, 9, "y")
	for _, tc := range []struct {
		args  []string
		lines []string
	}{
		{[]string{"fit", "--out", filepath.Join(dir, "f.falkon"), "--centers", "1200", "--iters", "2", train},
			[]string{"fit: computing K_MM", "fit: factorising the preconditioner"}},
		{[]string{"tune", "--out", filepath.Join(dir, "t.falkon"), "--centers", "600", "--iters", "2", "--sigma", "1,2", "--lambda", "1e-6,1e-4", train},
			[]string{"tune: factorising the preconditioners"}},
		{[]string{"fit", "--tune", "--out", filepath.Join(dir, "ft.falkon"), "--centers", "800", "--tune-centers", "300", "--iters", "3",
			"--sigma", "1,2", "--lambda", "1e-6,1e-4", train},
			[]string{"fit --tune: search: factorising the preconditioners", "fit: computing K_MM", "fit: factorising the preconditioner ("}},
		{[]string{"demo", "--centers", "1200", "--iters", "2"}, []string{"demo: factorising the preconditioner"}},
	} {
		code, _, errOut := runCLI(tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		for _, line := range tc.lines {
			if n := strings.Count(errOut, line); n != 1 {
				t.Errorf("%s: %q printed %d times, want once:\n%s", tc.args[0], line, n, errOut)
			}
		}
	}
}

// TestCentresNote: when the data repeats rows, fit says at once that
// duplicates were replaced, or that the data holds fewer distinct rows
// than M, with both numbers.
func TestCentresNote(t *testing.T) {
	dir := t.TempDir()
	// 20 distinct rows, each 30 times.
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range 600 {
		k := i % 20
		fmt.Fprintf(&b, "%d,%d,%d\n", k, k*k%7, k%3)
	}
	csv := filepath.Join(dir, "rep.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI("fit", "--out", filepath.Join(dir, "m.falkon"), "--target", "y", "--task", "regression",
		"--centers", "40", "--iters", "2", "--precond", "pivoted", csv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "fit: the data repeats rows: only 20 distinct rows could be drawn as centres ("
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "so M = 20, not 40; memory needed ≈ ") {
		t.Errorf("stderr lacks %q … M = 20, not 40:\n%s", want, errOut)
	}
	code, _, errOut = runCLI("fit", "--out", filepath.Join(dir, "m2.falkon"), "--target", "y", "--task", "regression",
		"--centers", "15", "--iters", "2", "--precond", "pivoted", csv)
	if code != 0 || !strings.Contains(errOut, "repeated another row and were replaced by other rows: 15 distinct centres") {
		t.Errorf("exit %d, stderr lacks the replacement:\n%s", code, errOut)
	}
}

// TestGridEdge: tune says when its pick is on the grid's edge, and
// --extend widens the grid.
func TestGridEdge(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 11, "y")
	code, _, errOut := runCLI("tune", "--out", filepath.Join(dir, "t.falkon"), "--centers", "100", "--iters", "5",
		"--sigma", "1,2", "--lambda", "1,10", train)
	want := "tune: the pick (σ = "
	if code != 0 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "the smallest λ of the grid: the best may lie beyond it; widen --sigma or --lambda, or add --extend 2") {
		t.Errorf("exit %d; stderr lacks the edge note:\n%s", code, errOut)
	}
	code, out, errOut := runCLI("tune", "--out", filepath.Join(dir, "t.falkon"), "--centers", "100", "--iters", "5",
		"--sigma", "1,2", "--lambda", "1,10", "--extend", "1", "--json", train)
	if code != 0 || !strings.Contains(errOut, "tune: the grid was widened 1 time(s) (--extend)") || !strings.Contains(out, `"lambda": 0.01`) {
		t.Errorf("--extend 1: exit %d:\n%s", code, errOut)
	}
}
