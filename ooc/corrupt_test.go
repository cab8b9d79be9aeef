package ooc_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Every single-byte change anywhere in a model file is detected when it is
// loaded, with an error that names the file; none panics or loads.
func TestModelByteFlipsDetected(t *testing.T) {
	x, y := synth(200, 3, 21)
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 3, y, 1, 64), ooc.Config{Centers: 20, Iterations: 3}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	path := filepath.Join(t.TempDir(), "m.falkon")
	step := 1
	if testing.Short() {
		step = 13 // a sample, for the race-detector run
	}
	for i := 0; i < len(good); i += step {
		for _, mask := range []byte{0x01, 0x80} {
			bad := bytes.Clone(good)
			bad[i] ^= mask
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ooc.Load(path)
			if err == nil {
				t.Fatalf("flip of byte %d (mask %#x) of %d loaded without error", i, mask, len(good))
			}
			if !errors.Is(err, ooc.ErrFormat) && !errors.Is(err, ooc.ErrVersion) {
				t.Fatalf("byte %d: err = %v, want ErrFormat or ErrVersion", i, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("byte %d: error does not name the file: %v", i, err)
			}
		}
	}
	// Truncation at every length is detected too.
	for n := range len(good) {
		if _, err := ooc.ParseModel(good[:n]); err == nil {
			t.Fatalf("model truncated to %d of %d bytes parsed", n, len(good))
		}
	}
}

// FuzzParseModel: arbitrary bytes give an error, never a panic or an
// allocation sized by an untrusted length.
func FuzzParseModel(f *testing.F) {
	x, y := synth(100, 2, 22)
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 2, y, 1, 50), ooc.Config{Centers: 10, Iterations: 2}, ooc.RunOptions{})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	m.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte("FKOM"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ooc.ParseModel(data)
		if err == nil {
			out := make([]float64, m.K())
			m.PredictTo(out, make([]float64, m.D()), 1)
		}
	})
}
