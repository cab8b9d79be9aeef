package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// Limits of FuzzText: small, so that the fuzzer reaches them.
const (
	fuzzMaxLine   = 4 << 10
	fuzzBatchRows = 16
)

// FuzzText feeds arbitrary bytes, held in memory, to the text path:
// gzip detection, the delimiter and header sniffing, type inference and
// the record reader with its line limit. No file is written and no store
// built, so it runs thousands of inputs a second (FuzzInput writes a store
// for each). mode picks the name (.csv or .tsv), --no-header, --nulls and
// whether dates are named as features. It checks that
//   - nothing panics, and no error is an "internal error";
//   - every error names the input, and a line, row or column of it unless
//     it is about the whole file (empty, NUL bytes, a bad gzip header, no
//     data or no feature column), and quotes at most ~200 bytes of any
//     value;
//   - memory is bounded: Arrow's allocations are all freed and peak below
//     a multiple of the line limit times the batch size (a bound on the
//     Go heap allocated per input, read from runtime/metrics, was
//     dropped: the fuzzing process's own goroutines allocate during an
//     input too, so it failed at random);
//   - a successful read round-trips: the values of every chosen column, bit
//     for bit, and the row and drop counts equal those of an independent
//     reading (standard compress/gzip and encoding/csv, strconv), and a
//     file read whole by the sniffer gets the column types that reading
//     infers.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		"a,b,y\n1,2,3\n4,5,6\n",
		"a\tb\n1\t2\n",
		"x;y\n1,5;2\n",
		"a,b\n\"1\n2\",3\n",
		"a,b\n1,\"unclosed\n",
		"\xef\xbb\xbfa,b\n1,2\n",
		"a,b\nNULL,2\nNaN,Inf\n",
		"d,t\n2024-01-02,true\n2024-02-29,false\n",
		"a,a\n1,2\n",
		"a,b\n1,2,3\n",
		"a|b|c\n1e308|-0|0x1p-2\n 7 |NA|1_000\n",
		"a,b\n1,2\n" + strings.Repeat("3,4\n", 40) + "x,5\n",
		"a,b\n1," + strings.Repeat("9", fuzzMaxLine) + "\n",
		"a,b\r\n1,2\r\n3,4\r\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte("1,2\n3,4\n"), uint8(2))
	f.Add([]byte("a,b\n1,\n2,3\n"), uint8(4))
	f.Add([]byte("d\tx\n2024-01-02\t1\n"), uint8(1|8))
	if b, err := os.ReadFile(interop + "duckdb.csv"); err == nil {
		f.Add(b, uint8(0))
	}
	for _, s := range []string{"a,y\n1,2\n3,4\n", "a,b\n1,\"" + strings.Repeat("x", 3*fuzzMaxLine)} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(s))
		zw.Close()
		f.Add(buf.Bytes(), uint8(0))
		f.Add(buf.Bytes()[:buf.Len()-5], uint8(0)) // cut short
	}
	count := fuzzCounter("FuzzText")
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		count(fuzzText(t, data, mode))
	})
}

