package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// fitModel fits a small model on the inputs (features x1, x2; target y)
// and saves it in dir.
func fitModel(t *testing.T, dir string, ins []string) (*ooc.Model, string) {
	t.Helper()
	st := filepath.Join(dir, "s.store")
	if _, err := ingest.Run(t.Context(), ins, ingest.Config{Out: st, Targets: []string{"y"}, Features: []string{"x1", "x2"}}); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Fit(t.Context(), r, ooc.Config{Centers: 20, Lambda: 1e-3, Iterations: 5, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.falkon")
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	return m, model
}

// localFolder is falkon-ooc predict --keep id of args as CSV: the
// command's own calls (ingest.List, tabular, model/predictfile), and
// how many prediction files its listing skipped.
func localFolder(t *testing.T, m *ooc.Model, model string, args ...string) (string, int) {
	t.Helper()
	files, skipped, err := ingest.List(args)
	if err != nil {
		t.Fatal(err)
	}
	topt, err := predictfile.TableOptions(m.Model, model, predictfile.Input{Keep: []string{"id"}, Nulls: "error"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tabular.Open(files, topt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := predictfile.New(m.Model, predictfile.Options{Keep: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Files(context.Background(), r, &buf, tabular.CSV); err != nil {
		t.Fatal(err)
	}
	return buf.String(), len(skipped)
}

// TestPredictOutputs: --out DIR writes outside the inputs, mirroring a
// Hive folder's layout; falkon-ooc predict of the folder is then what it
// was, and after --beside it reads the folder without the prediction
// files, as falkon-ooc-beam does, saying how many it skipped. --out FILE
// takes one input. An output that is the model, or a --out inside the
// input folder, is refused even with --force.
func TestPredictOutputs(t *testing.T) {
	dir := t.TempDir()
	ins := csvInputs(t, dir)
	m, model := fitModel(t, dir, ins)
	hive := filepath.Join(dir, "hive")
	for i, year := range []string{"2020", "2021"} {
		b, _ := os.ReadFile(ins[2*i])
		p := filepath.Join(hive, "year="+year, "data_0.csv")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := localFolder(t, m, model, hive)

	out := filepath.Join(dir, "out")
	code, stdout, e := runCmd("predict", "--quiet", "--model", model, "--keep", "id", "--out", out, hive)
	if code != exitOK {
		t.Fatalf("--out DIR: exit %d\n%s", code, e)
	}
	for _, year := range []string{"2020", "2021"} {
		p := filepath.Join(out, "year="+year, "data_0.pred.parquet")
		if !strings.Contains(stdout, "output     "+p+" (") {
			t.Errorf("--out DIR: %s not in the summary:\n%s", p, stdout)
		}
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(hive, "*", "*.parquet")); len(left) > 0 {
		t.Fatalf("--out DIR wrote into the inputs' folder: %v", left)
	}
	if got, n := localFolder(t, m, model, hive); got != before || n != 0 {
		t.Fatalf("falkon-ooc predict of the folder changed after --out DIR (%d skipped)", n)
	}

	// --beside writes into the folder: every reader leaves those files
	// out, with a count.
	if code, _, e := runCmd("predict", "--quiet", "--model", model, "--keep", "id", "--beside", hive); code != exitOK {
		t.Fatalf("--beside: exit %d\n%s", code, e)
	}
	if got, n := localFolder(t, m, model, hive); got != before || n != 2 {
		t.Fatalf("falkon-ooc predict of the folder after --beside: %d skipped, same predictions %v", n, got == before)
	}
	code, _, e = runCmd("predict", "--quiet", "--model", model, "--keep", "id", "--out", filepath.Join(dir, "out2"), hive)
	if code != exitOK || !strings.Contains(e, "falkon-ooc-beam: skipped 2 files of predictions written by falkon-ooc (name a file to read it)") {
		t.Fatalf("beam predict of a folder holding predictions: exit %d\n%s", code, e)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "out2", "*", "*")); len(got) != 2 {
		t.Fatalf("outputs %v; want the two data files'", got)
	}
	bi, _ := os.ReadFile(filepath.Join(out, "year=2021", "data_0.pred.parquet"))
	bb, _ := os.ReadFile(filepath.Join(hive, "year=2021", "data_0.pred.parquet"))
	if len(bi) == 0 || !bytes.Equal(bi, bb) {
		t.Fatal("--out DIR and --beside wrote different predictions")
	}

	one := filepath.Join(dir, "one.parquet")
	if code, _, e := runCmd("predict", "--quiet", "--model", model, "--out", one, ins[1]); code != exitOK {
		t.Fatalf("--out FILE: exit %d\n%s", code, e)
	}
	if _, err := os.Stat(one); err != nil {
		t.Fatal(err)
	}

	// The model named like an output (issue: --force replaced it).
	pm := filepath.Join(dir, "a.pred.parquet")
	mb, _ := os.ReadFile(model)
	if err := os.WriteFile(pm, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.csv")
	b0, _ := os.ReadFile(ins[0])
	os.WriteFile(a, b0, 0o644)
	os.WriteFile(filepath.Join(dir, "user.parquet"), []byte("PAR1 mine PAR1"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"predict", "--force", "--beside", "--model", pm, a}, exitUsage,
			"falkon-ooc-beam predict: --suffix .pred.parquet: its predictions of " + a + " " + pm + " is the input " + pm + ": writing it would destroy the input; choose another --suffix"},
		{[]string{"predict", "--force", "--out", pm, "--model", pm, a}, exitUsage,
			"falkon-ooc-beam predict: --out " + pm + " is the input " + pm + ": writing it would destroy the input; choose another --out"},
		{[]string{"predict", "--force", "--out", filepath.Join(hive, "preds"), "--model", model, hive}, exitFailure,
			"falkon-ooc-beam predict: --out " + filepath.Join(hive, "preds") + " lies inside the input " + hive + "; choose another --out"},
		{[]string{"predict", "--out", filepath.Join(dir, "two.parquet"), "--model", model, hive}, exitFailure,
			"falkon-ooc-beam predict: --out " + filepath.Join(dir, "two.parquet") + " names one file, but the inputs are 2 files; give a directory"},
		{[]string{"predict", "--out", ins[2], "--model", model, ins[1]}, exitFailure,
			"falkon-ooc-beam predict: --out " + ins[2] + " exists and is not a directory: name a directory, or a .parquet file for a single input"},
		{[]string{"predict", "--out", filepath.Join(dir, "user.parquet"), "--model", model, ins[1]}, exitFailure,
			"falkon-ooc-beam predict: --out " + filepath.Join(dir, "user.parquet") + " exists and is not predictions written by falkon-ooc: not replacing it; pass --force to replace it, or choose another --out"},
	} {
		code, _, e := runCmd(c.args...)
		if code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, e, c.code, c.want)
		}
	}
	if b, _ := os.ReadFile(pm); !bytes.Equal(b, mb) {
		t.Fatal("the model named a.pred.parquet was overwritten")
	}
}
