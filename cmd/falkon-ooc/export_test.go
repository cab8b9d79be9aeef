package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/ortrun"
)

// TestExportHelp checks export --help against its golden.
func TestExportHelp(t *testing.T) {
	code, out, errOut := runCLI("export", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "export_help.golden", out)
}

// TestExportJSON: export --json prints one document (golden; the size
// masked), and writes the file it names.
func TestExportJSON(t *testing.T) {
	_, model, _, _ := predictFixture(t, 1)
	dir := t.TempDir()
	out := filepath.Join(dir, "m.onnx")
	code, stdout, e := runCLI("export", model, "--format", "onnx", "--out", out, "--precision", "float32", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Bytes int64 }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Bytes != st.Size() {
		t.Fatalf("--json: %v, bytes %d, file %d:\n%s", err, res.Bytes, st.Size(), stdout)
	}
	s := strings.ReplaceAll(mask(t, stdout, dir), filepath.Dir(model), "$MODELDIR")
	golden(t, "export_json.golden", strings.ReplaceAll(s, version, "VERSION"))
}

// TestExportErrors: each mistake gives its message and exit code, and
// writes nothing.
func TestExportErrors(t *testing.T) {
	_, model, _, _ := predictFixture(t, 1)
	dir := t.TempDir()
	classifier := filepath.Join(dir, "c.falkon")
	writeLabelCSV(t, filepath.Join(dir, "train.csv"), 600, 1, []string{"x", "y", "z"}, "")
	if code, _, e := runCLI("fit", filepath.Join(dir, "train.csv"), "--out", classifier, "--target", "species", "--exclude", "id",
		"--centers", "40", "--iters", "5", "--quiet"); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	notModel := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notModel, []byte("not a model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.onnx")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{model, "--out", out}, 2, "--format is required: onnx"},
		{[]string{model, "--format", "pmml", "--out", out}, 2, "--format pmml: the formats are onnx"},
		{[]string{model, "--format", "onnx"}, 2, "--out FILE is required"},
		{[]string{model, "--format", "onnx", "--out", "-"}, 2, "--out -: the graph is binary; name a file"},
		{[]string{"--format", "onnx", "--out", out}, 2, "no MODEL given"},
		{[]string{model, model, "--format", "onnx", "--out", out}, 2, "one MODEL, got 2 arguments"},
		{[]string{model, "--format", "onnx", "--out", out, "--precision", "half"}, 2, `--precision must be float32 or float64, not "half"`},
		{[]string{model, "--format", "onnx", "--out", model}, 2, "--out " + model + " is the input " + model + ": writing it would destroy the input"},
		{[]string{model, "--format", "onnx", "--out", dir}, 1, "--out " + dir + " is a directory; name a file"},
		{[]string{model, "--format", "onnx", "--out", out, "--std"}, 1, "--std: model " + model + " has no predictive standard deviations: it was fitted without --uncertainty"},
		{[]string{classifier, "--format", "onnx", "--out", out, "--std"}, 1, "--std: " + classifier + " is a multiclass model; predictive standard deviations are for regression"},
		{[]string{notModel, "--format", "onnx", "--out", out}, 1, notModel},
		{[]string{filepath.Join(dir, "missing.falkon"), "--format", "onnx", "--out", out}, 1, "missing.falkon"},
	} {
		code, stdout, e := runCLI(append([]string{"export"}, c.args...)...)
		if code != c.code || !strings.Contains(e, c.want) || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout, e, c.code, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q wrote %s", c.args, out)
		}
	}
	if b, err := os.ReadFile(notModel); err != nil || string(b) != "not a model\n" {
		t.Errorf("the input changed: %q, %v", b, err)
	}
}

