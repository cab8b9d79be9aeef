package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// tree writes small CSV files at the given paths under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGlobRecursive(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"a.csv": "", "x/b.csv": "", "x/y/c.csv": "", "x/y/d.txt": "", "x/.hidden/e.csv": "", "x/.f.csv": "", "z/g.parquet": "",
	})
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"**/*.csv", []string{"a.csv", "x/b.csv", "x/y/c.csv"}},
		{"x/**/*.csv", []string{"x/b.csv", "x/y/c.csv"}},
		{"x/**", []string{"x/b.csv", "x/y/c.csv", "x/y/d.txt"}},
		{"**/y/*", []string{"x/y/c.csv", "x/y/d.txt"}},
		{"*/*.parquet", []string{"z/g.parquet"}},
	} {
		got, err := glob(filepath.Join(root, tc.pattern))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i], _ = filepath.Rel(root, got[i])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.pattern, got, tc.want)
		}
	}
	if _, err := glob(filepath.Join(root, "x**/*.csv")); err == nil || !strings.Contains(err.Error(), `"**" must be a whole path element`) {
		t.Errorf("x**: %v", err)
	}
}

// TestHive ingests a Hive-partitioned folder: numeric keys become
// columns (constant per file), a text key is skipped with its reason, and
// the folder, a ** glob and a directory walk find the same files.
func TestHive(t *testing.T) {
	root := t.TempDir()
	body := func(k int) string {
		var b strings.Builder
		b.WriteString("x,y\n")
		for i := range 5 {
			fmt.Fprintf(&b, "%d,%d\n", (i*3+k)%7, i+k)
		}
		return b.String()
	}
	tree(t, root, map[string]string{
		"year=2023/region=north/part-0.csv": body(1),
		"year=2023/region=south/part-0.csv": body(2),
		"year=2024/region=north/part-0.csv": body(3),
		"year=2024/region=north/_SUCCESS":   "",
	})
	for _, in := range []string{root, filepath.Join(root, "**", "*.csv")} {
		res, st := mustIngest(t, []string{in}, Config{Targets: []string{"y"}})
		want := "x:feature y:target year:feature region:skipped(partition)"
		if got := report(res.Columns); got != want {
			t.Fatalf("%s: report %s, want %s", in, got, want)
		}
		if len(res.Files) != 3 || !slices.Equal(st.names, []string{"x", "year", "y"}) {
			t.Fatalf("files %v, columns %v", res.Files, st.names)
		}
		year := st.col(t, "year")
		if year[0] != 2023 || year[9] != 2023 || year[10] != 2024 || len(year) != 15 {
			t.Fatalf("year %v", year)
		}
		if res.Columns[3].Type != "partition key (text)" || res.Columns[2].Type != "partition key (number)" {
			t.Fatalf("types %+v", res.Columns)
		}
	}
	// A key in some files only.
	tree(t, root, map[string]string{"year=2025/part-0.csv": body(4)})
	_, err := checked(t, []string{root}, Config{Out: filepath.Join(t.TempDir(), "s"), Targets: []string{"y"}})
	want := filepath.Join(root, "year=2025/part-0.csv") + ": partition keys [year] in its path, but " +
		filepath.Join(root, "year=2023/region=north/part-0.csv") + " has [year, region]; every file needs the same keys"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// A key that is also a column of the file.
	dup := t.TempDir()
	tree(t, dup, map[string]string{"x=1/a.csv": body(1)})
	_, err = checked(t, []string{dup}, Config{Out: filepath.Join(t.TempDir(), "s"), Targets: []string{"y"}})
	if want := `x=1/a.csv: "x" is both a column of the file and a partition key (x=1) in its path`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v, want …%s", err, want)
	}
}

