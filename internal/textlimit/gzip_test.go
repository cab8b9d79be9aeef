package textlimit

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// A gzip stream whose deflate data has a bad length code (FuzzText's
// find): the decompressor says "flate: internal error: unexpected length
// code"; through Gunzipped it is a *DamagedGzipError.
func TestGunzippedDamaged(t *testing.T) {
	data := []byte("\x1f\x8b\b\x00\x00\x00\x00\x00\x00\xff\xec\xc0!\x01\x00 \f\x04@O\f\xf4\x1b\"\xb1\x14\x8b\xbf\x1a\x13wu\x03\xf4\x1b\"\x00\x00\x00")
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	_, raw := io.ReadAll(gz)
	if raw == nil {
		t.Fatal("the damaged stream decompressed without error")
	}
	gz, _ = gzip.NewReader(bytes.NewReader(data))
	_, err = io.ReadAll(Gunzipped(gz))
	var de *DamagedGzipError
	if !errors.As(err, &de) || err.Error() != "the gzip data is damaged (unexpected length code)" {
		t.Fatalf("err = %v (raw: %v), want the gzip data is damaged (unexpected length code)", err, raw)
	}
}
