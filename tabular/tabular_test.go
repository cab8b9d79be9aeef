package tabular_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/tabular"
)

const fixtures = "../testdata/interop/"

// readAll reads files into CSV text: the numeric columns, then the kept
// ones, through a Writer. It also returns the batches' sizes.
func readAll(t *testing.T, files []string, opt tabular.Options, format tabular.Format) (out string, batches []int, dropped int, err error) {
	t.Helper()
	r, err := tabular.Open(files, opt)
	if err != nil {
		return "", nil, 0, err
	}
	defer r.Close()
	var buf bytes.Buffer
	cols := append(append([]string(nil), opt.Numeric...), opt.Optional...)
	if !r.HasOptional() {
		cols = opt.Numeric
	}
	w, err := tabular.NewWriter(&buf, format, r, cols)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(t.Context()) {
		b := r.Batch()
		batches = append(batches, b.Rows)
		dropped += b.Dropped
		if err := w.Write(b, b.Cols); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := r.Err(); err != nil {
		return "", batches, dropped, err
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), batches, dropped, nil
}

// DuckDB's Parquet and CSV of the same rows read the same, batch by
// batch across row groups, with string columns (quotes, commas, newlines)
// kept as they are.
func TestParquetAndCSVAgree(t *testing.T) {
	opt := tabular.Options{Numeric: []string{"f64", "i16", "flag", "f32"}, Keep: []string{"label", "id"}, BatchRows: 300}
	fromCSV, _, _, err := readAll(t, []string{fixtures + "duckdb.csv"}, opt, tabular.CSV)
	if err != nil {
		t.Fatal(err)
	}
	fromPQ, batches, _, err := readAll(t, []string{fixtures + "duckdb_v2_zstd.parquet"}, opt, tabular.CSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 14 || batches[0] != 300 || batches[13] != 4200-13*300 {
		t.Errorf("batches %v, want 13 of 300 and one of 300", batches)
	}
	// The CSV fixture holds the first 1000 rows.
	pqLines := strings.SplitAfterN(fromPQ, "\n", -1)
	csvText := fromCSV
	if !strings.HasPrefix(fromPQ, csvText[:len(csvText)-1]) {
		t.Errorf("Parquet and CSV inputs read differently:\nCSV:\n%.400s\nParquet:\n%.400s", fromCSV, fromPQ)
	}
	if len(pqLines) < 4200 {
		t.Errorf("Parquet: %d lines", len(pqLines))
	}
	if want := "label,id,f64,i16,flag,f32\nplain,0,0,0,1,0\n\"a, b\",1,0.9414709848078965,1,0,4.625\n"; !strings.HasPrefix(fromPQ, want) {
		t.Errorf("Parquet read as\n%.200s\nwant a start\n%s", fromPQ, want)
	}
}

// Parquet output keeps the kept columns' types: written and read back, the
// values are the same.
func TestParquetRoundTrip(t *testing.T) {
	opt := tabular.Options{Numeric: []string{"f64", "lowcard"}, Keep: []string{"id", "i64", "label"}, BatchRows: 1000}
	var pq bytes.Buffer
	r, err := tabular.Open([]string{fixtures + "duckdb_v1_snappy.parquet"}, opt)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tabular.NewWriter(&pq, tabular.Parquet, r, opt.Numeric)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(t.Context()) {
		if err := w.Write(r.Batch(), r.Batch().Cols); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(r.Err(), r.Close(), w.Close()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.parquet")
	os.WriteFile(path, pq.Bytes(), 0o644)
	want, _, _, err := readAll(t, []string{fixtures + "duckdb_v1_snappy.parquet"}, opt, tabular.JSONLines)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := readAll(t, []string{path}, opt, tabular.JSONLines)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("round trip differs:\n%.300s\nwant\n%.300s", got, want)
	}
	if !strings.HasPrefix(got, `{"id":0,"i64":-5000,"label":"plain","f64":0,"lowcard":0}`) {
		t.Errorf("JSON Lines: %.200s", got)
	}
}

// A NULL in a numeric column: an error naming file, column and row; or
// the row dropped, kept columns too; or read as 0 or as the Fill value.
// In an optional column
// it is NaN (empty in CSV output is not written: NaN).
func TestNulls(t *testing.T) {
	file := fixtures + "duckdb_v1_gzip.parquet"
	opt := tabular.Options{Numeric: []string{"nullable"}, Keep: []string{"id"}, BatchRows: 10}
	_, _, _, err := readAll(t, []string{file}, opt, tabular.CSV)
	var ve *tabular.ValueError
	if !errors.As(err, &ve) || err.Error() != file+`: row 6 (1-based, counted within this file): column "nullable" is NULL` {
		t.Errorf("NULL: %v", err)
	}
	opt.Nulls = "drop"
	out, _, dropped, err := readAll(t, []string{file}, opt, tabular.CSV)
	// NULL at every i with i % 17 == 5: 247 of 4200 rows.
	if err != nil || dropped != 247 || strings.Count(out, "\n") != 1+4200-247 || strings.Contains(out, "\n5,") || !strings.Contains(out, "\n6,1.5\n") {
		t.Errorf("drop: err %v, dropped %d, %d lines:\n%.100s", err, dropped, strings.Count(out, "\n"), out)
	}
	opt.Nulls = "zero"
	out, _, _, err = readAll(t, []string{file}, opt, tabular.CSV)
	if err != nil || !strings.Contains(out, "\n5,0\n") {
		t.Errorf("zero: %v\n%.200s", err, out)
	}
	opt.Nulls, opt.Fill = "fill", []float64{-2.5}
	out, _, _, err = readAll(t, []string{file}, opt, tabular.CSV)
	if err != nil || !strings.Contains(out, "\n5,-2.5\n") || !strings.Contains(out, "\n6,1.5\n") {
		t.Errorf("fill: %v\n%.200s", err, out)
	}
	opt.Fill = nil
	if _, err := tabular.Open([]string{file}, opt); err == nil || err.Error() != "tabular: Nulls fill needs one Fill value per Numeric column: 0 values for 1 columns" {
		t.Errorf("fill without values: %v", err)
	}
	opt = tabular.Options{Numeric: []string{"id"}, Optional: []string{"nullable"}}
	out, _, _, err = readAll(t, []string{file}, opt, tabular.CSV)
	if err != nil || !strings.Contains(out, "\n5,NaN\n") {
		t.Errorf("optional: %v\n%.200s", err, out)
	}
	opt.Optional = []string{"nullable", "absent"}
	r, err := tabular.Open([]string{file}, opt)
	if err != nil || r.HasOptional() {
		t.Errorf("optional columns one of which is absent: %v, HasOptional %v", err, r != nil && r.HasOptional())
	}
}

// Each file must have the chosen columns; the error names the file and
// its columns.
func TestMissingColumn(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("x,k\n1,p\n2,q\n"), 0o644)
	os.WriteFile(b, []byte("k,z\nr,3\n"), 0o644)
	_, _, _, err := readAll(t, []string{a, b}, tabular.Options{Numeric: []string{"x"}, Keep: []string{"k"}}, tabular.CSV)
	var me *tabular.MissingError
	if !errors.As(err, &me) || err.Error() != b+`: no column(s) ["x"]; its columns are: "k", "z"` {
		t.Errorf("got %v", err)
	}
	_, _, _, err = readAll(t, []string{a}, tabular.Options{Numeric: []string{"k"}}, tabular.CSV)
	if err == nil || err.Error() != a+`: row 1 (1-based, counted within this file, header line not counted): column "k": "p" is not a number` {
		t.Errorf("text in a numeric column: %v", err)
	}
	out, _, _, err := readAll(t, nil, tabular.Options{Numeric: []string{"x"}, Stdin: strings.NewReader("x\n1\n")}, tabular.CSV)
	if err == nil || err.Error() != "tabular: no input files" {
		t.Errorf("no files: %q %v", out, err)
	}
	out, _, _, err = readAll(t, []string{"-"}, tabular.Options{Numeric: []string{"x"}, Names: []string{"x", "y"}, Stdin: strings.NewReader("1,a\n2,b\n")}, tabular.CSV)
	if err != nil || out != "x\n1\n2\n" {
		t.Errorf("headerless stdin: %q %v", out, err)
	}
}

// A Writer leaves the file it writes to open (the caller owns it), and
// what it writes reads back.
func TestWriterLeavesFileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tabular.NewWriter(f, tabular.Parquet, nil, []string{"a", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(nil, [][]float64{{3, 1, 2}, {4, 5, 6}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("the file was closed by Writer.Close: %v", err)
	}
	out, _, _, err := readAll(t, []string{path}, tabular.Options{Numeric: []string{"a", "y"}}, tabular.CSV)
	if err != nil || out != "a,y\n3,4\n1,5\n2,6\n" {
		t.Fatalf("read back %q, %v", out, err)
	}
}

// TestParquetPanicNamesRowGroupAndColumn (issue 15 item 5): where arrow-go
// panics on a malformed page (a DATA_PAGE_V2 page type over a V1 header,
// built by chunkstore/ingest's TestParquetPanicNamesRowGroupAndColumn), the
// error names the file, the column and the row group.
func TestParquetPanicNamesRowGroupAndColumn(t *testing.T) {
	in := "../chunkstore/ingest/testdata/hostile/page-type-v2-without-header.parquet"
	for _, c := range []struct {
		batch int
		want  string
	}{
		{10, in + `: column "y", row group 1: damaged or unsupported Parquet data; the Parquet reader panicked: runtime error: invalid memory address or nil pointer dereference (at rows 11–20 of the file)`},
		{15, in + `: column "y", row groups 0–1: damaged or unsupported Parquet data; the Parquet reader panicked: runtime error: invalid memory address or nil pointer dereference (at rows 1–15 of the file)`},
	} {
		_, _, _, err := readAll(t, []string{in}, tabular.Options{Numeric: []string{"x", "y"}, BatchRows: c.batch}, tabular.CSV)
		if err == nil || err.Error() != c.want {
			t.Errorf("batch %d: err = %v\nwant %s", c.batch, err, c.want)
		}
	}
}

// TestTextValueClipped: a value that is not a number is quoted in the
// error up to 200 bytes.
func TestTextValueClipped(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	long := strings.Repeat("v", 5000)
	os.WriteFile(in, []byte("a,b\n1,2\n"+long+",3\n"), 0o644)
	_, _, _, err := readAll(t, []string{in}, tabular.Options{Numeric: []string{"a"}}, tabular.CSV)
	want := in + `: row 2 (1-based, counted within this file, header line not counted): column "a": "` + long[:200] + `… (5000 bytes)" is not a number`
	if err == nil || err.Error() != want {
		t.Errorf("err = %.400v\nwant %s", err, want)
	}
}
