package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

const interop = "../../testdata/interop/"

// The interop fixtures (testdata/interop/make.sh) were written by DuckDB
// and Polars; fixtures.json lists the codecs and encodings each holds.
var interopParquet = []string{
	"duckdb_v2_zstd.parquet",         // v2 pages: BYTE_STREAM_SPLIT floats, DELTA_BINARY_PACKED ints, dictionaries
	"duckdb_v1_snappy.parquet",       // v1 pages, PLAIN and PLAIN_DICTIONARY
	"duckdb_v1_gzip.parquet",         // gzip pages
	"duckdb_v1_uncompressed.parquet", // uncompressed pages
	"polars_zstd.parquet",            // Polars: one row group, its own page layout
}

var interopNumeric = []string{"id", "i64", "f32", "f64", "flag", "lowcard", "i16"}

// TestInteropValues ingests every fixture and checks every stored value,
// bit for bit, against DuckDB's own text of the same table.
func TestInteropValues(t *testing.T) {
	exp := loadExpected(t)
	files := append(slices.Clone(interopParquet), "duckdb.csv", "duckdb.tsv.gz")
	for _, name := range files {
		for _, viaArrow := range []bool{false, true} {
			if viaArrow && filepath.Ext(name) != ".parquet" {
				continue
			}
			sub := name
			if viaArrow {
				sub += "/pqarrow" // every column through pqarrow, none read directly
			}
			t.Run(sub, func(t *testing.T) { checkInterop(t, exp, name, viaArrow) })
		}
	}
}

// checkInterop ingests one fixture and compares it with DuckDB's dump.
func checkInterop(t *testing.T, exp *expected, name string, viaArrow bool) {
	t.Helper()
	res, st := mustIngest(t, []string{interop + name}, Config{
		Features: interopNumeric, Targets: []string{"nullable"}, Nulls: "drop", BatchRows: 1500, noDirect: viaArrow,
	})
	rows := len(exp.text["id"])
	if filepath.Ext(name) != ".parquet" {
		rows = 1000 // the text fixtures hold the first 1000 rows
	}
	var keep []int
	for i := range rows {
		if _, null := exp.value(t, "nullable", i); !null {
			keep = append(keep, i)
		}
	}
	if res.Rows != int64(len(keep)) || res.Dropped != int64(rows-len(keep)) {
		t.Fatalf("rows %d dropped %d, want %d and %d", res.Rows, res.Dropped, len(keep), rows-len(keep))
	}
	for _, col := range append(slices.Clone(interopNumeric), "nullable") {
		got := st.col(t, col)
		for k, i := range keep {
			want, _ := exp.value(t, col, i)
			if !sameBits(got[k], want) {
				t.Fatalf("column %s, source row %d: got %v (%#x), DuckDB says %s", col, i+1, got[k], got[k], exp.text[col][i])
			}
		}
	}
}

// TestInteropTypes checks the types recorded in the store and the default
// choice of features: every numeric or bool column but the target, and
// the string column "label" as one-hot features of its levels (quotes,
// commas and a line break in them kept as written).
func TestInteropTypes(t *testing.T) {
	for _, tc := range []struct {
		file  string
		types []string
	}{
		{"duckdb_v2_zstd.parquet", []string{"int64", "float32", "bool", "float64", "float64", "int16", "float64"}},
		{"polars_zstd.parquet", []string{"int64", "float32", "bool", "float64", "float64", "int16", "float64"}},
		{"duckdb.csv", []string{"float64", "float64", "bool", "float64", "float64", "float64", "float64"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, st := mustIngest(t, []string{interop + tc.file}, Config{Targets: []string{"f64"}, Nulls: "drop"})
			// id (0, 1, 2, …) looks like a row identifier and is left out.
			wantFeat := []string{"i64", "f32", "flag", "nullable", "lowcard", "i16"}
			var onehot []string
			if !strings.HasPrefix(tc.file, "polars") { // DuckDB's files have a string column
				wantFeat = append(wantFeat, `label=a "q"`, "label=a, b", "label=plain", "label=two\nlines")
				onehot = []string{"bool", "bool", "bool", "bool"}
			}
			if !slices.Equal(res.Features, wantFeat) || !slices.Equal(res.Targets, []string{"f64"}) {
				t.Fatalf("features %v targets %v, want %v and [f64]", res.Features, res.Targets, wantFeat)
			}
			var types []string
			for _, c := range append(st.m.Features, st.m.Targets...) {
				types = append(types, c.Type)
			}
			if want := slices.Concat(tc.types[:6], onehot, tc.types[6:]); !slices.Equal(types, want) {
				t.Fatalf("types %v, want %v", types, want)
			}
		})
	}
}

