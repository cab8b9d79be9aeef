package main

import (
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
