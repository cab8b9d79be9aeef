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

// writeShopCSV writes n rows of shop (200 levels of unequal frequency,
// each with its own effect; in test files every 20th row a new level),
// x and y = sin(x) + effect(shop), and returns each row's level.
func writeShopCSV(t *testing.T, path string, n int, seed uint64, unseen bool) []string {
	t.Helper()
	effect := rand.New(rand.NewPCG(7, 7))
	var eff [200]float64
	for i := range eff {
		eff[i] = effect.NormFloat64() * 0.5
	}
	rng := rand.New(rand.NewPCG(seed, 45))
	var b strings.Builder
	b.WriteString("shop,x,y\n")
	var levels []string
	for i := range n {
		k := int(200 * rng.Float64() * rng.Float64())
		shop, e := fmt.Sprintf("shop-%03d", k), eff[k]
		if unseen && i%20 == 3 {
			shop, e = fmt.Sprintf("new-%d", i), 0
		}
		levels = append(levels, shop)
		x := rng.NormFloat64()
		fmt.Fprintf(&b, "%s,%.6f,%.6f\n", shop, x, math.Sin(x)+e)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return levels
}

// TestFitRawTargetEncoding: fit on a CSV file takes ingest's
// --max-levels and --above-max-levels; above the cap the column is
// target-encoded by default, in the store and the model, which predicts
// with the levels' means (a level the training lacks reads as the
// training mean, counted and reported) and beats the cap's one-hot features; the flags
// are refused with a store and checked.
func TestFitRawTargetEncoding(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	seen := map[string]bool{}
	for _, l := range writeShopCSV(t, train, 3000, 1, false) {
		seen[l] = true
	}
	unseen := 0 // the test rows of levels the training rows lack
	for _, l := range writeShopCSV(t, test, 600, 2, true) {
		if !seen[l] {
			unseen++
		}
	}
	rmse := map[string]float64{}
	for _, enc := range []string{"target", "onehot"} {
		model := filepath.Join(dir, enc+".falkon")
		if code, _, e := runCLI("fit", "--quiet", "--out", model, "--centers", "200", "--sigma", "1", "--lambda", "1e-5",
			"--target", "y", "--max-levels", "16", "--above-max-levels", enc, train); code != 0 {
			t.Fatalf("fit --above-max-levels %s: exit %d: %s", enc, code, e)
		}
		code, stdout, e := runCLI("predict", "--quiet", "--json", "--model", model, test)
		if code != 0 {
			t.Fatalf("predict: exit %d: %s", code, e)
		}
		var res struct {
			Unseen []struct {
				Column string
				Count  int64
				To     string
			}
			RMSE float64 `json:"rmse"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		rmse[enc] = res.RMSE
		if enc == "target" {
			want := fmt.Sprintf("predict: %d values of column \"shop\" not among the model's levels, read as shop:target_mean ", unseen)
			if !strings.Contains(e, want) || !strings.Contains(e, ", the training mean\n") {
				t.Errorf("stderr %q, want it to contain %q…, the training mean", e, want)
			}
			if len(res.Unseen) != 1 || res.Unseen[0].Count != int64(unseen) {
				t.Errorf("unseen %+v, want %d", res.Unseen, unseen)
			}
		}
		_, out, _ := runCLI("inspect", model+".store")
		if want := map[string]string{"target": "shop:target_mean", "onehot": "shop=(other)"}[enc]; !strings.Contains(out, want) {
			t.Errorf("%s: the store has no feature %q:\n%s", enc, want, out)
		}
	}
	if rmse["target"] >= rmse["onehot"] {
		t.Errorf("test RMSE: target-encoded %v, 16 one-hot levels %v; want the first lower", rmse["target"], rmse["onehot"])
	}
	store := filepath.Join(dir, "target.falkon.store")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--above-max-levels", "hash", "--target", "y", train}, `--above-max-levels must be target or onehot, not "hash"`},
		{[]string{"--max-levels", "0", "--target", "y", train}, "--max-levels must be at least 1"},
		{[]string{"--max-levels", "8", store}, "--max-levels applies to Parquet/CSV inputs; " + store + " is a store"},
	} {
		args := append([]string{"fit", "--quiet", "--out", filepath.Join(dir, "x.falkon")}, c.args...)
		if code, _, e := runCLI(args...); code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, e, c.want)
		}
	}
}
