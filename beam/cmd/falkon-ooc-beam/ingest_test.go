package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
)

// csvInputs writes three CSV files with an identifier column and a weight.
func csvInputs(t *testing.T, dir string) []string {
	t.Helper()
	var ins []string
	row := 0
	for f, n := range []int{40, 7, 33} {
		var b strings.Builder
		b.WriteString("id,x1,x2,w,y\n")
		for range n {
			row++
			fmt.Fprintf(&b, "%d,%g,%d,%d,%g\n", row, float64(row%13)/3, row%5, 1+row%2, float64(row%7)/2)
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.csv", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, p)
	}
	return ins
}

// TestIngest: falkon-ooc-beam ingest gives falkon-ooc ingest's store; a
// bad value gives its message.
func TestIngest(t *testing.T) {
	dir := t.TempDir()
	ins := csvInputs(t, dir)
	out := filepath.Join(dir, "beam.store")
	args := append([]string{"ingest", "--out", out, "--target", "y", "--weight", "w", "--chunk-rows", "16", "--partitions", "3", "--json"}, ins...)
	code, stdout, stderr := runCmd(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Rows     int64    `json:"rows"`
		Features []string `json:"features"`
		Chunks   int      `json:"chunks"`
		Beam     struct {
			Jobs int `json:"jobs"`
		} `json:"beam"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if doc.Rows != 80 || strings.Join(doc.Features, ",") != "x1,x2" || doc.Chunks != 5 || doc.Beam.Jobs != 2 {
		t.Fatalf("document %+v", doc)
	}
	if !strings.Contains(stderr, `warning: column "id" is not a feature`) {
		t.Fatalf("stderr %s", stderr)
	}
	// The write job reports the rows it wrote (it said "0 rows").
	if !strings.Contains(stderr, "partitions: ") || !strings.Contains(stderr, " s, 80 rows\n") {
		t.Errorf("the ingest-write job's line does not give the 80 rows written:\n%s", stderr)
	}
	local := filepath.Join(dir, "local.store")
	if _, err := ingest.Run(t.Context(), ins, ingest.Config{Out: local, Targets: []string{"y"}, Weight: "w", ChunkRows: 16}); err != nil {
		t.Fatal(err)
	}
	if d, err := storecmp.Diff(local, out); err != nil || d != "" {
		t.Fatalf("%v %s", err, d)
	}

	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("id,x1,x2,w,y\n1,1,1,1,1\n2,1,NaN,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd("ingest", "--quiet", "--out", filepath.Join(dir, "bad.store"), "--target", "y", ins[0], bad)
	want := "falkon-ooc-beam ingest: " + bad + `: row 2 (1-based, counted within this file, header line not counted): column "x2" is NaN (--nulls drop skips such rows)` + "\n"
	if code != exitFailure || stderr != want {
		t.Fatalf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
}

// TestProgramName: under another name (os.Args[0]'s base) the messages
// name it: an interrupted ingest says "NAME ingest: interrupted".
func TestProgramName(t *testing.T) {
	if got := programName("/opt/bin/fob"); got != "fob" {
		t.Errorf("programName = %q, want fob", got)
	}
	if got := programName(""); got != "falkon-ooc-beam" {
		t.Errorf("programName of nothing = %q, want falkon-ooc-beam", got)
	}
	defer func(old string) { progName = old }(progName)
	progName = "fob"
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	code := run(ctx, append([]string{"ingest", "--quiet", "--out", filepath.Join(dir, "s"), "--target", "y"}, csvInputs(t, dir)...), &o, &e)
	if code != exitInterrupted || e.String() != "fob ingest: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, e.String(), exitInterrupted, "fob ingest: interrupted\n")
	}
}

// TestIngestCategorical: --categorical, --max-levels, --above-max-levels
// and --time-features reach the distributed ingest, whose store is
// falkon-ooc ingest's with the same flags: the same levels, one-hot,
// target-encoded and time features.
func TestIngestCategorical(t *testing.T) {
	dir := t.TempDir()
	var ins []string
	for f, n := range []int{30, 5, 41} {
		var b strings.Builder
		b.WriteString("shop,kind,day,x,y\n")
		for i := range n {
			fmt.Fprintf(&b, "s%d,%d,2024-%02d-%02d,%d,%d\n", (i*(f+2))%(6+3*f), i%3, 1+i%12, 1+i%28, i%7, i%4)
		}
		p := filepath.Join(dir, fmt.Sprintf("c-%d.csv", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, p)
	}
	for _, above := range []string{"target", "onehot"} {
		out := filepath.Join(dir, above+"-beam.store")
		args := append([]string{"ingest", "--quiet", "--out", out, "--target", "y", "--categorical", "kind", "--max-levels", "4", "--above-max-levels", above,
			"--time-features", "dow", "--chunk-rows", "16", "--partitions", "3", "--json"}, ins...)
		code, stdout, stderr := runCmd(args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct {
			Features []string `json:"features"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		shop := map[string]string{"target": "shop:target_mean", "onehot": "shop=(other)"}[above]
		if got := strings.Join(doc.Features, ","); !strings.Contains(got, shop) || !strings.Contains(got, "kind=0,kind=1,kind=2") || !strings.Contains(got, "day:dow_cos") {
			t.Fatalf("%s: features %s", above, got)
		}
		local := filepath.Join(dir, above+"-local.store")
		if _, err := ingest.Run(t.Context(), ins, ingest.Config{Out: local, Targets: []string{"y"}, Categorical: []string{"kind"}, MaxLevels: 4,
			AboveMaxLevels: above, TimeFeatures: []string{"dow"}, ChunkRows: 16}); err != nil {
			t.Fatal(err)
		}
		if d, err := storecmp.Diff(local, out); err != nil || d != "" {
			t.Fatalf("%s: %v %s", above, err, d)
		}
	}
	if code, _, stderr := runCmd("ingest", "--out", filepath.Join(dir, "x"), "--above-max-levels", "hash", ins[0]); code != exitUsage || !strings.Contains(stderr, `--above-max-levels must be target or onehot, not "hash"`) {
		t.Fatalf("--above-max-levels hash: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd("ingest", "--out", filepath.Join(dir, "x"), "--max-levels", "0", ins[0]); code != exitUsage || !strings.Contains(stderr, "--max-levels must be at least 1") {
		t.Fatalf("--max-levels 0: exit %d: %s", code, stderr)
	}
}
