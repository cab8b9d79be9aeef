package ingest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// allTypesTable builds n rows of every accepted Arrow type, with values
// that exercise each type's range.
func allTypesTable(n int) arrow.Table {
	mem := memory.DefaultAllocator
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Float64}
	fields := []arrow.Field{
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "dict", Type: dictType},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 3}},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ms},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "list", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}
	sc := arrow.NewSchema(fields, nil)
	bld := array.NewRecordBuilder(mem, sc)
	defer bld.Release()
	for i := range n {
		x := float64(i)
		bld.Field(0).(*array.Float64Builder).Append(math.Sin(x) * 1e3)
		bld.Field(1).(*array.Float32Builder).Append(float32(math.Cos(x)))
		bld.Field(2).(*array.Int8Builder).Append(int8(i%256 - 128))
		bld.Field(3).(*array.Int16Builder).Append(int16(i*37%65536 - 32768))
		bld.Field(4).(*array.Int32Builder).Append(int32(i*7919) - 1<<30)
		bld.Field(5).(*array.Int64Builder).Append(int64(i)*1_000_000_007 - 1<<62)
		bld.Field(6).(*array.Uint8Builder).Append(uint8(i))
		bld.Field(7).(*array.Uint16Builder).Append(uint16(i * 31))
		bld.Field(8).(*array.Uint32Builder).Append(uint32(i) * 2654435761)
		bld.Field(9).(*array.Uint64Builder).Append(uint64(i) * 0x9E3779B97F4A7C15)
		bld.Field(10).(*array.BooleanBuilder).Append(i%3 == 0)
		db := bld.Field(11).(*array.Float64DictionaryBuilder)
		db.Append(float64(i%5) / 4)
		bld.Field(12).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i*1234 - 5000)))
		bld.Field(13).(*array.Date32Builder).Append(arrow.Date32(i - 100))
		bld.Field(14).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 3_600_123))
		bld.Field(15).(*array.StringBuilder).Append("s")
		lb := bld.Field(16).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).Append(x)
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

var allNumeric = []string{"f64", "f32", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "b", "dict", "dec", "day", "ts"}

// TestRoundTripTypes writes every accepted type with pqarrow (several row
// groups, dictionary pages, zstd) and checks that the store holds exactly
// the float64 of what arrow reads back from the file.
func TestRoundTripTypes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "all.parquet")
	const n = 2500
	tbl := allTypesTable(n)
	defer tbl.Release()
	writeParquet(t, path, tbl, 700, parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(true))

	res, st := mustIngest(t, []string{path}, Config{Features: allNumeric[1:], Targets: []string{"f64"}, BatchRows: 1000, ChunkRows: 999})
	if res.Rows != n || res.Chunks != 3 {
		t.Fatalf("rows %d chunks %d", res.Rows, res.Chunks)
	}
	var types []string
	for _, c := range append(st.m.Features, st.m.Targets...) {
		types = append(types, c.Type)
	}
	wantTypes := []string{"float32", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "float64", "float64", "float64", "float64", "float64"}
	if !slices.Equal(types, wantTypes) {
		t.Fatalf("types %v\nwant  %v", types, wantTypes)
	}

	// What arrow reads from the file, converted by the documented rules.
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	back, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer back.Release()
	for _, name := range allNumeric {
		got := st.col(t, name)
		idx := back.Schema().FieldIndices(name)[0]
		row := 0
		for _, chunk := range back.Column(idx).Data().Chunks() {
			for i := range chunk.Len() {
				want := referenceValue(t, chunk, i)
				if !sameBits(got[row], want) {
					t.Fatalf("%s row %d: stored %v, arrow read %v", name, row+1, got[row], want)
				}
				row++
			}
		}
	}
	// Spot checks of the documented conversions.
	if d := st.col(t, "day")[0]; d != -100 {
		t.Errorf("date32 -100 stored as %v days", d)
	}
	if h := st.col(t, "ts")[1]; h != 3_600_123.0/86_400_000 {
		t.Errorf("timestamp 3600123 ms stored as %v days", h)
	}
	if d := st.col(t, "dec")[0]; d != -5 {
		t.Errorf("decimal -5.000 stored as %v", d)
	}
}

