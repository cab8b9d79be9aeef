package model

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/container"
)

// TestRequiresUnknown: a version-3 file that needs a capability this
// build does not know is refused with ErrVersion, naming it; one that
// needs none loads.
func TestRequiresUnknown(t *testing.T) {
	b, err := os.ReadFile("../cmd/falkon-ooc/testdata/model_v1.falkon")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	write := func(requires []string) []byte {
		meta := m.meta()
		meta.Requires = requires
		var buf bytes.Buffer
		if err := container.Write(&buf, magic, 3, meta, m.centres, m.alpha); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	_, err = Parse(write([]string{"frobnication"}))
	if want := `unsupported format version: the model needs "frobnication", which this build does not know; upgrade falkon-ooc`; !errors.Is(err, ErrVersion) || err.Error() != want {
		t.Errorf("unknown capability: %v, want %q", err, want)
	}
	if _, err := Parse(write(nil)); err != nil {
		t.Errorf("version 3 without requirements: %v", err)
	}
}
