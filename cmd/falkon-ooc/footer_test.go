package main

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeTwoGroupParquet writes 2000 rows of float64 columns a, b, c, y in
// two row groups of 1000.
func writeTwoGroupParquet(t *testing.T, path string) {
	t.Helper()
	names := []string{"a", "b", "c", "y"}
	var fields []arrow.Field
	for _, n := range names {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64})
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(21, 1))
	for range 2000 {
		for j := range names {
			b.Field(j).(*array.Float64Builder).Append(rng.NormFloat64())
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1000))
	if err := pqarrow.WriteTable(tbl, f, 1000, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// forgeRowCount rewrites the file-level row count in a Parquet footer
// (FileMetaData field 3, num_rows, Thrift compact: header byte 0x16 and a
// zigzag varint) from 2000 to n, in two varint bytes so that the footer
// keeps its length (0 and -1 in a padded, non-minimal form that Thrift
// decoders accept).
func forgeRowCount(t *testing.T, path string, n int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flen := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	footer := b[len(b)-8-flen : len(b)-8]
	old := []byte{0x16, 0xa0, 0x1f} // 2000 → zigzag 4000
	if bytes.Count(footer, old) != 1 {
		t.Fatalf("num_rows = 2000 found %d times in the footer", bytes.Count(footer, old))
	}
	z := uint64(n<<1) ^ uint64(n>>63)
	nb := []byte{0x16, byte(z&0x7f) | 0x80, byte(z >> 7)}
	if z>>14 != 0 {
		t.Fatalf("row count %d needs more than two varint bytes", n)
	}
	i := bytes.Index(footer, old)
	copy(footer[i:], nb)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestForgedParquetRowCount (issue 21 item 1): a Parquet footer that says
// 1000, 0 or -1 rows over row groups holding 2000 made predict write
// that many predictions and exit 0, while ingest refused it. Both now
// read through internal/table's footer check and refuse it with the same
// message, and predict writes no output.
func TestForgedParquetRowCount(t *testing.T) {
	_, model, _, _ := predictFixture(t, 10)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeTwoGroupParquet(t, good)
	if code, out, e := runCLI("predict", "--model", model, good); code != 0 || !strings.Contains(out, "rows       2000") {
		t.Fatalf("the unforged file: exit %d\n%s%s", code, out, e)
	}
	for _, n := range []int64{1000, 0, -1} {
		p := filepath.Join(dir, "forged.parquet")
		writeTwoGroupParquet(t, p)
		forgeRowCount(t, p, n)
		want := p + ": corrupt footer: its row groups hold 2000 rows, but it says " + itoa(n)
		out := filepath.Join(dir, "p.csv")
		code, stdout, e := runCLI("predict", "--model", model, "--out", out, p)
		if code != 1 || !strings.Contains(e, "falkon-ooc predict: "+want) {
			t.Errorf("predict, count %d: exit %d\n%s%s\nwant %q", n, code, stdout, e, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("predict, count %d: wrote %s", n, out)
		}
		code, _, e = runCLI("ingest", "--out", filepath.Join(dir, "f.store"), "--target", "y", p)
		if code != 1 || !strings.Contains(e, "falkon-ooc ingest: "+want) {
			t.Errorf("ingest, count %d: exit %d\n%s\nwant %q", n, code, e, want)
		}
	}
}

func itoa(n int64) string {
	return strconv.FormatInt(n, 10)
}

// TestOneTextReader (issue 21 item 6): predict and ingest read text with
// the same rules: 1_000 and true in a column of numbers are refused by
// predict, and make the column a string column for ingest (a categorical
// feature, which its report says); a CR-only file and a header that is
// not UTF-8 get the same message from both.
func TestOneTextReader(t *testing.T) {
	_, model, _, _ := predictFixture(t, 10)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, text, predict, ingest string
	}{
		{"sep.csv", "a,b,c,y\n1,2,3,4\n1_000,2,3,4\n", `column "a": "1_000" is not a number`, ""},
		{"bool.csv", "a,b,c,y\n1.5,2,3,4\ntrue,2,3,4\n", `column "a": "true" is not a number`, ""},
		{"hex.csv", "a,b,c,y\n1,2,3,4\n0x10,2,3,4\n", `column "a": "0x10" is not a number`, ""},
		{"mac.csv", "a,b,c,y\r1,2,3,4\r5,6,7,8\r", "its lines end in a carriage return alone", "its lines end in a carriage return alone"},
		{"latin1.csv", "a,b,c,\xe9\n1,2,3,4\n", `the name of column 4 is not valid UTF-8: "\xe9"`, `the name of column 4 is not valid UTF-8: "\xe9"`},
		{"longname.csv", "a,b,c," + strings.Repeat("n", 100000) + "\n1,2,3,4\n",
			"the name of column 4 is 100000 bytes long, more than 4096", "the name of column 4 is 100000 bytes long, more than 4096"},
	} {
		p := write(c.name, c.text)
		code, _, e := runCLI("predict", "--model", model, p)
		if code != 1 || !strings.Contains(e, c.predict) {
			t.Errorf("predict %s: exit %d\n%s\nwant %q", c.name, code, e, c.predict)
		}
		code, stdout, e := runCLI("ingest", "--out", filepath.Join(dir, c.name+".store"), "--target", "y", "--features", "a,b,c", p)
		if c.ingest == "" {
			if want := "one-hot: 2 levels (exact)"; code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("ingest %s: exit %d\n%s%s\nwant the report line %q", c.name, code, stdout, e, want)
			}
			continue
		}
		if code != 1 || !strings.Contains(e, c.ingest) {
			t.Errorf("ingest %s: exit %d\n%s\nwant %q", c.name, code, e, c.ingest)
		}
	}
	// A column of true/false is 1/0 for both.
	p := write("flags.csv", "a,b,c,y\ntrue,2,3,4\nfalse,2,3,4\n")
	if code, out, e := runCLI("predict", "--model", model, p); code != 0 || !strings.Contains(out, "rows       2") {
		t.Errorf("predict on a bool column: exit %d\n%s%s", code, out, e)
	}
}