// TestInteropNullError checks the message a user sees for the first NULL.
func TestInteropNullError(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"duckdb_v2_zstd.parquet", `../../testdata/interop/duckdb_v2_zstd.parquet: row 6 (1-based, counted within this file): column "nullable" is NULL`},
		{"polars_zstd.parquet", `../../testdata/interop/polars_zstd.parquet: row 6 (1-based, counted within this file): column "nullable" is NULL`},
		{"duckdb.csv", `../../testdata/interop/duckdb.csv: row 6 (1-based, counted within this file, header line not counted): column "nullable" is NULL`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := checked(t, []string{interop + tc.file}, Config{Out: filepath.Join(t.TempDir(), "s"), Targets: []string{"nullable"}, Features: []string{"id"}})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestInteropMixed ingests Parquet from two writers and CSV in one store:
// rows appear in input order.
func TestInteropMixed(t *testing.T) {
	inputs := []string{interop + "duckdb.csv", interop + "polars_zstd.parquet", interop + "duckdb_v2_zstd.parquet"}
	res, st := mustIngest(t, inputs, Config{Features: []string{"id", "f64"}, Targets: []string{"i64"}, Workers: 3})
	if res.Rows != 1000+4200+4200 {
		t.Fatalf("rows %d", res.Rows)
	}
	id := st.col(t, "id")
	for i, v := range id {
		want := float64(i)
		if i >= 1000 {
			want = float64((i - 1000) % 4200)
		}
		if v != want {
			t.Fatalf("row %d: id %v, want %v", i, v, want)
		}
	}
	if st.m.Features[0].Type != "float64" { // int32 in Parquet, a number in CSV
		t.Fatalf("id type %s, want float64", st.m.Features[0].Type)
	}
}

// TestFlights ingests the real Polars-written file (3M rows, 11 row groups,
// zstd, dictionary pages) and compares every value with what arrow's own
// ReadTable reads.
func TestFlights(t *testing.T) {
	const path = "../../../shared/data/flights/flights-3m.parquet"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real data not here (%v); it lives in shared/data beside the repository", err)
	}
	start := time.Now()
	res, st := mustIngest(t, []string{path}, Config{Features: []string{"date", "distance"}, Targets: []string{"delay"}})
	t.Logf("ingested %d rows in %.2fs", res.Rows, time.Since(start).Seconds())
	if res.Rows != 3_000_000 {
		t.Fatalf("rows %d", res.Rows)
	}
	// Default features: "distance" (and "delay"); "date" is a timestamp
	// and "origin", "destination" are strings, none chosen by default.
	// A string target is read as class labels: "origin" has too many.
	if _, err := checked(t, []string{path}, Config{Out: filepath.Join(t.TempDir(), "d"), Targets: []string{"origin"}}); err == nil ||
		!strings.HasPrefix(err.Error(), path+`: column "origin" (a string target, read as class labels) has more than 100 distinct values ("LAS", "ATL", "MCI", "ANC", "RIC", … and `) {
		t.Fatalf("string target: %v", err)
	}

	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{Parallel: true, BatchSize: 1 << 20}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	sc := tbl.Schema()
	for _, name := range []string{"date", "distance", "delay"} {
		idx := sc.FieldIndices(name)[0]
		got := st.col(t, name)
		row := 0
		for _, chunk := range tbl.Column(idx).Data().Chunks() {
			for i := range chunk.Len() {
				var want float64
				switch a := chunk.(type) {
				case *array.Int64:
					want = float64(a.Value(i))
				case *array.Timestamp:
					unit := a.DataType().(*arrow.TimestampType).Unit
					want = float64(a.Value(i)) / float64(86400*int64(time.Second/unit.Multiplier()))
				default:
					t.Fatalf("column %s is %T", name, chunk)
				}
				if !sameBits(got[row], want) {
					t.Fatalf("%s row %d: got %v, arrow read %v", name, row+1, got[row], want)
				}
				row++
			}
		}
		if row != len(got) {
			t.Fatalf("%s: %d rows, arrow read %d", name, len(got), row)
		}
	}
	// Spot-check the date conversion against DuckDB's text of row 1:
	// 2001-01-01 00:01:00 is 11323 days and one minute after the epoch.
	if d := st.col(t, "date")[0]; d != 11323+1.0/1440 {
		t.Fatalf("date of row 1 = %v days, want %v", d, 11323+1.0/1440)
	}
}
