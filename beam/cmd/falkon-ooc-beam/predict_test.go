package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestPredict: falkon-ooc-beam predict writes one Parquet file beside
// each input (beam's tests compare them with falkon-ooc predict's) and,
// the inputs having the target, the metrics; a NaN feature gives
// falkon-ooc predict's message with its hint.
func TestPredict(t *testing.T) {
	dir := t.TempDir()
	ins := csvInputs(t, dir)
	st := filepath.Join(dir, "s.store")
	if _, err := ingest.Run(t.Context(), ins, ingest.Config{Out: st, Targets: []string{"y"}, Exclude: []string{"w"}}); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Fit(t.Context(), r, ooc.Config{Centers: 20, Lambda: 1e-3, Iterations: 5, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.falkon")
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(append([]string{"predict", "--beside", "--model", model, "--keep", "id", "--json"}, ins...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Rows  int64 `json:"rows"`
		Files []struct {
			Output string `json:"output"`
			Rows   int64  `json:"rows"`
		} `json:"files"`
		Metrics *struct {
			Rows int64    `json:"rows"`
			RMSE *float64 `json:"rmse"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if doc.Rows != 80 || len(doc.Files) != 3 || doc.Files[1].Rows != 7 || doc.Files[1].Output != filepath.Join(dir, "part-1.pred.parquet") ||
		doc.Metrics == nil || doc.Metrics.Rows != 80 || doc.Metrics.RMSE == nil {
		t.Fatalf("document %s", stdout)
	}
	// The text summary prints the metrics as falkon-ooc predict does.
	code, stdout, stderr = runCmd(append([]string{"predict", "--beside", "--model", model, "--force", "--quiet"}, ins...)...)
	if code != exitOK || !strings.Contains(stdout, "\nmetrics    rmse ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, f := range doc.Files {
		if st, err := os.Stat(f.Output); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f.Output, err)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("id,x1,x2\n1,1,1\n2,+Inf,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd("predict", "--beside", "--quiet", "--model", model, bad)
	want := "falkon-ooc-beam predict: " + bad + `: row 2 (1-based, counted within this file, header line not counted): column "x1" is +Inf (--nulls mean`
	if code != exitFailure || !strings.HasPrefix(stderr, want) {
		t.Fatalf("exit %d, stderr %q\nwant %q…", code, stderr, want)
	}
}
