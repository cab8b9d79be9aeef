package directio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestBuffer(t *testing.T) {
	for _, n := range []int{1, 4095, 4096, 4097, 1 << 20} {
		b := Buffer(n)
		if !Aligned(b) || len(b) < n || len(b)-n >= Align {
			t.Fatalf("Buffer(%d): len %d, aligned %v", n, len(b), Aligned(b))
		}
	}
}

func TestStatValue(t *testing.T) {
	meminfo := []byte("MemTotal:       24684544 kB\nMemFree:        16353220 kB\nMemAvailable:   24065176 kB\n")
	if v, ok := statValue(meminfo, "MemAvailable"); !ok || v != 24065176<<10 {
		t.Fatalf("MemAvailable = %d, %v", v, ok)
	}
	v1 := []byte("cache 2040213504\nrss 2068480\nhierarchical_memory_limit 1073741824\ntotal_cache 2040213504\ntotal_rss 2068480\n")
	if v, ok := statValue(v1, "total_rss"); !ok || v != 2068480 {
		t.Fatalf("total_rss = %d, %v", v, ok)
	}
	if _, ok := statValue(v1, "anon"); ok {
		t.Fatal("found a missing key")
	}
}

func TestCgroupPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		path string
		v2   bool
		ok   bool
	}{
		{"12:pids:/a\n4:memory:/process_api/x\n1:name=systemd:/b\n", "/process_api/x", false, true},
		{"5:cpu,memory:/y\n", "/y", false, true},
		{"0::/user.slice/s.scope\n", "/user.slice/s.scope", true, true},
		{"3:cpu:/z\n", "", false, false},
	} {
		p, v2, ok := cgroupPath([]byte(c.in))
		if p != c.path || v2 != c.v2 || ok != c.ok {
			t.Errorf("cgroupPath(%q) = %q, %v, %v; want %q, %v, %v", c.in, p, v2, ok, c.path, c.v2, c.ok)
		}
	}
}

func TestRoom(t *testing.T) {
	const g = 1 << 30
	for _, c := range []struct{ avail, limit, anon, want int64 }{
		{20 * g, 0, 0, 20 * g},                   // no cgroup limit
		{20 * g, 9223372036854771712, g, 20 * g}, // v1's unlimited
		{20 * g, g, g / 4, 3 * g / 4},            // the cgroup is tighter
		{g / 2, 4 * g, 0, g / 2},                 // the machine is tighter
		{20 * g, g, 2 * g, 0},                    // over the limit already
	} {
		if got := room(c.avail, c.limit, c.anon); got != c.want {
			t.Errorf("room(%d, %d, %d) = %d, want %d", c.avail, c.limit, c.anon, got, c.want)
		}
	}
	if runtime.GOOS == "linux" {
		if n, ok := CacheRoom(); !ok || n <= 0 {
			t.Errorf("CacheRoom() = %d, %v", n, ok)
		}
	}
}

// ReadAt reads aligned spans, short at the end of the file.
func TestReadAt(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, err := Open("x"); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("Open: %v", err)
		}
		return
	}
	data := make([]byte, 3*Align+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Skipf("O_DIRECT not supported here: %v", err)
	}
	defer f.Close()
	buf := Buffer(8 * Align)
	n, err := f.ReadAt(buf[:2*Align], Align)
	if err != nil || n != 2*Align || !bytes.Equal(buf[:n], data[Align:3*Align]) {
		t.Fatalf("ReadAt(2 blocks at 1) = %d, %v", n, err)
	}
	n, err = f.ReadAt(buf, 2*Align)
	if err != nil || n != Align+100 || !bytes.Equal(buf[:n], data[2*Align:]) {
		t.Fatalf("ReadAt past the end = %d, %v; want %d, nil", n, err, Align+100)
	}
	if n, err := f.ReadAt(buf[:Align], 8*Align); n != 0 || err != nil {
		t.Fatalf("ReadAt beyond the end = %d, %v", n, err)
	}
}
