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
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/klauspost/compress/gzip"

	"github.com/falkon-ooc/falkon-ooc/internal/textlimit"
)

// nullTokens are the text values read as NULL, as chunkstore/ingest reads
// them.
var nullTokens = []string{"", "NULL", "null", "NA"}

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
	first  []string // the first data record, read while sniffing (headerless files)
	ncol   int
	labels map[int]map[string]int // numeric column → label index (Options.Labels)
	known  map[int][]string
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
	if bytes.IndexByte(line, 0) >= 0 {
		return nil, nil, fmt.Errorf("%s: neither Parquet nor text (it holds NUL bytes)", path)
	}
	// The peek above is bounded; the limiter bounds every record after it,
	// so the csv reader's buffers stay within a small multiple of MaxLine
	// however long a (decompressed) line is.
	t.cr = csv.NewReader(bufio.NewReaderSize(textlimit.NewLimiter(br, path, r.opt.MaxLine), 64<<10))
	t.cr.Comma = sniffComma(path, line)
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
		t.first = rec
	case r.opt.NoHeader:
		for i := range rec {
			names = append(names, "c"+strconv.Itoa(i))
		}
		t.first = rec
	default:
		t.hdr = true
		names = slices.Clone(rec)
	}
	if err := r.choose(path, names); err != nil {
		return nil, nil, err
	}
	for j, c := range r.columns() {
		t.num = append(t.num, slices.Index(names, c))
		if idx, ok := r.labels[c]; ok {
			if t.labels == nil {
				t.labels, t.known = map[int]map[string]int{}, map[int][]string{}
			}
			t.labels[j], t.known[j] = idx, r.opt.Labels[c]
		}
	}
	t.names = names
	for _, c := range r.opt.Keep {
		t.keep = append(t.keep, slices.Index(names, c))
		t.kbld = append(t.kbld, array.NewStringBuilder(r.mem))
		if len(r.keepType) < len(r.opt.Keep) {
			r.keepType = append(r.keepType, arrow.BinaryTypes.String)
		}
	}
	return t, names, nil
}

func (t *textFile) header() bool    { return t.hdr }
func (t *textFile) rowsRead() int64 { return t.done }

func (t *textFile) read(ctx context.Context, n int, cols [][]float64, bads []bad) ([]arrow.Array, int, error) {
	rows := 0
	for rows < n {
		var rec []string
		if t.first != nil {
			rec, t.first = t.first, nil
		} else {
			var err error
			rec, err = t.cr.Read()
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
			s := strings.TrimSpace(rec[f])
			if slices.Contains(nullTokens, rec[f]) {
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
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				v, err = parseBool(s)
				if err != nil {
					return nil, 0, fmt.Errorf("%s: %s: column %q: %q is not a number", t.path, rowPhrase(t.done+int64(rows)+1, t.hdr), clip(t.names[f]), clip(rec[f]))
				}
			}
			cols[j][rows] = v
			if v-v != 0 {
				bads[j].add(rows, nonFinite(v))
			}
		}
		for j, f := range t.keep {
			t.kbld[j].Append(rec[f])
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
		keep[j] = b.NewArray()
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

// parseBool reads true/false as ingest stores a bool column: 1 and 0.
func parseBool(s string) (float64, error) {
	v, err := strconv.ParseBool(s)
	if v {
		return 1, err
	}
	return 0, err
}

func (t *textFile) Close() error {
	for _, b := range t.kbld {
		b.Release()
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

// sniffComma picks the delimiter as chunkstore/ingest does: a tab for .tsv
// files, else the most frequent of , \t ; | outside quotes in the first
// line (a comma if none).
func sniffComma(path string, head []byte) rune {
	lower := strings.TrimSuffix(strings.ToLower(path), ".gz")
	if strings.HasSuffix(lower, ".tsv") {
		return '\t'
	}
	counts := map[byte]int{}
	inQuote := false
	for _, c := range head {
		if c == '"' {
			inQuote = !inQuote
			continue
		}
		if inQuote {
			continue
		}
		if c == '\n' {
			break
		}
		counts[c]++
	}
	best, n := byte(','), 0
	for _, c := range []byte{',', '\t', ';', '|'} {
		if counts[c] > n {
			best, n = c, counts[c]
		}
	}
	return rune(best)
}

// clip shortens a user's value quoted in an error message, as
// chunkstore/ingest does.
var clip = textlimit.Clip
