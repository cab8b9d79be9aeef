package ingest

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// TestDryRun: DryRun returns what Run returns (files, rows, dropped and
// filled counts, features, targets, the column report, chunking), with
// no store written, for a Hive folder with an identifier and a string
// column, a string target, and NULLs under each Nulls policy.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	nan := nanFile(t, dir)
	for _, tc := range []struct {
		name   string
		inputs []string
		cfg    Config
	}{
		{"hive", []string{interop + "hive/data"}, Config{Targets: []string{"y"}}},
		{"labels", []string{interop + "hive/data"}, Config{Targets: []string{"color"}, Exclude: []string{"region"}}},
		{"drop", []string{nan}, Config{Features: []string{"x", "n"}, Targets: []string{"y"}, Nulls: "drop", BatchRows: 4}},
		{"mean", []string{nan}, Config{Features: []string{"x", "n"}, Targets: []string{"y"}, Nulls: "mean", BatchRows: 4, ChunkRows: 3}},
		{"weight", []string{nan}, Config{Features: []string{"x"}, Targets: []string{"y"}, Weight: "n", Nulls: "mean", BatchRows: 4}},
		{"duckdb", []string{interop + "duckdb.csv", interop + "duckdb_v1_snappy.parquet"}, Config{Nulls: "mean"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Out = filepath.Join(t.TempDir(), "s")
			want, err := checked(t, tc.inputs, cfg)
			if err != nil {
				t.Fatal(err)
			}
			dry := cfg
			dry.Out = filepath.Join(t.TempDir(), "never")
			got, err := dryRun(context.Background(), tc.inputs, dry, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dry.Out); !os.IsNotExist(err) {
				t.Errorf("DryRun wrote %s: %v", dry.Out, err)
			}
			want.BytesOut, want.Seconds, got.Seconds = 0, 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("DryRun\n%+v\nRun\n%+v", got, want)
			}
		})
	}
	_, err := DryRun(context.Background(), []string{"-"}, Config{})
	if want := "standard input (-) cannot be read without a store to spool it beside; give a file"; err == nil || err.Error() != want {
		t.Errorf("stdin: %v, want %s", err, want)
	}
}

// TestDryRunCounts: with Nulls "error" a dry run reads on past NULLs,
// NaNs and infinities in three columns and counts each column's.
func TestDryRunCounts(t *testing.T) {
	p := writeTestCSV(t, t.TempDir(), "a,b,c,y\n1,,3,1\nNaN,2,,2\n3,inf,NA,3\n4,5,6,\n5,6,7,5\n")
	res, err := DryRun(t.Context(), []string{p}, Config{Targets: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]chunkstore.BadCounts{"a": {NaN: 1}, "b": {Null: 1, PosInf: 1}, "c": {Null: 2}, "y": {Null: 1}}
	for _, c := range res.Columns {
		w := want[c.Name]
		if c.Bad == nil || *c.Bad != w {
			t.Errorf("column %s: bad %+v, want %+v", c.Name, c.Bad, w)
		}
	}
	notes := map[string]string{}
	for _, c := range res.Columns {
		notes[c.Name] = c.Note
	}
	if want := "1 NULL, 1 +Inf: ingest stops at the first (" + p + ", row 1) unless --nulls drop (skips the rows) or mean (fills the mean)"; notes["b"] != want {
		t.Errorf("b: note %q\nwant %q", notes["b"], want)
	}
}
