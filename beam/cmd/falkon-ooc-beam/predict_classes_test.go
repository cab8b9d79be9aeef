package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictAsFalkonOOC: on a classifier fitted (by falkon-ooc) on data
// ingested with --nulls mean, falkon-ooc-beam predict without --nulls
// reads a NULL feature as falkon-ooc predict does, as the training mean,
// and says so; its text summary has falkon-ooc predict's lines for a
// classifier: the metrics, the decision, each class's precision, recall
// and F1 and the confusion matrix, line for line. --nulls error still
// refuses the NULL.
func TestPredictAsFalkonOOC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds falkon-ooc")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build falkon-ooc with")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "falkon-ooc")
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(goCmd, "-C", root, "build", "-o", bin, "./cmd/falkon-ooc").CombinedOutput(); err != nil {
		t.Fatalf("go build falkon-ooc: %v\n%s", err, b)
	}
	falkonOOC := func(args ...string) (stdout, stderr string) {
		t.Helper()
		var o, e strings.Builder
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("falkon-ooc %s: %v\n%s", strings.Join(args, " "), err, e.String())
		}
		return o.String(), e.String()
	}
	const note = "was fitted on data whose NULL features were filled with their means (--nulls mean): NULL, NaN and ±Inf features read as their training means"
	for _, classes := range [][]string{{"no", "yes"}, {"low", "mid", "high"}} {
		t.Run(fmt.Sprint(len(classes)), func(t *testing.T) {
			sub := t.TempDir()
			train, test := labelCSV(t, sub, "train", 1500, 1, classes), labelCSV(t, sub, "test", 400, 2, classes)
			st, model := filepath.Join(sub, "s.store"), filepath.Join(sub, "m.falkon")
			falkonOOC("ingest", train, "--target", "label", "--nulls", "mean", "--out", st, "--quiet")
			falkonOOC("fit", st, "--out", model, "--centers", "60", "--iters", "10", "--sigma", "0.5", "--lambda", "1e-5",
				"--val-fraction", "0.2", "--quiet")
			want, wantErr := falkonOOC("predict", test, "--model", model, "--out", filepath.Join(sub, "local.csv"), "--quiet")
			if !strings.Contains(wantErr, note) {
				t.Fatalf("falkon-ooc predict does not read the NULLs as means: %s", wantErr)
			}
			code, got, gotErr := runCmd("predict", test, "--model", model, "--out", filepath.Join(sub, "beam"), "--quiet")
			if code != exitOK {
				t.Fatalf("falkon-ooc-beam predict without --nulls: exit %d: %s", code, gotErr)
			}
			if !strings.Contains(gotErr, "falkon-ooc-beam: model "+model+" "+note) {
				t.Errorf("falkon-ooc-beam predict does not say it reads the NULLs as means: %s", gotErr)
			}
			t.Logf("falkon-ooc-beam predict:\n%s", got)
			w, g := classLines(want), classLines(got)
			if !strings.Contains(w, "\nclasses    class ") || !strings.Contains(w, "\nconfusion  true \\ label") ||
				strings.Count(w, "\n") != 2*len(classes)+3+strings.Count(w, "\ndecision") {
				t.Fatalf("falkon-ooc predict's summary lacks the class lines:\n%s", want)
			}
			if g != w {
				t.Errorf("falkon-ooc-beam predict's class summary:\n%s\nfalkon-ooc predict's:\n%s", g, w)
			}
			if (len(classes) == 2) != strings.Contains(w, "\ndecision   yes when p(yes) ≥ 0.5 (the default), else no") {
				t.Errorf("decision line (binary only):\n%s", w)
			}
			code, _, gotErr = runCmd("predict", test, "--model", model, "--out", filepath.Join(sub, "beam2"), "--quiet", "--nulls", "error")
			if code != exitFailure || !strings.Contains(gotErr, `column "x1" is NULL`) {
				t.Errorf("--nulls error on a NULL feature: exit %d, %s", code, gotErr)
			}
		})
	}
}

// classLines are a predict summary's lines from "metrics" to the end of
// the class report (the metrics, decision, classes and confusion lines
// and their continuations), each ending in a newline.
func classLines(summary string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(summary, "\n") {
		switch {
		case strings.HasPrefix(l, "metrics "):
			in = true
		case in && !strings.HasPrefix(l, "decision ") && !strings.HasPrefix(l, "classes ") && !strings.HasPrefix(l, "confusion ") &&
			!strings.HasPrefix(l, "           "):
			in = false
		}
		if in {
			b.WriteString("\n" + l)
		}
	}
	return b.String()
}

// labelCSV writes n rows of features x1, x2 and a label of the classes
// (by bands of x1 + x2, with noise); every 37th row's x1 is empty (NULL).
func labelCSV(t *testing.T, dir, name string, n int, seed uint64, classes []string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var b strings.Builder
	b.WriteString("x1,x2,label\n")
	for i := range n {
		x1, x2 := rng.Float64(), rng.Float64()
		c := int(float64(len(classes)) * (x1 + x2 + 0.3*rng.NormFloat64()) / 2)
		c = min(max(c, 0), len(classes)-1)
		s1 := fmt.Sprintf("%.6f", x1)
		if i%37 == 5 {
			s1 = ""
		}
		fmt.Fprintf(&b, "%s,%.6f,%s\n", s1, x2, classes[c])
	}
	p := filepath.Join(dir, name+".csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