// fuzzText runs one input and reports whether it read without error.
func fuzzText(t *testing.T, data []byte, mode uint8) bool {
	name := "in.csv"
	if mode&1 != 0 {
		name = "in.tsv"
	}
	if bytes.HasPrefix(data, []byte("PAR1")) {
		return false // a Parquet file: FuzzInput's business
	}
	if data == nil {
		data = []byte{} // fi.mem == nil would read the file at path
	}
	alloc := &peakAllocator{mem: memory.NewGoAllocator()}
	cfg := Config{Nulls: "error", MaxLine: fuzzMaxLine, NoHeader: mode&2 != 0}
	if mode&4 != 0 {
		cfg.Nulls = "drop"
	}
	s := &session{cfg: cfg, mem: alloc, workers: 1, batchRows: fuzzBatchRows}
	fi := &fileInfo{path: name, format: formatText, size: int64(len(data)), mem: data}

	err := s.inspectFile(fi)
	if err == nil {
		s.files = []*fileInfo{fi}
		if mode&8 != 0 { // every storable column, dates too
			for i, ty := range fi.types {
				if ty.class.storable() {
					s.cfg.Features = append(s.cfg.Features, fi.names[i])
				}
			}
		}
		err = s.choose()
	}
	var got [][]float64
	var rows, dropped int
	if err == nil {
		got = make([][]float64, len(s.names))
		out := make(chan *batch, 2)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for b := range out {
				for j := range got {
					got[j] = append(got[j], b.cols[j][:b.n]...)
				}
				rows += b.n
				dropped += b.dropped
			}
		}()
		err = s.readText(context.Background(), fi, out)
		close(out)
		<-done
	}
	text, terr := decompressed(data)
	if n := alloc.cur.Load(); n != 0 {
		t.Errorf("Arrow memory leaked: %d bytes", n)
	}
	if p := alloc.peak.Load(); p > 64<<10+int64(8*fuzzBatchRows*fuzzMaxLine) {
		t.Errorf("Arrow memory peaked at %d bytes", p)
	}
	if err != nil {
		if p := textErrorProblem(name, err); p != "" {
			t.Fatal(p)
		}
		return false
	}
	if terr != nil {
		t.Fatalf("read without error, but the standard gzip reader says %v", terr)
	}
	want, wantDropped, types, whole := referenceRead(t, text, fi, s)
	if rows != len(want[0])-0 || dropped != wantDropped {
		t.Fatalf("%d rows and %d dropped, want %d and %d", rows, dropped, len(want[0]), wantDropped)
	}
	for j := range want {
		for i, v := range want[j] {
			if math.Float64bits(v) != math.Float64bits(got[j][i]) {
				t.Fatalf("column %q row %d: got %v, want %v", s.names[j], i+1, got[j][i], v)
			}
		}
	}
	if whole {
		for i, ty := range types {
			if got := fi.types[i]; got.class != ty.class || got.spec != ty.spec || got.desc != ty.desc || got.part != ty.part {
				t.Fatalf("column %q inferred as %s, want %s", fi.names[i], fi.types[i].desc, ty.desc)
			}
		}
	}
	return true
}

// located matches the phrases by which an error names where the input is
// wrong, or says that the whole input is.
var located = regexp.MustCompile(`\b(line|row|column) [0-9]+\b|column name "|: empty file$|\(it holds NUL bytes\)$|, but its gzip header is damaged or cut short: |: no data rows|: no rows in the first [0-9]+ bytes$|: no feature columns: |: its lines end in a carriage return alone `)

// textErrorProblem says what is wrong with err by FuzzText's promises, or
// "" if nothing is.
func textErrorProblem(name string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, "internal error") {
		return fmt.Sprintf("internal error: %.300q", msg)
	}
	if !strings.HasPrefix(msg, name+": ") {
		return fmt.Sprintf("error does not start with the input's name: %.300q", msg)
	}
	if !located.MatchString(msg) {
		return fmt.Sprintf("error names no line, row or column: %.300q", msg)
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return "" // encoding/csv's own message quotes nothing of the input
	}
	for _, q := range quoted.FindAllString(msg, -1) {
		u, uerr := strconv.Unquote(q)
		if uerr == nil && len(u) > maxQuote+len("… (9999999999 bytes)") {
			return fmt.Sprintf("error quotes %d bytes of a value: %.300q", len(u), msg)
		}
	}
	return ""
}

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// decompressed returns data as ingest reads its text: gunzipped (by the
// standard library, not the reader ingest uses) when it starts with the
// gzip magic number, without a UTF-8 byte order mark.
func decompressed(data []byte) ([]byte, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		data, err = io.ReadAll(io.LimitReader(zr, 64<<20))
		if err != nil {
			return nil, err
		}
	}
	return bytes.TrimPrefix(data, []byte{0xef, 0xbb, 0xbf}), nil
}

