package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// writeScaledCSV writes a,b,y with y = a² + 0.3 b + noise, a scaled by sa,
// b by sb and y by sy.
func writeScaledCSV(t *testing.T, path string, sa, sb, sy float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(15, 15))
	var sb2 strings.Builder
	sb2.WriteString("a,b,y\n")
	for range 800 {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		y := a*a + 0.3*b + 0.3*rng.NormFloat64()
		fmt.Fprintf(&sb2, "%s,%s,%s\n", strconv.FormatFloat(a*sa, 'g', -1, 64), strconv.FormatFloat(b*sb, 'g', -1, 64), strconv.FormatFloat(y*sy, 'g', -1, 64))
	}
	if err := os.WriteFile(path, []byte(sb2.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

var rmseRe = regexp.MustCompile(`validation rmse ([0-9.e+-]+)`)

// TestExtremeColumns (issue 15 item 2): features scaled by 1e300 and
// 1e-300 keep their spread, so the fit's validation RMSE equals the
// unscaled one; a target scaled by 1e300 is refused before the first pass.
func TestExtremeColumns(t *testing.T) {
	dir := t.TempDir()
	rmse := map[string]float64{}
	for _, c := range []struct {
		name   string
		sa, sb float64
	}{{"plain", 1, 1}, {"scaled", 1e300, 1e-300}, {"scaled2", 1e160, 1e-170}} {
		in := filepath.Join(dir, c.name+".csv")
		writeScaledCSV(t, in, c.sa, c.sb, 1)
		st := filepath.Join(dir, c.name+".store")
		if code, _, e := runCLI("ingest", "--quiet", "--out", st, "--target", "y", in); code != 0 {
			t.Fatalf("ingest %s: %s", c.name, e)
		}
		code, out, e := runCLI("fit", "--quiet", "--out", filepath.Join(dir, c.name+".falkon"), "--centers", "100", "--iters", "10", "--val-fraction", "0.2", st)
		if code != 0 {
			t.Fatalf("fit %s: %s", c.name, e)
		}
		m := rmseRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("fit %s: no validation rmse in\n%s", c.name, out)
		}
		rmse[c.name], _ = strconv.ParseFloat(m[1], 64)
	}
	// Standardisation removes the scale up to rounding (the mean is
	// subtracted at 1e300): equal to 1e-5 relative, the printed 6 digits
	// ±1. Before the fix the scaled fit lost both features (RMSE of a
	// constant model).
	for _, k := range []string{"scaled", "scaled2"} {
		if d := rmse[k]/rmse["plain"] - 1; d > 1e-5 || d < -1e-5 {
			t.Fatalf("validation RMSE: %v; want all equal", rmse)
		}
	}

	in := filepath.Join(dir, "bigy.csv")
	writeScaledCSV(t, in, 1, 1, 1e300)
	st := filepath.Join(dir, "bigy.store")
	if code, _, e := runCLI("ingest", "--quiet", "--out", st, "--target", "y", in); code != 0 {
		t.Fatalf("ingest: %s", e)
	}
	code, _, e := runCLI("fit", "--out", filepath.Join(dir, "bigy.falkon"), "--centers", "100", "--iters", "10", st)
	if code != 1 || !strings.Contains(e, `target "y" reaches`) || !strings.Contains(e, "beyond 1e+150 its squares overflow float64 in the fit") || strings.Contains(e, "iteration") {
		t.Fatalf("fit on a 1e300 target: exit %d\n%s", code, e)
	}
}

// TestOutGuards (issue 15 items 3, 8): outputs that would destroy an input
// or a store are refused before any work, as are unwritable ones.
func TestOutGuards(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	writeScaledCSV(t, in, 1, 1, 1)
	st := filepath.Join(dir, "train.store")
	if code, _, e := runCLI("ingest", "--quiet", "--out", st, "--target", "y", in); code != 0 {
		t.Fatal(e)
	}
	model := filepath.Join(dir, "m.falkon")
	if code, _, e := runCLI("fit", "--quiet", "--out", model, "--centers", "50", "--iters", "3", st); code != 0 {
		t.Fatal(e)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(st, "meta.json"))
	inBytes, _ := os.ReadFile(in)
	os.WriteFile(filepath.Join(dir, "afile"), nil, 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fit", "--out", filepath.Join(st, "meta.json"), st}, 1, "lies inside the store " + st + ", which it would damage; choose another --out"},
		{[]string{"fit", "--out", filepath.Join(st, "x.falkon"), st}, 1, "lies inside the store"},
		{[]string{"predict", "--model", model, "--out", in, in}, 2, "--out " + in + " is the input " + in + ": writing it would destroy the input; choose another --out"},
		{[]string{"predict", "--model", model, "--out", link, in}, 2, "--out " + link + " is the input " + in},
		{[]string{"predict", "--model", model, "--out", in, link}, 2, "is the input " + link},
		{[]string{"ingest", "--out", filepath.Join(dir, "afile", "x.store"), "--target", "y", in}, 1, "cannot write in " + filepath.Join(dir, "afile") + ": not a directory"},
		{[]string{"fit", "--out", dir, st}, 1, "--out " + dir + " is a directory; name a file"},
		{[]string{"tune", "--out", filepath.Join(dir, "afile", "m.falkon"), st}, 1, "cannot write in " + filepath.Join(dir, "afile") + ": not a directory"},
		{[]string{"fit", "--out", filepath.Join(dir, "nodir", "m.falkon"), st}, 1, "its directory"},
		{[]string{"fit", "--out", model, "--val-fraction", "NaN", st}, 2, "--val-fraction must be in [0, 1), got NaN"},
	} {
		code, _, e := runCLI(c.args...)
		if code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, stderr\n%s\nwant %d and %q", c.args, code, e, c.code, c.want)
		}
		if strings.Contains(e, "pass") || strings.Contains(e, "iteration") {
			t.Errorf("%v: work started before the check:\n%s", c.args, e)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(st, "meta.json")); string(b) != string(meta) {
		t.Fatal("meta.json changed")
	}
	if b, _ := os.ReadFile(in); string(b) != string(inBytes) {
		t.Fatal("in.csv changed")
	}
	// --centers 0 is the default, as --help says.
	if code, _, e := runCLI("fit", "--quiet", "--out", filepath.Join(dir, "m0.falkon"), "--centers", "0", "--iters", "2", st); code != 0 {
		t.Fatalf("--centers 0: %s", e)
	}
}

// TestCleanLeftovers (issue 15 item 6): a dead process's temporary files
// are removed, and said so, by clean and by the next ingest into the same
// directory; a live process's are not.
func TestCleanLeftovers(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(p, 0o755)
		seg := make([]byte, 2000)
		copy(seg, chunkstore.Magic)
		os.WriteFile(filepath.Join(p, "segment-000000.dat"), seg, 0o644)
		return p
	}
	a := mk(".out.store.falkon-tmp-" + dead + "-123-1")
	live := mk(".out.store.falkon-tmp-" + strconv.Itoa(os.Getpid()) + "-0-2")
	code, out, e := runCLI("clean", "--dry-run", dir)
	if code != 0 || !strings.Contains(out, "would remove "+a+" (2.0 kB, from process "+dead+", no longer running)") || strings.Contains(out, live) {
		t.Fatalf("clean --dry-run: exit %d\n%s%s", code, out, e)
	}
	if _, err := os.Stat(a); err != nil {
		t.Fatal("clean --dry-run removed the leftover")
	}
	code, out, e = runCLI("clean", dir)
	if code != 0 || !strings.Contains(out, "removed "+a+" (2.0 kB, from process "+dead+", no longer running)") {
		t.Fatalf("clean: exit %d\n%s%s", code, out, e)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatal("leftover not removed")
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatal("a live process's directory was removed")
	}
	if _, out, _ := runCLI("clean", dir); !strings.Contains(out, "nothing to remove") {
		t.Fatalf("second clean: %s", out)
	}
	b := mk(".m.falkon.tmp-" + dead + "-5-3") // the old shape, proved ours by the segment's magic
	in := filepath.Join(dir, "in.csv")
	writeScaledCSV(t, in, 1, 1, 1)
	code, _, e = runCLI("ingest", "--quiet", "--out", filepath.Join(dir, "s.store"), "--target", "y", in)
	if code != 0 || !strings.Contains(e, "falkon-ooc: removed leftover "+b) {
		t.Fatalf("ingest: exit %d\n%s", code, e)
	}
}

