package serve

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// maxToken bounds a string or number of a request: a longer one is an
// error, so a hostile body cannot grow the decoder's scratch.
const maxToken = 1 << 16

// jsonReader reads the JSON of a request body through a fixed buffer:
// the body is never held whole, and a reader reused across requests
// allocates nothing.
type jsonReader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // stream offset of buf[0]
	err      error // sticky read error; io.EOF at the end
	// tok is the last string or number read: a view of buf when it lay
	// whole in buf without escapes, else scratch (valid until the next
	// read either way).
	tok     []byte
	scratch []byte
}

func (jr *jsonReader) reset(r io.Reader) {
	if jr.buf == nil {
		jr.buf = make([]byte, 32<<10)
	}
	jr.r, jr.pos, jr.end, jr.off, jr.err = r, 0, 0, 0, nil
	jr.tok, jr.scratch = nil, jr.scratch[:0]
}

// fill reads more of the body when the buffer is spent; false at the end
// or on an error (jr.err).
func (jr *jsonReader) fill() bool {
	if jr.pos < jr.end {
		return true
	}
	if jr.err != nil {
		return false
	}
	jr.off += int64(jr.end)
	jr.pos, jr.end = 0, 0
	for jr.end == 0 && jr.err == nil {
		jr.end, jr.err = jr.r.Read(jr.buf)
	}
	return jr.end > 0
}

// where is the stream offset of the next byte.
func (jr *jsonReader) where() int64 { return jr.off + int64(jr.pos) }

// bodyErr turns a read error into the request's error.
func (jr *jsonReader) bodyErr() error {
	return readError(jr.err)
}

// syntax returns a malformed-JSON error at the current offset.
func (jr *jsonReader) syntax(format string, a ...any) error {
	if jr.err != nil && jr.err != io.EOF {
		return jr.bodyErr()
	}
	return &RequestError{Status: 400, Row: -1, Msg: fmt.Sprintf("malformed JSON at byte %d: %s", jr.where(), fmt.Sprintf(format, a...)), syntax: true}
}

// peek skips white space and returns the next byte without consuming it;
// 0 at the end of the body.
func (jr *jsonReader) peek() byte {
	for jr.fill() {
		c := jr.buf[jr.pos]
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c
		}
		jr.pos++
	}
	return 0
}

// expect consumes the byte c after white space.
func (jr *jsonReader) expect(c byte, what string) error {
	got := jr.peek()
	if got != c {
		return jr.syntax("want %s, found %s", what, describe(got))
	}
	jr.pos++
	return nil
}

