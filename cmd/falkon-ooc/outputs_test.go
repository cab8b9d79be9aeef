package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIngestSizeLine: the summary says how much smaller the store is
// than its values as float64 only when it is; it said "1.00× smaller"
// of values that do not compress.
func TestIngestSizeLine(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var few, noise strings.Builder
	few.WriteString("x1,x2,y\n")
	noise.WriteString("x1,x2,y\n")
	for i := range 5000 {
		fmt.Fprintf(&few, "%d,0.5,%d\n", i%3, i%2)
		fmt.Fprintf(&noise, "%v,%v,%v\n", rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
	}
	for _, tc := range []struct {
		name, csv, codec string
		want             *regexp.Regexp
	}{
		{"few values, zstd", few.String(), "zstd", regexp.MustCompile(`(?m)^bytes .* written, \d+\.\d× smaller than the values as float64$`)},
		{"noise, no codec", noise.String(), "none", regexp.MustCompile(`(?m)^bytes +[0-9.]+ [kMG]?B read, [0-9.]+ [kMG]?B written$`)},
	} {
		in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "")+".csv")
		if err := os.WriteFile(in, []byte(tc.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI("ingest", "--quiet", "--out", in+".store", "--target", "y", "--codec", tc.codec, in)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		if !tc.want.MatchString(out) {
			t.Errorf("%s: the bytes line does not match %s:\n%s", tc.name, tc.want, out)
		}
	}
}

// TestProgramName: under another name (os.Args[0]'s base), the messages
// and the command an interrupted fit prints name it, not falkon-ooc.
func TestProgramName(t *testing.T) {
	for arg0, want := range map[string]string{
		"/usr/local/bin/fo": "fo", `fo.exe`: "fo", "": "falkon-ooc", "falkon-ooc": "falkon-ooc",
	} {
		if got := programName(arg0); got != want {
			t.Errorf("programName(%q) = %q, want %q", arg0, got, want)
		}
	}
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 3, "y")
	model := filepath.Join(dir, "m.falkon")
	defer func(old string) { progName = old }(progName)
	progName = "fo"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelWriter{marker: "iteration 1/9: done", cancel: cancel}
	if code := run(ctx, []string{"fit", "--out", model, "--centers", "100", "--iters", "9", train}, &bytes.Buffer{}, stderr); code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, stderr.buf.String())
	}
	msg := stderr.buf.String()
	for _, want := range []string{"Continue with:\n  fo fit --resume --out " + model + " " + train + "\n", "\nfo fit: interrupted\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the interrupted fit's message lacks %q:\n%s", want, msg)
		}
	}
	if code, _, errOut := runCLI("fit", "--lambda", "-1"); code != exitUsage || !strings.HasPrefix(errOut, "fo fit: ") || !strings.Contains(errOut, "run 'fo fit --help' for usage") {
		t.Errorf("usage error: exit %d, %q; want 2, naming fo", code, errOut)
	}
}

// TestInspectClasses: inspect on a store with a classification target
// gives the class names and their rows (and weights), not the mean of
// the class codes; a regression target keeps its statistics.
func TestInspectClasses(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,w,kind\n")
	names := []string{"cat", "dog", "emu"}
	for i := range 40 {
		k := 0 // 20 cats (weight 1), 15 dogs (weight 2), 5 emus (weight 1)
		if i >= 20 {
			k = 1
		}
		if i >= 35 {
			k = 2
		}
		fmt.Fprintf(&b, "%d,%d,%s\n", i, 1+k%2, names[k])
	}
	in := filepath.Join(dir, "pets.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "pets.store")
	if code, _, errOut := runCLI("ingest", "--quiet", "--out", store, "--target", "kind", "--weight", "w", "--features", "x", in); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI("inspect", store)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	want := `target "kind": 3 classes (fit --task auto: multiclass)
class  rows   share  weight   share
cat      20  50.0 %      20  36.4 %
dog      15  37.5 %      30  54.5 %
emu       5  12.5 %       5   9.1 %
`
	if !strings.Contains(out, want) {
		t.Errorf("inspect does not list the classes as\n%s\ngot:\n%s", want, out)
	}
	if !regexp.MustCompile(`(?m)^kind +target +string +- +- +- +- +yes +3$`).MatchString(out) {
		t.Errorf("the target's row shows statistics of the class codes:\n%s", out)
	}
	code, out, _ = runCLI("inspect", "--json", store)
	if code != 0 || !strings.Contains(out, `"classes": {
    "target": "kind",
    "task": "multiclass",
    "classes": [
      {
        "name": "cat",
        "value": 0,
        "rows": 20,
        "weight": 20
      },`) {
		t.Errorf("inspect --json: exit %d, no classes with rows and weights:\n%s", code, out)
	}
	// A regression target: statistics, no classes.
	reg := makeStore(t, dir, 300, 1, "y")
	if _, out, _ := runCLI("inspect", reg); strings.Contains(out, "classes") || !regexp.MustCompile(`(?m)^y +target +float64 +[0-9.]+ `).MatchString(out) {
		t.Errorf("inspect of a regression store:\n%s", out)
	}
}

// TestLogisticPasses: fit's start line gives the logistic loss's passes
// over the data, and the fit makes that many (each pass prints its
// progress line: "rhs" for a gradient pass, "iteration" for a CG one).
func TestLogisticPasses(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 1500, 2, "label")
	code, _, errOut := runCLI("fit", "--out", filepath.Join(dir, "m.falkon"), "--loss", "logistic", "--centers", "100", "--iters", "4", "--newton-steps", "3", "--val-fraction", "0", train)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "fit: logistic loss: up to 18 passes over the data (3 Newton steps, each a gradient pass, 4 CG iterations and, when its line search shortens it or it is the last, one more pass), against 5 for the squared loss\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("no start line %q:\n%s", want, errOut)
	}
	// 3 × (1 + 4) + 1 when every step is taken whole, up to 18.
	passes := len(regexp.MustCompile(`(?m)^(rhs: |iteration \d+/\d+: done)`).FindAllString(errOut, -1))
	if passes < 16 || passes > 18 {
		t.Errorf("the fit made %d passes, the start line says up to 18:\n%s", passes, errOut)
	}
}
