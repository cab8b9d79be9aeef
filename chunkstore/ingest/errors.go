package ingest

import "fmt"

// ValueError reports a value in a chosen column that cannot be stored: a
// NULL, a NaN or an infinity (with Config.Nulls == "drop" such rows are
// skipped instead).
type ValueError struct {
	File   string // the input file, as given or found
	Column string
	// Row is the 1-based row within File. In a text file with a header it
	// counts data rows, not the header line.
	Row    int64
	Value  string // "NULL", "NaN", "+Inf" or "-Inf"
	Header bool   // File is a text file with a header line
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: %s: column %q is %s", e.File, rowPhrase(e.Row, e.Header), clip(e.Column), e.Value)
}

// ParseError reports a text value that does not parse as its column's type,
// which was inferred from the first block of the file. Its message quotes
// at most 200 bytes of the value and of the column name.
type ParseError struct {
	File   string
	Column string
	Row    int64 // 1-based, as in ValueError
	Value  string
	Want   string // "a number", "true or false", "a date YYYY-MM-DD"
	Header bool
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %s: column %q: %q is not %s (the column's type was inferred from the first rows of the file)",
		e.File, rowPhrase(e.Row, e.Header), clip(e.Column), clip(e.Value), e.Want)
}

func rowPhrase(row int64, header bool) string {
	if header {
		return fmt.Sprintf("row %d (1-based, counted within this file, header line not counted)", row)
	}
	return fmt.Sprintf("row %d (1-based, counted within this file)", row)
}
