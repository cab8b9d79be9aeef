package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// mask replaces what changes from run to run: the temporary directory, the
// repository's absolute path, times and the manifest checksum.
func mask(t *testing.T, s, tmp string) string {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	s = strings.ReplaceAll(s, tmp, "$TMP")
	s = strings.ReplaceAll(s, repo, "$REPO")
	for _, r := range []struct{ re, with string }{
		{`"seconds": [0-9.e+-]+`, `"seconds": 0`},
		{`"(created|mtime)": "[^"]*"`, `"$1": "TIME"`},
		{`"checksum": "[0-9a-f]*"`, `"checksum": "CRC"`},
		{`(?m)^time .*$`, `time      MASKED`},
		{`(?m)^created .*$`, `created  MASKED`},
		{`modified [0-9-]+ [0-9:]+`, `modified MASKED`},
		// The store's bytes belong to chunkstore's format, not to ingest.
		{`"(bytes_out|bytes)": [0-9]+`, `"$1": 0`},
		{`"ratio": [0-9.e+-]+`, `"ratio": 0`},
		{`"store_id": "[0-9a-f]*"`, `"store_id": "ID"`},
		{`, id [0-9a-f]+`, `, id ID`},
		{`(?m)^bytes( +)[^\n]*? read, .*$`, `bytes${1}MASKED`},
		{`(?m)^bytes( +).* on disk, .*$`, `bytes${1}MASKED`},
		{`\(default "` + regexp.QuoteMeta(chunkstore.DefaultCodec) + `"\)`, `(default "DEFAULT")`},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return s
}

const fixtures = "../../testdata/interop/"

func TestIngestHelp(t *testing.T) {
	for _, cmd := range []string{"ingest", "inspect"} {
		code, out, errOut := runCLI(cmd, "--help")
		if code != 0 || errOut != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", cmd, code, errOut)
		}
		golden(t, cmd+"_help.golden", mask(t, out, t.TempDir()))
	}
}

// TestIngestInspect ingests two fixtures by two writers and checks the
// --json and human outputs of ingest and inspect against goldens.
func TestIngestInspect(t *testing.T) {
	tmp := t.TempDir()
	store := filepath.Join(tmp, "store")
	args := []string{"ingest", "--out", store, "--target", "f64", "--exclude", "id", "--nulls", "drop", "--workers", "2",
		"--chunk-rows", "2000", "--codec", "zstd", "--json", "--quiet", fixtures + "duckdb_v2_zstd.parquet", fixtures + "duckdb.csv"}
	code, out, errOut := runCLI(args...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "ingest_json.golden", mask(t, out, tmp))

	code, out, errOut = runCLI("inspect", "--json", "--verify", store)
	if code != 0 || errOut != "" {
		t.Fatalf("inspect: exit %d, stderr %q", code, errOut)
	}
	golden(t, "inspect_json.golden", mask(t, out, tmp))
	code, out, _ = runCLI("inspect", store)
	if code != 0 {
		t.Fatalf("inspect: exit %d", code)
	}
	golden(t, "inspect_text.golden", mask(t, out, tmp))

	// The human summary; progress goes to stderr only.
	store2 := filepath.Join(tmp, "store2")
	code, out, errOut = runCLI("ingest", "--out", store2, "--target", "i64", "--features", "f32,flag", "--codec", "s2", fixtures+"polars_zstd.parquet")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "ingest_text.golden", mask(t, out, tmp))
	if !strings.Contains(errOut, "ingest: 4200 rows") {
		t.Errorf("no final progress line on stderr: %q", errOut)
	}
}

