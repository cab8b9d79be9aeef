package chunkstore

import (
	"errors"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/falkon-ooc/falkon-ooc/internal/directio"
)

// ioMode says how a Reader reads blocks from its segment files.
type ioMode int

const (
	// ioAuto reads with O_DIRECT when the store is larger than the page
	// cache the process can keep (directio.CacheRoom), else buffered.
	ioAuto ioMode = iota
	ioBuffered
	ioDirect
)

// Hooks for tests: opening and reading a segment with O_DIRECT.
var (
	directOpen = func(path string) (directFile, error) { return directio.Open(path) }
	cacheRoom  = directio.CacheRoom
)

// directFile is a segment opened with O_DIRECT (directio.File).
type directFile interface {
	ReadAt(p []byte, off int64) (int, error)
	Close() error
}

// useDirect decides, for ioAuto, whether a store of size bytes is read
// with O_DIRECT: when it is larger than the page cache the process can
// keep, every pass reads it from the disk anyway, and reading it through
// the page cache only costs CPU (filling the cache, then reclaiming it
// under memory pressure: 6 s of system time per fit of 5 passes over 2 GB
// under a 1 GiB cgroup, bench/RESULTS.md).
func useDirect(mode ioMode, size int64) bool {
	switch mode {
	case ioDirect:
		return true
	case ioBuffered:
		return false
	}
	room, ok := cacheRoom()
	return ok && size > room
}

// openDirect opens every segment of the store at dir with O_DIRECT, or
// none (false) if any cannot be: a file system without O_DIRECT (EINVAL)
// keeps the buffered reads.
func openDirect(dir string, segs []*segment) bool {
	for k, s := range segs {
		f, err := directOpen(filepath.Join(dir, s.name))
		if err != nil {
			for _, t := range segs[:k] {
				t.dio.Close()
				t.dio = nil
			}
			return false
		}
		s.dio = f
	}
	return true
}

// directReader reads whole chunks with O_DIRECT into aligned buffers, and
// keeps reads of the next chunks in flight on its own goroutines while
// the current ones are decoded (O_DIRECT has no kernel read-ahead).
//
// It holds a ring of slots, each one chunk's aligned span. ReadChunk(i)
// takes chunk i's slot (waiting if it is being read, reading it itself if
// nobody has) and, when reads go forward, queues chunks i+1 … i+ahead for
// the fetchers. A slot is reused once its chunk has been decoded, or when
// it lies outside the window around the chunk being read.
type directReader struct {
	r       *Reader
	mu      sync.Mutex
	cond    sync.Cond // signalled on every slot state change and on close
	slots   []dslot
	ahead   int  // chunks read ahead, also len(slots)
	span    int  // bytes of the largest aligned chunk span
	last    int  // the last chunk taken, for detecting forward reads
	started bool // fetchers running
	closed  bool // fetchers must exit
	wg      sync.WaitGroup
	failed  error // set when O_DIRECT reads are refused (EINVAL): read buffered
}

type slotState int

const (
	slotEmpty slotState = iota
	slotQueued
	slotLoading
	slotReady
	slotFailed
)

type dslot struct {
	chunk int
	state slotState
	users int  // ReadChunk calls using its data
	used  bool // decoded since loaded
	buf   []byte
	data  []byte // the chunk's bytes [loc.start, loc.end) inside buf
}

// directFetchers is how many goroutines read ahead (reads in flight).
const directFetchers = 2

func newDirectReader(r *Reader) *directReader {
	span := 0
	for _, loc := range r.chunks {
		a := loc.start &^ (directio.Align - 1)
		b := (loc.end + directio.Align - 1) &^ (directio.Align - 1)
		span = max(span, int(b-a))
	}
	ahead := int(min(max(prefetchBytes/int64(max(span, 1)), 2), 32, int64(max(len(r.chunks), 1))))
	d := &directReader{r: r, ahead: ahead, span: span, last: -2, slots: make([]dslot, ahead)}
	for k := range d.slots {
		d.slots[k].chunk = -1
	}
	d.cond.L = &d.mu
	return d
}

// readSpan reads chunk i's aligned span into buf and returns the chunk's
// bytes within it, or an error (a short read: the file was truncated).
func (r *Reader) readSpan(buf []byte, i int) ([]byte, error) {
	loc := &r.chunks[i]
	s := r.segs[loc.seg]
	a := loc.start &^ (directio.Align - 1)
	b := (loc.end + directio.Align - 1) &^ (directio.Align - 1)
	n, err := s.dio.ReadAt(buf[:b-a], a)
	if err != nil {
		return nil, err
	}
	if int64(n) < loc.end-a {
		return nil, errShortSpan
	}
	return buf[loc.start-a : loc.end-a], nil
}

var errShortSpan = errors.New("short read")

