package textlimit

import (
	"errors"
	"io"

	"github.com/klauspost/compress/flate"
)

// Gunzipped wraps the decompressed stream of a gzip reader so that the
// decompressor's "flate: internal error: …" on damaged data (e.g.
// "unexpected length code", found by FuzzText) reaches the user as what
// it is: damaged gzip data, not a fault of this program.
func Gunzipped(r io.Reader) io.Reader { return gunzipped{r} }

type gunzipped struct{ r io.Reader }

func (g gunzipped) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	var ie flate.InternalError
	if errors.As(err, &ie) {
		err = &DamagedGzipError{Detail: string(ie)}
	}
	return n, err
}

// DamagedGzipError is compressed data that its gzip decompressor
// rejects.
type DamagedGzipError struct{ Detail string }

func (e *DamagedGzipError) Error() string { return "the gzip data is damaged (" + e.Detail + ")" }