// referenceValue is the value ingest must store for element i of a, written
// out type by type.
func referenceValue(t *testing.T, a arrow.Array, i int) float64 {
	switch a := a.(type) {
	case *array.Float64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Int8:
		return float64(a.Value(i))
	case *array.Int16:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Uint8:
		return float64(a.Value(i))
	case *array.Uint16:
		return float64(a.Value(i))
	case *array.Uint32:
		return float64(a.Value(i))
	case *array.Uint64:
		return float64(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return 1
		}
		return 0
	case *array.Dictionary:
		return referenceValue(t, a.Dictionary(), a.GetValueIndex(i))
	case *array.Decimal128:
		return a.Value(i).ToFloat64(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return float64(a.Value(i))
	case *array.Timestamp:
		if u := a.DataType().(*arrow.TimestampType).Unit; u != arrow.Millisecond {
			t.Fatalf("timestamp unit %s", u)
		}
		return float64(a.Value(i)) / 86_400_000
	}
	t.Fatalf("no reference for %s", a.DataType())
	return 0
}

// nanTable is a small file with a NaN, +Inf and -Inf in column "x" at rows
// 3, 5 and 8 (1-based) and NULLs in column "n" at rows 2 and 8.
func nanFile(t *testing.T, dir string) string {
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	bld := array.NewRecordBuilder(mem, sc)
	defer bld.Release()
	for i := range 10 {
		x := float64(i)
		switch i + 1 {
		case 3:
			x = math.NaN()
		case 5:
			x = math.Inf(1)
		case 8:
			x = math.Inf(-1)
		}
		bld.Field(0).(*array.Float64Builder).Append(x)
		if i+1 == 2 || i+1 == 8 {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.Int32Builder).Append(int32(i))
		}
		bld.Field(2).(*array.Float64Builder).Append(float64(10 * i))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	path := filepath.Join(dir, "nan.parquet")
	writeParquet(t, path, tbl, 4)
	return path
}

func TestNullsAndNonFinite(t *testing.T) {
	dir := t.TempDir()
	path := nanFile(t, dir)
	for _, tc := range []struct {
		feats []string
		want  string
	}{
		{[]string{"x"}, path + `: row 3 (1-based, counted within this file): column "x" is NaN`},
		{[]string{"n"}, path + `: row 2 (1-based, counted within this file): column "n" is NULL`},
		{[]string{"x", "n"}, path + `: row 2 (1-based, counted within this file): column "n" is NULL`},
	} {
		_, err := checked(t, []string{path}, Config{Out: filepath.Join(dir, "s"), Features: tc.feats, Targets: []string{"y"}, BatchRows: 4})
		var ve *ValueError
		if err == nil || err.Error() != tc.want || !errors.As(err, &ve) {
			t.Errorf("features %v: error\n%v\nwant\n%s", tc.feats, err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "s")); !os.IsNotExist(err) {
			t.Fatalf("a failed ingest left %s: %v", filepath.Join(dir, "s"), err)
		}
	}
	// +Inf and -Inf are named too.
	_, err := checked(t, []string{path}, Config{Out: filepath.Join(dir, "s"), Features: []string{"x"}, Nulls: "drop", BatchRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "s"))
	res, st := mustIngest(t, []string{path}, Config{Features: []string{"x", "n"}, Targets: []string{"y"}, Nulls: "drop", BatchRows: 4})
	if res.Dropped != 4 || res.Rows != 6 { // rows 2, 3, 5, 8
		t.Fatalf("dropped %d rows %d, want 4 and 6", res.Dropped, res.Rows)
	}
	if got, want := st.col(t, "y"), []float64{0, 30, 50, 60, 80, 90}; !slices.Equal(got, want) {
		t.Fatalf("kept y %v, want %v", got, want)
	}
}

func TestInfNamed(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "inf.csv")
	os.WriteFile(csv, []byte("a,b\n1,2\n3,-inf\n"), 0o644)
	_, err := checked(t, []string{csv}, Config{Out: filepath.Join(dir, "s")})
	want := csv + `: row 2 (1-based, counted within this file, header line not counted): column "b" is -Inf`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}

