package chunkstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// newWriter starts a 1-feature store at dir with some rows appended.
func newWriter(t *testing.T, dir string, rows int) *Writer {
	t.Helper()
	w, err := Create(dir, specs("x", 1), nil, Options{ChunkRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float64, rows)
	for i := range v {
		v[i] = float64(i)
	}
	if err := w.Append([][]float64{v}); err != nil {
		t.Fatal(err)
	}
	return w
}

func storeRows(t *testing.T, dir string) int64 {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatalf("existing store damaged: %v", err)
	}
	defer r.Close()
	if err := readAllReader(r); err != nil {
		t.Fatalf("existing store damaged: %v", err)
	}
	return r.Manifest().Rows
}

func TestReplaceStore(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	w := newWriter(t, dir, 10)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Abort leaves the old store.
	w = newWriter(t, dir, 20)
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if err := w.Close(); err != ErrClosed {
		t.Fatalf("Close after Abort: %v, want ErrClosed", err)
	}
	if n := storeRows(t, dir); n != 10 {
		t.Fatalf("after Abort: %d rows, want the old 10", n)
	}
	assertNoTemp(t, parent)

	// A Close that fails at any stage leaves the old store.
	for _, stage := range []string{"sync-segment", "manifest", "install"} {
		w = newWriter(t, dir, 30)
		injected := errors.New("injected failure at " + stage)
		w.failHook = func(s string) error {
			if s == stage {
				return injected
			}
			return nil
		}
		if err := w.Close(); !errors.Is(err, injected) {
			t.Fatalf("%s: Close = %v, want the injected error", stage, err)
		}
		if err := w.Abort(); err != nil {
			t.Fatalf("%s: Abort after failed Close: %v", stage, err)
		}
		if n := storeRows(t, dir); n != 10 {
			t.Fatalf("%s: %d rows, want the old 10", stage, n)
		}
		assertNoTemp(t, parent)
	}

	// A writer that is never closed (an interrupted ingest) leaves the old
	// store in place; only its hidden temporary directory exists.
	w = newWriter(t, dir, 40)
	if n := storeRows(t, dir); n != 10 {
		t.Fatalf("during a write: %d rows, want the old 10", n)
	}
	ents, _ := os.ReadDir(parent)
	var visible []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			visible = append(visible, e.Name())
		}
	}
	if len(visible) != 1 {
		t.Fatalf("visible entries during a write: %v", visible)
	}
	w.Abort()

	// A successful Close replaces it.
	w = newWriter(t, dir, 50)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := storeRows(t, dir); n != 50 {
		t.Fatalf("after replacement: %d rows, want 50", n)
	}
	assertNoTemp(t, parent)
}

