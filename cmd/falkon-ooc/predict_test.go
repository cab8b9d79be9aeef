package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// predictFixture fits a small model on a store (features a, b, c; target
// y) and writes a CSV input of n rows with an id, a string column and the
// features in another order than the model's. It returns the model, the
// CSV's path and its rows (id, name, a, b, c, y as text).
func predictFixture(t *testing.T, n int) (model *ooc.Model, modelPath, csvPath string, rows [][]string) {
	t.Helper()
	dir := t.TempDir()
	train := makeStore(t, dir, 1500, 11, "y")
	modelPath = filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--out", modelPath, "--centers", "80", "--iters", "6", "--quiet", train); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	m, err := ooc.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 1))
	var b strings.Builder
	b.WriteString("id,name,c,a,b,y\n")
	for i := range n {
		a, bb, c := rng.NormFloat64(), rng.NormFloat64()*2+1, rng.Float64()
		row := []string{strconv.Itoa(1000 + i), fmt.Sprintf("row %d, \"quoted\"", i), f6(a), f6(bb), f6(c), f6(math.Sin(a) + bb*bb/4)}
		rows = append(rows, row)
		b.WriteString(strings.Join([]string{row[0], `"` + strings.ReplaceAll(row[1], `"`, `""`) + `"`, row[4], row[2], row[3], row[5]}, ",") + "\n")
	}
	csvPath = filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return m, modelPath, csvPath, rows
}