// TestIngestReport checks the column report of ingest, text and --json,
// on a CSV file with an identifier (order_id, named like one), a row
// counter (t, increasing), a constant, a string and a date column.
func TestIngestReport(t *testing.T) {
	tmp := t.TempDir()
	code, out, errOut := runCLI("ingest", "--quiet", "--json", "--out", filepath.Join(tmp, "a"), "--target", "sales", "testdata/ingest_report.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "ingest_report_json.golden", mask(t, out, tmp))
	const warn = `falkon-ooc ingest: warning: column "order_id" is not a feature: it looks like a row identifier: named like one, integer, all 120 values distinct; name it in --features to keep it
falkon-ooc ingest: warning: column "t" is not a feature: it looks like a row identifier: integer, all 120 values distinct, increasing; name it in --features to keep it
`
	if errOut != warn {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, warn)
	}
	code, out, errOut = runCLI("ingest", "--quiet", "--out", filepath.Join(tmp, "b"), "--target", "sales", "--exclude", "store", "testdata/ingest_report.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "ingest_report_text.golden", mask(t, out, tmp))
	code, out, errOut = runCLI("inspect", filepath.Join(tmp, "b"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "ingest_report_inspect.golden", mask(t, out, tmp))
}

// TestIngestHive ingests a Hive-partitioned folder written by DuckDB
// (testdata/interop/hive): the id column is left out with a warning, the
// string column and the text partition key are skipped with their reasons,
// the numeric partition key is a feature.
func TestIngestHive(t *testing.T) {
	tmp := t.TempDir()
	code, out, errOut := runCLI("ingest", "--quiet", "--out", filepath.Join(tmp, "s"), "--target", "y", fixtures+"hive/data")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "ingest_hive_text.golden", mask(t, out, tmp))
	const warn = `falkon-ooc ingest: warning: column "id" is not a feature: it looks like a row identifier: named like one, integer, all 1200 values distinct; name it in --features to keep it` + "\n"
	if errOut != warn {
		t.Errorf("stderr %q, want %q", errOut, warn)
	}
}

// TestIngestStdin reads Parquet from standard input, named "-".
func TestIngestStdin(t *testing.T) {
	f, err := os.Open(fixtures + "polars_zstd.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	code, out, errOut := runCLI("ingest", "--quiet", "--out", filepath.Join(t.TempDir(), "s"), "--target", "f64", "--features", "i64,f32", "-")
	if code != 0 || !strings.HasPrefix(out, "ingested 4200 rows from 1 file into ") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
}

// TestIngestExit checks exit codes and the messages on stderr.
func TestIngestExit(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "s")
	for _, tc := range []struct {
		args []string
		code int
		msg  string // a line stderr must start with
	}{
		{[]string{"ingest", fixtures + "duckdb.csv"}, 2, "falkon-ooc ingest: --out STORE is required"},
		{[]string{"ingest", "--out", out}, 2, "falkon-ooc ingest: no input files"},
		{[]string{"ingest", "--out", out, "--nulls", "skip", "x.csv"}, 2, `falkon-ooc ingest: --nulls must be error, drop or mean, not "skip"`},
		{[]string{"ingest", "--out", out, "--codec", "lzma", "x.csv"}, 2, `falkon-ooc ingest: unknown --codec "lzma"`},
		{[]string{"ingest", "--bogus"}, 2, "falkon-ooc ingest: unknown flag --bogus"},
		{[]string{"ingest", "--out", out, filepath.Join(tmp, "missing.csv")}, 1,
			"falkon-ooc ingest: stat " + filepath.Join(tmp, "missing.csv") + ": no such file or directory"},
		{[]string{"ingest", "--quiet", "--out", out, "--target", "nullable", fixtures + "duckdb_v1_gzip.parquet"}, 1,
			`falkon-ooc ingest: ` + fixtures + `duckdb_v1_gzip.parquet: row 6 (1-based, counted within this file): column "nullable" is NULL (--nulls drop skips such rows; --nulls mean fills a feature with the mean of its other values and skips a row whose target is bad)`},
		{[]string{"ingest", "--quiet", "--out", out, "--categorical", "f32", fixtures + "duckdb_v1_gzip.parquet"}, 1,
			`falkon-ooc ingest: ` + fixtures + `duckdb_v1_gzip.parquet: column "f32" (named in categorical) has type float32; categorical columns are integer or string columns`},
		{[]string{"ingest", "--quiet", "--out", out, "--max-levels", "0", fixtures + "duckdb.csv"}, 2,
			`falkon-ooc ingest: --max-levels must be at least 1`},
		{[]string{"inspect"}, 2, "falkon-ooc inspect: want a STORE, a MODEL or Parquet/CSV INPUTs"},
		{[]string{"inspect", tmp}, 1, "falkon-ooc inspect: " + tmp + " is not a chunk store (it has no meta.json), and directory " + tmp + " holds no data files (.parquet, .parq, .pq, .csv, .tsv, optionally .gz, in it or its subdirectories)"},
	} {
		code, stdout, stderr := runCLI(tc.args...)
		if code != tc.code || stdout != "" {
			t.Errorf("%v: exit %d (want %d), stdout %q", tc.args, code, tc.code, stdout)
		}
		if !strings.HasPrefix(stderr, tc.msg) && !strings.Contains(stderr, "\n"+tc.msg) {
			t.Errorf("%v: stderr\n%s\nwant a line starting\n%s", tc.args, stderr, tc.msg)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v left %s", tc.args, out)
		}
	}
}

// TestIngestNoHeader reads a headerless gzip TSV, like the shared UCI data,
// with --no-header and with --columns.
func TestIngestNoHeader(t *testing.T) {
	tmp := t.TempDir()
	code, out, errOut := runCLI("ingest", "--quiet", "--json", "--out", filepath.Join(tmp, "a"), "--no-header", "--target", "c2", "testdata/ingest_noheader.tsv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"features": [
    "c0",
    "c1"
  ],`) {
		t.Fatalf("unexpected output %s", out)
	}
	code, out, errOut = runCLI("ingest", "--quiet", "--out", filepath.Join(tmp, "b"), "--columns", "x,y,label", "--target", "label", "testdata/ingest_noheader.tsv")
	if code != 0 || !strings.Contains(out, "features  2: x, y\ntargets   1: label\n") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
}
