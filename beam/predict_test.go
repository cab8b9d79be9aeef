package beam

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// localPredict is falkon-ooc predict --out out --keep keep of inputs: the
// command's own calls (model/predictfile, tabular, fileutil).
func localPredict(t *testing.T, m *ooc.Model, model string, inputs, keep []string, out string) error {
	t.Helper()
	topt, err := predictfile.TableOptions(m.Model, model, predictfile.Input{Keep: keep, Nulls: "error"})
	if err != nil {
		return err
	}
	r, err := tabular.Open(inputs, topt)
	if err != nil {
		return predictfile.ExplainMissing(err, m.Features(), keep)
	}
	defer r.Close()
	p, err := predictfile.New(m.Model, predictfile.Options{Keep: keep})
	if err != nil {
		return err
	}
	return fileutil.WriteFile(out, 0o644, func(w io.Writer) error { return p.Files(context.Background(), r, w, tabular.Parquet) })
}

// localMetrics is falkon-ooc predict's metrics of inputs (no output).
func localMetrics(t *testing.T, m *ooc.Model, model string, inputs []string) *ooc.Metrics {
	t.Helper()
	topt, err := predictfile.TableOptions(m.Model, model, predictfile.Input{Nulls: "error"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tabular.Open(inputs, topt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := predictfile.New(m.Model, predictfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Files(context.Background(), r, nil, tabular.Parquet); err != nil {
		t.Fatal(err)
	}
	if !p.WithTargets {
		t.Fatal("falkon-ooc predict found no target")
	}
	return p.Ev.Metrics()
}

// TestPredictMatchesLocal: falkon-ooc-beam predict writes beside each
// input the Parquet file that falkon-ooc predict writes for that input
// alone, byte for byte, with the --keep column.
func TestPredictMatchesLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var ins []string
	row := 0
	for f, n := range []int{300, 41, 260} {
		var b strings.Builder
		b.WriteString("key,x1,x2,y\n")
		for range n {
			row++
			x1, x2 := float64(row%17)/4, float64((row*7)%23)/5
			fmt.Fprintf(&b, "k%05d,%g,%g,%g\n", row, x1, x2, x1*x2-x1)
		}
		in := filepath.Join(dir, fmt.Sprintf("part-%d.csv", f))
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	store := filepath.Join(dir, "s.store")
	if _, err := ingest.Run(ctx, ins, ingest.Config{Out: store, Targets: []string{"y"}}); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Fit(ctx, r, ooc.Config{Centers: 50, Lambda: 1e-4, Iterations: 10, Seed: 1,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.falkon")
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	res, err := Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: []string{dir}, Keep: []string{"key"}, Workers: 2}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 601 || len(res.Files) != 3 {
		t.Fatalf("result %+v", res)
	}
	// The driver's model, loaded once, comes with the result for the summary.
	if res.Model == nil || !slices.Equal(res.Model.Alpha(), m.Alpha()) {
		t.Fatal("the result does not carry the model the driver loaded")
	}
	// The inputs have the target: the metrics are falkon-ooc predict's of
	// the three inputs (one Evaluator over them in order), within the
	// rounding of the merged sums.
	want := localMetrics(t, m, model, ins)
	if res.Metrics == nil || res.Metrics.RMSE == nil || res.Metrics.Rows != want.Rows ||
		math.Abs(*res.Metrics.RMSE-*want.RMSE) > 1e-12**want.RMSE || math.Abs(*res.Metrics.RelErr-*want.RelErr) > 1e-12**want.RelErr {
		t.Fatalf("metrics %+v, falkon-ooc predict's %+v", res.Metrics, want)
	}
	for _, f := range res.Files {
		if f.Eval != nil {
			t.Fatal("a file's evaluator state left in the result")
		}
	}
	for i, in := range ins {
		want := filepath.Join(dir, fmt.Sprintf("local-%d.parquet", i))
		if err := localPredict(t, m, model, []string{in}, []string{"key"}, want); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(want)
		b, err := os.ReadFile(strings.TrimSuffix(in, ".csv") + ".pred.parquet")
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s: %d bytes against falkon-ooc predict's %d (%v)", in, len(b), len(a), err)
		}
	}
	// The outputs exist now: a second run over the folder leaves them
	// (and local-*.parquet, falkon-ooc predict's) out of its inputs and
	// counts them, and replaces them, its own.
	res, err = Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: []string{dir}, Keep: []string{"key"}}, Options{})
	if err != nil || len(res.Files) != 3 || len(res.Skipped) != 6 {
		t.Fatalf("second run: %v, %+v", err, res)
	}
	// A user's file where an output goes is refused without Force.
	user := OutputName(ins[0], DefaultPredictSuffix)
	if err := os.WriteFile(user, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: ins[:1]}, Options{})
	if want := "--suffix .pred.parquet: its predictions of " + ins[0] + " " + user + " exists and is not predictions written by falkon-ooc: not replacing it; pass --force to replace it, or choose another --suffix"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if b, _ := os.ReadFile(user); string(b) != "mine" {
		t.Fatalf("the user's file changed: %q", b)
	}

	// A kept column named like an output column: falkon-ooc predict's
	// refusal, before any task runs.
	_, err = Predict(ctx, PredictConfig{Model: model, Inputs: ins[:1], Keep: []string{"key", "y_pred"}, Force: true}, Options{})
	if want := `--keep: the input column "y_pred" has the name of an output column of predict; the output would have two columns "y_pred" (leave it out of --keep, or rename it in the input)`; err == nil || err.Error() != want {
		t.Fatalf("--keep y_pred: got %v, want %s", err, want)
	}

	// A NaN feature in the second input: falkon-ooc predict's error, and
	// no output left.
	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o777); err != nil {
		t.Fatal(err)
	}
	inputs := []string{filepath.Join(bad, "a.csv"), filepath.Join(bad, "b.csv"), filepath.Join(bad, "c.csv")}
	for i, body := range []string{"key,x1,x2\nq,1,2\n", "key,x1,x2\nr,1,2\ns,NaN,1\n", "key,x1,x2\nt,1,NaN\n"} {
		if err := os.WriteFile(inputs[i], []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantErr := localPredict(t, m, model, inputs, []string{"key"}, filepath.Join(dir, "local-bad.parquet"))
	_, err = Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: inputs, Keep: []string{"key"}}, Options{})
	if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
		t.Fatalf("got %v\nwant %v", err, wantErr)
	}
	if left, _ := filepath.Glob(filepath.Join(bad, "*.parquet")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
	// A --keep column that an input lacks.
	wantErr = localPredict(t, m, model, ins[:1], []string{"nope"}, filepath.Join(dir, "local-keep.parquet"))
	_, err = Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: ins[:1], Keep: []string{"nope"}, Force: true}, Options{})
	if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
		t.Fatalf("got %v\nwant %v", err, wantErr)
	}
}

