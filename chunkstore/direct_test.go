package chunkstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// openDirectT opens dir reading with O_DIRECT, or skips the test where
// the temporary directory's file system refuses O_DIRECT.
func openDirectT(t *testing.T, dir string) *Reader {
	t.Helper()
	r, err := open(dir, false, ioDirect)
	if err != nil {
		t.Fatal(err)
	}
	if r.direct == nil {
		r.Close()
		t.Skipf("%s: O_DIRECT not supported here", dir)
	}
	return r
}

// readChunks reads the chunks of r in order, targets included.
func readChunks(t *testing.T, r *Reader, order []int) [][2][]float64 {
	t.Helper()
	out := make([][2][]float64, r.NumChunks())
	for _, i := range order {
		x := make([]float64, r.ChunkRows(i)*r.Dim())
		y := make([]float64, r.ChunkRows(i)*r.NumTargets())
		if err := r.ReadChunk(context.Background(), i, x, y); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		out[i] = [2][]float64{x, y}
	}
	return out
}

// O_DIRECT reads give the same chunks as buffered reads, for every codec,
// across segments, forward (with the read-ahead ring), backward and from
// several goroutines at once.
func TestDirectRead(t *testing.T) {
	const d, k, rows, chunks = 5, 2, 700, 23
	rng := rand.New(rand.NewPCG(3, 4))
	cols := testData(rng, rows*chunks-100, d+k)
	for _, codec := range []string{"zstd", "s2+shuffle", "none"} {
		t.Run(codec, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			writeStore(t, dir, cols, d, Options{ChunkRows: rows, Codec: codec, SegmentBytes: 40 << 10}, rows*chunks)
			rb, err := open(dir, false, ioBuffered)
			if err != nil {
				t.Fatal(err)
			}
			defer rb.Close()
			if rb.direct != nil {
				t.Fatal("ioBuffered reads with O_DIRECT")
			}
			r := openDirectT(t, dir)
			defer r.Close()
			if len(r.segs) < 2 {
				t.Fatalf("%d segments, want several", len(r.segs))
			}
			fwd := make([]int, r.NumChunks())
			for i := range fwd {
				fwd[i] = i
			}
			want := readChunks(t, rb, fwd)
			for pass := range 2 {
				if got := readChunks(t, r, fwd); !slices.EqualFunc(got, want, func(a, b [2][]float64) bool {
					return slices.Equal(a[0], b[0]) && slices.Equal(a[1], b[1])
				}) {
					t.Fatalf("pass %d forward: O_DIRECT chunks differ from buffered", pass)
				}
			}
			// The forward passes went through the read-ahead ring, which
			// ScratchBytes counts.
			r.direct.mu.Lock()
			ready := 0
			for _, sl := range r.direct.slots {
				if sl.state == slotReady {
					ready++
				}
			}
			r.direct.mu.Unlock()
			if ready < 2 {
				t.Fatalf("%d slots of the read-ahead ring hold chunks after forward passes, want several", ready)
			}
			if sb := r.ScratchBytes(); sb < int64(r.direct.ahead+1)*int64(r.direct.span) {
				t.Fatalf("ScratchBytes %d does not count the ring (%d × %d bytes)", sb, r.direct.ahead, r.direct.span)
			}
			back := slices.Clone(fwd)
			slices.Reverse(back)
			if got := readChunks(t, r, back); !slices.EqualFunc(got, want, func(a, b [2][]float64) bool {
				return slices.Equal(a[0], b[0]) && slices.Equal(a[1], b[1])
			}) {
				t.Fatal("backward: O_DIRECT chunks differ from buffered")
			}
			// Concurrent forward passes, as the stream pipeline reads.
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for g := range 4 {
				wg.Go(func() {
					x := make([]float64, rows*d)
					for i := g; i < r.NumChunks(); i += 4 {
						x = x[:r.ChunkRows(i)*d]
						if err := r.ReadChunk(context.Background(), i, x, nil); err != nil {
							errs <- err
							return
						}
						if !slices.Equal(x, want[i][0]) {
							errs <- fmt.Errorf("chunk %d differs", i)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// Open chooses O_DIRECT exactly when the store is larger than the page
// cache the process can keep.
func TestDirectAuto(t *testing.T) {
	cols := testData(rand.New(rand.NewPCG(1, 1)), 3000, 3)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 2, Options{ChunkRows: 1000, Codec: "none"}, 3000)
	var size int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, _ := e.Info(); e.Name() != ManifestName {
			size += info.Size()
		}
	}
	old := cacheRoom
	defer func() { cacheRoom = old }()
	for _, c := range []struct {
		room   int64
		ok     bool
		direct bool
	}{{size - 1, true, true}, {size, true, false}, {1 << 40, true, false}, {0, false, false}} {
		cacheRoom = func() (int64, bool) { return c.room, c.ok }
		if got := useDirect(ioAuto, size); got != c.direct {
			t.Errorf("room %d (ok %v), store %d: direct = %v, want %v", c.room, c.ok, size, got, c.direct)
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if c.direct && r.direct == nil {
			t.Logf("room %d: O_DIRECT not supported here, reading buffered", c.room)
		} else if !c.direct && r.direct != nil {
			t.Errorf("room %d, store %d: Open reads with O_DIRECT", c.room, size)
		}
		readChunks(t, r, []int{0, 1, 2})
		r.Close()
	}
	if useDirect(ioBuffered, 1<<50) || !useDirect(ioDirect, 1) {
		t.Error("ioBuffered/ioDirect not obeyed")
	}
}

// einvalFile refuses every read with EINVAL, as a file system that opens
// files with O_DIRECT but cannot read them so.
type einvalFile struct{}

func (einvalFile) ReadAt([]byte, int64) (int, error) { return 0, syscall.EINVAL }
func (einvalFile) Close() error                      { return nil }

// A file system that refuses O_DIRECT (EINVAL at open, as tmpfs did before
// Linux 6.6, or at the first read) leaves the Reader reading buffered,
// with the same results.
func TestDirectFallback(t *testing.T) {
	cols := testData(rand.New(rand.NewPCG(5, 6)), 5000, 4)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 3, Options{ChunkRows: 1000, Codec: "zstd"}, 5000)
	rb, err := open(dir, false, ioBuffered)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	order := []int{0, 1, 2, 3, 4}
	want := readChunks(t, rb, order)
	old := directOpen
	defer func() { directOpen = old }()

	directOpen = func(path string) (directFile, error) {
		return nil, &os.PathError{Op: "open O_DIRECT", Path: path, Err: syscall.EINVAL}
	}
	r, err := open(dir, false, ioDirect)
	if err != nil {
		t.Fatalf("open where O_DIRECT is refused: %v", err)
	}
	if r.direct != nil {
		t.Fatal("O_DIRECT refused at open, but the Reader reads with it")
	}
	if got := readChunks(t, r, order); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("buffered fallback reads different chunks")
	}
	r.Close()

	directOpen = func(string) (directFile, error) { return einvalFile{}, nil }
	r, err = open(dir, false, ioDirect)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.direct == nil {
		t.Fatal("the Reader does not read with O_DIRECT")
	}
	for pass := range 2 {
		if got := readChunks(t, r, order); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pass %d: after EINVAL on read, chunks differ", pass)
		}
	}
	r.direct.mu.Lock()
	failed := r.direct.failed
	r.direct.mu.Unlock()
	if !errors.Is(failed, syscall.EINVAL) {
		t.Fatalf("after EINVAL on read, the Reader keeps trying O_DIRECT (failed = %v)", failed)
	}
}

// A damaged block read with O_DIRECT gives the buffered reader's error,
// naming the file, chunk and column.
func TestDirectCorrupt(t *testing.T) {
	cols := testData(rand.New(rand.NewPCG(7, 8)), 4000, 3)
	for _, codec := range []string{"zstd", "none"} {
		dir := filepath.Join(t.TempDir(), "s")
		writeStore(t, dir, cols, 2, Options{ChunkRows: 1000, Codec: codec}, 4000)
		rb, err := open(dir, false, ioBuffered)
		if err != nil {
			t.Fatal(err)
		}
		e := rb.chunks[2].ci.entries[1]
		rb.Close()
		seg := filepath.Join(dir, segmentName(0))
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		b[e.offset+int64(e.storedLen)/2] ^= 0x10
		if err := os.WriteFile(seg, b, 0o644); err != nil {
			t.Fatal(err)
		}
		errOf := func(r *Reader) string {
			defer r.Close()
			x := make([]float64, 1000*2)
			var last error
			for i := range 4 {
				if err := r.ReadChunk(context.Background(), i, x, make([]float64, 1000)); err != nil {
					if i != 2 || !errors.Is(err, ErrCorrupt) {
						t.Fatalf("%s: chunk %d: %v", codec, i, err)
					}
					last = err
				}
			}
			if last == nil {
				t.Fatalf("%s: damaged chunk 2 read without error", codec)
			}
			return last.Error()
		}
		rb, err = open(dir, false, ioBuffered)
		if err != nil {
			t.Fatal(err)
		}
		want := errOf(rb)
		got := errOf(openDirectT(t, dir))
		if got != want {
			t.Fatalf("%s: O_DIRECT read gives\n%s\nbuffered gives\n%s", codec, got, want)
		}
		t.Log(got)
	}
}

// Close while the read-ahead is in flight stops the fetchers; reads after
// it return ErrClosed.
func TestDirectClose(t *testing.T) {
	cols := testData(rand.New(rand.NewPCG(9, 9)), 20000, 3)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 2, Options{ChunkRows: 1000, Codec: "none"}, 20000)
	for range 3 {
		r := openDirectT(t, dir)
		x := make([]float64, 2000)
		for i := range 3 {
			if err := r.ReadChunk(context.Background(), i, x, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.ReadChunk(context.Background(), 3, x, nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("read after Close: %v", err)
		}
	}
}
