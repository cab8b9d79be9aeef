package tabular

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/klauspost/compress/gzip"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
	"github.com/falkon-ooc/falkon-ooc/internal/textlimit"
)

// textFile reads a delimited text stream with encoding/csv: every field a
// string, the numeric columns parsed here.
type textFile struct {
	path   string
	closer io.Closer
	gz     *gzip.Reader
	cr     *csv.Reader
	hdr    bool
	num    []int // field index of each numeric column
	names  []string
	keep   []int
	kbld   []*array.StringBuilder
	done   int64
	// pending holds the first data records, read to infer each numeric
	// column's kind as chunkstore/ingest does (table.Infer); pendErr is
	// the read error that ended them, returned once they are consumed.
	pending [][]string
	pendErr error
	pendRec []string     // the record returned with pendErr
	kinds   []table.Kind // of each numeric column
	ncol    int
	labels  map[int]map[string]int // numeric column → label index (Options.Labels)
	cat     map[int]bool           // numeric column read as level codes (Options.Categorical)
	known   map[int][]string
}

func (r *Reader) openText(path string, src io.Reader, closer io.Closer) (fr fileReader, names []string, err error) {
	t := &textFile{path: path, closer: closer}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	br := bufio.NewReaderSize(src, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		t.gz, err = gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		br = bufio.NewReaderSize(textlimit.Gunzipped(t.gz), 1<<20)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xef, 0xbb, 0xbf}) {
		br.Discard(3)
	}
	line, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, nil, fmt.Errorf("%s: empty input", path)
	}
	if err := table.CheckHead(path, line); err != nil {
		return nil, nil, err
	}
	if !r.opt.NoHeader && len(r.opt.Names) == 0 {
		// As chunkstore/ingest: a name longer than table.MaxName is
		// refused from the first bytes, not after reading the line.
		if err := table.LongHeaderName(path, br, line, len(line) < 64<<10); err != nil {
			return nil, nil, err
		}
	}
	// The peek above is bounded; the limiter bounds every record after it,
	// so the csv reader's buffers stay within a small multiple of MaxLine
	// however long a (decompressed) line is.
	t.cr = csv.NewReader(bufio.NewReaderSize(textlimit.NewLimiter(br, path, r.opt.MaxLine), 64<<10))
	t.cr.Comma = table.SniffComma(path, line)
	t.cr.ReuseRecord = false
	rec, err := t.cr.Read()
	if err != nil {
		return nil, nil, textError(path, err)
	}
	t.ncol = len(rec)
	switch {
	case len(r.opt.Names) > 0:
		if len(r.opt.Names) != len(rec) {
			return nil, nil, fmt.Errorf("%s: %d column names given, but the first line has %d fields", path, len(r.opt.Names), len(rec))
		}
		names = slices.Clone(r.opt.Names)
		t.pending = append(t.pending, rec)
	case r.opt.NoHeader:
		for i := range rec {
			names = append(names, "c"+strconv.Itoa(i))
		}
		t.pending = append(t.pending, rec)
	default:
		t.hdr = true
		names = slices.Clone(rec)
		if err := table.CheckNames(path, names, " (use --no-header if the file has no header)"); err != nil {
			return nil, nil, err
		}
	}
	all, hive, err := r.fromPath(path, names)
	if err != nil {
		return nil, nil, err
	}
	for j, c := range r.columns() {
		t.num = append(t.num, slices.Index(names, c)) // -1: a key of the path
		if r.cat[c] {
			if t.cat == nil {
				t.cat = map[int]bool{}
			}
			t.cat[j] = true
		}
		if idx, ok := r.labels[c]; ok {
			if t.labels == nil {
				t.labels, t.known = map[int]map[string]int{}, map[int][]string{}
			}
			t.labels[j], t.known[j] = idx, r.opt.Labels[c]
		}
	}
	t.names = names
	// The first rows, up to table.SniffRows or 1 MiB of fields, give each
	// numeric column its kind, as in chunkstore/ingest: a column of
	// true/false is read as 1/0 and one of dates as days, but "true" in a
	// column of numbers is an error, as there.
	bytes := 0
	for _, rec := range t.pending {
		for _, f := range rec {
			bytes += len(f)
		}
	}
	for len(t.pending) < table.SniffRows+boolInt(!t.hdr) && bytes < 1<<20 {
		rec, err := t.cr.Read()
		if err != nil {
			if err != io.EOF {
				t.pendErr, t.pendRec = err, rec
			}
			break
		}
		for _, f := range rec {
			bytes += len(f)
		}
		t.pending = append(t.pending, rec)
	}
	t.kinds = make([]table.Kind, len(t.num))
	for j, f := range t.num {
		if _, ok := t.labels[j]; ok || f < 0 || t.cat[j] {
			continue
		}
		t.kinds[j] = table.Infer(func(yield func(string) bool) {
			for _, rec := range t.pending {
				if f < len(rec) && !yield(rec[f]) {
					return
				}
			}
		})
		if t.kinds[j] == table.String {
			// Read as numbers: the first value that is not one is an
			// error naming its row.
			t.kinds[j] = table.Number
		}
	}
	for _, c := range r.opt.Keep {
		f := slices.Index(names, c) // -1: a key of the path, added by hive
		t.keep = append(t.keep, f)
		var b *array.StringBuilder
		if f >= 0 {
			b = array.NewStringBuilder(r.mem)
		}
		t.kbld = append(t.kbld, b)
		if len(r.keepType) < len(r.opt.Keep) {
			r.keepType = append(r.keepType, arrow.BinaryTypes.String)
		}
	}
	if hive != nil {
		hive.fileReader = t
		return hive, all, nil
	}
	return t, all, nil
}