// TestPredictUnseen: a model fitted on a categorical column predicts
// inputs holding levels it never saw: falkon-ooc-beam predict counts
// them per column over the inputs, as falkon-ooc predict does (the same
// counts, and the same "(other)" feature), and writes its predictions.
func TestPredictUnseen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, rows int, level func(i int) string) string {
		var b strings.Builder
		b.WriteString("shop,x,y\n")
		for i := range rows {
			fmt.Fprintf(&b, "%s,%g,%g\n", level(i), float64(i%7)/3, float64(i%5))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	train := write("train.csv", 200, func(i int) string { return string(rune('a' + i%4)) })
	store := filepath.Join(dir, "s.store")
	if _, err := ingest.Run(ctx, []string{train}, ingest.Config{Out: store, Targets: []string{"y"}, MaxLevels: 3, AboveMaxLevels: "onehot"}); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Fit(ctx, r, ooc.Config{Centers: 20, Lambda: 1e-4, Iterations: 5, Seed: 1,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.falkon")
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o777); err != nil {
		t.Fatal(err)
	}
	dir = in
	ins := []string{
		write("p1.csv", 30, func(i int) string { return []string{"a", "zz", "b"}[i%3] }), // 10 unseen
		write("p2.csv", 8, func(i int) string { return "b" }),                            // none
		write("p3.csv", 7, func(i int) string { return []string{"q", "c"}[i%2] }),        // 4 unseen
	}
	outDir := filepath.Join(t.TempDir(), "out")
	res, err := Predict(ctx, PredictConfig{Model: model, Inputs: ins, Out: outDir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Each file's predictions are falkon-ooc predict's, byte for byte: the
	// same encoding of the levels, unseen ones as shop=(other).
	for _, in := range ins {
		want := filepath.Join(t.TempDir(), "local.parquet")
		if err := localPredict(t, m, model, []string{in}, nil, want); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(want)
		b, err := os.ReadFile(OutputName(filepath.Join(outDir, filepath.Base(in)), DefaultPredictSuffix))
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s: %d bytes against falkon-ooc predict's %d (%v)", in, len(b), len(a), err)
		}
	}
	// falkon-ooc predict's own counts over the same inputs.
	topt, err := predictfile.TableOptions(m.Model, model, predictfile.Input{Nulls: "error"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tabular.Open(ins, topt)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	p, err := predictfile.New(m.Model, predictfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Files(ctx, tr, nil, tabular.Parquet); err != nil {
		t.Fatal(err)
	}
	want := p.Unseen()
	if len(want) != 1 || want[0].Count != 14 || want[0].To != "shop=(other)" {
		t.Fatalf("falkon-ooc predict's unseen %+v, want 14 values of shop read as shop=(other)", want)
	}
	if len(res.Unseen) != 1 || res.Unseen[0] != want[0] || res.Rows != 45 {
		t.Fatalf("unseen %+v over %d rows, want %+v over 45", res.Unseen, res.Rows, want)
	}
	if u := res.Files[1].Unseen; len(u) != 0 {
		t.Fatalf("p2.csv: unseen %+v, want none", u)
	}
}
