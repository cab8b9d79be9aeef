package ingest

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

var updateFixtures = flag.Bool("update-fixtures", false, "rewrite testdata/hostile fixtures built by the tests")

// pageTypeFixture is a Parquet file of 20 rows in two row groups of 10,
// columns x and y (float64, plain, uncompressed), whose first data page of
// column y in row group 1 says it is a DATA_PAGE_V2 while it carries a V1
// data-page header: arrow-go v18.8.0 then dereferences the missing V2
// header (a nil pointer) in serializedPageReader.Next.
const pageTypeFixture = "testdata/hostile/page-type-v2-without-header.parquet"

// buildPageTypeFixture writes pageTypeFixture's bytes: a valid file whose
// page header's type field (the first field of the Thrift compact struct:
// 0x15, then zigzag 0 for DATA_PAGE) is changed to zigzag 3 (0x06).
func buildPageTypeFixture(t *testing.T) []byte {
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	bld := array.NewRecordBuilder(mem, sc)
	defer bld.Release()
	for i := range 20 {
		bld.Field(0).(*array.Float64Builder).Append(float64(i))
		bld.Field(1).(*array.Float64Builder).Append(float64(2 * i))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	path := filepath.Join(t.TempDir(), "ok.parquet")
	writeParquet(t, path, tbl, 10, parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithStats(false), parquet.WithDataPageVersion(parquet.DataPageV1))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	cc, err := rdr.MetaData().RowGroup(1).ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	off := cc.DataPageOffset()
	if !bytes.Equal(b[off:off+2], []byte{0x15, 0x00}) {
		t.Fatalf("page header at %d starts % x, want 15 00", off, b[off:off+2])
	}
	b[off+1] = 0x06
	return b
}

// TestParquetPanicNamesRowGroupAndColumn (issue 15 item 5): where arrow-go
// panics on a malformed page, ingest (and predict's reader, in tabular)
// report the file, the column and the row group.
func TestParquetPanicNamesRowGroupAndColumn(t *testing.T) {
	b := buildPageTypeFixture(t)
	if *updateFixtures {
		if err := os.WriteFile(pageTypeFixture, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(pageTypeFixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, b) {
		t.Logf("%s differs from what this arrow-go writes (run with -update-fixtures to rewrite it); testing the committed file", pageTypeFixture)
	}
	for _, noDirect := range []bool{false, true} {
		_, err := Run(context.Background(), []string{pageTypeFixture}, Config{Out: filepath.Join(t.TempDir(), "o"), Targets: []string{"y"}, BatchRows: 10, noDirect: noDirect})
		want := pageTypeFixture + `: column "y", row group 1: damaged or unsupported Parquet data; the Parquet reader panicked: runtime error: invalid memory address or nil pointer dereference (at rows 11–20 of the file)`
		if err == nil || err.Error() != want {
			t.Errorf("noDirect %v: err = %v\nwant %s", noDirect, err, want)
		}
	}
	// A batch across both row groups names them both.
	_, err = Run(context.Background(), []string{pageTypeFixture}, Config{Out: filepath.Join(t.TempDir(), "o"), Targets: []string{"y"}, BatchRows: 15, noDirect: true})
	want := pageTypeFixture + `: column "y", row groups 0–1: damaged or unsupported Parquet data; the Parquet reader panicked: runtime error: invalid memory address or nil pointer dereference (at rows 1–15 of the file)`
	if err == nil || err.Error() != want {
		t.Errorf("batch of 15: err = %v\nwant %s", err, want)
	}
}
