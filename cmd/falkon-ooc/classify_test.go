package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// writeLabelCSV writes n rows of features a, b and a string label by the
// angle of (a, b) among labels (10 % of them drawn at random), leaving
// out the rows labelled skip.
func writeLabelCSV(t *testing.T, path string, n int, seed uint64, labels []string, skip string) [][]string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	var b strings.Builder
	b.WriteString("id,a,b,species\n")
	var rows [][]string
	for i := range n {
		a, bb := rng.NormFloat64(), rng.NormFloat64()
		c := min(int((math.Atan2(bb, a)+math.Pi)/(2*math.Pi)*float64(len(labels))), len(labels)-1)
		if rng.Float64() < 0.1 {
			c = rng.IntN(len(labels))
		}
		if labels[c] == skip {
			continue
		}
		row := []string{strconv.Itoa(i), f6(a), f6(bb), labels[c]}
		rows = append(rows, row)
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestClassifyLabelsEndToEnd: fit on a CSV with a string label picks
// multiclass and says so, keeps the names, calibrates on --val-fraction;
// predict writes label names, --proba columns that sum to 1, and scores
// a test CSV (whose labels come in another order and lack one class)
// with accuracy, AUC and log-loss.
func TestClassifyLabelsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	labels := []string{"aster", "birch", "cedar", "daisy"}
	train := filepath.Join(dir, "train.csv")
	writeLabelCSV(t, train, 2400, 1, labels, "")
	model := filepath.Join(dir, "m.falkon")
	code, out, e := runCLI("fit", train, "--out", model, "--target", "species", "--exclude", "id",
		"--centers", "150", "--iters", "10", "--val-fraction", "0.25", "--json")
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, e)
	}
	if want := `fit: --task auto: multiclass (target "species" has 4 distinct string values)`; !strings.Contains(e, want) {
		t.Errorf("fit stderr lacks %q:\n%s", want, e)
	}
	var fr struct {
		Task        string
		Classes     []string
		Calibration *ooc.Calibration
		Validation  []ooc.ValPoint
	}
	if err := json.Unmarshal([]byte(out), &fr); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if fr.Task != "multiclass" || !slices.Equal(fr.Classes, labels) || fr.Calibration == nil || fr.Calibration.Method != "temperature" {
		t.Fatalf("fit --json: task %q, classes %q, calibration %+v", fr.Task, fr.Classes, fr.Calibration)
	}
	last := fr.Validation[len(fr.Validation)-1].Metrics
	if last.Accuracy == nil || *last.Accuracy < 0.75 || last.AUC == nil || *last.AUC < 0.9 || last.LogLoss == nil {
		t.Errorf("validation metrics %+v", last)
	}

	// The test file: no "aster".
	test := filepath.Join(dir, "test.csv")
	rows := writeLabelCSV(t, test, 800, 2, labels, "aster")
	outCSV := filepath.Join(dir, "pred.csv")
	code, out, e = runCLI("predict", "--model", model, test, "--out", outCSV, "--keep", "id", "--proba", "--json")
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, e)
	}
	var pr map[string]any
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if pr["accuracy"] == nil || pr["auc"] == nil || pr["log_loss"] == nil || pr["accuracy"].(float64) < 0.7 {
		t.Errorf("predict metrics: %v", pr)
	}
	data, err := os.ReadFile(outCSV)
	if err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, string(data))
	if want := []string{"id", "species_pred", "p_aster", "p_birch", "p_cedar", "p_daisy"}; !slices.Equal(recs[0], want) {
		t.Fatalf("header %q, want %q", recs[0], want)
	}
	right := 0
	for i, r := range recs[1:] {
		if r[0] != rows[i][0] || !slices.Contains(labels, r[1]) {
			t.Fatalf("row %d: %q", i, r)
		}
		var sum, best float64
		arg := ""
		for j, s := range r[2:] {
			p, err := strconv.ParseFloat(s, 64)
			if err != nil || p < 0 || p > 1 {
				t.Fatalf("row %d: probability %q", i, s)
			}
			sum += p
			if p > best {
				best, arg = p, labels[j]
			}
		}
		if math.Abs(sum-1) > 1e-9 || arg != r[1] {
			t.Fatalf("row %d: probabilities %q sum to %v, predicted %s", i, r[2:], sum, r[1])
		}
		if r[1] == rows[i][3] {
			right++
		}
	}
	if acc := float64(right) / float64(len(rows)); math.Abs(acc-pr["accuracy"].(float64)) > 1e-12 {
		t.Errorf("accuracy of the written labels %v, reported %v", acc, pr["accuracy"])
	}

	// Parquet output: the prediction is a string column.
	outPQ := filepath.Join(dir, "pred.parquet")
	if code, _, e := runCLI("predict", "--model", model, test, "--out", outPQ, "--quiet"); code != 0 {
		t.Fatalf("predict parquet: %s", e)
	}
	got := parquetAsCSV(t, outPQ, []string{"score_aster"}, []string{"species_pred"})
	if recs := readCSV(t, got); len(recs) != len(rows)+1 || !slices.Contains(labels, recs[1][0]) {
		t.Errorf("Parquet output: %q…", recs[:2])
	}

	// inspect shows the names and the calibration.
	if code, out, e := runCLI("inspect", model); code != 0 || !strings.Contains(out, "4 classes: aster, birch, cedar, daisy") ||
		!strings.Contains(out, "softmax temperature") {
		t.Errorf("inspect: exit %d\n%s%s", code, out, e)
	}

	// A label the model does not know.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("id,a,b,species\n1,0.1,0.2,birch\n2,0.3,0.4,elm\n"), 0o644)
	code, _, e = runCLI("predict", "--model", model, bad)
	if want := fmt.Sprintf(`%s: row 2 (1-based, counted within this file, header line not counted): column "species": label "elm" is not one of the model's classes ["aster" "birch" "cedar" "daisy"]`, bad); code != 1 || !strings.Contains(e, want) {
		t.Errorf("unknown label: exit %d, stderr %q, want %q", code, e, want)
	}
}

// TestProbaRefused: --proba without calibration or on regression.
func TestProbaRefused(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.csv")
	writeLabelCSV(t, train, 400, 3, []string{"no", "yes"}, "")
	model := filepath.Join(dir, "m.falkon")
	code, _, e := runCLI("fit", train, "--out", model, "--target", "species", "--exclude", "id", "--centers", "40", "--iters", "3")
	if code != 0 {
		t.Fatalf("fit: %s", e)
	}
	if want := `fit: --task auto: binary (target "species" has 2 distinct values: no, yes)`; !strings.Contains(e, want) {
		t.Errorf("fit stderr lacks %q:\n%s", want, e)
	}
	code, _, e = runCLI("predict", "--model", model, train, "--proba")
	want := "falkon-ooc predict: --proba: model " + model + " has no calibrated probabilities: it was fitted without validation rows; refit with --val-fraction F (or --val INPUT) to calibrate them\n"
	if code != 1 || e != want {
		t.Errorf("exit %d, stderr %q, want %q", code, e, want)
	}
	_, regModel, in, _ := predictFixture(t, 50)
	code, _, e = runCLI("predict", "--model", regModel, in, "--proba")
	want = "falkon-ooc predict: --proba: " + regModel + " is a regression model; probabilities need a binary or multiclass model\n"
	if code != 1 || e != want {
		t.Errorf("regression: exit %d, stderr %q, want %q", code, e, want)
	}
}
