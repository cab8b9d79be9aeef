package serve

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// RequestError is a request the server refuses: its HTTP status and what
// is wrong, with the row (counted from 0, the index in the request's
// rows) and the field when one is at fault: the name the request gave
// the value (a row's key or a column: a feature, or an encoded model's
// input column) or a query parameter. It is the body of the error
// answer:
//
//	{"error": "row 3, field \"x2\": a string, not a number", "row": 3, "field": "x2"}
type RequestError struct {
	Status int
	Row    int    // -1: no row
	Field  string // "": no field
	Msg    string

	syntax bool // malformed JSON (a row's and field's, when known)
}

func (e *RequestError) Error() string {
	switch {
	case e.Row >= 0 && e.Field != "":
		return fmt.Sprintf("row %d, field %q: %s", e.Row, e.Field, e.Msg)
	case e.Row >= 0:
		return fmt.Sprintf("row %d: %s", e.Row, e.Msg)
	}
	return e.Msg
}

// ErrClosed is returned for requests that reach a closed Handler.
var ErrClosed = errors.New("serve: the handler is closed")

func badRow(row int, field, format string, a ...any) *RequestError {
	return &RequestError{Status: 400, Row: row, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func badRequest(field, format string, a ...any) *RequestError {
	return &RequestError{Status: 400, Row: -1, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// inRow places err, when it is malformed JSON known so far by its byte
// offset only, at row (≥ 0) and field ("": none) of the request, so that
// a bad value in a large body is found by its row and name. Other errors
// are returned as they are.
func inRow(err error, row int, field string) error {
	if re, ok := err.(*RequestError); ok && re.syntax && re.Row < 0 && re.Field == "" {
		re.Row, re.Field = row, field
	}
	return err
}

// appendErrorJSON appends e's JSON body to dst.
func appendErrorJSON(dst []byte, e *RequestError) []byte {
	dst = append(dst, `{"error":`...)
	dst = appendJSONString(dst, e.Error())
	if e.Row >= 0 {
		dst = append(dst, `,"row":`...)
		dst = strconv.AppendInt(dst, int64(e.Row), 10)
	}
	if e.Field != "" {
		dst = append(dst, `,"field":`...)
		dst = appendJSONString(dst, e.Field)
	}
	return append(dst, "}\n"...)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, bytes that are not UTF-8 replaced by U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\\ufffd"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