// describe names the byte that starts a value, for errors.
func describe(c byte) string {
	switch {
	case c == 0:
		return "the end of the body"
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "true or false"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c >= 0x20 && c < 0x7f:
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// more reads the separator after an element of an array or object: true
// after ',', false after the closing byte.
func (jr *jsonReader) more(closing byte) (bool, error) {
	switch c := jr.peek(); c {
	case ',':
		jr.pos++
		return true, nil
	case closing:
		jr.pos++
		return false, nil
	default:
		return false, jr.syntax("want ',' or '%c', found %s", closing, describe(c))
	}
}

// str reads a string into jr.tok, its escapes decoded.
func (jr *jsonReader) str() error {
	if err := jr.expect('"', "a string"); err != nil {
		return err
	}
	// Fast path: the string ends within the buffer and has no escapes:
	// jr.tok views the buffer.
	b := jr.buf[jr.pos:jr.end]
	for i, c := range b {
		if c == '"' {
			jr.pos += i + 1
			jr.tok = b[:i]
			if !utf8.Valid(jr.tok) {
				return jr.syntax("a string that is not UTF-8")
			}
			return nil
		}
		if c == '\\' || c < 0x20 || i > maxToken {
			break
		}
	}
	jr.scratch = jr.scratch[:0]
	for {
		if !jr.fill() {
			return jr.syntax("unterminated string")
		}
		c := jr.buf[jr.pos]
		jr.pos++
		switch {
		case c == '"':
			jr.tok = jr.scratch
			if !utf8.Valid(jr.tok) {
				return jr.syntax("a string that is not UTF-8")
			}
			return nil
		case c == '\\':
			if err := jr.escape(); err != nil {
				return err
			}
		case c < 0x20:
			return jr.syntax("a control character (byte 0x%02x) in a string", c)
		default:
			jr.scratch = append(jr.scratch, c)
		}
		if len(jr.scratch) > maxToken {
			return jr.syntax("a string longer than %d bytes", maxToken)
		}
	}
}

func (jr *jsonReader) escape() error {
	if !jr.fill() {
		return jr.syntax("unterminated string")
	}
	c := jr.buf[jr.pos]
	jr.pos++
	switch c {
	case '"', '\\', '/':
		jr.scratch = append(jr.scratch, c)
	case 'b':
		jr.scratch = append(jr.scratch, '\b')
	case 'f':
		jr.scratch = append(jr.scratch, '\f')
	case 'n':
		jr.scratch = append(jr.scratch, '\n')
	case 'r':
		jr.scratch = append(jr.scratch, '\r')
	case 't':
		jr.scratch = append(jr.scratch, '\t')
	case 'u':
		r, err := jr.hex4()
		if err != nil {
			return err
		}
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
			if jr.fill() && jr.buf[jr.pos] == '\\' {
				jr.pos++
				if !jr.fill() || jr.buf[jr.pos] != 'u' {
					return jr.syntax("a lone surrogate escape")
				}
				jr.pos++
				r2, err := jr.hex4()
				if err != nil {
					return err
				}
				r = utf16.DecodeRune(r, r2)
			}
		}
		jr.scratch = utf8.AppendRune(jr.scratch, r)
	default:
		return jr.syntax("unknown escape \\%c", c)
	}
	return nil
}

func (jr *jsonReader) hex4() (rune, error) {
	var r rune
	for range 4 {
		if !jr.fill() {
			return 0, jr.syntax("unterminated \\u escape")
		}
		c := jr.buf[jr.pos]
		jr.pos++
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, jr.syntax("a \\u escape with %s", describe(c))
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// numberText reads a JSON number's text (valid until the next read),
// checked against JSON's grammar.
func (jr *jsonReader) numberText() ([]byte, error) {
	b, err := jr.numberToken()
	if err == nil && !validNumber(b) {
		err = jr.syntax("%q is not a JSON number", b)
	}
	return b, err
}

// numberToken reads the bytes a JSON number may be made of: a view of
// the buffer when the number ends within it, else a copy.
func (jr *jsonReader) numberToken() ([]byte, error) {
	b := jr.buf[jr.pos:jr.end]
	i := 0
	for i < len(b) && numByte[b[i]] {
		i++
	}
	if i < len(b) && i <= 400 {
		jr.pos += i
		return b[:i], nil
	}
	jr.scratch = jr.scratch[:0]
	for jr.fill() {
		c := jr.buf[jr.pos]
		if !numByte[c] {
			break
		}
		jr.scratch = append(jr.scratch, c)
		jr.pos++
		if len(jr.scratch) > 400 {
			return nil, jr.syntax("a number longer than 400 characters")
		}
	}
	return jr.scratch, nil
}

// number reads a JSON number. A value beyond float64's range reads as
// ±Inf, which the null policy then judges.
func (jr *jsonReader) number() (float64, error) {
	// Fast path: the number ends within the buffer, read in one pass.
	b := jr.buf[jr.pos:jr.end]
	if v, n, ok := parsePrefix(b); ok && n < len(b) && !numByte[b[n]] {
		jr.pos += n
		return v, nil
	}
	tok, err := jr.numberToken()
	if err != nil {
		return 0, err
	}
	v, ok := parseNumber(tok)
	if !ok {
		return 0, jr.syntax("%q is not a JSON number", tok)
	}
	return v, nil
}

// numByte marks the bytes a JSON number is made of.
var numByte = [256]bool{'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	'-': true, '+': true, '.': true, 'e': true, 'E': true}

// pow10 are the powers of ten that float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber checks b against JSON's grammar and returns its value as
// strconv.ParseFloat rounds it (±Inf beyond float64's range).
func parseNumber(b []byte) (float64, bool) {
	v, n, ok := parsePrefix(b)
	return v, ok && n == len(b)
}

// parsePrefix reads the JSON number at the start of b, in one pass: its
// value, exactly as strconv.ParseFloat rounds it (±Inf beyond float64's
// range), and its length; false when b does not start with one. A
// number whose digits fit in 2⁵³ and whose power of ten is within ±22
// is a product or quotient of two exact float64 values, rounded once:
// the correctly rounded value (Clinger's fast path, which strconv takes
// too). Others are handed to strconv.ParseFloat; the string conversion
// of a number of at most 32 bytes, which does not escape, allocates
// nothing.
func parsePrefix(b []byte) (float64, int, bool) {
	i, n := 0, len(b)
	neg := false
	if i < n && b[i] == '-' {
		neg = true
		i++
	}
	var mant uint64
	nd, exp := 0, 0 // digits in mant; the power of ten of mant's last digit
	exact := true   // every digit is in mant
	switch {
	case i < n && b[i] == '0':
		i++
	case i < n && b[i] >= '1' && b[i] <= '9':
		for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
			if nd < 19 {
				mant = mant*10 + uint64(b[i]-'0')
				nd++
			} else {
				exact = exact && b[i] == '0'
				exp++
			}
		}
	default:
		return 0, i, false
	}
	if i < n && b[i] == '.' {
		i++
		j := i
		for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
			switch {
			case nd >= 19:
				exact = exact && b[i] == '0'
			case mant == 0 && b[i] == '0': // a leading zero
				exp--
			default:
				mant = mant*10 + uint64(b[i]-'0')
				nd++
				exp--
			}
		}
		if i == j {
			return 0, i, false
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		esign := 1
		if i < n && (b[i] == '+' || b[i] == '-') {
			if b[i] == '-' {
				esign = -1
			}
			i++
		}
		j, e := i, 0
		for ; i < n && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 100000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == j {
			return 0, i, false
		}
		exp += esign * e
	}
	if exact && mant <= 1<<53 && exp >= -22 && exp <= 22 {
		f := float64(mant)
		if exp > 0 {
			f *= pow10[exp]
		} else if exp < 0 {
			f /= pow10[-exp]
		}
		if neg {
			f = -f
		}
		return f, i, true
	}
	v, err := strconv.ParseFloat(string(b[:i]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, i, false
	}
	return v, i, true
}

// validNumber reports whether b follows JSON's number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// literal consumes the word true, false or null that starts here.
func (jr *jsonReader) literal(word string) error {
	for i := range len(word) {
		if !jr.fill() || jr.buf[jr.pos] != word[i] {
			return jr.syntax("want %s", word)
		}
		jr.pos++
	}
	return nil
}

// value reads one feature value at row of feature j: a number, or null
// read by the null policy. Any other JSON value is the row's error.
func (jr *jsonReader) value(p *nullPolicy, row, j int, features []string) (float64, error) {
	switch c := jr.peek(); {
	case c == '-' || (c >= '0' && c <= '9'):
		v, err := jr.number()
		if err != nil {
			return 0, err
		}
		return p.value(v, row, j, features)
	case c == 'n':
		if err := jr.literal("null"); err != nil {
			return 0, err
		}
		return p.null(row, j, features)
	case c == 'N' || c == 'I':
		return 0, jr.syntax("NaN and Infinity are not JSON; a missing value is null")
	case c == '"' || c == '{' || c == '[' || c == 't' || c == 'f':
		return 0, badRow(row, features[j], "%s, not a number", describe(c))
	default:
		return 0, jr.syntax("want a number, found %s", describe(c))
	}
}

// read reads the value of request column j at row: a number for a
// feature, a level or a time for an encoded model's input column.
// Malformed JSON in the value is placed at its row and column too.
func (dc *decoder) read(jr *jsonReader, row, j int) (v float64, err error) {
	switch {
	case dc.kinds == nil || dc.kinds[j] == inNumber:
		v, err = jr.value(&dc.nulls, row, j, dc.inputs)
	case dc.kinds[j] == inCategory:
		v, err = jr.level(row, j, dc.inputs)
	default:
		v, err = jr.time(&dc.nulls, row, j, dc.inputs)
	}
	if err != nil {
		return 0, inRow(err, row, dc.inputs[j])
	}
	return v, nil
}

// level reads a categorical value as its level's code (featenc.Code):
// a string is the level; a number or true or false is the level of its
// text as written (as in a text file); null is the NULL level.
func (jr *jsonReader) level(row, j int, inputs []string) (float64, error) {
	switch c := jr.peek(); {
	case c == '"':
		if err := jr.str(); err != nil {
			return 0, err
		}
		return featenc.CodeBytes(jr.tok), nil
	case c == '-' || (c >= '0' && c <= '9'):
		tok, err := jr.numberText()
		if err != nil {
			return 0, err
		}
		return featenc.CodeBytes(tok), nil
	case c == 'n':
		return featenc.NullCode, jr.literal("null")
	case c == 't':
		return featenc.Code("true"), jr.literal("true")
	case c == 'f':
		return featenc.Code("false"), jr.literal("false")
	case c == '{' || c == '[':
		return 0, badRow(row, inputs[j], "%s, not a level (a string)", describe(c))
	default:
		return 0, jr.syntax("want a value, found %s", describe(c))
	}
}

// time reads a time column's value as days since 1970-01-01 UTC: a
// string holding a date (2024-03-04) or an RFC 3339 timestamp
// (2024-03-04T06:00:00Z), or a number of days. null, and a number that
// is not finite, read by the null policy.
func (jr *jsonReader) time(p *nullPolicy, row, j int, inputs []string) (float64, error) {
	switch c := jr.peek(); c {
	case '"':
	case '{', '[', 't', 'f':
		return 0, badRow(row, inputs[j], "%s, not a date or a number of days", describe(c))
	default:
		return jr.value(p, row, j, inputs)
	}
	if err := jr.str(); err != nil {
		return 0, err
	}
	days, ok := parseDays(jr.tok)
	if !ok {
		return 0, badRow(row, inputs[j], "%q is not a date (2024-03-04) or an RFC 3339 timestamp (2024-03-04T06:00:00Z)", jr.tok)
	}
	return days, nil
}

// parseDays reads a date YYYY-MM-DD or an RFC 3339 timestamp as days
// since 1970-01-01 UTC (the fraction is the time of day), as a Parquet
// date or timestamp column converts (table.Convert).
func parseDays(b []byte) (float64, bool) {
	if len(b) == 10 {
		t, err := time.Parse(time.DateOnly, string(b))
		if err != nil {
			return 0, false
		}
		return float64(t.Unix() / 86400), true
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0, false
	}
	return float64(t.UnixNano()) / (86400 * 1e9), true
}

// decodeJSON reads a request's JSON body into rb: either
//
//	{"rows": [{"x1": 0.5, "x2": 3}, …]}         rows keyed by feature name
//	{"columns": {"x1": [0.5, …], "x2": [3, …]}}  one array per feature
func (dc *decoder) decodeJSON(jr *jsonReader, rb *rowBuf) error {
	if err := jr.expect('{', `a JSON object {"rows": [...]} or {"columns": {...}}`); err != nil {
		return err
	}
	form := ""
	if jr.peek() == '}' {
		return badRequest("", `an empty object: want {"rows": [...]} or {"columns": {...}}`)
	}
	for {
		if err := jr.str(); err != nil {
			return err
		}
		var which string
		switch string(jr.tok) {
		case "rows":
			which = "rows"
		case "columns":
			which = "columns"
		default:
			key := string(jr.tok)
			return badRequest(key, `unknown field %q: the body is {"rows": [...]} or {"columns": {...}}; options go in the query (proba, std, interval)`, key)
		}
		if form != "" {
			return badRequest(which, `the body holds both "rows" and "columns", or one twice; send one`)
		}
		form = which
		if err := jr.expect(':', "':'"); err != nil {
			return err
		}
		var err error
		if which == "rows" {
			err = dc.jsonRows(jr, rb)
		} else {
			err = dc.jsonColumns(jr, rb)
		}
		if err != nil {
			return err
		}
		more, err := jr.more('}')
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if c := jr.peek(); c != 0 {
		return jr.syntax("%s after the JSON object", describe(c))
	}
	if jr.err != io.EOF {
		return jr.bodyErr()
	}
	return nil
}

// jsonRows reads [{"x1": 0.5, …}, …].
func (dc *decoder) jsonRows(jr *jsonReader, rb *rowBuf) error {
	if err := jr.expect('[', dc.rowsShape); err != nil {
		return err
	}
	if jr.peek() == ']' {
		jr.pos++
		return nil
	}
	for {
		row := rb.n
		if c := jr.peek(); c != '{' {
			if c == '[' || c == '"' || c == 'n' || c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9') {
				return badRow(row, "", "%s; a row is an object keyed by %s name", describe(c), dc.noun)
			}
			return jr.syntax("want an object (a row), found %s", describe(c))
		}
		jr.pos++
		x, err := rb.addRow()
		if err != nil {
			return err
		}
		if err := dc.jsonRow(jr, row, x); err != nil {
			return inRow(err, row, "")
		}
		more, err := jr.more(']')
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

// jsonRow reads the members of the row object whose '{' has been read
// into x, and its '}'.
func (dc *decoder) jsonRow(jr *jsonReader, row int, x []float64) error {
	features := dc.inputs
	d := len(features)
	dc.stamp++
	got, next := 0, 0
	if jr.peek() != '}' {
		for {
			if err := jr.str(); err != nil {
				return err
			}
			// Rows usually name the columns in one order: try the
			// one after the last before the index.
			j, ok := next, next < d && string(jr.tok) == features[next]
			if !ok {
				j, ok = dc.index[string(jr.tok)]
			}
			next = j + 1
			if !ok {
				return badRow(row, string(jr.tok), "not %s of the model (%s)", dc.one, dc.featureList)
			}
			if dc.seen[j] == dc.stamp {
				return badRow(row, features[j], "given twice")
			}
			dc.seen[j] = dc.stamp
			got++
			if err := jr.expect(':', "':'"); err != nil {
				return err
			}
			v, err := dc.read(jr, row, j)
			if err != nil {
				return err
			}
			x[j] = v
			more, err := jr.more('}')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	} else {
		jr.pos++
	}
	if got < d {
		for j := range d {
			if dc.seen[j] != dc.stamp {
				return badRow(row, features[j], "missing (the row has %d of the model's %d %s)", got, d, dc.what)
			}
		}
	}
	return nil
}

// jsonColumns reads {"x1": [0.5, …], …}.
func (dc *decoder) jsonColumns(jr *jsonReader, rb *rowBuf) error {
	features := dc.inputs
	d := len(features)
	if err := jr.expect('{', dc.colsShape); err != nil {
		return err
	}
	dc.stamp++
	got, first := 0, -1
	if jr.peek() == '}' {
		jr.pos++
	} else {
		for {
			if err := jr.str(); err != nil {
				return err
			}
			j, ok := dc.index[string(jr.tok)]
			if !ok {
				return badRequest(string(jr.tok), "column %q is not %s of the model (%s)", jr.tok, dc.one, dc.featureList)
			}
			if dc.seen[j] == dc.stamp {
				return badRequest(features[j], "column %q given twice", features[j])
			}
			dc.seen[j] = dc.stamp
			got++
			if err := jr.expect(':', "':'"); err != nil {
				return err
			}
			if c := jr.peek(); c != '[' {
				if c == 0 || c == ',' || c == '}' {
					return jr.syntax("want an array, found %s", describe(c))
				}
				return badRequest(features[j], "column %q is %s, not an array of values", features[j], describe(c))
			}
			jr.pos++
			i := 0
			if jr.peek() == ']' {
				jr.pos++
			} else {
				for {
					if first < 0 {
						if _, err := rb.addRow(); err != nil {
							return err
						}
					} else if i >= rb.n {
						return badRequest(features[j], "column %q has more values than column %q's %d", features[j], features[first], rb.n)
					}
					v, err := dc.read(jr, i, j)
					if err != nil {
						return err
					}
					rb.x[i*d+j] = v
					i++
					more, err := jr.more(']')
					if err != nil {
						return err
					}
					if !more {
						break
					}
				}
			}
			if first < 0 {
				first = j
			} else if i != rb.n {
				return badRequest(features[j], "column %q has %d values, column %q has %d", features[j], i, features[first], rb.n)
			}
			more, err := jr.more('}')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	if got < d {
		for j := range d {
			if dc.seen[j] != dc.stamp {
				return badRequest(features[j], "column %q is missing (the body has %d of the model's %d %s)", features[j], got, d, dc.what)
			}
		}
	}
	return nil
}