func (t *textFile) header() bool    { return t.hdr }
func (t *textFile) rowsRead() int64 { return t.done }

func (t *textFile) read(ctx context.Context, n int, cols [][]float64, bads []bad) ([]arrow.Array, int, error) {
	rows := 0
	for rows < n {
		var rec []string
		var err error
		switch {
		case len(t.pending) > 0:
			rec, t.pending = t.pending[0], t.pending[1:]
			if len(t.pending) == 0 {
				t.pending = nil
			}
		case t.pendErr != nil:
			rec, err, t.pendErr, t.pendRec = t.pendRec, t.pendErr, nil, nil
		default:
			rec, err = t.cr.Read()
		}
		{
			if err == io.EOF {
				break
			}
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) && errors.Is(err, csv.ErrFieldCount) {
					return nil, 0, fmt.Errorf("%s: %s has %d fields, but the first line has %d", t.path, rowPhrase(t.done+int64(rows)+1, t.hdr), len(rec), t.ncol)
				}
				return nil, 0, textError(t.path, err)
			}
		}
		for j, f := range t.num {
			if f < 0 {
				continue // from the path
			}
			if t.cat[j] {
				cols[j][rows] = featenc.Code(rec[f])
				if table.IsNull(rec[f]) {
					cols[j][rows] = featenc.NullCode
				}
				continue
			}
			if table.IsNull(rec[f]) {
				cols[j][rows] = 0
				bads[j].add(rows, "NULL")
				continue
			}
			if idx, ok := t.labels[j]; ok {
				k, known := idx[rec[f]]
				if !known {
					return nil, 0, fmt.Errorf("%s: %s: column %q: %w", t.path, rowPhrase(t.done+int64(rows)+1, t.hdr), t.names[f], &LabelError{Label: rec[f], Labels: t.known[j]})
				}
				cols[j][rows] = float64(k)
				continue
			}
			v, want, err := table.Parse(t.kinds[j], rec[f])
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %s: column %q: %q is not %s", t.path, rowPhrase(t.done+int64(rows)+1, t.hdr), clip(t.names[f]), clip(rec[f]), want)
			}
			cols[j][rows] = v
			if v-v != 0 {
				bads[j].add(rows, nonFinite(v))
			}
		}
		for j, f := range t.keep {
			if f >= 0 {
				t.kbld[j].Append(rec[f])
			}
		}
		rows++
		if rows%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
	}
	t.done += int64(rows)
	if rows == 0 {
		return nil, 0, nil
	}
	keep := make([]arrow.Array, len(t.kbld))
	for j, b := range t.kbld {
		if b != nil {
			keep[j] = b.NewArray()
		}
	}
	return keep, rows, nil
}

// LineTooLongError reports a text record longer than Options.MaxLine,
// with the file and the line it starts on.
type LineTooLongError = textlimit.LineTooLongError

// textError names path in a read error, unless it is a
// *LineTooLongError, which names it already.
func textError(path string, err error) error {
	var le *LineTooLongError
	if errors.As(err, &le) {
		return le
	}
	return fmt.Errorf("%s: %w", path, err)
}

func (t *textFile) Close() error {
	for _, b := range t.kbld {
		if b != nil {
			b.Release()
		}
	}
	t.kbld = nil
	if t.gz != nil {
		t.gz.Close()
	}
	if t.closer != nil {
		return t.closer.Close()
	}
	return nil
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// clip shortens a user's value quoted in an error message, as
// chunkstore/ingest does.
var clip = textlimit.Clip
