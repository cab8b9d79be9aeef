package ingest

import "github.com/falkon-ooc/falkon-ooc/internal/textlimit"

// DefaultMaxLine is the longest text record (a line, or several lines
// joined by a quoted field) that ingest reads when Config.MaxLine is 0.
const DefaultMaxLine = textlimit.DefaultMaxLine

// LineTooLongError reports a text record longer than Config.MaxLine.
type LineTooLongError = textlimit.LineTooLongError

// The record limiter, the header reader and the quoting rule of error
// messages are shared with package tabular.
var (
	newRecordLimiter = textlimit.NewLimiter
	readRecord       = textlimit.ReadRecord
	clip             = textlimit.Clip
)

// maxQuote is how much of a user's value an error message quotes.
const maxQuote = textlimit.MaxQuote