// take returns chunk i's bytes and the slot holding them (release it with
// put), or slot -1 when the caller must read the chunk itself: into its
// own scratch with readSpan (data nil, ok true) or, after O_DIRECT reads
// failed, buffered (ok false).
func (d *directReader) take(i int) (data []byte, slot int, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed != nil {
		return nil, -1, false
	}
	if !d.started {
		d.started = true
		for range directFetchers {
			d.wg.Add(1)
			go d.fetch()
		}
	}
	forward := i > d.last && i <= d.last+8
	d.last = i
	k := d.find(i)
	if k < 0 {
		if k = d.evictable(i); k < 0 {
			return nil, -1, true
		}
		d.slots[k] = dslot{chunk: i, state: slotQueued, buf: d.slots[k].buf}
	}
	s := &d.slots[k]
	s.users++ // nobody reuses the slot while we wait on it
	if forward {
		d.queue(i)
	}
	for {
		switch s.state {
		case slotQueued:
			d.load(k) // read it ourselves rather than wait for a fetcher
			continue
		case slotLoading:
			d.cond.Wait()
			continue
		case slotReady:
			s.used = true
			return s.data, k, true
		}
		// slotFailed: read this chunk buffered (its errors are the
		// buffered reader's), and everything after if O_DIRECT is refused.
		s.users--
		if s.users == 0 {
			s.state, s.chunk = slotEmpty, -1
		}
		return nil, -1, false
	}
}

// refused notes an O_DIRECT read's error: EINVAL means the file system
// refuses O_DIRECT reads, and the reader reads buffered from then on.
func (d *directReader) refused(err error) {
	if errors.Is(err, syscall.EINVAL) {
		d.mu.Lock()
		d.failed = err
		d.mu.Unlock()
	}
}

// put releases a slot taken by take.
func (d *directReader) put(k int) {
	d.mu.Lock()
	d.slots[k].users--
	d.mu.Unlock()
	d.cond.Broadcast()
}

// find returns the slot holding or loading chunk i, or -1. d.mu is held.
func (d *directReader) find(i int) int {
	for k := range d.slots {
		if d.slots[k].chunk == i && d.slots[k].state != slotEmpty {
			return k
		}
	}
	return -1
}

// evictable returns a slot that can take a new chunk while chunk i is
// being read, or -1: an empty one, else one whose chunk has been decoded
// or lies outside the window [i-ahead, i+ahead]. d.mu is held.
func (d *directReader) evictable(i int) int {
	best := -1
	for k := range d.slots {
		s := &d.slots[k]
		switch {
		case s.state == slotEmpty:
			return k
		case s.users > 0 || s.state == slotLoading:
		case s.state == slotFailed || s.used || s.chunk < i-d.ahead || s.chunk > i+d.ahead:
			best = k
		}
	}
	return best
}

// queue asks the fetchers for chunks i+1 … i+ahead that no slot holds,
// while slots can be had. d.mu is held.
func (d *directReader) queue(i int) {
	queued := false
	for c := i + 1; c <= i+d.ahead && c < len(d.r.chunks); c++ {
		if d.find(c) >= 0 {
			continue
		}
		k := d.evictable(i)
		if k < 0 {
			break
		}
		d.slots[k] = dslot{chunk: c, state: slotQueued, buf: d.slots[k].buf}
		queued = true
	}
	if queued {
		d.cond.Broadcast()
	}
}

// load reads queued slot k, unlocking d.mu meanwhile. d.mu is held.
func (d *directReader) load(k int) {
	s := &d.slots[k]
	s.state = slotLoading
	if s.buf == nil {
		s.buf = directio.Buffer(d.span) // grown once per slot
	}
	buf, i := s.buf, s.chunk
	d.mu.Unlock()
	data, err := d.r.readSpan(buf, i)
	d.mu.Lock()
	s = &d.slots[k]
	if err != nil {
		s.state = slotFailed
		if errors.Is(err, syscall.EINVAL) {
			d.failed = err // the file system refuses O_DIRECT reads
			d.queueClear()
		}
	} else {
		s.state, s.data = slotReady, data
	}
	d.cond.Broadcast()
}

// queueClear drops the queued slots (after O_DIRECT reads were refused).
// d.mu is held.
func (d *directReader) queueClear() {
	for k := range d.slots {
		if s := &d.slots[k]; s.state == slotQueued && s.users == 0 {
			s.state, s.chunk = slotEmpty, -1
		}
	}
}

// fetch is a fetcher: it reads the queued slots, lowest chunk first, until
// close.
func (d *directReader) fetch() {
	defer d.wg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if d.closed {
			return
		}
		k := -1
		for j := range d.slots {
			if d.slots[j].state == slotQueued && (k < 0 || d.slots[j].chunk < d.slots[k].chunk) {
				k = j
			}
		}
		if k < 0 || d.failed != nil {
			d.cond.Wait()
			continue
		}
		d.load(k)
	}
}

// close stops the fetchers and waits for their reads to end.
func (d *directReader) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cond.Broadcast()
	d.wg.Wait()
}