// TestExportMatchesPredict is the end-to-end check: fit, export, then
// ONNX Runtime on the graph and falkon-ooc predict on the same CSV rows
// give the same values and standard deviations (a regression fitted with
// --uncertainty, exported with --std), and the same labels and
// probabilities (a classifier of string labels).
func TestExportMatchesPredict(t *testing.T) {
	if err := ortrun.Available(); err != nil {
		t.Skipf("ONNX Runtime unavailable, graphs not run: %v", err)
	}
	dir := t.TempDir()

	// Regression with --std.
	train := makeStore(t, dir, 1500, 11, "y")
	model := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--out", model, "--centers", "80", "--iters", "6", "--uncertainty", "--quiet", train); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	_, _, csvPath, rows := predictFixture(t, 400)
	regOnnx := filepath.Join(dir, "m.onnx")
	code, stdout, e := runCLI("export", model, "--format", "onnx", "--out", regOnnx, "--std")
	if code != 0 {
		t.Fatalf("export: %s", e)
	}
	if !strings.Contains(stdout, "ONNX opset 13, float64, input features [N × 3], outputs value, std") {
		t.Errorf("export's summary: %q", stdout)
	}
	code, stdout, e = runCLI("predict", "--model", model, "--std", "--out", "-", "--quiet", csvPath)
	if code != 0 {
		t.Fatalf("predict: %s", e)
	}
	pred := readCSV(t, stdout)
	if got := strings.Join(pred[0], ","); got != "y_pred,y_std" {
		t.Fatalf("predict columns %s", got)
	}
	// The CSV's rows hold a, b, c at 2, 3, 4: the model's order.
	x := make([]float64, 0, 3*len(rows))
	for _, r := range rows {
		for j := range 3 {
			x = append(x, parseF(t, r[2+j]))
		}
	}

	// A classifier of string labels, calibrated (temperature). λ = 1e-3
	// keeps its coefficients below 10⁴: the graph and the model are
	// float64 sums in different orders, which differ by about
	// 1e-16·Σ|αⱼ·K(x, cⱼ)| (docs/ONNX.md); on these 1100 rows in two
	// dimensions λ = 1e-6 gives coefficients of 8·10⁵, and probabilities
	// (at T = 0.17) that differ by 1.2e-9.
	labels := []string{"aster", "birch", "cedar"}
	ltrain := filepath.Join(dir, "train.csv")
	writeLabelCSV(t, ltrain, 1500, 1, labels, "")
	cmodel := filepath.Join(dir, "c.falkon")
	if code, _, e := runCLI("fit", ltrain, "--out", cmodel, "--target", "species", "--exclude", "id",
		"--centers", "100", "--iters", "10", "--val-fraction", "0.25", "--lambda", "1e-3", "--quiet"); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	ltest := filepath.Join(dir, "test.csv")
	lrows := writeLabelCSV(t, ltest, 400, 2, labels, "")
	clsOnnx := filepath.Join(dir, "c.onnx")
	if code, _, e := runCLI("export", cmodel, "--format", "onnx", "--out", clsOnnx); code != 0 {
		t.Fatalf("export: %s", e)
	}
	code, stdout, e = runCLI("predict", "--model", cmodel, "--proba", "--out", "-", "--quiet", ltest)
	if code != 0 {
		t.Fatalf("predict: %s", e)
	}
	cpred := readCSV(t, stdout)
	if got := strings.Join(cpred[0], ","); got != "species_pred,p_aster,p_birch,p_cedar" {
		t.Fatalf("predict columns %s", got)
	}
	lx := make([]float64, 0, 2*len(lrows))
	for _, r := range lrows {
		lx = append(lx, parseF(t, r[1]), parseF(t, r[2]))
	}

	res, err := ortrun.Run(t.TempDir(), []ortrun.Request{
		{Model: regOnnx, X: x, Rows: len(rows), Cols: 3},
		{Model: clsOnnx, X: lx, Rows: len(lrows), Cols: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	value, std := res[0].Outputs["value"].Data, res[0].Outputs["std"].Data
	for i, r := range pred[1:] {
		// predict writes each value with 17 significant digits or its
		// shortest form: both round-trip, and the graph sums in another
		// order (1e-9 relative to the values' magnitude).
		if v := parseF(t, r[0]); math.Abs(v-value[i]) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Fatalf("row %d: value %v, predict %v", i, value[i], v)
		}
		if s := parseF(t, r[1]); math.Abs(s-std[i]) > 1e-9*math.Max(1, s) {
			t.Fatalf("row %d: std %v, predict %v", i, std[i], s)
		}
	}
	lab, proba := res[1].Outputs["label"].Strings, res[1].Outputs["probabilities"].Data
	for i, r := range cpred[1:] {
		if lab[i] != r[0] {
			t.Errorf("row %d: label %q, predict %q", i, lab[i], r[0])
		}
		for j := range labels {
			if p := parseF(t, r[1+j]); math.Abs(p-proba[i*3+j]) > 1e-9 {
				t.Fatalf("row %d: p_%s %v, predict %v", i, labels[j], proba[i*3+j], p)
			}
		}
	}
	if !slices.Equal(res[1].Outputs["label"].Dims, []int{len(lrows)}) {
		t.Errorf("label dims %v", res[1].Outputs["label"].Dims)
	}
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
