package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInspectData: inspect of Parquet/CSV data (a Hive folder here) shows
// the files, the row count, what ingest would store and ingest's column
// report, writes nothing, and --json is ingest's document without the
// store (issue 27 item 6).
func TestInspectData(t *testing.T) {
	for _, parquet := range []bool{false, true} {
		name := map[bool]string{false: "csv", true: "parquet"}[parquet]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			hv := filepath.Join(dir, "hv")
			writeHive(t, hv, parquet)
			ext, typ := ".csv", "number " // padded to float64's width
			if parquet {
				ext, typ = ".parquet", "float64"
			}
			code, out, e := runCLI("inspect", "--target", "y", "--quiet", hv)
			if code != 0 {
				t.Fatalf("inspect: exit %d: %s", code, e)
			}
			files := filepath.Join(hv, "region=1", "a"+ext) + ", " + filepath.Join(hv, "region=2", "b"+ext)
			want := `inputs    2 files, MB: ` + files + `
rows      300
features  2: x, region (from folder names)
targets   1: y
store     ingest would write 1 chunk of up to 32768 rows and need ≈ MEM of memory

input column  type                    role                         why  note
x             ` + typ + `                 feature
y             ` + typ + `                 target
region        partition key (number)  feature (from folder names)
`
			got := out
			if i, j := strings.Index(got, "files, "), strings.Index(got, ": "+filepath.Join(hv, "")); i > 0 && j > i {
				got = got[:i+7] + "MB" + got[j:]
			}
			if i, j := strings.Index(got, "need ≈ "), strings.Index(got, " of memory"); i > 0 && j > i {
				got = got[:i+len("need ≈ ")] + "MEM" + got[j:]
			}
			if got != want {
				t.Errorf("inspect:\n%s\nwant\n%s", got, want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("inspect wrote into %s: %v", dir, entries)
			}

			code, js, e := runCLI("inspect", "--target", "y", "--json", "--quiet", hv)
			if code != 0 {
				t.Fatalf("inspect --json: exit %d: %s", code, e)
			}
			code, ijs, e := runCLI("ingest", "--out", filepath.Join(dir, "s"), "--target", "y", "--json", "--quiet", hv)
			if code != 0 {
				t.Fatalf("ingest --json: exit %d: %s", code, e)
			}
			var a, b map[string]any
			if err := json.Unmarshal([]byte(js), &a); err != nil {
				t.Fatalf("inspect --json is not one JSON document: %v\n%s", err, js)
			}
			json.Unmarshal([]byte(ijs), &b)
			for _, k := range []string{"rows", "dropped", "features", "targets", "chunks", "chunk_rows", "files", "columns", "bytes_in"} {
				if !reflect.DeepEqual(a[k], b[k]) {
					t.Errorf("%s: inspect --json %v, ingest --json %v", k, a[k], b[k])
				}
			}
			if _, ok := a["store"]; ok || a["bytes_out"] != 0.0 {
				t.Errorf("inspect --json names a store: %s", js)
			}
		})
	}
}

// TestInspectDataErrors: the flags of data apply to data only, and errors
// are ingest's.
func TestInspectDataErrors(t *testing.T) {
	dir := t.TempDir()
	store := makeStore(t, dir, 300, 1, "y")
	csv := filepath.Join(dir, "data.csv")
	os.WriteFile(csv, []byte("a,b,y\n1,,3\n4,5,6\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", "--target", "y", store}, 2, "falkon-ooc inspect: --target applies to Parquet/CSV inputs; " + store + " is a store or a model\n"},
		{[]string{"inspect", "--verify", csv}, 2, "falkon-ooc inspect: --verify checks a store's blocks; " + csv + " is Parquet/CSV data\n"},
		{[]string{"inspect", "--target", "z", csv}, 1, "falkon-ooc inspect: " + csv + `: no column "z" (named in targets); its columns are: "a", "b", "y"` + "\n"},
	} {
		code, _, e := runCLI(tc.args...)
		if e, _, _ = strings.Cut(e, "run 'falkon-ooc"); code != tc.code || e != tc.want {
			t.Errorf("%q: exit %d, stderr\n%s\nwant %d and\n%s", tc.args, code, e, tc.code, tc.want)
		}
	}
	code, out, e := runCLI("inspect", "--target", "y", "--weight", "a", "--quiet", "--json", filepath.Join(dir, "w.csv"))
	if code != 1 || !strings.Contains(e, "no such file") {
		t.Errorf("a missing input: exit %d, %s", code, e)
	}
	os.WriteFile(filepath.Join(dir, "w.csv"), []byte("a,b,y\n1,2,3\n4,5,6\n"), 0o644)
	code, out, _ = runCLI("inspect", "--target", "y", "--weight", "a", "--quiet", filepath.Join(dir, "w.csv"))
	if want := "features  1: b\ntargets   1: y\nweight    a\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("--weight: exit %d, stdout\n%s\nwant it to contain\n%s", code, out, want)
	}
	// Without --nulls, inspect counts the NULLs and says what ingest
	// would do, instead of stopping at the first.
	code, out, e = runCLI("inspect", "--target", "y", "--quiet", csv)
	if want := "b             number  feature       1 NULL: ingest stops at the first (" + csv + ", row 1) unless --nulls drop (skips the rows) or mean (fills the mean)\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("inspect with a NULL: exit %d, stdout\n%s\nstderr %s\nwant it to contain\n%s", code, out, e, want)
	}
	code, out, e = runCLI("inspect", "--target", "y", "--nulls", "mean", "--quiet", csv)
	if want := "b             number  feature       1 NULL, NaN or ±Inf value filled with the mean of the others, 5\n"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "rows      2; 1 NULL, NaN or ±Inf feature value filled with its column's mean\n") {
		t.Errorf("--nulls mean: exit %d, stdout\n%s\nstderr %s\nwant it to contain\n%s", code, out, e, want)
	}
}
