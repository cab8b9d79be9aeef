package fileutil_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

func TestTempNameOwner(t *testing.T) {
	name := fileutil.TempName("out.store")
	if !strings.HasPrefix(name, ".out.store.falkon-tmp-"+strconv.Itoa(os.Getpid())+"-") {
		t.Fatalf("TempName = %q, want .out.store.falkon-tmp-PID-…", name)
	}
	o, old, ok := fileutil.ParseTemp(name)
	if !ok || old || o != fileutil.Self() {
		t.Fatalf("ParseTemp(%q) = %v, %v, %v; want %v", name, o, old, ok, fileutil.Self())
	}
	if runtime.GOOS == "linux" && o.Start == 0 {
		t.Fatal("no start time on Linux")
	}
	if _, old, ok := fileutil.ParseTemp(".a.tmp-1-2-3"); !ok || !old {
		t.Errorf("ParseTemp(.a.tmp-1-2-3): %v %v; want an old-shape candidate", old, ok)
	}
	// The names of issue 21: no leading dot, or not three numbers.
	for _, bad := range []string{"out.store", ".a.tmp-12", ".a.tmp-x-1-2", ".a.tmp-1-2-3-4", ".tmp-1-2-3", ".a.tmp-0-1-2",
		"photos.tmp-2023-12-25", "report.tmp-2024-06-01", "db.sql.tmp-20240601-1200-3", ".a.tmp-+1-2-3", ".falkon-tmp-1-2-3"} {
		if _, _, ok := fileutil.ParseTemp(bad); ok {
			t.Errorf("ParseTemp(%q) accepted", bad)
		}
	}
}

// deadPID returns the id of a process that has exited (and been reaped).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	return cmd.Process.Pid
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// segment returns n bytes that start as a chunk store segment does.
func segment(n int) []byte {
	b := make([]byte, n)
	copy(b, "FOOC")
	return b
}

