package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
)

const interop = "../testdata/interop/"

// csvFiles writes CSV files of unequal lengths with an identifier, a
// constant column, a weight and rows to drop.
func csvFiles(t *testing.T, dir string) []string {
	t.Helper()
	var ins []string
	row := 0
	for f, n := range []int{50, 3, 4, 61, 17} {
		var b strings.Builder
		b.WriteString("row_id,x,c,w,y\n")
		for range n {
			row++
			x := fmt.Sprint(float64((row*37)%101) / 7)
			if row%9 == 4 {
				x = "NA"
			}
			fmt.Fprintf(&b, "%d,%s,5,%d,%d\n", row, x, row%4, row%3)
		}
		in := filepath.Join(dir, fmt.Sprintf("f%d.csv", f))
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return ins
}

// catFiles writes CSV files of unequal lengths with a string column
// whose levels differ from file to file (NULLs among them), an integer
// column to name categorical, a date and rows to drop.
func catFiles(t *testing.T, dir string) []string {
	t.Helper()
	var ins []string
	row := 0
	for f, n := range []int{45, 2, 80, 9} {
		var b strings.Builder
		b.WriteString("shop,kind,day,x,y\n")
		for range n {
			row++
			shop := fmt.Sprintf("s%d", (row*(f+2))%(7+5*f))
			if row%13 == 2 {
				shop = ""
			}
			x := fmt.Sprint(row % 11)
			if row%19 == 7 {
				x = "NA"
			}
			fmt.Fprintf(&b, "%s,%d,2024-%02d-%02d,%s,%d\n", shop, row%3, 1+row%12, 1+row%28, x, row%5)
		}
		in := filepath.Join(dir, fmt.Sprintf("c%d.csv", f))
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return ins
}

// TestIngestMatchesLocal: falkon-ooc-beam's ingest on Prism gives the
// store of ingest.Run (the same chunks, statistics and column report) for
// a Hive folder of Parquet files with a string target, for CSV files
// with a weight column and dropped rows, and for CSV files with
// categorical columns (levels counted per file, merged by the driver)
// and a date with time features: the same levels, encoding and one-hot
// features, or, above --max-levels, the same target encoding (sums of
// the target per file and fold, merged by the driver); a failed task is
// run again.
func TestIngestMatchesLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		name   string
		inputs []string
		cfg    ingest.Config
		parts  int
	}{
		{"hive", []string{interop + "hive/data"}, ingest.Config{Targets: []string{"color"}, ChunkRows: 37}, 5},
		{"csv", csvFiles(t, dir), ingest.Config{Targets: []string{"y"}, Weight: "w", Nulls: "drop", ChunkRows: 8}, 3},
		{"categorical", catFiles(t, dir), ingest.Config{Targets: []string{"y"}, Categorical: []string{"kind"}, MaxLevels: 5,
			TimeFeatures: []string{"hour", "doy"}, Nulls: "drop", ChunkRows: 16, AboveMaxLevels: "onehot"}, 4},
		{"target", catFiles(t, dir), ingest.Config{Targets: []string{"y"}, Categorical: []string{"kind"}, MaxLevels: 5,
			TimeFeatures: []string{"hour", "doy"}, Nulls: "drop", ChunkRows: 16}, 3},
	}
	var failed atomic.Int32
	taskHook = func(kind string, i int) error {
		if kind == kindIngestWrite && i == 1 && failed.Add(1) == 1 {
			return errors.New("injected failure")
		}
		return nil
	}
	defer func() { taskHook = nil }()
	for _, c := range cases {
		c.cfg.Out = filepath.Join(dir, c.name+"-local")
		want, err := ingest.Run(ctx, c.inputs, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.cfg.Out = filepath.Join(dir, c.name+"-beam")
		var jobs []JobStats
		got, err := Ingest(ctx, c.inputs, c.cfg, Options{Partitions: c.parts, OnJob: func(s JobStats) { jobs = append(jobs, s) }})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := storecmp.Diff(filepath.Join(dir, c.name+"-local"), c.cfg.Out); err != nil || d != "" {
			t.Fatalf("%s: %v %s", c.name, err, d)
		}
		for _, r := range []*ingest.Result{want, got} {
			r.Seconds, r.BytesOut, r.Memory = 0, 0, ingest.Memory{}
		}
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Fatalf("%s: results differ:\n%s\n%s", c.name, a, b)
		}
		if c.name == "categorical" && (!slices.Contains(got.Features, "shop=(other)") || !slices.Contains(got.Features, "shop=(null)") ||
			!slices.Contains(got.Features, "kind=2") || !slices.Contains(got.Features, "day:doy_sin")) {
			t.Fatalf("categorical: features %q", got.Features)
		}
		if c.name == "target" && (!slices.Contains(got.Features, "shop:target_mean") || !slices.Contains(got.Features, "kind=2")) {
			t.Fatalf("target: features %q", got.Features)
		}
		t.Logf("%s: %d rows, %d files, %d chunks; jobs %+v", c.name, got.Rows, len(got.Files), got.Chunks, jobs)
	}
	if failed.Load() < 2 {
		t.Fatalf("the injected failure did not happen (%d)", failed.Load())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestIngestErrors: an error in the data is Run's, with Run's message, and
// leaves nothing behind.
func TestIngestErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ins := csvFiles(t, dir)
	bad := filepath.Join(dir, "f9.csv")
	if err := os.WriteFile(bad, []byte("row_id,x,c,w,y\n900,1,5,1,0\n901,2,5,-3,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ins = append(ins[:2], append([]string{bad}, ins[2:]...)...)
	cfg := ingest.Config{Targets: []string{"y"}, Weight: "w", Nulls: "drop", Out: filepath.Join(dir, "local")}
	_, want := ingest.Run(ctx, ins, cfg)
	cfg.Out = filepath.Join(dir, "beam")
	_, got := Ingest(ctx, ins, cfg, Options{Partitions: 2})
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if !strings.Contains(got.Error(), "f9.csv") || !strings.Contains(got.Error(), "negative weight") {
		t.Fatalf("message %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
	if _, err := os.Stat(cfg.Out); err == nil {
		t.Fatal("a store was written")
	}
}
