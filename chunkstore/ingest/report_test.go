package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// writeText writes a CSV file from a header and a row function.
func writeText(t *testing.T, path, header string, rows int, row func(i int) string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := range rows {
		b.WriteString(row(i) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// report renders Result.Columns compactly for comparisons.
func report(cols []chunkstore.InputColumn) string {
	var q []string
	for _, c := range cols {
		s := c.Name + ":" + c.Role
		if c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		q = append(q, s)
	}
	return strings.Join(q, " ")
}

// TestColumnReport checks what ingest says and does with each column:
// identifiers (monotone integers; distinct integers named like an id)
// and constant columns are left out of the default features, split across
// two files and batches; the manifest records the same report.
func TestColumnReport(t *testing.T) {
	dir := t.TempDir()
	const header = "row_nr,user_id,cust_id,c,x,down,flag,name,day,y"
	// row_nr increases across both files; user_id is a permutation (distinct,
	// not monotone); cust_id repeats; c is constant; down decreases.
	row := func(off int) func(i int) string {
		return func(i int) string {
			k := off + i
			return fmt.Sprintf("%d,%d,%d,7,%g,%d,%t,n%d,2024-01-%02d,%g", k, (k*7919)%5000, k%10, float64(k%13)/3, 10000-k, k%2 == 0, k%3, 1+k%28, float64(k)/2)
		}
	}
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeText(t, a, header, 3000, row(0))
	writeText(t, b, header, 2000, row(3000))

	res, st := mustIngest(t, []string{a, b}, Config{Targets: []string{"y"}, BatchRows: 1024})
	want := "row_nr:skipped(identifier) user_id:skipped(identifier) cust_id:feature c:skipped(constant) x:feature " +
		"down:skipped(identifier) flag:feature name:feature day:skipped(date) y:target"
	if got := report(res.Columns); got != want {
		t.Fatalf("report\n%s\nwant\n%s", got, want)
	}
	onehot := []string{"name=n0", "name=n1", "name=n2"}
	if !slices.Equal(res.Features, slices.Concat([]string{"cust_id", "x", "flag"}, onehot)) || !slices.Equal(st.names, slices.Concat([]string{"cust_id", "x", "flag"}, onehot, []string{"y"})) {
		t.Fatalf("features %v, store columns %v", res.Features, st.names)
	}
	if got := report(st.m.InputColumns); got != want {
		t.Fatalf("manifest report %s", got)
	}
	notes := map[string]string{}
	for _, c := range res.Columns {
		notes[c.Name] = c.Note
	}
	for name, note := range map[string]string{
		"row_nr":  "looks like a row identifier: integer, all 5000 values distinct, increasing; name it in --features to keep it",
		"user_id": "looks like a row identifier: named like one, integer, all 5000 values distinct; name it in --features to keep it",
		"down":    "looks like a row identifier: integer, all 5000 values distinct, decreasing; name it in --features to keep it",
		"c":       "every value is 7; dropped",
		"name":    "one-hot: 3 levels (exact)",
	} {
		if notes[name] != note {
			t.Errorf("%s: note %q, want %q", name, notes[name], note)
		}
	}
	// The copy keeps the values and the rows.
	if st.m.Rows != 5000 || st.col(t, "y")[4999] != 4999.0/2 || st.col(t, "cust_id")[13] != 3 {
		t.Fatalf("rows %d, values changed", st.m.Rows)
	}

	// Named in --features, an identifier is kept; others are "not named".
	res, _ = mustIngest(t, []string{a}, Config{Targets: []string{"y"}, Features: []string{"row_nr", "c"}, Exclude: []string{"x"}})
	want = "row_nr:feature user_id:skipped(not named) cust_id:skipped(not named) c:feature x:skipped(excluded) " +
		"down:skipped(not named) flag:skipped(not named) name:skipped(not named) day:skipped(date) y:target"
	if got := report(res.Columns); got != want {
		t.Fatalf("report\n%s\nwant\n%s", got, want)
	}

	// Nothing left: a clear error and no store.
	out := filepath.Join(dir, "none")
	_, err := checked(t, []string{a}, Config{Out: out, Targets: []string{"y"}, Exclude: []string{"cust_id", "x", "flag", "name"}})
	const msg = `no feature columns left: "row_nr" (identifier), "user_id" (identifier), "c" (constant), "down" (identifier); name columns in --features to keep them`
	if err == nil || err.Error() != msg {
		t.Fatalf("got %v, want %s", err, msg)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("%s exists after a failure", out)
	}
}

// TestNoTempLeft checks that neither the first pass's store nor its copy
// stays beside the output.
func TestNoTempLeft(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(t.TempDir(), "a.csv")
	writeText(t, in, "id,x,y", 100, func(i int) string { return fmt.Sprintf("%d,%d,%d", i, (i*31)%17, i%5) })
	for _, name := range []string{"copied", "renamed"} {
		cfg := Config{Out: filepath.Join(dir, name), Targets: []string{"y"}}
		if name == "renamed" {
			cfg.Features = []string{"x"}
		}
		if _, err := checked(t, []string{in}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"copied", "renamed"}) {
		t.Fatalf("directory holds %v", names)
	}
}

func TestIDName(t *testing.T) {
	for name, want := range map[string]bool{"id": true, "ID": true, "user_id": true, "userId": true, "rowID": true,
		"order-id": true, "Id": true, "idx": false, "valid": false, "paid": false, "ID3": false, "AID": false} {
		if idName(name) != want {
			t.Errorf("idName(%q) = %v", name, !want)
		}
	}
}
