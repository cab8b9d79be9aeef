package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestWeightFlags: ingest --weight stores the weights and fit on the
// store minimises the weighted loss; fit straight on the CSV with
// --weight gives the same model; --weight beside a STORE is a usage
// error; a negative weight stops ingest naming file, row and column.
func TestWeightFlags(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,w,y\n")
	for i := range 400 {
		a, c := math.Sin(float64(i)), math.Cos(float64(3*i))
		fmt.Fprintf(&b, "%.6f,%.6f,%d,%.6f\n", a, c, i%3, a*c+0.1*math.Sin(float64(7*i)))
	}
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "d.store")
	if code, _, e := runCLI("ingest", csv, "--out", store, "--target", "y", "--weight", "w", "--quiet"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, e)
	}
	m1 := filepath.Join(dir, "m1.falkon")
	code, out, e := runCLI("fit", store, "--out", m1, "--centers", "30", "--iters", "5", "--quiet")
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, e)
	}
	if want := `weights    column "w", summing to 399 (the n of λ·n)`; !strings.Contains(out, want) {
		t.Errorf("fit's summary lacks %q:\n%s", want, out)
	}
	if code, out, _ := runCLI("inspect", m1); code != 0 || !strings.Contains(out, `column "w", summing to 399`) {
		t.Errorf("inspect: exit %d, no weights line:\n%s", code, out)
	}
	m2 := filepath.Join(dir, "m2.falkon")
	if code, _, e := runCLI("fit", csv, "--target", "y", "--weight", "w", "--out", m2, "--centers", "30", "--iters", "5", "--quiet"); code != 0 {
		t.Fatalf("fit on the CSV: exit %d: %s", code, e)
	}
	a, err := ooc.Load(m1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ooc.Load(m2)
	if err != nil {
		t.Fatal(err)
	}
	if tr := a.Training(); tr.Weight != "w" || tr.WeightSum != 399 { // 133 ones + 133 twos
		t.Fatalf("the fit on the store: weight %q summing to %v, want \"w\" and 399", tr.Weight, tr.WeightSum)
	}
	if !slices.Equal(a.Alpha(), c.Alpha()) || !slices.Equal(a.Features(), []string{"a", "b"}) {
		t.Fatalf("fit on the CSV with --weight differs from fit on the ingested store (features %v)", a.Features())
	}
	code, _, e = runCLI("fit", store, "--weight", "w", "--out", filepath.Join(dir, "m3.falkon"))
	if want := "--weight applies to Parquet/CSV inputs; " + store + " is a store"; code != 2 || !strings.Contains(e, want) {
		t.Fatalf("--weight with a store: exit %d, stderr %s", code, e)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("a,w,y\n1,1,2\n2,-0.5,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, e = runCLI("ingest", bad, "--out", filepath.Join(dir, "bad.store"), "--target", "y", "--weight", "w", "--quiet")
	want := bad + `: row 2 (1-based, counted within this file, header line not counted): column "w" is -0.5, a negative weight (weights must be ≥ 0)`
	if code != 1 || !strings.Contains(e, want) {
		t.Fatalf("negative weight: exit %d, stderr %s", code, e)
	}
}

// TestClassWeightFlag: --class-weight balanced fits a classifier with
// the balanced class weights (recorded in the model); an unknown value
// and a regression target are usage errors naming the flag.
func TestClassWeightFlag(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,y,r\n")
	for i := range 300 {
		a, c := math.Sin(float64(i)), math.Cos(float64(3*i))
		cls := 0
		if a*c > 0.3 {
			cls = 1
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%d,%.6f\n", a, c, cls, a+c)
	}
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", csv, "--target", "y", "--features", "a,b", "--class-weight", "balanced", "--out", m, "--centers", "20", "--iters", "3", "--quiet"); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, e)
	}
	mdl, err := ooc.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if cw := mdl.Training().ClassWeights; len(cw) != 2 || !(cw[1] > cw[0]) {
		t.Fatalf("class weights %v: want two, the rarer class 1 heavier", cw)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "y", "--features", "a,b", "--class-weight", "even"}, `--class-weight: unknown class weighting "even" (want none or balanced)`},
		{[]string{"--target", "r", "--features", "a,b", "--class-weight", "balanced", "--task", "regression"}, "--class-weight: class weights need a classification task, not regression"},
	} {
		args := append([]string{"fit", csv, "--out", filepath.Join(dir, "x.falkon"), "--quiet"}, tc.args...)
		code, _, e := runCLI(args...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%q: exit %d, stderr %s\nwant %s", tc.args, code, e, tc.want)
		}
	}
}