// referenceRead reads text as ingest should have read the file fi for the
// chosen columns of s: values, the rows dropped for a NULL, NaN or ±Inf,
// and, when the sniffer saw the whole file (whole), the type of each column
// inferred from all rows.
func referenceRead(t *testing.T, text []byte, fi *fileInfo, s *session) (cols [][]float64, dropped int, types []colType, whole bool) {
	cr := csv.NewReader(bytes.NewReader(text))
	cr.Comma = fi.comma
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("read without error, but encoding/csv says %v", err)
	}
	if fi.header {
		recs = recs[1:]
	}
	cols = make([][]float64, len(s.names))
	for _, rec := range recs {
		row := make([]float64, len(s.names))
		bad := false
		for j, n := range s.names {
			v := rec[fi.index[n]]
			if fi.types[fi.index[n]].class == classString { // a categorical feature: codes
				row[j] = featenc.Code(v)
				if isNullToken(v) {
					row[j] = featenc.NullCode // a level, not a bad value
				}
				continue
			}
			if isNullToken(v) {
				bad = true
				continue
			}
			v = strings.TrimSpace(v)
			switch fi.types[fi.index[n]].class {
			case classNumeric:
				x, err := referenceNumber(v)
				if err != nil {
					t.Fatalf("read without error, but %q in column %q is not a number", v, n)
				}
				row[j], bad = x, bad || math.IsNaN(x) || math.IsInf(x, 0)
			case classBool:
				b, err := strconv.ParseBool(v)
				if err != nil {
					t.Fatalf("read without error, but %q in column %q is not a bool", v, n)
				}
				if b {
					row[j] = 1
				}
			case classTemporal:
				d, err := time.Parse(time.DateOnly, v)
				if err != nil {
					t.Fatalf("read without error, but %q in column %q is not a date", v, n)
				}
				row[j] = float64(d.Unix() / 86400)
			default:
				t.Fatalf("column %q of class %d chosen", n, fi.types[fi.index[n]].class)
			}
		}
		if bad {
			if s.cfg.Nulls != "drop" {
				t.Fatalf("read without error, but a row holds a NULL, NaN or ±Inf: %q", rec)
			}
			dropped++
			continue
		}
		for j := range row {
			cols[j] = append(cols[j], row[j])
		}
	}
	whole = len(text) < sniffBytes && len(recs) <= sniffRows
	if whole && len(recs) > 0 {
		for c := range fi.nreal {
			types = append(types, referenceType(recs, c))
		}
	}
	return cols, dropped, types, whole && len(recs) > 0
}

// referenceType is the type of column c: numeric if every non-NULL value
// parses as a number (or none is there), else bool if every one is true or
// false, else a date if every one is YYYY-MM-DD, else a string.
func referenceType(recs [][]string, c int) colType {
	all := func(ok func(string) bool) bool {
		for _, r := range recs {
			if !isNullToken(r[c]) && !ok(strings.TrimSpace(r[c])) {
				return false
			}
		}
		return true
	}
	switch {
	case all(func(v string) bool { _, err := referenceNumber(v); return err == nil }):
		return textNumeric
	case all(func(v string) bool { _, err := strconv.ParseBool(v); return err == nil }):
		return textBool
	case all(func(v string) bool { _, err := time.Parse(time.DateOnly, v); return err == nil }):
		return textDate
	}
	return textString
}

// referenceNumber is the rule for numbers in text (internal/table's
// ParseNumber), written apart: strconv.ParseFloat, out of range allowed,
// but neither Go's digit separators nor hexadecimal floats.
func referenceNumber(v string) (float64, error) {
	if strings.ContainsAny(v, "_xX") {
		return 0, errors.New("not a decimal number")
	}
	x, err := strconv.ParseFloat(v, 64)
	if errors.Is(err, strconv.ErrRange) {
		err = nil
	}
	return x, err
}