// TestErrors checks the message a user sees for each mistake.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "all.parquet")
	tbl := allTypesTable(10)
	writeParquet(t, all, tbl, 5)
	tbl.Release()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.csv", "x,y,s\n1,2,u\n3,4,v\n")
	bStr := write("b.csv", "x,y,s\nfoo,2,u\n")
	noY := write("c.csv", "x,s\n1,u\n")
	var late strings.Builder
	late.WriteString("x,y\n")
	for i := range 1500 {
		if i == 1200 {
			late.WriteString("7,oops\n")
			continue
		}
		late.WriteString("1,2\n")
	}
	lateBad := write("late.csv", late.String())
	ragged := write("ragged.csv", "x,y\n1,2\n3,4\n5\n")
	raggedLate := write("raggedlate.csv", "x,y\n"+strings.Repeat("1,2\n", 1500)+"3\n")
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	write("empty/readme.txt", "nothing here")
	exists := filepath.Join(dir, "exists")
	os.Mkdir(exists, 0o755)

	for _, tc := range []struct {
		name   string
		inputs []string
		cfg    Config
		want   string
	}{
		{"categorical float", []string{all}, Config{Categorical: []string{"f64"}},
			all + `: column "f64" (named in categorical) has type float64; categorical columns are integer or string columns`},
		{"nested feature", []string{all}, Config{Features: []string{"f64", "list"}},
			all + `: column "list" (named in features) has type list<element: float64, nullable> (nested), which cannot be stored; numeric, bool, date, timestamp and string columns can`},
		{"missing target", []string{a}, Config{Targets: []string{"z"}},
			a + `: no column "z" (named in targets); its columns are: "x", "y", "s"`},
		{"missing in second file", []string{a, noY}, Config{Targets: []string{"y"}},
			noY + `: no column "y", which ` + a + ` has; its columns are: "x", "s"`},
		{"incompatible type", []string{a, bStr}, Config{Targets: []string{"y"}},
			bStr + `: column "x" has type string, but in ` + a + ` it has type number`},
		{"categorical not a feature", []string{all, a}, Config{Features: []string{"f64"}, Categorical: []string{"s"}},
			`column "s" is named in categorical but not in features`},
		{"parse error after the first block", []string{lateBad}, Config{},
			lateBad + `: row 1201 (1-based, counted within this file, header line not counted): column "y": "oops" is not a number (the column's type was inferred from the first rows of the file)`},
		{"ragged", []string{ragged}, Config{},
			ragged + `: row 3 (1-based, counted within this file, header line not counted) has 1 fields, but the first line has 2`},
		{"ragged after the first block", []string{raggedLate}, Config{},
			raggedLate + `: record on line 1502: wrong number of fields`},
		{"target twice", []string{a}, Config{Targets: []string{"y", "y"}},
			`column "y" is named twice in targets`},
		{"feature and target", []string{a}, Config{Features: []string{"x", "y"}, Targets: []string{"y"}},
			`column "y" is named in both targets and features`},
		{"exclude unknown", []string{a}, Config{Exclude: []string{"q"}},
			a + `: no column "q" (named in exclude); its columns are: "x", "y", "s"`},
		{"no features", []string{a}, Config{Targets: []string{"x"}, Exclude: []string{"y", "s"}},
			a + `: no feature columns: no numeric, bool or string column besides the targets and excluded columns; its columns are: "x" number, "y" number, "s" string`},
		{"empty dir", []string{filepath.Join(dir, "empty")}, Config{},
			`directory ` + filepath.Join(dir, "empty") + ` holds no data files (.parquet, .parq, .pq, .csv, .tsv, optionally .gz, in it or its subdirectories)`},
		{"no glob match", []string{filepath.Join(dir, "*.nope")}, Config{},
			`no files match "` + filepath.Join(dir, "*.nope") + `"`},
		{"missing file", []string{filepath.Join(dir, "nope.parquet")}, Config{},
			`stat ` + filepath.Join(dir, "nope.parquet") + `: no such file or directory`},
		{"columns count", []string{a}, Config{Columns: []string{"p", "q"}},
			a + `: 2 column names given, but the first line has 3 fields`},
		{"bad nulls", []string{a}, Config{Nulls: "skip"},
			`nulls must be "error", "drop" or "mean", not "skip"`},
		{"out exists", []string{a}, Config{Out: exists},
			exists + ` already exists; remove it or choose another --out`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Out == "" {
				tc.cfg.Out = filepath.Join(t.TempDir(), "store")
			}
			_, err := checked(t, tc.inputs, tc.cfg)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n%v\nwant\n%s", err, tc.want)
			}
			if tc.name != "out exists" {
				if _, err := os.Stat(tc.cfg.Out); !os.IsNotExist(err) {
					t.Fatalf("failed ingest left %s", tc.cfg.Out)
				}
			}
		})
	}
}