// TestStdin reads CSV and Parquet from standard input ("-") and from a
// named pipe, which a second open would find empty: the bug behind the
// false "has 4 fields, but the first line has 2" from /dev/stdin.
func TestStdin(t *testing.T) {
	csvBody, err := os.ReadFile(interop + "duckdb.csv")
	if err != nil {
		t.Fatal(err)
	}
	pqBody, err := os.ReadFile(interop + "polars_zstd.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body []byte
		rows int64
	}{{"csv", csvBody, 1000}, {"parquet", pqBody, 4200}} {
		t.Run(tc.name+"/stdin", func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { w.Write(tc.body); w.Close() }()
			old := os.Stdin
			os.Stdin = r
			defer func() { os.Stdin = old; r.Close() }()
			out := filepath.Join(t.TempDir(), "s")
			res, st := mustIngest(t, []string{"-"}, Config{Out: out, Targets: []string{"f64"}, Features: []string{"i64", "f32"}})
			if res.Rows != tc.rows || !slices.Equal(res.Files, []string{"stdin"}) || st.m.Sources[0].Path != "stdin" || st.m.Sources[0].Size != int64(len(tc.body)) {
				t.Fatalf("rows %d files %v sources %+v", res.Rows, res.Files, st.m.Sources)
			}
			ents, _ := os.ReadDir(filepath.Dir(out))
			if len(ents) != 1 {
				t.Fatalf("left behind: %v", ents)
			}
		})
		t.Run(tc.name+"/fifo", func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "pipe")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip(err)
			}
			go func() {
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err == nil {
					f.Write(tc.body)
					f.Close()
				}
			}()
			res, _ := mustIngest(t, []string{fifo}, Config{Targets: []string{"f64"}, Features: []string{"i64", "f32"}})
			if res.Rows != tc.rows || res.Files[0] != fifo {
				t.Fatalf("rows %d files %v", res.Rows, res.Files)
			}
		})
	}
	// An error names the input as given, not the temporary file.
	r, w, _ := os.Pipe()
	go func() { w.Write([]byte("a,b\n1,2\n3,NaN\n")); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	_, err = checked(t, []string{"-"}, Config{Out: filepath.Join(t.TempDir(), "s"), Targets: []string{"b"}})
	const want = `stdin: row 2 (1-based, counted within this file, header line not counted): column "b" is NaN`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// TestHiveDuckDB reads a Hive-partitioned data set written by DuckDB
// (testdata/interop/hive, make.sh) with an identifier and a string column:
// the report, and every value against DuckDB's own reading of the folder.
func TestHiveDuckDB(t *testing.T) {
	dir := interop + "hive/data"
	res, st := mustIngest(t, []string{dir}, Config{Targets: []string{"y"}})
	want := "id:skipped(identifier) x1:feature x2:feature color:feature y:target part:feature region:skipped(partition)"
	if got := report(res.Columns); got != want {
		t.Fatalf("report\n%s\nwant\n%s", got, want)
	}
	if len(res.Files) != 6 || res.Rows != 1200 {
		t.Fatalf("files %v rows %d", res.Files, res.Rows)
	}
	b, err := os.ReadFile(interop + "hive/expected.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := strings.Split(lines[0], ",")
	for i, line := range lines[1:] {
		for k, v := range strings.Split(line, ",") {
			name := header[k]
			if name == "id" || name == "color" || name == "region" {
				continue
			}
			var want float64
			fmt.Sscan(v, &want)
			if got := st.col(t, name)[i]; got != want {
				t.Fatalf("row %d column %s: got %v, DuckDB says %s", i+1, name, got, v)
			}
		}
	}
}

// TestStringLabels ingests a string target as class codes: from Parquet
// (DuckDB's Hive folder, color) and CSV; labels sorted in the manifest
// whatever order the values come in; more than MaxLabels is an error.
func TestStringLabels(t *testing.T) {
	res, st := mustIngest(t, []string{interop + "hive/data"}, Config{Targets: []string{"color"}, Workers: 4})
	if !slices.Equal(res.Targets, []string{"color"}) || st.m.Targets[0].Type != "string" {
		t.Fatalf("targets %v, manifest %+v", res.Targets, st.m.Targets)
	}
	out := filepath.Join(t.TempDir(), "s")
	_, st = mustIngest(t, []string{interop + "hive/data"}, Config{Out: out, Targets: []string{"color"}, Workers: 1})
	r, err := chunkstore.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	labels := r.TargetLabels()
	r.Close()
	if len(labels) != 1 || !slices.Equal(labels[0], []string{"blue", "green", "red"}) {
		t.Fatalf("labels %q", labels)
	}
	b, err := os.ReadFile(interop + "hive/expected.csv")
	if err != nil {
		t.Fatal(err)
	}
	codes := st.col(t, "color")
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		if want := strings.Split(line, ",")[3]; labels[0][int(codes[i])] != want {
			t.Fatalf("row %d: code %v (%s), DuckDB says %s", i+1, codes[i], labels[0][int(codes[i])], want)
		}
	}
	if res.Columns[3].Note != "class labels: 3 distinct, stored as codes 0–2 in sorted order" {
		t.Fatalf("note %q", res.Columns[3].Note)
	}

	dir := t.TempDir()
	in := filepath.Join(dir, "a.csv")
	writeText(t, in, "x,kind", 300, func(i int) string { return fmt.Sprintf("%d,k%02d", (i*7)%11, 99-i%3) })
	_, st = mustIngest(t, []string{in}, Config{Targets: []string{"kind"}})
	if got := st.m.Targets[0].Labels; !slices.Equal(got, []string{"k97", "k98", "k99"}) || st.col(t, "kind")[0] != 2 || st.col(t, "kind")[2] != 0 {
		t.Fatalf("labels %v codes %v", got, st.col(t, "kind")[:3])
	}
	writeText(t, in, "x,kind", 300, func(i int) string { return fmt.Sprintf("%d,k%03d", i%5, i) })
	_, err = checked(t, []string{in}, Config{Out: filepath.Join(dir, "s"), Targets: []string{"kind"}})
	const want = `column "kind" (a string target, read as class labels) has more than 100 distinct values ("k000", "k001", "k002", "k003", "k004", … and "k100"); a class target has at most 100: use a numeric column for regression`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v\nwant …%s", err, want)
	}
}