// peakAllocator is an Arrow allocator that tracks the bytes held and
// their peak.
type peakAllocator struct {
	mem       memory.Allocator
	cur, peak atomic.Int64
}

func (a *peakAllocator) add(n int) {
	c := a.cur.Add(int64(n))
	for p := a.peak.Load(); c > p && !a.peak.CompareAndSwap(p, c); p = a.peak.Load() {
	}
}

func (a *peakAllocator) Allocate(n int) []byte { a.add(n); return a.mem.Allocate(n) }
func (a *peakAllocator) Free(b []byte)         { a.add(-len(b)); a.mem.Free(b) }
func (a *peakAllocator) Reallocate(n int, b []byte) []byte {
	a.add(n - len(b))
	return a.mem.Reallocate(n, b)
}

// TestTextErrorsClipped: values and names quoted by ingest's messages are
// cut to 200 bytes, however long they are in the file.
func TestTextErrorsClipped(t *testing.T) {
	long := strings.Repeat("v", 3000)
	for _, c := range []struct {
		text string
		want string
	}{
		{"a,y\n" + strings.Repeat("1,2\n", 1100) + long + ",3\n",
			`in.csv: row 1101 (1-based, counted within this file, header line not counted): column "a": "` + long[:200] + `… (3000 bytes)" is not a number (the column's type was inferred from the first rows of the file)`},
		{"a," + long + "\n1,2\n1,\n",
			`in.csv: row 2 (1-based, counted within this file, header line not counted): column "` + long[:200] + `… (3000 bytes)" is NULL`},
	} {
		s := &session{cfg: Config{MaxLine: 1 << 20}, mem: memory.DefaultAllocator, workers: 1, batchRows: 64}
		fi := &fileInfo{path: "in.csv", format: formatText, mem: []byte(c.text)}
		if err := s.inspectFile(fi); err != nil {
			t.Fatal(err)
		}
		s.files = []*fileInfo{fi}
		if err := s.choose(); err != nil {
			t.Fatal(err)
		}
		out := make(chan *batch, 100)
		err := s.readText(context.Background(), fi, out)
		if err == nil || err.Error() != c.want {
			t.Errorf("err = %v\nwant %s", err, c.want)
		}
	}
}

// TestFuzzTextOracle runs FuzzText's checks on inputs whose outcome is
// known, so that a check that cannot fail would show here.
func TestFuzzTextOracle(t *testing.T) {
	ok := func(text string, mode uint8) {
		t.Helper()
		fuzzText(t, []byte(text), mode)
	}
	ok("a,b\n1,2\n3,4\n", 0)
	ok("a,b\n1,\n3,4\n", 4)
	ok("d,x\n2024-01-02,1\n", 8)
	// The checks themselves: a wrong value, count or type is caught.
	fi := &fileInfo{comma: ',', header: true, names: []string{"a"}, index: map[string]int{"a": 0}, types: []colType{textNumeric}, nreal: 1}
	s := &session{names: []string{"a"}, cfg: Config{Nulls: "drop"}}
	cols, dropped, types, whole := referenceRead(t, []byte("a\n1.5\nNaN\n\n"), fi, s)
	if fmt.Sprint(cols, dropped, types[0] == textNumeric, whole) != "[[1.5]] 1 true true" {
		t.Fatalf("referenceRead: %v %d %v %v", cols, dropped, types, whole)
	}
	for _, e := range []string{"in.csv: flate: corrupt input", "in.csv: internal error at row 3", "other.csv: row 1: x",
		`in.csv: row 1: column "a": "` + strings.Repeat("x", 300) + `" is not a number`} {
		if textErrorProblem("in.csv", errors.New(e)) == "" {
			t.Errorf("textErrorProblem accepted %q", e)
		}
	}
	if p := textErrorProblem("in.csv", errors.New(`in.csv: line 3: unexpected EOF`)); p != "" {
		t.Errorf("textErrorProblem: %s", p)
	}
}
