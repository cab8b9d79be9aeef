package tabular

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestHiveKeys: a column named after a key=value folder of the path is
// read from it, as chunkstore/ingest reads it: a number in every row of a
// numeric column, its text in a kept one, NaN in an optional column whose
// value is not a number; a numeric column whose value is not a number is
// an error naming the file.
func TestHiveKeys(t *testing.T) {
	files := map[string][]byte{
		"d/k=3/t=abc/a.csv": []byte("x\n1\n2\n"),
		"d/k=4/t=abc/b.csv": []byte("x\n5\n"),
	}
	r, err := Open([]string{"d/k=3/t=abc/a.csv", "d/k=4/t=abc/b.csv"},
		Options{Numeric: []string{"k", "x"}, Optional: []string{"t"}, Keep: []string{"k"}, mem: files})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Names(); len(got) != 3 || got[0] != "x" || got[1] != "k" || got[2] != "t" {
		t.Errorf("Names() = %q, want [x k t]", got)
	}
	var k, x, kept []string
	for r.Next(t.Context()) {
		b := r.Batch()
		for i := range b.Rows {
			if !math.IsNaN(b.Cols[2][i]) {
				t.Errorf("t = %v, want NaN", b.Cols[2][i])
			}
			k = append(k, ftoa(b.Cols[0][i]))
			x = append(x, ftoa(b.Cols[1][i]))
			kept = append(kept, b.keep[0].(*array.String).Value(i))
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if g, w := join(k), "3 3 4"; g != w {
		t.Errorf("k = %s, want %s", g, w)
	}
	if g, w := join(x), "1 2 5"; g != w {
		t.Errorf("x = %s, want %s", g, w)
	}
	if g, w := join(kept), "3 3 4"; g != w {
		t.Errorf("kept k = %s, want %s", g, w)
	}

	_, err = Open([]string{"d/k=3/t=abc/a.csv"}, Options{Numeric: []string{"t"}, mem: files})
	if want := `d/k=3/t=abc/a.csv: column "t" comes from the folder name t=abc in its path, which is not a number`; err == nil || err.Error() != want {
		t.Errorf("text key as a number: %v, want %s", err, want)
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func join(s []string) string { return strings.Join(s, " ") }