func TestReplaceFallback(t *testing.T) {
	// replaceDir's two-rename path, used where renameat2 is unsupported.
	exchangeDirs = func(a, b string) error { return errors.ErrUnsupported }
	defer func() { exchangeDirs = fileutil.Exchange }()
	parent := t.TempDir()
	a := filepath.Join(parent, "a")
	b := filepath.Join(parent, "b")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	os.WriteFile(filepath.Join(a, "f"), []byte("new"), 0o644)
	os.WriteFile(filepath.Join(b, "f"), []byte("old"), 0o644)
	old, err := replaceDir(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(b, "f")); string(got) != "new" {
		t.Fatalf("b holds %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(old, "f")); string(got) != "old" {
		t.Fatalf("old holds %q", got)
	}
}

func TestCreateIntoEmptyDir(t *testing.T) {
	dir := t.TempDir() // exists, empty
	w := newWriter(t, dir, 5)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := storeRows(t, dir); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
}

func TestCloseRefusesIfDirBecameNonStore(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	w := newWriter(t, dir, 5)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	err := w.Close()
	if err == nil || !strings.Contains(err.Error(), "exists and is not a chunk store") {
		t.Fatalf("Close = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Fatal("directory was touched")
	}
	assertNoTemp(t, parent)
}

func TestWriteError(t *testing.T) {
	// A writer whose temporary directory vanishes reports the error from
	// Append or Close and leaves no store.
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	w, err := Create(dir, specs("x", 1), nil, Options{ChunkRows: 4, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(w.tmp)
	rng := rand.New(rand.NewPCG(1, 1))
	var appendErr error
	for range 10 {
		if appendErr = w.Append([][]float64{{rng.Float64(), 1, 2, 3, 4}}); appendErr != nil {
			break
		}
	}
	err = w.Close()
	if appendErr == nil && err == nil {
		t.Fatal("no error from Append or Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("store appeared: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
}

func TestReplaceFallbackRestores(t *testing.T) {
	// If the new directory cannot be renamed in, the old one is put back.
	exchangeDirs = func(a, b string) error { return errors.ErrUnsupported }
	defer func() { exchangeDirs = fileutil.Exchange }()
	parent := t.TempDir()
	dst := filepath.Join(parent, "store")
	os.MkdirAll(dst, 0o755)
	os.WriteFile(filepath.Join(dst, "f"), []byte("old"), 0o644)
	if _, err := replaceDir(filepath.Join(parent, "missing"), dst); err == nil {
		t.Fatal("replaceDir from a missing directory succeeded")
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "f")); string(got) != "old" {
		t.Fatalf("old store not restored: %q", got)
	}
}

func TestReplaceStoreFallback(t *testing.T) {
	exchangeDirs = func(a, b string) error { return errors.ErrUnsupported }
	defer func() { exchangeDirs = fileutil.Exchange }()
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	for _, rows := range []int{10, 20} {
		w := newWriter(t, dir, rows)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if n := storeRows(t, dir); n != int64(rows) {
			t.Fatalf("%d rows, want %d", n, rows)
		}
	}
	assertNoTemp(t, parent)
}

// TestCreateLocked: a second writer of the same directory fails at once
// (issue 15 item 4), and succeeds once the first one is done.
func TestCreateLocked(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	w := newWriter(t, dir, 5)
	_, err := Create(dir, specs("x", 1), nil, Options{})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("second Create = %v, want ErrBusy", err)
	}
	want := "chunkstore: create " + dir + ": process " + strconv.Itoa(os.Getpid()) + " is writing a store there already (lock file " + filepath.Join(parent, ".store.falkon-lock") + ")"
	if err.Error() != want {
		t.Fatalf("error\n %s\nwant\n %s", err, want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w = newWriter(t, dir, 7)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := storeRows(t, dir); n != 7 {
		t.Fatalf("%d rows, want 7", n)
	}
	assertNoTemp(t, parent)
}

// TestCloseRefusesStoreThatAppeared: a store installed at dir after Create
// by a writer that does not lock is not replaced, unless Options.Replace.
func TestCloseRefusesStoreThatAppeared(t *testing.T) {
	for _, replace := range []bool{false, true} {
		parent := t.TempDir()
		dir := filepath.Join(parent, "store")
		other := filepath.Join(t.TempDir(), "other")
		ow := newWriter(t, other, 3)
		if err := ow.Close(); err != nil {
			t.Fatal(err)
		}
		w, err := Create(dir, specs("x", 1), nil, Options{ChunkRows: 8, Replace: replace})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append([][]float64{{1, 2, 3, 4, 5}}); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(other, dir); err != nil {
			t.Fatal(err)
		}
		err = w.Close()
		if replace {
			if err != nil {
				t.Fatal(err)
			}
			if n := storeRows(t, dir); n != 5 {
				t.Fatalf("Replace: %d rows, want 5", n)
			}
		} else {
			want := "chunkstore: create " + dir + ": a store appeared at " + dir + " while this one was being written; not replacing it"
			if err == nil || err.Error() != want {
				t.Fatalf("Close = %v, want %s", err, want)
			}
			if n := storeRows(t, dir); n != 3 {
				t.Fatalf("the store that appeared has %d rows, want its 3", n)
			}
		}
		assertNoTemp(t, parent)
	}
}

// TestTempNameCarriesOwner: the temporary directory is named with this
// process's id, so that fileutil.Clean can tell it from a dead one's.
func TestTempNameCarriesOwner(t *testing.T) {
	w := newWriter(t, filepath.Join(t.TempDir(), "store"), 3)
	defer w.Abort()
	o, old, ok := fileutil.ParseTemp(filepath.Base(w.tmp))
	if !ok || old || o != fileutil.Self() {
		t.Fatalf("temporary %s: owner %v, %v; want %v", w.tmp, o, ok, fileutil.Self())
	}
}

// TestTempMarkerOnlyWhileTemporary (issue 21 item 3): the writer's
// temporary directory holds fileutil.DirMarker, which proves it
// falkon-ooc's to a later clean, and the installed store does not.
func TestTempMarkerOnlyWhileTemporary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	w := newWriter(t, dir, 3)
	if _, err := os.Stat(filepath.Join(w.tmp, fileutil.DirMarker)); err != nil {
		t.Fatalf("temporary %s has no marker: %v", w.tmp, err)
	}
	if k, ok := fileutil.Owned(w.tmp); !ok || k != "temporary directory" {
		t.Fatalf("Owned(%s) = %q, %v", w.tmp, k, ok)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, fileutil.DirMarker)); !os.IsNotExist(err) {
		t.Fatalf("the installed store holds the marker: %v", err)
	}
	// A store is still recognised as falkon-ooc's by its files, should a
	// killed run leave one under a temporary name.
	if k, ok := fileutil.Owned(dir); !ok || k != "store" {
		t.Fatalf("Owned(store) = %q, %v", k, ok)
	}
}