// TestCleanSparesUserFiles: names that look like temporary names but are
// a user's survive ingest, predict, fit and clean in their directory,
// byte for byte, whatever their shape, extension or size: only content
// proves a file falkon-ooc's.
func TestCleanSparesUserFiles(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	_, model, in, _ := predictFixture(t, 200)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var victims []string
	put := func(rel, text string) {
		p := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		victims = append(victims, p)
	}
	put("photos.tmp-2023-12-25/1.jpg", "img\n")
	put("report.tmp-2024-06-01", "quarterly report")
	put("db.sql.tmp-20240601-1200-3", "INSERT INTO t VALUES (1);")
	put(".notes.tmp-"+dead+"-0-1", "old shape, dead owner, no magic")
	put(".pics.tmp-"+dead+"-0-2/a.jpg", "old shape directory, no marker")
	// The new shape with a dead owner proves nothing either: not an
	// output's extension, not emptiness, not a store-like folder holding
	// only a meta.json.
	put(".data.csv.falkon-tmp-"+dead+"-1-1", strings.Repeat("1,2,3\n", 17000))
	put(".a.json.falkon-tmp-"+dead+"-1-2", `{"mine": true}`)
	put(".b.parquet.falkon-tmp-"+dead+"-1-3", "PAR1 mine PAR1")
	put(".c.png.falkon-tmp-"+dead+"-1-4", "\x89PNG mine")
	put(".d.csv.falkon-tmp-"+dead+"-1-5", "")
	put(".e.store.falkon-tmp-"+dead+"-1-6/meta.json", `{"mine": true}`)
	snap := takeSnapshot(t, victims...)
	for _, c := range [][]string{
		{"ingest", "--quiet", "--out", filepath.Join(out, "x.store"), "--target", "y", "--exclude", "id", in},
		{"predict", "--quiet", "--model", model, "--out", filepath.Join(out, "p.csv"), in},
		{"fit", "--quiet", "--out", filepath.Join(out, "m.falkon"), "--centers", "20", "--iters", "1", filepath.Join(out, "x.store")},
		{"clean", out},
	} {
		code, stdout, e := runCLI(c...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s", c, code, e)
		}
		if strings.Contains(e+stdout, "removed") {
			t.Errorf("%q removed something:\n%s%s", c, stdout, e)
		}
		snap.check(t, c[0])
	}
}
