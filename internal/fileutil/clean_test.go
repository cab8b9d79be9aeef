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
	if !strings.HasPrefix(name, ".out.store.tmp-"+strconv.Itoa(os.Getpid())+"-") {
		t.Fatalf("TempName = %q, want .out.store.tmp-PID-…", name)
	}
	o, ok := fileutil.ParseTemp(name)
	if !ok || o != fileutil.Self() {
		t.Fatalf("ParseTemp(%q) = %v, %v; want %v", name, o, ok, fileutil.Self())
	}
	if runtime.GOOS == "linux" && o.Start == 0 {
		t.Fatal("no start time on Linux")
	}
	for _, bad := range []string{"out.store", ".a.tmp-12", ".a.tmp-x-1-2", ".a.tmp-1-2-3-4", ".tmp-1-2-3", ".a.tmp-0-1-2"} {
		if _, ok := fileutil.ParseTemp(bad); ok {
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

func TestCleanRemovesOnlyDeadOwners(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("owners cannot be told dead here")
	}
	dir := t.TempDir()
	dead := deadPID(t)
	self := fileutil.Self()
	mk := func(name string, dirToo bool) string {
		p := filepath.Join(dir, name)
		if dirToo {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			p2 := filepath.Join(p, "seg-000000")
			if err := os.WriteFile(p2, make([]byte, 1000), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deadStore := mk(".out.store.tmp-"+strconv.Itoa(dead)+"-12345-99", true)
	deadModel := mk(".m.falkon.tmp-"+strconv.Itoa(dead)+"-0-7", false)
	// Our own pid with another start time: the id was reused, so the
	// owner is dead.
	reused := mk(".m.falkon.tmp-"+strconv.Itoa(self.PID)+"-"+strconv.FormatUint(self.Start+1, 10)+"-7", false)
	live := mk(fileutil.TempName("out.store"), true)
	parent := mk(".x.tmp-"+strconv.Itoa(os.Getppid())+"-0-1", false) // a live process, start unknown
	user := mk("data.csv", false)
	old := mk(".old.store.tmp-123456", true) // no owner: never touched

	held, err := fileutil.Lock(fileutil.LockPath(filepath.Join(dir, "busy.store")))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	stale := filepath.Join(dir, ".gone.store"+fileutil.LockSuffix)
	if err := os.WriteFile(stale, []byte(strconv.Itoa(dead)+"\n"), 0o644); err != nil {
		t.Fatal(err)
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
	want := []string{deadStore, deadModel, stale}
	if runtime.GOOS == "linux" {
		want = append(want, reused)
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
	for _, p := range []string{live, parent, user, old, fileutil.LockPath(filepath.Join(dir, "busy.store"))} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
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