func TestCleanRemovesOnlyDeadOwners(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("owners cannot be told dead here")
	}
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	self := fileutil.Self()
	mkdir := func(name string) string {
		p := filepath.Join(dir, name)
		writeFile(t, filepath.Join(p, "segment-000000.dat"), segment(1000))
		return p
	}
	mkfile := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, b)
		return p
	}
	// A temporary directory made by MkdirTemp, its owner then dead: the
	// marker proves it ours whatever it holds.
	live, err := fileutil.MkdirTemp(dir, "out.store")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(live, "notes"), []byte("half-written"))
	marker, _ := os.ReadFile(filepath.Join(live, fileutil.DirMarker))
	deadMarked := filepath.Join(dir, ".out.store.falkon-tmp-"+dead+"-12345-99")
	writeFile(t, filepath.Join(deadMarked, fileutil.DirMarker), marker)
	writeFile(t, filepath.Join(deadMarked, "seg"), make([]byte, 1000))
	deadStore := mkdir(".s.store.falkon-tmp-" + dead + "-12345-98")              // no marker, a store's files
	deadModel := mkfile(".m.falkon.falkon-tmp-"+dead+"-0-7", []byte("FKOM....")) // model magic
	// A file WriteFile was writing when its owner died: inside a marked
	// temporary directory, whatever the file holds.
	deadWrite := filepath.Join(dir, ".p.csv.falkon-tmp-"+dead+"-0-8")
	writeFile(t, filepath.Join(deadWrite, fileutil.DirMarker), marker)
	writeFile(t, filepath.Join(deadWrite, "p.csv"), []byte("prediction\n1\n"))
	oldStore := mkdir(".old.store.tmp-" + dead + "-12345-97")                // old shape, a store's files
	oldCkpt := mkfile(".m.falkon.ckpt.tmp-"+dead+"-0-6", []byte("FKCP....")) // old shape, checkpoint magic
	reused := mkfile(".m.falkon.falkon-tmp-"+strconv.Itoa(self.PID)+"-"+strconv.FormatUint(self.Start+1, 10)+"-7", []byte("FKOM"))
	parent := mkfile(".x.falkon.falkon-tmp-"+strconv.Itoa(os.Getppid())+"-0-1", []byte("FKOM")) // a live process, start unknown
	// Never ours: a user's files whatever their names.
	user := mkfile("data.csv", []byte("a,b\n"))
	oldUser := mkfile(".report.tmp-"+dead+"-1-2", []byte("my report")) // old shape, no proof
	oldUserDir := filepath.Join(dir, ".photos.tmp-"+dead+"-12-25")
	writeFile(t, filepath.Join(oldUserDir, "1.jpg"), []byte("img"))
	newUnknown := mkfile(".notes.txt.falkon-tmp-"+dead+"-0-3", []byte("text")) // no magic, no output extension
	// A user's files of temporary shape, whatever their extension or
	// size: a name, an extension or emptiness proves nothing.
	userCSV := mkfile(".data.csv.falkon-tmp-99999-1-1", []byte(strings.Repeat("1,2,3\n", 17000)))
	if o, _, _ := fileutil.ParseTemp(filepath.Base(userCSV)); o.Alive() {
		t.Skip("process 99999 is running")
	}
	userShaped := []string{userCSV}
	for i, ext := range []string{".json", ".parquet", ".png", ".csv", ".key"} {
		userShaped = append(userShaped, mkfile(".u"+ext+".falkon-tmp-"+dead+"-0-"+strconv.Itoa(i), []byte("mine")))
		userShaped = append(userShaped, mkfile(".e"+ext+".falkon-tmp-"+dead+"-0-"+strconv.Itoa(i), nil))
	}
	metaOnly := filepath.Join(dir, ".s.store.falkon-tmp-"+dead+"-1-1")
	writeFile(t, filepath.Join(metaOnly, "meta.json"), []byte(`{"mine": true}`))
	userShaped = append(userShaped, metaOnly)
	link := filepath.Join(dir, ".l.csv.falkon-tmp-"+dead+"-0-4")
	if err := os.Symlink(user, link); err != nil {
		t.Fatal(err)
	}
	noOwner := mkdir(".old.store.tmp-123456") // no owner: never touched

	held, err := fileutil.Lock(fileutil.LockPath(filepath.Join(dir, "busy.store")))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	stale := mkfile(".gone.store"+fileutil.LockSuffix, []byte(dead+"\n"))
	notLock := mkfile(".mine"+fileutil.LockSuffix, []byte("my notes, not a pid"))

	want := []string{deadMarked, deadStore, deadModel, deadWrite, oldStore, oldCkpt, stale}
	if runtime.GOOS == "linux" {
		want = append(want, reused)
	}
	kept := []string{live, parent, user, oldUser, oldUserDir, newUnknown, link, noOwner, notLock, fileutil.LockPath(filepath.Join(dir, "busy.store"))}
	kept = append(kept, userShaped...)

	// Leftovers (clean --dry-run) lists exactly what Clean removes, and
	// removes nothing.
	listed, err := fileutil.Leftovers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(want) {
		t.Errorf("Leftovers listed %d entries, want %d: %v", len(listed), len(want), listed)
	}
	for _, p := range append(want, kept...) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("Leftovers removed %s", p)
		}
	}

	got, err := fileutil.Clean(dir)
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, l := range got {
		removed[l.Path] = true
		if !strings.Contains(l.String(), "no longer running") {
			t.Errorf("String() = %q", l.String())
		}
	}
	for _, p := range want {
		if !removed[p] {
			t.Errorf("%s not removed", p)
		}
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists", p)
		}
	}
	if len(got) != len(want) {
		t.Errorf("removed %d entries, want %d: %v", len(got), len(want), got)
	}
	for _, l := range got {
		if l.Path == deadStore && l.Bytes != 1000 {
			t.Errorf("%s: %d bytes, want 1000", l.Path, l.Bytes)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(oldUserDir, "1.jpg")); string(b) != "img" {
		t.Errorf("the user's photo changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(metaOnly, "meta.json")); string(b) != `{"mine": true}` {
		t.Errorf("the user's meta.json changed: %q", b)
	}
	if b, _ := os.ReadFile(oldUser); string(b) != "my report" {
		t.Errorf("the user's report changed: %q", b)
	}
}

// TestUnmark: MkdirTemp marks the directory, Unmark removes the marker
// (and a second Unmark is no error).
func TestUnmark(t *testing.T) {
	d, err := fileutil.MkdirTemp(t.TempDir(), "x.store")
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := fileutil.Owned(d); !ok || k != "temporary directory" {
		t.Fatalf("Owned(MkdirTemp) = %q, %v", k, ok)
	}
	writeFile(t, filepath.Join(d, "user.txt"), []byte("x"))
	if err := fileutil.Unmark(d); err != nil {
		t.Fatal(err)
	}
	if err := fileutil.Unmark(d); err != nil {
		t.Fatal(err)
	}
	if _, ok := fileutil.Owned(d); ok {
		t.Fatal("an unmarked directory holding a non-store file is still owned")
	}
}

func TestLockExclusive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip()
	}
	p := fileutil.LockPath(filepath.Join(t.TempDir(), "out.store"))
	l, err := fileutil.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fileutil.Lock(p)
	var le *fileutil.LockedError
	if !errors.As(err, &le) || !errors.Is(err, fileutil.ErrLocked) || le.PID != os.Getpid() {
		t.Fatalf("second Lock = %v, want LockedError naming pid %d", err, os.Getpid())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file left after Release: %v", err)
	}
	l2, err := fileutil.Lock(p)
	if err != nil {
		t.Fatalf("Lock after Release: %v", err)
	}
	l2.Release()
	l2.Release()
}

func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	if err := fileutil.RenameNoReplace(a, b); !errors.Is(err, os.ErrExist) {
		t.Fatalf("RenameNoReplace over a directory = %v, want ErrExist", err)
	}
	c := filepath.Join(dir, "c")
	if err := fileutil.RenameNoReplace(a, c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c); err != nil {
		t.Fatal(err)
	}
}
