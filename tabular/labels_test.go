package tabular_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// A label column written by the Writer (a string column in Parquet, text
// in CSV) reads back, with Options.Labels, as the indices of the labels;
// a label outside the list is a *LabelError naming the file, row and
// column.
func TestLabelColumns(t *testing.T) {
	dir := t.TempDir()
	labels := []string{"cat", "dog", "emu, the bird"}
	codes := []float64{2, 0, 1, 1, 2, 0, 0}
	xs := []float64{1, 2, 3, 4, 5, 6, 7}
	for _, f := range []tabular.Format{tabular.Parquet, tabular.CSV} {
		path := filepath.Join(dir, "l.csv")
		if f == tabular.Parquet {
			path = filepath.Join(dir, "l.parquet")
		}
		var buf bytes.Buffer
		w, err := tabular.NewColumnWriter(&buf, f, nil, []tabular.Column{{Name: "x"}, {Name: "kind", Labels: labels}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(nil, [][]float64{xs, codes}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if f == tabular.CSV && !strings.Contains(buf.String(), "5,\"emu, the bird\"\n") {
			t.Errorf("CSV output:\n%s", buf.String())
		}
		// Read back, the labels in another order.
		order := []string{"emu, the bird", "cat", "dog"}
		r, err := tabular.Open([]string{path}, tabular.Options{Numeric: []string{"x"}, Optional: []string{"kind"}, Labels: map[string][]string{"kind": order}})
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for r.Next(t.Context()) {
			got = append(got, r.Batch().Cols[1]...)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		for i, c := range got {
			if order[int(c)] != labels[int(codes[i])] {
				t.Fatalf("%v: row %d read as %q, written as %q", f, i, order[int(c)], labels[int(codes[i])])
			}
		}
		// A list without "dog".
		r, err = tabular.Open([]string{path}, tabular.Options{Numeric: []string{"x"}, Optional: []string{"kind"}, Labels: map[string][]string{"kind": labels[:1:1]}})
		if err != nil {
			t.Fatal(err)
		}
		for r.Next(t.Context()) {
		}
		err = r.Err()
		r.Close()
		var le *tabular.LabelError
		row := "row 1 (1-based, counted within this file)"
		if f == tabular.CSV {
			row = "row 1 (1-based, counted within this file, header line not counted)"
		}
		want := path + ": " + row + `: column "kind": label "emu, the bird" is not one of the model's classes ["cat"]`
		if !errors.As(err, &le) || err.Error() != want {
			t.Errorf("%v: unknown label: %v, want %s", f, err, want)
		}
		if slices.Contains(le.Labels, "dog") {
			t.Errorf("labels %q", le.Labels)
		}
	}
}