// TestTextOptions covers headerless files, --columns, sniffed delimiters,
// gzip by magic bytes, a byte order mark and quoted fields.
func TestTextOptions(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := newGzip(&gz)
	zw.Write([]byte("1;2;true\n3;4;false\n"))
	zw.Close()
	semi := write("semi.data", gz.Bytes()) // no telling extension: gzip and ';' are sniffed
	_, st := mustIngest(t, []string{semi}, Config{NoHeader: true, Targets: []string{"c1"}})
	if !slices.Equal(st.names, []string{"c0", "c2", "c1"}) || !slices.Equal(st.col(t, "c2"), []float64{1, 0}) {
		t.Fatalf("names %v c2 %v", st.names, st.col(t, "c2"))
	}
	_, st = mustIngest(t, []string{semi}, Config{Columns: []string{"a", "b", "c"}, Features: []string{"b", "a"}})
	if !slices.Equal(st.names, []string{"b", "a"}) || !slices.Equal(st.col(t, "b"), []float64{2, 4}) {
		t.Fatalf("names %v b %v", st.names, st.col(t, "b"))
	}
	bom := write("bom.csv", []byte("\xef\xbb\xbf\"x\",\"label\",y\n\"1.5\",\"a,\"\"b\"\"\n c\", 2 \n"))
	_, st = mustIngest(t, []string{bom}, Config{})
	if !slices.Equal(st.names, []string{"x", "label=a,\"b\"\n c", "y"}) || st.col(t, "x")[0] != 1.5 || st.col(t, "y")[0] != 2 {
		t.Fatalf("names %v values %v", st.names, st.cols)
	}
	// A date column is not a default feature; named, it is days since 1970-01-01.
	dates := write("dates.csv", []byte("day,v,flag\n1970-01-02,1,true\n1969-12-31,2,FALSE\n2001-01-01,NA,true\n"))
	res, st := mustIngest(t, []string{dates}, Config{Nulls: "drop"})
	if !slices.Equal(res.Features, []string{"v", "flag"}) || res.Dropped != 1 {
		t.Fatalf("default features %v dropped %d", res.Features, res.Dropped)
	}
	_, st = mustIngest(t, []string{dates}, Config{Features: []string{"day"}, Targets: []string{"flag"}})
	if got := st.col(t, "day"); !slices.Equal(got, []float64{1, -1, 11323}) {
		t.Fatalf("days %v", got)
	}
	if got := st.col(t, "flag"); !slices.Equal(got, []float64{1, 0, 1}) {
		t.Fatalf("flags %v", got)
	}
	tsv := write("t.tsv", []byte("a\tb\n1\t2\n"))
	_, st = mustIngest(t, []string{tsv}, Config{})
	if !slices.Equal(st.names, []string{"a", "b"}) {
		t.Fatalf("tsv names %v", st.names)
	}
}

