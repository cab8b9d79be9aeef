package mmap

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenReadAt(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(string) (*File, error)
	}{{"Open", Open}, {"OpenRead", OpenRead}} {
		t.Run(c.name, func(t *testing.T) { testOpenReadAt(t, c.open, c.name == "OpenRead") })
	}
}

func testOpenReadAt(t *testing.T, open func(string) (*File, error), unmapped bool) {
	dir := t.TempDir()
	want := make([]byte, 3*os.Getpagesize()+17)
	for i := range want {
		want[i] = byte(i * 7)
	}
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := open(p)
	if err != nil {
		t.Fatal(err)
	}
	if unmapped && (f.Mapped() || f.Bytes() != nil) {
		t.Fatal("OpenRead mapped the file")
	}
	if f.Size() != int64(len(want)) {
		t.Fatalf("Size = %d, want %d", f.Size(), len(want))
	}
	if f.Mapped() && !bytes.Equal(f.Bytes(), want) {
		t.Fatal("Bytes differ from the file")
	}
	got := make([]byte, 100)
	if n, err := f.ReadAt(got, 4000); err != nil || n != 100 || !bytes.Equal(got, want[4000:4100]) {
		t.Fatalf("ReadAt: n=%d err=%v", n, err)
	}
	if n, err := f.ReadAt(got, int64(len(want))-10); err != io.EOF || n != 10 {
		t.Fatalf("ReadAt at end: n=%d err=%v, want 10, EOF", n, err)
	}
	for _, fn := range []func(int64, int64) error{f.DontNeed, f.WillNeed} {
		for _, r := range [][2]int64{{0, 1}, {5000, 10000}, {-3, 5}, {int64(len(want)) + 10, 4}, {0, 0}} {
			if err := fn(r[0], r[1]); err != nil {
				t.Fatalf("advice %v: %v", r, err)
			}
		}
	}
	if err := f.Sequential(); err != nil {
		t.Fatal(err)
	}
	// After DontNeed the bytes read back the same.
	if f.Mapped() && !bytes.Equal(f.Bytes(), want) {
		t.Fatal("Bytes differ after DontNeed")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if unmapped {
		if _, err := f.ReadAt(got, 0); err == nil {
			t.Fatal("ReadAt after Close succeeded")
		}
	}
}

func TestOpenEmptyAndMissing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "empty")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != 0 || f.Bytes() != nil {
		t.Fatal("empty file: want size 0 and nil Bytes")
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); err != io.EOF {
		t.Fatalf("ReadAt on empty file: %v, want EOF", err)
	}
	f.Close()
	if _, err := Open(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("Open(missing) = %v, want not-exist", err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("Open(directory) succeeded")
	}
}
