package ingest

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestNullsMean: with Nulls "mean" a bad feature value (NULL, NaN, ±Inf)
// holds the mean of the column's other stored values, a row with a bad
// target is dropped, and the report counts the values filled. Small
// chunks and batches, so that the store of NULL places must line up
// across chunk and batch boundaries.
func TestNullsMean(t *testing.T) {
	dir := t.TempDir()
	path := nanFile(t, dir) // x: NaN, +Inf, -Inf at rows 3, 5, 8; n: NULL at rows 2, 8
	res, st := mustIngest(t, []string{path}, Config{Features: []string{"x", "n"}, Targets: []string{"y"}, Nulls: "mean", BatchRows: 4, ChunkRows: 3})
	mx, mn := (0+1+3+5+6+8+9)/7.0, (0+2+3+4+5+6+8+9)/8.0
	wantX := []float64{0, 1, mx, 3, mx, 5, 6, mx, 8, 9}
	wantN := []float64{0, mn, 2, 3, 4, 5, 6, mn, 8, 9}
	// The fill is the first pass's mean × rows / (rows − filled): within
	// a few ulps of the direct mean.
	near := func(got, want []float64) bool {
		for i := range got {
			if math.Abs(got[i]-want[i]) > 4e-16*math.Abs(want[i]) {
				return false
			}
		}
		return len(got) == len(want)
	}
	if got := st.col(t, "x"); !near(got, wantX) {
		t.Errorf("x = %v, want %v", got, wantX)
	}
	if got := st.col(t, "n"); !near(got, wantN) {
		t.Errorf("n = %v, want %v", got, wantN)
	}
	if res.Rows != 10 || res.Dropped != 0 || res.Filled != 5 {
		t.Errorf("rows %d dropped %d filled %d, want 10, 0, 5", res.Rows, res.Dropped, res.Filled)
	}
	for _, c := range st.m.InputColumns {
		switch c.Name {
		case "x":
			if want := "3 NULL, NaN or ±Inf values filled with the mean of the others, " + fmtNum(st.col(t, "x")[2]); c.Nulls != 3 || c.Note != want {
				t.Errorf("report of x: %d nulls, note %q; want 3, %q", c.Nulls, c.Note, want)
			}
		case "n":
			if c.Nulls != 2 {
				t.Errorf("report of n: %d nulls, want 2", c.Nulls)
			}
		}
	}
	// The manifest's mean is the filled column's: the mean of the others.
	if m := st.m.Features[0].Mean; math.Abs(m-mx) > 1e-15 {
		t.Errorf("stored mean of x %v, want %v", m, mx)
	}

	// A bad target drops its row; the mean is over the rows stored.
	csv := filepath.Join(dir, "t.csv")
	os.WriteFile(csv, []byte("a,y\n1,2\n,3\n5,\n7,8\n"), 0o644)
	res, st = mustIngest(t, []string{csv}, Config{Targets: []string{"y"}, Nulls: "mean"})
	if got := st.col(t, "a"); !slices.Equal(got, []float64{1, 4, 7}) || res.Dropped != 1 || res.Filled != 1 {
		t.Errorf("a = %v, dropped %d, filled %d; want [1 4 7], 1, 1", got, res.Dropped, res.Filled)
	}

	// Hive partitions: the key's column is never NULL.
	for f, body := range map[string]string{"hv/k=1/a.csv": "a,y\n1,1\n,2\n", "hv/k=2/b.csv": "a,y\n3,3\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644)
	}
	_, st = mustIngest(t, []string{filepath.Join(dir, "hv")}, Config{Features: []string{"a", "k"}, Targets: []string{"y"}, Nulls: "mean"})
	if got, k := st.col(t, "a"), st.col(t, "k"); !slices.Equal(got, []float64{1, 2, 3}) || !slices.Equal(k, []float64{1, 1, 2}) {
		t.Errorf("hive: a = %v, k = %v; want [1 2 3], [1 1 2]", got, k)
	}

	// No value to take the mean of.
	empty := filepath.Join(dir, "e.csv")
	os.WriteFile(empty, []byte("a,b,y\n,1,1\n,2,2\n"), 0o644)
	_, err := checked(t, []string{empty}, Config{Out: filepath.Join(dir, "e"), Targets: []string{"y"}, Nulls: "mean"})
	if want := `column "a" holds no value but NULL, NaN or ±Inf: --nulls mean has no mean to fill it with; leave it out with --exclude a`; err == nil || err.Error() != want {
		t.Errorf("all NULL: %v, want %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "e")); !os.IsNotExist(err) {
		t.Errorf("a failed ingest left its store: %v", err)
	}
}

// TestNullsMeanChecks: the constant and identifier checks of the default
// features look at the values, not at the places of the NULLs that
// --nulls mean fills: a column of one value and NULLs is constant, and an
// id column with a NULL is still an identifier.
func TestNullsMeanChecks(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "c.csv")
	body := "id,k,x,y\n"
	for i := range 200 {
		id, k := strconv.Itoa(1000+(i*37)%200), "5" // distinct, not monotone
		if i%10 == 3 {
			k = ""
		}
		if i == 50 || i == 120 {
			id = ""
		}
		body += id + "," + k + "," + strconv.Itoa(i%7) + ",1\n"
	}
	os.WriteFile(csv, []byte(body), 0o644)
	res, _ := mustIngest(t, []string{csv}, Config{Targets: []string{"y"}, Nulls: "mean"})
	if want := "id:skipped(identifier) k:skipped(constant) x:feature y:target"; report(res.Columns) != want {
		t.Errorf("report %s, want %s", report(res.Columns), want)
	}
}