func f6(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// want returns the model's predictions of rows (as predictFixture makes
// them) by Model.PredictTo, with the features of skipped rows replaced by
// zero where zero[i] names a feature index to zero.
func wantPreds(t *testing.T, m *ooc.Model, rows [][]string, zero map[int]int) []float64 {
	t.Helper()
	x := make([]float64, 0, len(rows)*3)
	for i, r := range rows {
		for j := range 3 {
			v, err := strconv.ParseFloat(r[2+j], 64)
			if z, ok := zero[i]; ok && z == j {
				v, err = 0, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			x = append(x, v)
		}
	}
	out := make([]float64, len(rows))
	m.PredictTo(out, x, len(rows))
	return out
}

// readCSV returns the records of a CSV file or text.
func readCSV(t *testing.T, text string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("output is not CSV: %v\n%s", err, text)
	}
	return recs
}

// checkPreds compares output records (header id,name,y_pred) with rows
// and their expected predictions.
func checkPreds(t *testing.T, what string, recs [][]string, rows [][]string, want []float64) {
	t.Helper()
	if got := strings.Join(recs[0], ","); got != "id,name,y_pred" {
		t.Fatalf("%s: header %q, want id,name,y_pred", what, got)
	}
	if len(recs)-1 != len(rows) {
		t.Fatalf("%s: %d rows, want %d", what, len(recs)-1, len(rows))
	}
	for i, r := range recs[1:] {
		if r[0] != rows[i][0] || r[1] != rows[i][1] {
			t.Fatalf("%s: row %d keeps %q, %q; want %q, %q", what, i, r[0], r[1], rows[i][0], rows[i][1])
		}
		v, err := strconv.ParseFloat(r[2], 64)
		// PredictTo on other row blocks may sum in another order: 1e-12.
		if err != nil || math.Abs(v-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: row %d predicts %q, PredictTo gives %v", what, i, r[2], want[i])
		}
	}
}

// TestPredictStreamValues predicts a CSV file into CSV, Parquet and JSON
// Lines with --keep, and checks every value against Model.PredictTo.
func TestPredictStreamValues(t *testing.T) {
	m, model, in, rows := predictFixture(t, 3000)
	want := wantPreds(t, m, rows, nil)
	dir := t.TempDir()

	out := filepath.Join(dir, "p.csv")
	code, stdout, e := runCLI("predict", in, "--model", model, "--keep", "id,name", "--out", out, "--json", "--quiet")
	if code != 0 {
		t.Fatalf("predict --out csv: exit %d: %s", code, e)
	}
	var res predictResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Rows != 3000 || res.Dropped != 0 || res.RMSE == nil {
		t.Fatalf("predict --json: %v %+v\n%s", err, res, stdout)
	}
	b, _ := os.ReadFile(out)
	checkPreds(t, "CSV", readCSV(t, string(b)), rows, want)

	pq := filepath.Join(dir, "p.parquet")
	if code, _, e := runCLI("predict", in, "--model", model, "--keep", "id,name", "--out", pq, "--quiet"); code != 0 {
		t.Fatalf("predict --out parquet: exit %d: %s", code, e)
	}
	checkPreds(t, "Parquet", readCSV(t, parquetAsCSV(t, pq, []string{"y_pred"}, []string{"id", "name"})), rows, want)

	code, stdout, e = runCLI("predict", in, "--model", model, "--keep", "id,name", "--out", "-", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("predict --out - --json: exit %d: %s", code, e)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	recs := [][]string{{"id", "name", "y_pred"}}
	for _, l := range lines {
		var obj struct {
			ID    string  `json:"id"`
			Name  string  `json:"name"`
			YPred float64 `json:"y_pred"`
		}
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("JSON Lines: %v: %s", err, l)
		}
		recs = append(recs, []string{obj.ID, obj.Name, strconv.FormatFloat(obj.YPred, 'g', -1, 64)})
	}
	checkPreds(t, "JSON Lines", recs, rows, want)
	if !strings.Contains(e, `"rows": 3000`) {
		t.Errorf("--out - --json: no JSON summary on stderr:\n%s", e)
	}
}

// parquetAsCSV reads a Parquet file back through tabular into CSV text.
func parquetAsCSV(t *testing.T, path string, numeric, keep []string) string {
	t.Helper()
	r, err := tabular.Open([]string{path}, tabular.Options{Numeric: numeric, Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	w, err := tabular.NewWriter(&buf, tabular.CSV, r, numeric)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(t.Context()) {
		if err := w.Write(r.Batch(), r.Batch().Cols); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestPredictNulls: a NULL or NaN feature stops predict with the file,
// column and row; --nulls drop leaves the rows out and counts them;
// --nulls zero reads them as 0. A NULL target leaves the row unscored.
func TestPredictNulls(t *testing.T) {
	m, model, in, rows := predictFixture(t, 40)
	b, _ := os.ReadFile(in)
	lines := strings.Split(string(b), "\n")
	// Row 3 (1-based): b NULL; row 6: a NaN; row 9: y NULL.
	set := func(line, col int, v string) {
		f := strings.Split(lines[line], ",")
		// The quoted name holds a comma: fields shift by one after it.
		f[col+1] = v
		lines[line] = strings.Join(f, ",")
	}
	set(3, 4, "")
	set(6, 3, "NaN")
	set(9, 5, "NA")
	bad := filepath.Join(t.TempDir(), "nulls.csv")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644)

	code, _, e := runCLI("predict", "--model", model, "--quiet", bad)
	want := `falkon-ooc predict: ` + bad + `: row 3 (1-based, counted within this file, header line not counted): column "b" is NULL (--nulls mean reads such values as the feature's training mean, --nulls drop skips such rows, --nulls zero reads them as 0)`
	if code != 1 || !strings.HasPrefix(e, want) {
		t.Errorf("NULL feature: exit %d, stderr\n%s\nwant exit 1 and\n%s", code, e, want)
	}

	out := filepath.Join(t.TempDir(), "p.csv")
	code, stdout, e := runCLI("predict", "--model", model, "--quiet", "--nulls", "drop", "--keep", "id,name", "--out", out, "--json", bad)
	if code != 0 {
		t.Fatalf("--nulls drop: exit %d: %s", code, e)
	}
	var res predictResult
	json.Unmarshal([]byte(stdout), &res)
	if res.Rows != 38 || res.Dropped != 2 || res.Unscored != 1 || res.Metrics == nil {
		t.Errorf("--nulls drop: %s", stdout)
	}
	kept := append(append(append([][]string{}, rows[:2]...), rows[3:5]...), rows[6:]...)
	got, _ := os.ReadFile(out)
	checkPreds(t, "--nulls drop", readCSV(t, string(got)), kept, wantPreds(t, m, kept, nil))
	code, stdout, _ = runCLI("predict", "--model", model, "--quiet", "--nulls", "drop", bad)
	if wantOut := "rows       38\ndropped    2 rows with a NULL, NaN or ±Inf feature\n"; code != 0 || !strings.HasPrefix(stdout, wantOut) || !strings.Contains(stdout, "unscored   1 rows with a NULL, NaN or ±Inf target\n") {
		t.Errorf("--nulls drop: exit %d, stdout\n%s\nwant it to start\n%s", code, stdout, wantOut)
	}

	code, _, e = runCLI("predict", "--model", model, "--quiet", "--nulls", "zero", "--keep", "id,name", "--out", out, bad)
	if code != 0 {
		t.Fatalf("--nulls zero: exit %d: %s", code, e)
	}
	got, _ = os.ReadFile(out)
	// Features in want's order a, b, c: row index 2 has b zero, 5 has a zero.
	checkPreds(t, "--nulls zero", readCSV(t, string(got)), rows, wantPreds(t, m, rows, map[int]int{2: 1, 5: 0}))

	code, _, e = runCLI("predict", "--model", model, "--nulls", "skip", bad)
	if code != 2 || !strings.HasPrefix(e, `falkon-ooc predict: --nulls must be error, drop, mean or zero, not "skip"`) {
		t.Errorf("--nulls skip: exit %d, %s", code, e)
	}
	code, _, e = runCLI("predict", "--model", model, "--keep", "key", bad)
	if code != 1 || !strings.HasPrefix(e, `falkon-ooc predict: --keep: `+bad+`: no column(s) ["key"]; its columns are ["id" "name" "c" "a" "b" "y"]`) {
		t.Errorf("--keep of a missing column: exit %d, %s", code, e)
	}
}

// TestPredictHeaderlessAndStdin reads a headerless CSV named by --columns,
// and CSV and Parquet on standard input.
func TestPredictHeaderlessAndStdin(t *testing.T) {
	m, model, in, rows := predictFixture(t, 500)
	want := wantPreds(t, m, rows, nil)
	b, _ := os.ReadFile(in)
	body := string(b)[strings.Index(string(b), "\n")+1:]
	noHeader := filepath.Join(t.TempDir(), "nh.csv")
	os.WriteFile(noHeader, []byte(body), 0o644)
	code, stdout, e := runCLI("predict", noHeader, "--model", model, "--columns", "id,name,c,a,b,y", "--keep", "id,name", "--out", "-", "--quiet")
	if code != 0 {
		t.Fatalf("--columns: exit %d: %s", code, e)
	}
	checkPreds(t, "--columns", readCSV(t, stdout), rows, want)

	code, _, e = runCLI("predict", noHeader, "--model", model, "--no-header", "--quiet")
	if wantErr := `falkon-ooc predict: ` + noHeader + `: the model's feature column(s) ["a" "b" "c"] are missing; its columns are ["c0" "c1" "c2" "c3" "c4" "c5"]`; code != 1 || !strings.HasPrefix(e, wantErr) {
		t.Errorf("--no-header: exit %d, stderr\n%s\nwant\n%s", code, e, wantErr)
	}

	defer func() { stdin = os.Stdin }()
	stdin = bytes.NewReader(b)
	code, stdout, e = runCLI("predict", "-", "--model", model, "--keep", "id,name", "--out", "-", "--quiet")
	if code != 0 {
		t.Fatalf("CSV on stdin: exit %d: %s", code, e)
	}
	checkPreds(t, "CSV on stdin", readCSV(t, stdout), rows, want)

	pq := filepath.Join(t.TempDir(), "in.parquet")
	csvToParquet(t, in, pq, []string{"c", "a", "b", "y"}, []string{"id", "name"})
	pqBytes, _ := os.ReadFile(pq)
	stdin = bytes.NewReader(pqBytes)
	code, stdout, e = runCLI("predict", "-", "--model", model, "--keep", "id,name", "--out", "-", "--quiet")
	if code != 0 {
		t.Fatalf("Parquet on stdin: exit %d: %s", code, e)
	}
	checkPreds(t, "Parquet on stdin", readCSV(t, stdout), rows, want)

	stdin = bytes.NewReader(pqBytes)
	code, _, e = runCLI("predict", "-", "--model", model, "--keep", "key", "--quiet")
	if wantErr := `falkon-ooc predict: --keep: standard input (Parquet): no column(s) ["key"]`; code != 1 || !strings.HasPrefix(e, wantErr) {
		t.Errorf("Parquet on stdin, missing column: exit %d, stderr\n%s\nwant\n%s", code, e, wantErr)
	}
}

// csvToParquet copies columns of a CSV file into a Parquet file: numeric
// ones as float64, kept ones as strings.
func csvToParquet(t *testing.T, in, out string, numeric, keep []string) {
	t.Helper()
	r, err := tabular.Open([]string{in}, tabular.Options{Numeric: numeric, Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tabular.NewWriter(f, tabular.Parquet, r, numeric)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(t.Context()) {
		if err := w.Write(r.Batch(), r.Batch().Cols); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
