package table

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/falkon-ooc/falkon-ooc/internal/textlimit"
)

// NullTokens are the text values read as NULL.
var NullTokens = []string{"", "NULL", "null", "NA"}

// IsNull reports whether the text value s (untrimmed) is a NULL token.
func IsNull(s string) bool {
	for _, t := range NullTokens {
		if s == t {
			return true
		}
	}
	return false
}

// SniffRows is the number of rows, after the header, from which a text
// column's kind is inferred.
const SniffRows = 1000

// SniffComma picks the delimiter: a tab for .tsv files, else the most
// frequent of , \t ; | outside quotes in the first line of head (a comma
// if none).
func SniffComma(path string, head []byte) rune {
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

// CheckHead refuses a text file by its first bytes: NUL bytes (not text),
// or line ends that are a CR alone (classic Mac OS), which the CSV reader
// would take for one long line and report as "only a header line".
func CheckHead(path string, head []byte) error {
	if bytes.IndexByte(head, 0) >= 0 {
		return fmt.Errorf("%s: neither Parquet nor text (it holds NUL bytes)", path)
	}
	if i := bytes.IndexByte(head, '\r'); i >= 0 && i+1 < len(head) && head[i+1] != '\n' && bytes.IndexByte(head, '\n') < 0 {
		return fmt.Errorf("%s: its lines end in a carriage return alone (CR, classic Mac OS); convert them to LF, e.g. tr '\\r' '\\n' < %s > fixed.csv", path, textlimit.Clip(path))
	}
	return nil
}

// MaxName is the longest column name accepted, in bytes.
const MaxName = 4096

// CheckNames refuses header names that cannot name a column: empty, longer
// than MaxName bytes, or not valid UTF-8. hint ends the message (such as
// " (use --no-header if the file has no header)").
func CheckNames(path string, names []string, hint string) error {
	for i, n := range names {
		switch {
		case !utf8.ValidString(n):
			return fmt.Errorf("%s: the name of column %d is not valid UTF-8: %q (is the file in another encoding? convert it to UTF-8)", path, i+1, textlimit.Clip(n))
		case len(n) > MaxName:
			return fmt.Errorf("%s: the name of column %d is %d bytes long, more than %d: %q%s", path, i+1, len(n), MaxName, textlimit.Clip(n), hint)
		case strings.TrimSpace(n) == "":
			return fmt.Errorf("%s: the header names no column %d%s", path, i+1, hint)
		}
	}
	return nil
}

// Kind is what a text column holds, inferred from its first rows.
type Kind int

const (
	Number Kind = iota // also a column of NULLs only
	Bool               // true/false: stored as 1 and 0
	Date               // YYYY-MM-DD: stored as days since 1970-01-01
	String
)

// Infer returns the kind of a text column from sample values (untrimmed,
// NULL tokens ignored): Number if ParseNumber reads them all, else Bool,
// else Date, else String.
func Infer(values func(yield func(string) bool)) Kind {
	number, boolean, date := true, true, true
	for s := range values {
		if IsNull(s) {
			continue
		}
		if number {
			if _, err := ParseNumber(s); err != nil && !errors.Is(err, ErrCut) {
				number = false
			}
		}
		if boolean {
			if _, err := ParseBool(s); err != nil {
				boolean = false
			}
		}
		if date {
			if _, err := ParseDate(s); err != nil {
				date = false
			}
		}
	}
	switch {
	case number:
		return Number
	case boolean:
		return Bool
	case date:
		return Date
	default:
		return String
	}
}

// ErrSyntax is matched by the errors of ParseNumber, ParseBool and
// ParseDate.
var ErrSyntax = errors.New("invalid syntax")

// ErrCut is matched by ParseNumber's error for a number that ends with
// its decimal point ("1.", "-3."): what a file cut short in the middle
// of a number leaves. It matches ErrSyntax too. Infer counts such a
// value as a number, so that the reader refuses its row (naming it)
// instead of reading the column as text.
var ErrCut = fmt.Errorf("%w: a number that ends with its decimal point", ErrSyntax)

// wantNumber is what Parse says a number column's value should have
// been, by ParseNumber's error.
func wantNumber(err error) string {
	if errors.Is(err, ErrCut) {
		return "a number: it ends with its decimal point, as a number cut short does (is the file truncated?)"
	}
	return "a number"
}

// ParseNumber reads a text value (surrounding spaces ignored) as a
// float64: decimal notation with an optional sign and exponent, and NaN,
// Inf and Infinity in any case (the callers flag them). A value out of
// range is ±Inf or ±0, as strconv.ParseFloat rounds it. Go's digit
// separators (1_000) and hexadecimal floats (0x1p4), which ParseFloat
// accepts, are refused: no CSV writer means them as numbers. So is a
// number that ends with its decimal point (ErrCut).
func ParseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if strings.ContainsRune(s, '_') || strings.ContainsAny(s, "xX") {
		return 0, ErrSyntax
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, ErrSyntax
	}
	if strings.HasSuffix(s, ".") {
		return 0, ErrCut
	}
	return v, nil
}

