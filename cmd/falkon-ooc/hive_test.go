package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// writeHive writes a Hive-partitioned folder, dir/region=1/a.csv and
// dir/region=2/b.csv (or .parquet), of columns x and y = sin(x) + region,
// and returns its rows as (x, region, y).
func writeHive(t *testing.T, dir string, parquet bool) [][3]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(27, 5))
	var rows [][3]float64
	for k, file := range []string{"region=1/a", "region=2/b"} {
		region := float64(k + 1)
		var b strings.Builder
		b.WriteString("x,y\n")
		for range 150 {
			x := rng.Float64()*4 - 2
			x, _ = strconv.ParseFloat(f6(x), 64)
			y, _ := strconv.ParseFloat(f6(math.Sin(x)+region), 64)
			rows = append(rows, [3]float64{x, region, y})
			fmt.Fprintf(&b, "%s,%s\n", f6(x), f6(y))
		}
		path := filepath.Join(dir, file+".csv")
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if parquet {
			csvToParquet(t, path, filepath.Join(dir, file+".parquet"), []string{"x", "y"}, nil)
			os.Remove(path)
		}
	}
	return rows
}

// TestHiveKeyInPredict fits on a Hive folder, whose partition key region
// becomes a feature, and predicts the same folder: predict reads the key
// from the folder names as ingest does (issue 27 item 5), for CSV and
// Parquet, and --keep region copies it. Fit's and ingest's reports say
// where the feature came from.
func TestHiveKeyInPredict(t *testing.T) {
	for _, parquet := range []bool{false, true} {
		name := map[bool]string{false: "csv", true: "parquet"}[parquet]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			hv := filepath.Join(dir, "hv")
			rows := writeHive(t, hv, parquet)
			model := filepath.Join(dir, "m.falkon")
			code, _, e := runCLI("fit", "--out", model, "--target", "y", "--centers", "60", "--iters", "8", hv)
			if code != 0 {
				t.Fatalf("fit: exit %d: %s", code, e)
			}
			if want := "ingest: 300 rows, "; !strings.Contains(e, want) || !strings.Contains(e, "features x, region (from folder names)\n") {
				t.Errorf("fit's stderr does not say where region came from:\n%s", e)
			}

			out := filepath.Join(dir, "p.csv")
			code, stdout, e := runCLI("predict", "--model", model, "--keep", "region", "--out", out, "--quiet", hv)
			if code != 0 {
				t.Fatalf("predict: exit %d: %s", code, e)
			}
			if !strings.HasPrefix(stdout, "rows       300\n") {
				t.Errorf("predict: %s", stdout)
			}
			m, err := ooc.Load(model)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(m.Features(), ","); got != "x,region" {
				t.Fatalf("model features %s, want x,region", got)
			}
			x := make([]float64, 0, 2*len(rows))
			for _, r := range rows {
				x = append(x, r[0], r[1])
			}
			want := make([]float64, len(rows))
			m.PredictTo(want, x, len(rows))
			b, _ := os.ReadFile(out)
			recs := readCSV(t, string(b))
			if got := strings.Join(recs[0], ","); got != "region,y_pred" || len(recs) != len(rows)+1 {
				t.Fatalf("predictions: header %q, %d rows; want region,y_pred and %d rows", got, len(recs)-1, len(rows))
			}
			for i, r := range recs[1:] {
				p, err := strconv.ParseFloat(r[1], 64)
				if r[0] != strconv.Itoa(int(rows[i][1])) || err != nil || math.Abs(p-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
					t.Fatalf("row %d: %q, want region %v and %v (PredictTo)", i, r, rows[i][1], want[i])
				}
			}

			store := filepath.Join(dir, "s")
			code, stdout, e = runCLI("ingest", "--out", store, "--target", "y", "--quiet", hv)
			if code != 0 {
				t.Fatalf("ingest: exit %d: %s", code, e)
			}
			typ := "number"
			if parquet {
				typ = "float64"
			}
			report := fmt.Sprintf(`input column  type                    role                         why  note
x             %-22s  feature
y             %-22s  target
region        partition key (number)  feature (from folder names)
`, typ, typ)
			if !strings.Contains(stdout, "features  2: x, region (from folder names)\n") || !strings.HasSuffix(stdout, "\n\n"+report) {
				t.Errorf("ingest's report:\n%s\nwant it to end\n%s", stdout, report)
			}
		})
	}
}

// TestHiveKeyErrors: a folder whose key is not a number, for a model that
// reads it as a feature, and a key that is also a column of the file,
// stop predict with the file named.
func TestHiveKeyErrors(t *testing.T) {
	dir := t.TempDir()
	hv := filepath.Join(dir, "hv")
	writeHive(t, hv, false)
	model := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--out", model, "--target", "y", "--centers", "40", "--iters", "4", "--quiet", hv); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	north := filepath.Join(dir, "other", "region=north", "c.csv")
	os.MkdirAll(filepath.Dir(north), 0o755)
	os.WriteFile(north, []byte("x,y\n1,2\n"), 0o644)
	code, _, e := runCLI("predict", "--model", model, "--quiet", filepath.Join(dir, "other"))
	if want := `falkon-ooc predict: ` + north + `: column "region" comes from the folder name region=north in its path, which is not a number` + "\n"; code != 1 || e != want {
		t.Errorf("text key: exit %d, stderr\n%s\nwant\n%s", code, e, want)
	}

	both := filepath.Join(dir, "both", "region=1", "c.csv")
	os.MkdirAll(filepath.Dir(both), 0o755)
	os.WriteFile(both, []byte("x,region,y\n1,1,2\n"), 0o644)
	code, _, e = runCLI("predict", "--model", model, "--quiet", both)
	if want := `falkon-ooc predict: ` + both + `: "region" is both a column of the file and a partition key (region=1) in its path` + "\n"; code != 1 || e != want {
		t.Errorf("key and column: exit %d, stderr\n%s\nwant\n%s", code, e, want)
	}
}