// TestDeterministic ingests the same files with 1 and 4 workers and small
// batches: the stores hold the same values and statistics.
func TestDeterministic(t *testing.T) {
	inputs := []string{interop + "duckdb_v1_snappy.parquet", interop + "duckdb.csv", interop + "polars_zstd.parquet", interop + "duckdb.tsv.gz", interop + "duckdb_v2_zstd.parquet"}
	var stores []*store
	var segments [][]byte
	for _, w := range []int{1, 4} {
		out := filepath.Join(t.TempDir(), "store")
		_, st := mustIngest(t, inputs, Config{Out: out, Targets: []string{"f64"}, Exclude: []string{"label"}, Nulls: "drop", Workers: w, BatchRows: 700, ChunkRows: 1000, Codec: "zstd"})
		stores = append(stores, st)
		var all []byte
		for _, seg := range st.m.Segments {
			b, err := os.ReadFile(filepath.Join(out, seg.Name))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		segments = append(segments, all)
	}
	if !bytes.Equal(segments[0], segments[1]) {
		t.Errorf("segment files differ between 1 and 4 workers")
	}
	a, b := stores[0], stores[1]
	for j := range a.cols {
		if !slices.EqualFunc(a.cols[j], b.cols[j], sameBits) {
			t.Fatalf("column %s differs between 1 and 4 workers", a.names[j])
		}
	}
	for j := range a.m.Features {
		fa, fb := a.m.Features[j], b.m.Features[j]
		if fa.Mean != fb.Mean || fa.Std != fb.Std || fa.Min != fb.Min {
			t.Fatalf("stats of %s differ: %+v vs %+v", fa.Name, fa, fb)
		}
	}
}

// TestCancel cancels an ingest in flight: Run returns the context's error
// and leaves nothing at Out nor beside it.
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "store")
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	_, err := run(ctx, []string{interop + "duckdb_v1_snappy.parquet", interop + "duckdb_v1_gzip.parquet"}, Config{
		Out: out, Targets: []string{"f64"}, Features: []string{"id", "f32"}, BatchRows: 100,
		Progress: func(Progress) {
			calls++
			if calls == 3 {
				cancel()
			}
		},
	}, mem)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("cancelled ingest left %v", ents)
	}
	mem.AssertSize(t, 0)
}

// TestInputs covers directories and globs: sorted, data files only.
func TestInputs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.csv", "a.csv.gz", ".hidden.csv", "_SUCCESS", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x\n1\n"), 0o644)
	}
	got, _, err := expandInputs([]string{dir, filepath.Join(dir, "*.csv")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.csv.gz"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "b.csv")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// TestConvertDict covers Arrow dictionary arrays (pqarrow decodes Parquet
// dictionary pages to plain arrays, but a reader asked for dictionaries, or
// a future source, hands them over as such).
func TestConvertDict(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float32}).(*array.Float32DictionaryBuilder)
	defer db.Release()
	for _, v := range []float32{0.5, 2, 0.5, float32(math.Inf(1))} {
		db.Append(v)
	}
	db.AppendNull()
	db.Append(2)
	arr := db.NewArray()
	defer arr.Release()
	dst := make([]float64, arr.Len())
	var b bad
	if err := convertArray(arr, dst, &b); err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.5, 2, 0.5, math.Inf(1), 0, 2}; !slices.Equal(dst, want) {
		t.Fatalf("got %v want %v", dst, want)
	}
	if !slices.Equal(b.rows, []int{3, 4}) || b.first != "+Inf" {
		t.Fatalf("bad rows %v first %q", b.rows, b.first)
	}
}

// TestProgress checks that progress is reported in order and ends complete.
func TestProgress(t *testing.T) {
	var last Progress
	calls := 0
	inputs := []string{interop + "duckdb_v1_snappy.parquet", interop + "duckdb.tsv.gz"}
	res, _ := mustIngest(t, inputs, Config{Targets: []string{"f64"}, Nulls: "drop", BatchRows: 500, Progress: func(p Progress) {
		if p.Rows < last.Rows || p.BytesIn < last.BytesIn || p.Elapsed < last.Elapsed {
			t.Errorf("progress went back: %+v after %+v", p, last)
		}
		last = p
		calls++
	}})
	if calls < 10 || last.Rows != res.Rows || last.Dropped != res.Dropped || last.BytesIn != last.BytesTotal || last.BytesTotal != res.BytesIn || last.Files != 2 {
		t.Fatalf("%d calls, last %+v, result %+v", calls, last, res)
	}
}
