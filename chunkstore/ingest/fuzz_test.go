package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// FuzzInput feeds arbitrary bytes to ingest's readers as a Parquet file
// (when they start with PAR1) or as text: inspecting them, choosing every
// storable column and reading them to the end gives rows or an error,
// never a panic, an "internal error" or a read that outlives 10 s, and
// Arrow's memory is all freed (but for arrow-go's known leak, as checked
// allows). The bytes stay in memory (fileInfo.mem):
// no file is written and no store built, so the fuzzer runs thousands of
// inputs a minute (the round-4 version wrote a file and a store per input
// and ran a few dozen). The seeds are small Parquet files, one of the
// interop fixtures (DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT), whole and cut
// short, and a little text. With
// FALKON_FUZZ_STATS=PATH set, each fuzzing process writes its count of
// inputs (and how many read without error) to PATH.FuzzInput.PID every
// 256 inputs.
func FuzzInput(f *testing.F) {
	// Small files first: 20 rows in row groups of 8, and of 3.
	for _, b := range [][]byte{smallParquet(f, 20, 8), smallParquet(f, 3, 3)} {
		f.Add(b)
		f.Add(b[:len(b)*3/4])
	}
	for _, name := range []string{"duckdb_v2_zstd.parquet"} {
		b, err := os.ReadFile(interop + name)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 64<<10 {
			continue // small seeds only: mutations of a big file are slow
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(append(append([]byte{}, b[:len(b)-100]...), b[len(b)-8:]...)) // footer length kept, metadata cut
	}
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte("a,b,y\n1,2,3\n4,NA,6\n"))
	f.Add([]byte("\x1f\x8b\x08\x00"))
	count := fuzzCounter("FuzzInput")
	f.Fuzz(func(t *testing.T, data []byte) {
		ok := fuzzInput(t, data, uint8(len(data)))
		count(ok)
	})
}

// fuzzInput reads data whole through ingest's reader for its format and
// reports whether it read without error. mode&1 drops rows with NULLs
// (FuzzInput takes it from the input's length, keeping the one-value
// corpus of its committed crashers).
func fuzzInput(t *testing.T, data []byte, mode uint8) bool {
	if data == nil {
		data = []byte{}
	}
	alloc := &upstreamLeaks{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), known: map[*byte]int{}}
	cfg := Config{Nulls: "error", MaxLine: 4 << 10}
	if mode&1 != 0 {
		cfg.Nulls = "drop"
	}
	s := &session{cfg: cfg, mem: alloc, workers: 1, batchRows: 64}
	fi := &fileInfo{path: "in", format: formatText, size: int64(len(data)), mem: data}
	if bytes.HasPrefix(data, []byte("PAR1")) {
		fi.format, fi.path = formatParquet, "in.parquet"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.inspectFile(fi)
	if err == nil {
		s.files = []*fileInfo{fi}
		for i, ty := range fi.types {
			if ty.class.storable() {
				s.cfg.Features = append(s.cfg.Features, fi.names[i])
			}
		}
		err = s.choose()
	}
	if err == nil {
		out := make(chan *batch, 2)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for b := range out {
				if b.n < 0 || b.n > s.batchRows {
					t.Errorf("batch of %d rows", b.n)
				}
			}
		}()
		if fi.format == formatParquet {
			err = s.readParquet(ctx, fi, out)
		} else {
			err = s.readText(ctx, fi, out)
		}
		close(out)
		<-done
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("reading %d bytes took more than 10 s", len(data))
	}
	if err != nil && bytes.Contains([]byte(err.Error()), []byte("internal error")) {
		t.Fatalf("internal error: %.300v", err)
	}
	if n := alloc.CurrentAlloc() - alloc.knownBytes(); n != 0 {
		t.Errorf("Arrow memory leaked: %d bytes (beyond arrow-go's known DELTA_BINARY_PACKED buffers)", n)
	}
	return err == nil
}

// fuzzCounter returns a function that counts a fuzz target's inputs and,
// with FALKON_FUZZ_STATS=PATH set, writes the counts to PATH.NAME.PID
// every 256 inputs: the fuzzing coordinator's own count can lag minutes
// behind (golang/go#51484), so bench/RESULTS.md's execs per minute come
// from these files.
func fuzzCounter(name string) func(ok bool) {
	path := os.Getenv("FALKON_FUZZ_STATS")
	var execs, oks int64
	start := time.Now()
	return func(ok bool) {
		execs++
		if ok {
			oks++
		}
		if path != "" && execs%256 == 0 {
			os.WriteFile(fmt.Sprintf("%s.%s.%d", path, name, os.Getpid()),
				fmt.Appendf(nil, "execs %d ok %d seconds %.1f\n", execs, oks, time.Since(start).Seconds()), 0o644)
		}
	}
}

// smallParquet writes rows rows of a (float64), b (int32, NULL every 5th),
// flag (bool) and name (string), in row groups of group rows.
func smallParquet(tb testing.TB, rows, group int) []byte {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Float64},
		{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for i := range rows {
		bld.Field(0).(*array.Float64Builder).Append(float64(i) * 1.5)
		if i%5 == 4 {
			bld.Field(1).(*array.Int32Builder).AppendNull()
		} else {
			bld.Field(1).(*array.Int32Builder).Append(int32(i))
		}
		bld.Field(2).(*array.BooleanBuilder).Append(i%2 == 0)
		bld.Field(3).(*array.StringBuilder).Append(fmt.Sprint("n", i%3))
	}
	rec := bld.NewRecord()
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

// TestFuzzInputSeedsRead: FuzzInput starts from inputs that read, so its
// checks of whole reads run from the first input.
func TestFuzzInputSeedsRead(t *testing.T) {
	for _, b := range [][]byte{smallParquet(t, 20, 8), []byte("a,b,y\n1,2,3\n4,NA,6\n")} {
		if !fuzzInput(t, b, 1) {
			t.Errorf("seed %.8q does not read", b)
		}
	}
}
