package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestHivePredictJoinByID runs the first hour with one's own data end to
// end on the Hive-partitioned data set DuckDB wrote
// (testdata/interop/hive: part=…/region=…/ folders, an id column, a string
// column): fit on the folder, predict the folder with --keep id, and join
// the predictions back to DuckDB's own reading of the data
// (expected.csv) by id. The RMSE of the id-joined pairs equals the RMSE of
// the position-joined pairs and the one predict reports.
func TestHivePredictJoinByID(t *testing.T) {
	const data = "../../testdata/interop/hive/data"
	dir := t.TempDir()
	model := filepath.Join(dir, "m.falkon")
	// part is a partition key: a feature, which predict reads from the
	// folder names as ingest does.
	if code, _, e := runCLI("fit", data, "--out", model, "--target", "y", "--centers", "100", "--iters", "10", "--quiet"); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	preds := filepath.Join(dir, "p.csv")
	code, out, e := runCLI("predict", data, "--model", model, "--keep", "id", "--out", preds, "--json", "--quiet")
	if code != 0 {
		t.Fatalf("predict: %s", e)
	}
	var res predictResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.RMSE == nil || res.Rows != 1200 {
		t.Fatalf("predict --json: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(preds)
	got := readCSV(t, string(b))
	b, _ = os.ReadFile("../../testdata/interop/hive/expected.csv")
	want := readCSV(t, string(b))
	if len(got) != len(want) || got[0][0] != "id" || want[0][0] != "id" || want[0][4] != "y" {
		t.Fatalf("%d predictions (header %q) for %d rows (header %q)", len(got), got[0], len(want), want[0])
	}
	yByID := map[string]float64{}
	for _, r := range want[1:] {
		y, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		yByID[r[0]] = y
	}
	var byID, byPos float64
	for i, r := range got[1:] {
		p, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		y, ok := yByID[r[0]]
		if !ok {
			t.Fatalf("prediction for id %s, which the data does not hold", r[0])
		}
		delete(yByID, r[0])
		byID += (p - y) * (p - y)
		yPos, _ := strconv.ParseFloat(want[1+i][4], 64)
		byPos += (p - yPos) * (p - yPos)
	}
	if len(yByID) != 0 {
		t.Fatalf("%d ids without a prediction", len(yByID))
	}
	n := float64(len(got) - 1)
	rmseID, rmsePos := math.Sqrt(byID/n), math.Sqrt(byPos/n)
	// Same pairs summed in the same order: equal. predict's RMSE sums the
	// same squared errors in batches: within 1e-12.
	if rmseID != rmsePos || math.Abs(rmseID-*res.RMSE) > 1e-12*rmseID {
		t.Errorf("RMSE joined by id %v, by position %v, reported %v", rmseID, rmsePos, *res.RMSE)
	}
	// y = sin(x1) + x2/10 + part: without part the best RMSE would be
	// part's standard deviation, √(2/3) ≈ 0.816.
	if rmseID > 0.2 {
		t.Errorf("RMSE %v: the model did not learn y from x1, x2 and part", rmseID)
	}
}
