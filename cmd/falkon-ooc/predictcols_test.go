package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stdModel fits a model with --uncertainty on a store of features a, b,
// c and target y, and returns its path.
func stdModel(t *testing.T, dir string) string {
	t.Helper()
	train := makeStore(t, dir, 1500, 11, "y")
	model := filepath.Join(dir, "std.falkon")
	if code, _, e := runCLI("fit", "--out", model, "--centers", "80", "--iters", "6", "--uncertainty", "--quiet", train); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	return model
}

// TestPredictKeepClash: --keep of a column named like an output column
// (TARGET_pred, TARGET_std, TARGET_lower, TARGET_upper, score, p_CLASS)
// or named twice is refused before anything is written, naming the flag
// and the column: the output would otherwise have two columns of one
// name, which falkon-ooc inspect rejects.
func TestPredictKeepClash(t *testing.T) {
	dir := t.TempDir()
	model := stdModel(t, dir)
	in := filepath.Join(dir, "in.csv")
	var b strings.Builder
	b.WriteString("id,a,b,c,y,y_pred,y_std,y_lower,y_upper\n")
	for i := range 20 {
		fmt.Fprintf(&b, "%d,%g,%g,%g,%g,1,2,3,4\n", i, 0.1*float64(i), 1+0.05*float64(i), 0.5, 1.5)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	clash := func(c string) string {
		return fmt.Sprintf("falkon-ooc predict: --keep: the input column %q has the name of an output column of predict; the output would have two columns %q (leave it out of --keep, or rename it in the input)\n", c, c)
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--keep", "y_pred"}, clash("y_pred")},
		{[]string{"--keep", "id,y_pred"}, clash("y_pred")},
		{[]string{"--std", "--keep", "y_std"}, clash("y_std")},
		{[]string{"--interval", "0.9", "--keep", "y_lower"}, clash("y_lower")},
		{[]string{"--std", "--interval", "0.9", "--keep", "id,y_upper"}, clash("y_upper")},
		{[]string{"--keep", "id,id"}, "falkon-ooc predict: --keep: the column \"id\" is named twice\n"},
	} {
		out := filepath.Join(dir, "p.csv")
		args := append([]string{"predict", "--model", model, "--out", out, in}, c.flags...)
		code, _, e := runCLI(args...)
		if code != 1 || e != c.want {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", c.flags, code, e, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the output %s exists (%v)", c.flags, out, err)
		}
	}
	// Columns of other names are kept as before.
	code, out, e := runCLI("predict", "--model", model, "--std", "--keep", "id,y_lower", "--out", "-", in)
	if code != 0 {
		t.Fatalf("predict: %s", e)
	}
	if got := strings.SplitN(out, "\n", 2)[0]; got != "id,y_lower,y_pred,y_std" {
		t.Errorf("header %q", got)
	}
}

// TestPredictStdNoTargetInside: predict --std or --interval summarises
// the intervals even when no labelled row falls inside one of them (one
// row, a tiny --interval, targets far from the predictions): coverage 0
// of N, and the output is written whole.
func TestPredictStdNoTargetInside(t *testing.T) {
	dir := t.TempDir()
	model := stdModel(t, dir)
	write := func(name string, rows int, shift float64) string {
		var b strings.Builder
		b.WriteString("a,b,c,y\n")
		for i := range rows {
			a, bb := 0.01*float64(i), 1+0.02*float64(i)
			fmt.Fprintf(&b, "%g,%g,0.5,%g\n", a, bb, bb*bb/4+shift)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type level struct {
		Level    float64 `json:"level"`
		Coverage float64 `json:"coverage"`
		Width    float64 `json:"constant_width"`
	}
	for _, c := range []struct {
		name    string
		in      string
		flags   []string
		rows    int
		allZero bool // no level covers a target (else the first covers none)
	}{
		{"one row", write("one.csv", 1, 0), []string{"--std"}, 1, false},
		{"tiny interval", write("tiny.csv", 50, 0), []string{"--interval", "0.001"}, 50, false},
		{"shifted targets", write("shifted.csv", 50, 1000), []string{"--std", "--interval", "0.9"}, 50, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".pred.csv")
			args := append([]string{"predict", "--model", model, "--json", "--out", out, c.in}, c.flags...)
			code, stdout, e := runCLI(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, e)
			}
			var res struct {
				Rows        int64 `json:"rows"`
				Uncertainty struct {
					Rows   int64   `json:"rows"`
					Levels []level `json:"levels"`
				} `json:"uncertainty"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if res.Rows != int64(c.rows) || res.Uncertainty.Rows != int64(c.rows) || len(res.Uncertainty.Levels) < 3 {
				t.Fatalf("summary %+v", res)
			}
			for _, l := range res.Uncertainty.Levels {
				if l.Coverage == 0 && l.Width != 0 {
					t.Errorf("level %v covers nothing but has a constant width %v", l.Level, l.Width)
				}
				if c.allZero && l.Coverage != 0 {
					t.Errorf("level %v covers %v", l.Level, l.Coverage)
				}
			}
			if res.Uncertainty.Levels[0].Coverage != 0 {
				t.Errorf("level %v covers %v", res.Uncertainty.Levels[0].Level, res.Uncertainty.Levels[0].Coverage)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "\n"); n != c.rows+1 {
				t.Errorf("the output has %d lines, want %d", n, c.rows+1)
			}
		})
	}
	// The text summary says it too.
	code, stdout, e := runCLI("predict", "--model", model, "--std", write("one.csv", 1, 0))
	if code != 0 || !strings.Contains(stdout, "intervals  50 % covers 0.0 % (conformal), 90 %") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, e)
	}
}