// ParseBool reads true/false (as strconv.ParseBool: 1, t, T, TRUE, true,
// True, 0, f, …; surrounding spaces ignored) as 1 and 0.
func ParseBool(s string) (float64, error) {
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return 0, ErrSyntax
	}
	if v {
		return 1, nil
	}
	return 0, nil
}

// ParseDate reads a date YYYY-MM-DD (surrounding spaces ignored) as days
// since 1970-01-01.
func ParseDate(s string) (float64, error) {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
	if err != nil {
		return 0, ErrSyntax
	}
	return float64(t.Unix() / 86400), nil
}

// Parse reads a value of a column of kind k (Number, Bool or Date) and
// says, on an error, what the value should have been ("a number", "true
// or false", "a date YYYY-MM-DD").
func Parse(k Kind, s string) (v float64, want string, err error) {
	switch k {
	case Number:
		v, err = ParseNumber(s)
		want = wantNumber(err)
	case Bool:
		v, err = ParseBool(s)
		want = "true or false"
	case Date:
		v, err = ParseDate(s)
		want = "a date YYYY-MM-DD"
	default:
		return 0, "a number", ErrSyntax
	}
	return v, want, err
}

// LongName finds, in the first line of head (a header), the first field
// without quotes that is longer than MaxName bytes, and returns its
// column (1-based), its offset in head and its length. Readers call it before parsing the header,
// so that a line of hundreds of megabytes that cannot be a header is
// refused before the CSV parser copies it twice more.
func LongName(head []byte, comma rune) (col, start, n int, ok bool) {
	if comma >= utf8.RuneSelf {
		return 0, 0, 0, false
	}
	c := byte(comma)
	col, start, quoted := 1, 0, false
	for i := 0; i <= len(head); i++ {
		if i < len(head) {
			switch head[i] {
			case '"':
				quoted = true
				continue
			case c, '\n':
			default:
				continue
			}
		}
		end := i
		if end > start && i < len(head) && head[i] == '\n' && head[end-1] == '\r' {
			end--
		}
		if !quoted && end-start > MaxName {
			return col, start, end - start, true
		}
		if i == len(head) || head[i] == '\n' || quoted {
			// A quoted field may hold the delimiter or a newline: stop
			// at the first, the CSV parser judges the rest.
			return 0, 0, 0, false
		}
		col, start = col+1, i+1
	}
	return 0, 0, 0, false
}

// LongHeaderName refuses a header whose first line, in head (all of the
// input when whole, else the start of r, not yet consumed), has a field
// without quotes longer than MaxName, naming its column and length: the
// same message as CheckNames, from the first bytes. A field that runs
// past head is measured by reading on through r, keeping nothing; r is
// then consumed, and the caller stops reading it.
func LongHeaderName(path string, r *bufio.Reader, head []byte, whole bool) error {
	comma := SniffComma(path, head)
	col, start, n, ok := LongName(head, comma)
	if !ok {
		return nil
	}
	quote := string(head[start : start+min(n, textlimit.MaxQuote+1)])
	if start+n == len(head) && !whole {
		r.Discard(len(head))
		for {
			b, err := r.ReadSlice('\n')
			if i := bytes.IndexAny(b, string([]rune{comma, '\n'})); i >= 0 {
				n += i
				if i > 0 && b[i] == '\n' && b[i-1] == '\r' {
					n--
				}
				break
			}
			n += len(b)
			if err != nil && err != bufio.ErrBufferFull {
				break
			}
		}
	}
	return fmt.Errorf("%s: the name of column %d is %d bytes long, more than %d: %q (use --no-header if the file has no header)",
		path, col, n, MaxName, textlimit.ClipPrefix(quote, n))
}
