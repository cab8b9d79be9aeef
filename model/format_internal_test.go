package model

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/featenc"
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

// TestEncodingCapability: a model with an encoding is written as version
// 3 requiring "encoding" (and "target-encoding" with a target-encoded
// column) and reads back with it; the NULL policy travels
// without a capability (a version-1 file), and the same model without
// either is written byte for byte as before.
func TestEncodingCapability(t *testing.T) {
	b, err := os.ReadFile("../cmd/falkon-ooc/testdata/model_v1.falkon")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if _, err := m.WriteTo(&again); err != nil || !bytes.Equal(again.Bytes(), b) {
		t.Fatalf("rewritten model differs from its file (err %v)", err)
	}
	col := featenc.Column{Source: m.features[0], Kind: featenc.Time, Cyclic: []string{featenc.Hour}}
	col.Features = featenc.FeatureNames(col) // the model uses the days only
	spec := &featenc.Spec{Columns: []featenc.Column{col}}
	te := featenc.Column{Source: "shop", Kind: featenc.Target, Target: m.targets[0], Levels: []string{"a", "b"}, Means: []float64{0.25, 1.5},
		Prior: 0.75, Null: true, NullMean: 0.5, Smooth: featenc.Smooth, Folds: featenc.Folds}
	te.Features = featenc.FeatureNames(te)
	target := &featenc.Spec{Columns: []featenc.Column{col, te}}
	for _, tc := range []struct {
		enc      *featenc.Spec
		nulls    string
		version  uint8
		requires []string
	}{
		{spec, "", 3, []string{"encoding"}},
		{target, "", 3, []string{"encoding", "target-encoding"}},
		{nil, "mean", 1, nil},
	} {
		cp := *m
		cp.encoding, cp.nulls = tc.enc, tc.nulls
		if v := cp.version(); v != tc.version || !slices.Equal(cp.requires(), tc.requires) {
			t.Fatalf("version %d requires %q, want %d %q", v, cp.requires(), tc.version, tc.requires)
		}
		var buf bytes.Buffer
		if _, err := cp.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Encoding(), tc.enc) || got.Nulls() != tc.nulls {
			t.Fatalf("read back encoding %+v nulls %q", got.Encoding(), got.Nulls())
		}
	}
}
