package chunkstore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInputColumnsAndLabels writes a store with an input-column report and
// a string target, reads both back, and checks that the manifest check
// refuses inconsistent ones.
func TestInputColumnsAndLabels(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, []ColumnSpec{{Name: "x", Type: "float64"}}, []ColumnSpec{{Name: "y", Type: LabelType}, {Name: "z", Type: "int8"}}, Options{ChunkRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append([][]float64{{1, 2, 3, 4, 5}, {0, 2, 1, 1, 0}, {1, 1, 1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	report := []InputColumn{{Name: "id", Type: "int64", Role: RoleSkipped, Reason: SkipIdentifier, Note: "n"},
		{Name: "x", Type: "double", Role: RoleFeature}, {Name: "y", Type: "utf8 (string)", Role: RoleTarget}, {Name: "z", Type: "int8", Role: RoleTarget}}
	w.SetInputColumns(report)
	if err := w.SetLabels("z", []string{"a"}); err == nil || err.Error() != `chunkstore: set labels: no target "z" of type "string"` {
		t.Fatalf("SetLabels on a numeric target: %v", err)
	}
	if err := w.SetLabels("y", []string{"b", "a", "c"}); err == nil || !strings.Contains(err.Error(), "labels not sorted and distinct") {
		t.Fatalf("unsorted labels: %v", err)
	}
	if err := w.SetLabels("y", []string{"cat", "dog", "emu"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.TargetLabels(); len(got) != 2 || !slices.Equal(got[0], []string{"cat", "dog", "emu"}) || got[1] != nil {
		t.Fatalf("TargetLabels %q", got)
	}
	if got := r.InputColumns(); !slices.Equal(got, report) {
		t.Fatalf("InputColumns %+v", got)
	}

	// The manifest check refuses what a hand edit could break.
	meta, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, msg string }{
		{`"reason": "identifier"`, `"reason": "odd"`, `input column "id": unknown skip reason "odd"`},
		{`"role": "feature"`, `"role": "side"`, `input column "x": unknown role "side"`},
		{`"emu"`, `"ant"`, `target "y": labels not sorted and distinct`},
		{`"type": "int8"`, `"type": "string"`, `target "z": type "string" with 0 labels`},
	} {
		b := []byte(strings.Replace(string(meta), tc.old, tc.new, 1))
		m := new(Manifest)
		if _, err := decodeManifest("", b); err == nil {
			t.Fatalf("%s: accepted", tc.new)
		}
		b, err := reencode(b, m)
		if err != nil {
			t.Fatal(err)
		}
		_, err = decodeManifest("s", b)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %s", tc.new, err, tc.msg)
		}
	}
}

// reencode parses b into m and encodes it again with a valid checksum.
func reencode(b []byte, m *Manifest) ([]byte, error) {
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return encodeManifest(m)
}
