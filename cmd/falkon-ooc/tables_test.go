package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRegionCSV writes n rows of region (five levels, NULL in every 40th
// row, and in test files a level never seen in training), x and
// y = sin(x) + 0.5 on region "e".
func writeRegionCSV(t *testing.T, path string, n int, seed uint64, unseen bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 44))
	var b strings.Builder
	b.WriteString("region,x,y\n")
	for i := range n {
		r := string(rune('a' + rng.IntN(5)))
		switch {
		case i%40 == 3:
			r = ""
		case unseen && i%25 == 1:
			r = "zz"
		}
		x := rng.NormFloat64()
		y := math.Sin(x)
		if r == "e" {
			y += 0.5
		}
		fmt.Fprintf(&b, "%s,%.6f,%.6f\n", r, x, y)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPredictCategorical: a string column becomes one-hot features at
// ingest and in the model; predict applies the same encoding to a CSV
// file, counts the values of a level never seen in training and reports
// them (stderr and --json), without an error.
func TestPredictCategorical(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeRegionCSV(t, train, 600, 1, false)
	writeRegionCSV(t, test, 200, 2, true)
	store, model := filepath.Join(dir, "s.store"), filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("ingest", "--quiet", "--out", store, "--target", "y", train); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, e)
	}
	if code, _, e := runCLI("fit", "--quiet", "--out", model, "--centers", "100", "--sigma", "1", "--lambda", "1e-4", store); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, e)
	}
	code, stdout, e := runCLI("predict", "--quiet", "--json", "--model", model, test)
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, e)
	}
	if want := "predict: 8 values of column \"region\" not among the model's levels, read with all its one-hot features 0\n"; !strings.Contains(e, want) {
		t.Errorf("stderr %q, want it to contain %q", e, want)
	}
	var res struct {
		Rows   int64
		Unseen []struct {
			Column string
			Count  int64
		}
		RMSE float64 `json:"rmse"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Rows != 200 || len(res.Unseen) != 1 || res.Unseen[0].Column != "region" || res.Unseen[0].Count != 8 {
		t.Fatalf("predict --json: %s", stdout)
	}
	// The +0.5 of region e is learnt: the error is well below 0.5/√5.
	if res.RMSE == 0 || res.RMSE > 0.15 {
		t.Errorf("rmse %v, want (0, 0.15]", res.RMSE)
	}
}

// TestPredictNullsFromModel: a model fitted on data ingested with --nulls
// mean fills NULL features with its training means at predict without a
// flag, and says so once; --nulls error restores the strict check.
func TestPredictNullsFromModel(t *testing.T) {
	dir := t.TempDir()
	holes := filepath.Join(dir, "holes.csv")
	_, _, null := nullsCSV(t, holes, 300)
	store, model := filepath.Join(dir, "s.store"), filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("ingest", "--quiet", "--nulls", "mean", "--out", store, "--target", "y", holes); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, e)
	}
	if code, _, e := runCLI("fit", "--quiet", "--out", model, "--centers", "50", "--sigma", "1", "--lambda", "1e-3", store); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, e)
	}
	code, stdout, e := runCLI("predict", "--quiet", "--model", model, holes)
	if code != 0 {
		t.Fatalf("predict without --nulls: exit %d: %s", code, e)
	}
	note := "predict: model " + model + " was fitted on data whose NULL features were filled with their means (--nulls mean): NULL, NaN and ±Inf features read as their training means; --nulls error refuses them\n"
	if strings.Count(e, note) != 1 || !strings.Contains(stdout, "rows       300\n") {
		t.Errorf("stdout %q\nstderr %q\nwant 300 rows and the note once: %q", stdout, e, note)
	}
	code, _, e = runCLI("predict", "--quiet", "--nulls", "error", "--model", model, holes)
	if want := fmt.Sprintf("row %d (1-based, counted within this file, header line not counted): column \"b\" is NULL", null[0]+1); code != 1 || !strings.Contains(e, want) || strings.Contains(e, "fitted on data") {
		t.Errorf("--nulls error: exit %d, stderr %q; want exit 1 and %q", code, e, want)
	}
}