// TestLossLogistic: fit --loss logistic (a checkpoint per Newton step), then
// predict --proba gives the model's own probabilities σ(score) without
// calibration rows.
func TestLossLogistic(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range 300 {
		a, c := math.Sin(float64(i)), math.Cos(float64(3*i))
		cls := 0
		if a*c+0.3*math.Sin(float64(11*i)) > 0.1 {
			cls = 1
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%d\n", a, c, cls)
	}
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.falkon")
	code, _, e := runCLI("fit", csv, "--target", "y", "--loss", "logistic", "--newton-steps", "5", "--out", m, "--centers", "20", "--iters", "5")
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, e)
	}
	if c, err := ooc.ReadCheckpoint(m + ".ckpt"); err != nil || c.Iteration != 5 || len(c.NewtonSteps) != 5 {
		t.Fatalf("checkpoint after the last Newton step: %v", err)
	}
	// --resume extends it by Newton steps.
	if code, _, e := runCLI("fit", "--resume", "--out", m, "--newton-steps", "7", csv, "--quiet"); code != 0 {
		t.Fatalf("fit --resume --newton-steps 7: exit %d: %s", code, e)
	}
	out := filepath.Join(dir, "p.csv")
	if code, _, e := runCLI("predict", csv, "--model", m, "--proba", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("predict --proba: exit %d: %s", code, e)
	}
	mdl, err := ooc.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(mdl.Training().NewtonSteps) != 7 || mdl.Calibration() != nil || !mdl.HasProba() {
		t.Fatalf("%d Newton steps, calibration %v", len(mdl.Training().NewtonSteps), mdl.Calibration())
	}
	if code, out, _ := runCLI("inspect", m); code != 0 || !strings.Contains(out, "logistic, 7 Newton steps, objective 0.693147") ||
		!strings.Contains(out, "the model's own σ(f) (logistic loss; not calibrated)") {
		t.Errorf("inspect: exit %d, no loss or probability line:\n%s", code, out)
	}
	// Balanced class weights and leverage centres with the logistic loss.
	mb := filepath.Join(dir, "mb.falkon")
	if code, out, e := runCLI("fit", csv, "--target", "y", "--loss", "logistic", "--newton-steps", "3", "--out", mb, "--centers", "20",
		"--iters", "5", "--class-weight", "balanced", "--centers-sampling", "leverage"); code != 0 || !strings.Contains(out, "balanced weights") {
		t.Fatalf("fit --class-weight balanced --centers-sampling leverage: exit %d: %s\n%s", code, e, out)
	}
	if mdl, err := ooc.Load(mb); err != nil || len(mdl.Training().ClassWeights) != 2 || mdl.Config().Sampling != ooc.SamplingLeverage {
		t.Fatalf("balanced logistic model: %v", err)
	}
	code, _, e = runCLI("fit", csv, "--target", "y", "--loss", "hinge", "--out", filepath.Join(dir, "x.falkon"))
	if want := `--loss: unknown loss "hinge" (want squared or logistic)`; code != 2 || !strings.Contains(e, want) {
		t.Errorf("--loss hinge: exit %d, stderr %s", code, e)
	}
}

// TestTuneLogisticCLI: tune --loss logistic searches the grid, the
// candidates sharing the passes, and writes the pick.
func TestTuneLogisticCLI(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range 400 {
		a, c := math.Sin(float64(i)), math.Cos(float64(3*i))
		cls := 0
		if a*c+0.3*math.Sin(float64(11*i)) > 0.1 {
			cls = 1
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%d\n", a, c, cls)
	}
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.falkon")
	code, out, e := runCLI("tune", csv, "--target", "y", "--loss", "logistic", "--newton-steps", "3", "--iters", "3",
		"--sigma", "0.5,2", "--lambda", "1e-3,1e-6", "--centers", "20", "--out", m, "--quiet")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, e)
	}
	mdl, err := ooc.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if mdl.Config().Loss != ooc.LossLogistic || len(mdl.Training().NewtonSteps) != 3 {
		t.Fatalf("the pick: loss %q, %d steps\n%s", mdl.Config().Loss, len(mdl.Training().NewtonSteps), out)
	}
	// The sampling pass, 3 Newton steps of 1 + 3 passes and the last
	// step's line search, which score the held-out rows (no validation
	// pass): for the whole grid of 4 (no step of this set is shortened,
	// which would add a gradient pass).
	code, out, e = runCLI("tune", csv, "--target", "y", "--loss", "logistic", "--newton-steps", "3", "--iters", "3",
		"--sigma", "0.5,2", "--lambda", "1e-3,1e-6", "--centers", "20", "--out", m, "--quiet", "--force", "--json", "--class-weight", "balanced")
	if code != 0 || !strings.Contains(out, `"passes": 14`) {
		t.Fatalf("tune --class-weight balanced --json: exit %d: %s\n%s", code, e, out)
	}
}
