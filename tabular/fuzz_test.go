package tabular

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// smallParquet writes rows rows of f64 (float64), i16 (int16, NULL every
// 7th), flag (bool), label and id (strings), in row groups of group rows.
func smallParquet(tb testing.TB, rows, group int) []byte {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "label", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Float64Builder).Append(float64(i) / 4)
		if i%7 == 6 {
			b.Field(1).(*array.Int16Builder).AppendNull()
		} else {
			b.Field(1).(*array.Int16Builder).Append(int16(i - 5))
		}
		b.Field(2).(*array.BooleanBuilder).Append(i%3 == 0)
		b.Field(3).(*array.StringBuilder).Append([]string{"cat", "dog"}[i%2])
		b.Field(4).(*array.StringBuilder).Append(fmt.Sprint("r", i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(group)))
	if err := pqarrow.WriteTable(tbl, &buf, int64(group), props, pqarrow.DefaultWriterProps()); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzPredictInput (issue 21 item 7) feeds arbitrary bytes, held in
// memory, to predict's reader (Open, Next, Batch) as Parquet (when they
// start with PAR1) or delimited text, with numeric, optional, label and
// kept columns as predict asks for them. It checks that nothing panics,
// no error is an "internal error" and every error names the input; that
// every batch has the columns asked for, each Rows long; and, for
// Parquet read without error, that the rows read plus those dropped are
// exactly the rows of the file's row groups (a footer claiming another
// count made predict read that many, issue 21 item 1). No file is
// written. With FALKON_FUZZ_STATS=PATH set, each fuzzing process writes
// its counts to PATH.FuzzPredictInput.PID every 256 inputs.
func FuzzPredictInput(f *testing.F) {
	pq := smallParquet(f, 20, 8)
	f.Add(pq, uint8(0))
	f.Add(pq[:len(pq)/2], uint8(0))
	f.Add(smallParquet(f, 3, 3), uint8(1))
	for _, s := range []string{
		"f64,i16,flag,label,id\n1.5,2,true,cat,r1\n2,NA,false,dog,r2\n",
		"f64;i16;flag\n1;2;1\n3;4;0\n",
		"f64,i16,flag,label\n1_000,2,true,cat\n",
		"f64,i16,flag\r1,2,3\r",
		"f64,i16,flag,label,id\n1,2,true,eel,x\n",
		"\xef\xbb\xbff64\ti16\tflag\n1\t2\ttrue\n",
		"f64,i16,flag\n\"1\n2\",3,true\n",
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(2))
	}
	path := os.Getenv("FALKON_FUZZ_STATS")
	var execs, oks int64
	start := time.Now()
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if fuzzPredictInput(t, data, mode) {
			oks++
		}
		execs++
		if path != "" && execs%256 == 0 {
			os.WriteFile(fmt.Sprintf("%s.FuzzPredictInput.%d", path, os.Getpid()),
				fmt.Appendf(nil, "execs %d ok %d seconds %.1f\n", execs, oks, time.Since(start).Seconds()), 0o644)
		}
	})
}

func fuzzPredictInput(t *testing.T, data []byte, mode uint8) bool {
	name := "in.csv"
	opt := Options{
		Numeric: []string{"f64", "i16", "flag"}, Optional: []string{"label"}, Keep: []string{"id"},
		Labels:  map[string][]string{"label": {"cat", "dog"}},
		Nulls:   []string{"error", "drop", "zero"}[int(mode%3)],
		MaxLine: 4 << 10, BatchRows: 8,
		mem: map[string][]byte{name: data},
	}
	if mode&4 != 0 {
		opt.Keep = nil
	}
	if mode&8 != 0 {
		opt.NoHeader, opt.Numeric, opt.Optional, opt.Labels, opt.Keep = true, []string{"c0", "c1"}, nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Open([]string{name}, opt)
	var rows, dropped int64
	if err == nil {
		for r.Next(ctx) {
			b := r.Batch()
			want := len(opt.Numeric)
			if r.HasOptional() {
				want += len(opt.Optional)
			}
			if len(b.Cols) != want {
				t.Fatalf("batch of %d columns, want %d", len(b.Cols), want)
			}
			for j, c := range b.Cols {
				if len(c) != b.Rows {
					t.Fatalf("column %d holds %d values in a batch of %d rows", j, len(c), b.Rows)
				}
			}
			rows += int64(b.Rows)
			dropped += int64(b.Dropped)
			b.Release()
		}
		err = r.Err()
		r.Close()
	}
	if ctx.Err() != nil {
		t.Fatalf("reading %d bytes took more than 10 s", len(data))
	}
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "internal error") {
			t.Fatalf("internal error: %.300s", msg)
		}
		if !strings.HasPrefix(msg, name+": ") && !strings.Contains(msg, name) {
			t.Fatalf("error does not name the input: %.300s", msg)
		}
		return false
	}
	if bytes.HasPrefix(data, []byte("PAR1")) {
		rdr, err := table.OpenParquetFrom(name, bytes.NewReader(data), int64(len(data)), 0, memory.DefaultAllocator)
		if err != nil {
			t.Fatalf("predict read the file, but its footer does not open: %v", err)
		}
		var sum int64
		for k := range rdr.NumRowGroups() {
			sum += rdr.MetaData().RowGroup(k).NumRows()
		}
		rdr.Close()
		if rows+dropped != sum {
			t.Fatalf("read %d rows and dropped %d, but the row groups hold %d", rows, dropped, sum)
		}
	}
	return true
}

// TestFuzzPredictSeedsRead: the fuzzer starts from inputs that read
// (Parquet in several row groups, text with a NULL), so its checks of
// successful reads run from the first input.
func TestFuzzPredictSeedsRead(t *testing.T) {
	if !fuzzPredictInput(t, smallParquet(t, 20, 8), 1) {
		t.Error("the Parquet seed does not read")
	}
	if !fuzzPredictInput(t, []byte("f64,i16,flag,label,id\n1.5,2,true,cat,r1\n2,NA,false,dog,r2\n"), 1) {
		t.Error("the text seed does not read")
	}
}
