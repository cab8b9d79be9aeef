package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestTinyJob runs the whole job at the tiny sizes, as the full sizes
// run: gen writes the files (row groups as asked, the Bayes optimum
// beside them), run drives the command through ingest, fit --tune and
// predict, and a model that learned something comes out (between the
// baseline and the Bayes optimum). A second run with -resume skips the
// ingest.
func TestTinyJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "falkon-ooc")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/falkon-ooc").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	logf := func(f string, a ...any) { t.Logf(f, a...) }
	for _, name := range []string{"tiny", "tinyreg"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sh := shapes[name]
			md, err := generate(dir, sh, 7, logf)
			if err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "train", "*.parquet"))
			if len(files) != sh.Files {
				t.Fatalf("%d training files, want %d", len(files), sh.Files)
			}
			var rows int64
			for _, f := range files {
				r, err := file.OpenParquetFile(f, false)
				if err != nil {
					t.Fatal(err)
				}
				if r.NumRowGroups() != sh.RowGroups {
					t.Errorf("%s: %d row groups, want %d", f, r.NumRowGroups(), sh.RowGroups)
				}
				rows += r.NumRows()
				r.Close()
			}
			if rows != sh.Rows-sh.Test || md.Train != rows {
				t.Fatalf("%d training rows, want %d", rows, sh.Rows-sh.Test)
			}
			o := runOpts{bin: bin, dir: dir, centers: 400}
			res, err := runJob(context.Background(), o, logf)
			if err != nil {
				t.Fatal(err)
			}
			if sh.Binary {
				// The Bayes AUC bounds what any model reaches on these
				// rows; a model that learned nothing is at 0.5.
				if !(res.TestAUC > 0.8 && res.TestAUC <= md.BayesAUC+0.01) {
					t.Errorf("test AUC %.4f, Bayes %.4f", res.TestAUC, md.BayesAUC)
				}
			} else if !(res.TestMSE < 0.5*md.BaselineMSE && res.TestMSE > 0.9*md.BayesMSE) {
				t.Errorf("test MSE %.4g, Bayes %.4g, predicting the mean %.4g", res.TestMSE, md.BayesMSE, md.BaselineMSE)
			}
			if len(res.Steps) != 3 || res.PeakRSS <= 0 || res.DiskStore <= 0 || res.DiskModel <= 0 {
				t.Errorf("record: %d steps, peak RSS %d, store %d B, model %d B", len(res.Steps), res.PeakRSS, res.DiskStore, res.DiskModel)
			}
			var fit struct {
				Search *json.RawMessage        `json:"search"`
				Phases []struct{ Name string } `json:"phases"`
			}
			if err := json.Unmarshal(res.Fit, &fit); err != nil || fit.Search == nil || len(fit.Phases) == 0 {
				t.Errorf("the fit's record lacks the search or the phases (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "result-"+name+"-M400.json")); err != nil {
				t.Error(err)
			}
			o.resume = true
			res2, err := runJob(context.Background(), o, logf)
			if err != nil {
				t.Fatal(err)
			}
			if !res2.Steps[0].Skipped || !res2.Steps[1].Resumed {
				t.Errorf("-resume: ingest skipped %v, fit resumed %v", res2.Steps[0].Skipped, res2.Steps[1].Resumed)
			}
			if math.Abs(res2.TestAUC-res.TestAUC) > 1e-12 || math.Abs(res2.TestMSE-res.TestMSE) > 1e-9*res.TestMSE {
				t.Errorf("-resume changed the test metric: AUC %v → %v, MSE %v → %v", res.TestAUC, res2.TestAUC, res.TestMSE, res2.TestMSE)
			}
		})
	}
}

// TestAUC checks auc against a hand count, ties counted half.
func TestAUC(t *testing.T) {
	s := []float64{0.1, 0.4, 0.35, 0.8, 0.4}
	y := []float64{0, 0, 1, 1, 1}
	// Pairs (pos, neg): 0.35>0.1 ✓, 0.35<0.4 ✗, 0.8 ✓✓, 0.4>0.1 ✓, 0.4=0.4 ½ → 4.5 of 6.
	if got := auc(s, y); math.Abs(got-4.5/6) > 1e-15 {
		t.Errorf("auc %v, want %v", got, 4.5/6)
	}
}
