package chunkstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/falkon-ooc/falkon-ooc/internal/directio"
	"github.com/falkon-ooc/falkon-ooc/internal/mmap"
)

// maxManifestBytes bounds the size of meta.json a reader accepts.
const maxManifestBytes = 64 << 20

// Reader reads a store. It is safe for concurrent use.
type Reader struct {
	path     string
	m        *Manifest
	segs     []*segment
	chunks   []chunkLoc
	dec      *decoder
	dim, nt  int
	colNames []string
	features []string
	targets  []string
	// Column metadata from the manifest (select.go).
	mean, std []float64
	distinct  [][]float64
	maxRaw    int
	maxRead   int
	freeMu    sync.Mutex
	free      []*scratch    // scratch buffers not in use; kept until Close
	direct    *directReader // non-nil: chunks are read with O_DIRECT (direct.go)

	mu     sync.RWMutex // held for reading by reads, for writing by Close
	closed bool
}

// SegmentData is one segment file's contents for NewReader: an io.ReaderAt
// and its size.
type SegmentData struct {
	R    io.ReaderAt
	Size int64
}

type segment struct {
	name string
	r    io.ReaderAt
	data []byte     // the mapped file, or nil to read through r
	mf   *mmap.File // for advice and Close; nil for NewReader
	dio  directFile // the file opened with O_DIRECT, when the Reader reads so
	size int64
	// ahead is the offset up to which read-ahead has been asked for.
	ahead atomic.Int64
}

type chunkLoc struct {
	seg        int
	ci         chunkIndex
	start, end int64 // byte range of the chunk's blocks in the segment
}

// scratch is one reading goroutine's buffers: tileCols decoded columns,
// an unshuffle buffer, and (without mmap) a read buffer or, reading with
// O_DIRECT, an aligned buffer for a whole chunk's span, used when the
// read-ahead ring has no slot free. span is the chunk being decoded, read
// with O_DIRECT (nil otherwise), and spanChunk its index.
type scratch struct {
	tile       [tileCols][]byte
	raws       [tileCols][]byte
	shuf, read []byte
	dbuf, span []byte
	spanChunk  int
}

func (r *Reader) getScratch() *scratch {
	r.freeMu.Lock()
	if n := len(r.free); n > 0 {
		s := r.free[n-1]
		r.free = r.free[:n-1]
		r.freeMu.Unlock()
		return s
	}
	r.freeMu.Unlock()
	// Buffers grow on first use, once a block has passed its checksum, so
	// a damaged file declaring huge chunks allocates nothing.
	return new(scratch)
}

// growBytes returns b with length n, reallocated if it is too small.
func growBytes(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func (r *Reader) putScratch(s *scratch) {
	r.freeMu.Lock()
	r.free = append(r.free, s)
	r.freeMu.Unlock()
}

// Open opens the store at dir: it reads and checks meta.json and every
// segment's header, footer and index, and opens the segment files for
// reading. Blocks are checked when read (ReadChunk, Verify).
//
// Blocks are read with pread into each reading goroutine's scratch, not
// through a memory mapping: on a CG pass over a store that stays in page
// cache, mapping the chunks and releasing them after decoding (to keep
// resident memory bounded) cost 3.5 × the CPU of reading them
// (bench/RESULTS.md, "Pipeline overhead"), all of it page-table work.
//
// When the store is larger than the page cache the process can keep (the
// smaller of MemAvailable and its memory cgroup's limit less the cgroup's
// anonymous memory), so that every pass reads it from the disk anyway,
// ReadChunk reads whole chunks with O_DIRECT instead, bypassing the page
// cache, and keeps the next chunks' reads in flight itself (see the
// package documentation, "Reading").
func Open(dir string) (*Reader, error) { return open(dir, false, ioAuto) }

// open is Open; mapped maps the segments instead (the reader then releases
// each chunk's pages after decoding it), and mode chooses between
// buffered and O_DIRECT reads of unmapped segments. Tests and benchmarks
// compare them.
func open(dir string, mapped bool, mode ioMode) (*Reader, error) {
	dir = filepath.Clean(dir)
	mpath := filepath.Join(dir, ManifestName)
	st, err := os.Stat(mpath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Stat(dir); derr != nil {
				return nil, fmt.Errorf("chunkstore: open %w", derr)
			}
			return nil, fmt.Errorf("chunkstore: open %s: not a chunk store (no %s; an interrupted ingest leaves none)", dir, ManifestName)
		}
		return nil, fmt.Errorf("chunkstore: open %w", err)
	}
	if st.Size() > maxManifestBytes {
		return nil, &CorruptError{Path: dir, File: ManifestName, Chunk: -1, Offset: -1, Err: fmt.Errorf("%d bytes, more than %d", st.Size(), maxManifestBytes)}
	}
	b, err := os.ReadFile(mpath)
	if err != nil {
		return nil, fmt.Errorf("chunkstore: open %w", err)
	}
	m, err := decodeManifest(dir, b)
	if err != nil {
		return nil, err
	}
	segs := make([]*segment, len(m.Segments))
	closeAll := func() {
		for _, s := range segs {
			if s != nil && s.mf != nil {
				s.mf.Close()
			}
		}
	}
	for k, si := range m.Segments {
		openFile := mmap.OpenRead
		if mapped {
			openFile = mmap.Open
		}
		f, err := openFile(filepath.Join(dir, si.Name))
		if err != nil {
			closeAll()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &CorruptError{Path: dir, File: si.Name, Chunk: -1, Offset: -1, Err: errors.New("segment file missing")}
			}
			return nil, fmt.Errorf("chunkstore: open %w", err)
		}
		f.Sequential()
		segs[k] = &segment{name: si.Name, r: f, data: f.Bytes(), mf: f, size: f.Size()}
	}
	r, err := openMapped(dir, m, segs)
	if err != nil {
		closeAll()
		return nil, err
	}
	if !mapped {
		var size int64
		for _, s := range segs {
			size += s.size
		}
		if useDirect(mode, size) && openDirect(dir, segs) {
			r.direct = newDirectReader(r)
		}
	}
	return r, nil
}

// openMapped is newReader over mapped segments, turning a memory fault (a
// segment truncated while being opened) into an error.
func openMapped(dir string, m *Manifest, segs []*segment) (r *Reader, err error) {
	defer func() {
		if e := recover(); e != nil {
			r, err = nil, (&Reader{path: dir}).faultError(e, "", -1)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return newReader(dir, m, segs)
}

// NewReader returns a reader over a store held elsewhere: meta is the
// contents of meta.json and segs the segment files, in the manifest's order.
// It performs the same checks as Open. Close does not close the ReaderAts.
func NewReader(meta []byte, segs []SegmentData) (*Reader, error) {
	if len(meta) > maxManifestBytes {
		return nil, &CorruptError{File: ManifestName, Chunk: -1, Offset: -1, Err: fmt.Errorf("%d bytes, more than %d", len(meta), maxManifestBytes)}
	}
	m, err := decodeManifest("", meta)
	if err != nil {
		return nil, err
	}
	if len(segs) != len(m.Segments) {
		return nil, fmt.Errorf("chunkstore: new reader: %d segments given, manifest lists %d", len(segs), len(m.Segments))
	}
	ss := make([]*segment, len(segs))
	for k, s := range segs {
		ss[k] = &segment{name: m.Segments[k].Name, r: s.R, size: s.Size}
	}
	return newReader("", m, ss)
}

func newReader(path string, m *Manifest, segs []*segment) (*Reader, error) {
	r := &Reader{
		path: path, m: m, segs: segs,
		dim: len(m.Features), nt: len(m.Targets),
		maxRaw: 8 * min(m.ChunkRows, int(max(m.Rows, 1))),
	}
	r.initColumns()
	ncol := len(r.colNames)
	var indexes [][]byte
	for k, s := range segs {
		si := m.Segments[k]
		idx, cis, err := r.openSegment(s, si, ncol)
		if err != nil {
			return nil, err
		}
		indexes = append(indexes, idx)
		for _, ci := range cis {
			start := ci.entries[0].offset
			last := ci.entries[ncol-1]
			end := align8(last.offset + int64(last.storedLen) + trailerSize)
			r.chunks = append(r.chunks, chunkLoc{seg: k, ci: ci, start: start, end: end})
			for _, e := range ci.entries {
				r.maxRead = max(r.maxRead, int(align8(int64(e.storedLen)+trailerSize)))
			}
		}
	}
	if id := storeID(indexes); id != m.StoreID {
		return nil, r.corrupt(ManifestName, -1, -1, -1, fmt.Errorf("store_id %s does not match the segments (%s): manifest and data files are from different stores", m.StoreID, id))
	}
	dec, err := newDecoder(r.maxRaw)
	if err != nil {
		return nil, fmt.Errorf("chunkstore: %w", err)
	}
	r.dec = dec
	return r, nil
}

func (r *Reader) corrupt(file string, chunk, col int, off int64, err error) *CorruptError {
	e := &CorruptError{Path: r.path, File: file, Chunk: chunk, Offset: off, Err: err}
	if col >= 0 && col < len(r.colNames) {
		e.Column = r.colNames[col]
	}
	return e
}

// readAt reads exactly len(p) bytes at off from s.
func (s *segment) readAt(p []byte, off int64) error {
	if s.data != nil {
		if off < 0 || off+int64(len(p)) > int64(len(s.data)) {
			return io.ErrUnexpectedEOF
		}
		copy(p, s.data[off:])
		return nil
	}
	n, err := s.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// openSegment checks a segment's size, header, footer and index and returns
// the index bytes and records.
func (r *Reader) openSegment(s *segment, si SegmentInfo, ncol int) ([]byte, []chunkIndex, error) {
	bad := func(off int64, format string, args ...any) error {
		return r.corrupt(s.name, -1, -1, off, fmt.Errorf(format, args...))
	}
	if s.size != si.Bytes {
		return nil, nil, bad(-1, "segment is %d bytes, manifest says %d (truncated or replaced?)", s.size, si.Bytes)
	}
	if s.size < headerSize+footerSize {
		return nil, nil, bad(-1, "segment is %d bytes, too small", s.size)
	}
	var hb [headerSize]byte
	if err := s.readAt(hb[:], 0); err != nil {
		return nil, nil, bad(0, "read header: %v", err)
	}
	hv, err := decodeHeader(hb[:])
	if err != nil {
		return nil, nil, bad(0, "%v", err)
	}
	if hv < MinFormatVersion || hv > MaxFormatVersion {
		return nil, nil, fmt.Errorf("%s: %w", s.name, versionError(r.path, int(hv)))
	}
	if int(hv) != r.m.FormatVersion {
		return nil, nil, bad(0, "header version %d, manifest says %d", hv, r.m.FormatVersion)
	}
	var fb [footerSize]byte
	foff := s.size - footerSize
	if err := s.readAt(fb[:], foff); err != nil {
		return nil, nil, bad(foff, "read footer: %v", err)
	}
	ft, err := decodeFooter(fb[:])
	if err != nil {
		return nil, nil, bad(foff, "%v", err)
	}
	if ft.version != hv {
		return nil, nil, bad(foff+40, "footer version %d, header says %d", ft.version, hv)
	}
	if int64(ft.firstChunk) != int64(si.FirstChunk) || int64(ft.chunks) != int64(si.Chunks) || int64(ft.columns) != int64(ncol) {
		return nil, nil, bad(foff, "footer says chunks [%d, +%d) of %d columns, manifest says [%d, +%d) of %d", ft.firstChunk, ft.chunks, ft.columns, si.FirstChunk, si.Chunks, ncol)
	}
	want := indexLength(si.Chunks, ncol)
	if ft.indexLength != uint64(want) || ft.indexOffset%8 != 0 || ft.indexOffset < headerSize || ft.indexOffset != uint64(foff-want) {
		return nil, nil, bad(foff, "footer places the index at [%d, +%d), want [%d, +%d)", ft.indexOffset, ft.indexLength, foff-want, want)
	}
	ioff := int64(ft.indexOffset)
	idx := make([]byte, want)
	if err := s.readAt(idx, ioff); err != nil {
		return nil, nil, bad(ioff, "read index: %v", err)
	}
	if got := crc32c(idx); got != ft.indexCRC {
		return nil, nil, bad(ioff, "index checksum mismatch (footer %08x, computed %08x)", ft.indexCRC, got)
	}
	lastRows := r.m.ChunkRows
	if si.FirstChunk+si.Chunks == r.m.Chunks {
		lastRows = int(r.m.Rows - int64(r.m.Chunks-1)*int64(r.m.ChunkRows))
	}
	cis, err := decodeIndex(idx, indexLayout{chunks: si.Chunks, columns: ncol, chunkRows: r.m.ChunkRows, lastRows: lastRows, dataEnd: ioff})
	if err != nil {
		var ie *indexError
		if errors.As(err, &ie) {
			chunk := -1
			if ie.chunk >= 0 {
				chunk = si.FirstChunk + ie.chunk
			}
			return nil, nil, r.corrupt(s.name, chunk, ie.column, ioff+ie.offset, fmt.Errorf("bad index: %s", ie.msg))
		}
		return nil, nil, bad(ioff, "bad index: %v", err)
	}
	return idx, cis, nil
}

// Manifest returns the store's manifest. The caller must not modify it.
func (r *Reader) Manifest() *Manifest { return r.m }

// NumChunks reports the number of chunks.
func (r *Reader) NumChunks() int { return len(r.chunks) }

// Dim reports the number of feature columns.
func (r *Reader) Dim() int { return r.dim }

// NumTargets reports the number of target columns.
func (r *Reader) NumTargets() int { return r.nt }

// Rows reports the number of rows in the store.
func (r *Reader) Rows() int64 { return r.m.Rows }

// ChunkRows reports the number of rows of chunk i, or 0 if there is no
// chunk i.
func (r *Reader) ChunkRows(i int) int {
	if i < 0 || i >= len(r.chunks) {
		return 0
	}
	return int(r.chunks[i].ci.rows)
}

// FeatureNames returns the feature column names in order.
func (r *Reader) FeatureNames() []string { return append([]string(nil), r.features...) }

// TargetNames returns the target column names in order.
func (r *Reader) TargetNames() []string { return append([]string(nil), r.targets...) }

// StoreID returns the store's fingerprint (Manifest.StoreID).
func (r *Reader) StoreID() string { return r.m.StoreID }

// ReadChunk decodes chunk i: the features into x, row-major
// (len(x) == ChunkRows(i)*Dim()), and the targets into y, row-major
// (len(y) == ChunkRows(i)*NumTargets()); y may be nil to skip the targets.
// Every block's CRC is checked before it is decoded. ReadChunk is safe for
// concurrent use with distinct destinations and allocates nothing in steady
// state.
func (r *Reader) ReadChunk(ctx context.Context, i int, x, y []float64) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	if i < 0 || i >= len(r.chunks) {
		return fmt.Errorf("chunkstore: read chunk %d: out of range [0, %d)", i, len(r.chunks))
	}
	loc := &r.chunks[i]
	rows := int(loc.ci.rows)
	if len(x) != rows*r.dim {
		return fmt.Errorf("chunkstore: read chunk %d: len(x) = %d, want %d rows × %d features", i, len(x), rows, r.dim)
	}
	if y != nil && len(y) != rows*r.nt {
		return fmt.Errorf("chunkstore: read chunk %d: len(y) = %d, want %d rows × %d targets", i, len(y), rows, r.nt)
	}
	seg := r.segs[loc.seg]
	defer r.catchFault(&err, seg.name, i)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	sc := r.getScratch()
	defer r.putScratch(sc)
	if r.direct == nil {
		r.prefetch(i)
		return r.readChunk(sc, i, x, y)
	}
	slot := r.takeSpan(sc, i)
	err = r.readChunk(sc, i, x, y)
	sc.span = nil
	if slot >= 0 {
		r.direct.put(slot)
	}
	return err
}

// readChunk decodes chunk i into x and y (y may be nil).
func (r *Reader) readChunk(sc *scratch, i int, x, y []float64) error {
	if err := r.readColumns(sc, i, x, 0, r.dim); err != nil {
		return err
	}
	if y != nil {
		if err := r.readColumns(sc, i, y, r.dim, r.nt); err != nil {
			return err
		}
	}
	r.release(&r.chunks[i])
	return nil
}

// takeSpan reads chunk i with O_DIRECT, or takes it from the read-ahead
// ring, into sc.span, and returns the ring's slot to put back (or -1).
// If the O_DIRECT read fails, sc.span stays nil and the chunk is read
// buffered, block by block: a damaged or truncated file gives the same
// errors either way.
func (r *Reader) takeSpan(sc *scratch, i int) int {
	data, slot, ok := r.direct.take(i)
	if !ok {
		return -1
	}
	if slot < 0 {
		if sc.dbuf == nil {
			sc.dbuf = directio.Buffer(r.direct.span)
		}
		var err error
		if data, err = r.readSpan(sc.dbuf, i); err != nil {
			r.direct.refused(err)
			return -1
		}
	}
	sc.span, sc.spanChunk = data, i
	return slot
}

// readColumns decodes columns [first, first+n) of chunk i into dst,
// row-major with n values per row, tileCols columns at a time.
func (r *Reader) readColumns(sc *scratch, i int, dst []float64, first, n int) error {
	rows := int(r.chunks[i].ci.rows)
	for j0 := 0; j0 < n; j0 += tileCols {
		t := min(tileCols, n-j0)
		for k := range t {
			raw, err := r.block(sc, k, i, first+j0+k)
			if err != nil {
				return err
			}
			sc.raws[k] = raw
		}
		scatterTile(dst, sc.raws[:t], j0, n, rows)
	}
	clear(sc.raws[:]) // do not keep the mapping referenced
	return nil
}

// WeightMean implements stream.WeightStatser: the mean of the store's
// weights from its manifest, or 0 without weights.
func (r *Reader) WeightMean() float64 {
	if w := r.m.Weight; w != nil {
		return w.Mean
	}
	return 0
}

// WeightColumn implements stream.Weighter: the name of the store's
// weight column, or "".
func (r *Reader) WeightColumn() string {
	if w := r.m.Weight; w != nil {
		return w.Name
	}
	return ""
}

// ReadWeights implements stream.Weighter: it decodes chunk i's row
// weights (the weight column alone) into w, len ChunkRows(i). It is safe
// for concurrent use with distinct destinations and allocates nothing in
// steady state.
func (r *Reader) ReadWeights(ctx context.Context, i int, w []float64) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	if r.m.Weight == nil {
		return fmt.Errorf("chunkstore: read the weights of chunk %d: the store has no weight column", i)
	}
	if i < 0 || i >= len(r.chunks) {
		return fmt.Errorf("chunkstore: read chunk %d: out of range [0, %d)", i, len(r.chunks))
	}
	loc := &r.chunks[i]
	if rows := int(loc.ci.rows); len(w) != rows {
		return fmt.Errorf("chunkstore: read chunk %d: len(w) = %d, want %d", i, len(w), rows)
	}
	seg := r.segs[loc.seg]
	defer r.catchFault(&err, seg.name, i)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	sc := r.getScratch()
	defer r.putScratch(sc)
	raw, err := r.block(sc, 0, i, r.dim+r.nt)
	if err != nil {
		return err
	}
	scatter(w, raw, 0, 1)
	r.release(loc)
	return nil
}

// ReadColumns decodes the columns cols (indices over features then targets)
// of chunk i into dst, one slice of ChunkRows(i) values per column.
func (r *Reader) ReadColumns(ctx context.Context, i int, cols []int, dst [][]float64) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	if i < 0 || i >= len(r.chunks) {
		return fmt.Errorf("chunkstore: read chunk %d: out of range [0, %d)", i, len(r.chunks))
	}
	if len(cols) != len(dst) {
		return fmt.Errorf("chunkstore: read chunk %d: %d columns but %d destinations", i, len(cols), len(dst))
	}
	loc := &r.chunks[i]
	rows := int(loc.ci.rows)
	for k, c := range cols {
		if c < 0 || c >= len(r.colNames) {
			return fmt.Errorf("chunkstore: read chunk %d: column %d out of range [0, %d)", i, c, len(r.colNames))
		}
		if len(dst[k]) != rows {
			return fmt.Errorf("chunkstore: read chunk %d: len(dst[%d]) = %d, want %d", i, k, len(dst[k]), rows)
		}
	}
	seg := r.segs[loc.seg]
	defer r.catchFault(&err, seg.name, i)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	sc := r.getScratch()
	defer r.putScratch(sc)
	for k, c := range cols {
		raw, err := r.block(sc, 0, i, c)
		if err != nil {
			return err
		}
		scatter(dst[k], raw, 0, 1)
	}
	r.release(loc)
	return nil
}

// prefetchBytes is how far past the start of chunk i ReadChunk(i) asks
// the kernel to read ahead (at least through chunk i+1), so that on a
// store larger than the page cache the disk keeps working on the next
// chunks while this one is decoded and used. Each part of a segment is
// advised once per pass (the segment remembers how far it has asked), so
// on a store in page cache the advice costs next to nothing.
var prefetchBytes int64 = 32 << 20

// prefetch asks for read-ahead (fadvise or madvise WILLNEED) from chunk i
// up to prefetchBytes on, within chunk i's segment, of what has not been
// asked for already.
func (r *Reader) prefetch(i int) {
	loc := &r.chunks[i]
	s := r.segs[loc.seg]
	if s.mf == nil {
		return
	}
	end := loc.end
	for k := i + 1; k < len(r.chunks) && r.chunks[k].seg == loc.seg; k++ {
		if k > i+1 && r.chunks[k].end-loc.start > prefetchBytes {
			break
		}
		end = r.chunks[k].end
	}
	old := s.ahead.Load()
	from := old
	if from < loc.start || from > end+prefetchBytes {
		from = loc.start // the first read, a new pass, or a jump
	}
	if end <= from || !s.ahead.CompareAndSwap(old, end) {
		return // asked already, or another reader is asking
	}
	s.mf.WillNeed(from, end-from)
}

// releaseAlign widens the range release drops: Linux maps file pages in
// large folios (up to 2 MiB, naturally aligned in the file), so a fault in
// one chunk can map pages of its neighbours, which would stay resident if
// only the chunk's own bytes were released.
const releaseAlign = 2 << 20

// release drops the mapped pages of a chunk that has been decoded (widened
// to releaseAlign) when its segment is mapped, so resident memory stays
// bounded however large the store. Pages another goroutine is still
// reading are simply faulted in again from the page cache. Segments read
// with pread have nothing to release.
func (r *Reader) release(loc *chunkLoc) {
	if s := r.segs[loc.seg]; s.mf != nil && s.data != nil {
		start := loc.start &^ (releaseAlign - 1)
		end := (loc.end + releaseAlign - 1) &^ (releaseAlign - 1)
		s.mf.DontNeed(start, end-start)
	}
}

// catchFault turns a memory fault while reading a mapped segment (the file
// was truncated or became unreadable after Open) into a CorruptError instead
// of a crash. It must be deferred directly, together with
// debug.SetPanicOnFault(true).
func (r *Reader) catchFault(err *error, file string, chunk int) {
	if e := recover(); e != nil {
		*err = r.faultError(e, file, chunk)
	}
}

// faultError converts a recovered memory fault into a CorruptError and
// re-panics anything else.
func (r *Reader) faultError(e any, file string, chunk int) error {
	if _, ok := e.(interface{ Addr() uintptr }); ok {
		return r.corrupt(file, chunk, -1, -1, errors.New("memory fault reading the mapped file (was it truncated or rewritten after Open?)"))
	}
	panic(e)
}

// block reads, checks and decodes column j of chunk i into sc.tile[k]. The
// result is that buffer or, for uncompressed blocks of a mapped segment, the
// mapped bytes themselves. An uncompressed block of a segment read with
// pread is read straight into sc.tile[k] and used in place.
func (r *Reader) block(sc *scratch, k, i, j int) (raw []byte, err error) {
	loc := &r.chunks[i]
	s := r.segs[loc.seg]
	e := loc.ci.entries[j]
	n := int64(e.storedLen) + trailerSize
	end := align8(e.offset + n)
	span := sc.span != nil && sc.spanChunk == i
	inPlace := s.data == nil && !span && e.codec == codecNone
	var b, pad []byte
	switch {
	case span:
		o := e.offset - loc.start
		b, pad = sc.span[o:o+n], sc.span[o+n:end-loc.start]
	case s.data != nil:
		b, pad = s.data[e.offset:e.offset+n], s.data[e.offset+n:end]
	default:
		var buf []byte
		if inPlace {
			sc.tile[k] = growBytes(sc.tile[k], int(end-e.offset))
			buf = sc.tile[k]
		} else {
			sc.read = growBytes(sc.read, int(end-e.offset))
			buf = sc.read
		}
		if err := s.readAt(buf, e.offset); err != nil {
			return nil, r.corrupt(s.name, i, j, e.offset, fmt.Errorf("read block: %w", err))
		}
		b, pad = buf[:n], buf[n:]
	}
	if err := checkBlock(b, pad, e); err != nil {
		return nil, r.corrupt(s.name, i, j, e.offset, err)
	}
	if !inPlace {
		sc.tile[k] = growBytes(sc.tile[k], int(e.rawLen))
	}
	dst := sc.tile[k] // for inPlace, holds the payload: decodeBlock returns it
	if e.codec&codecShuffle != 0 {
		sc.shuf = growBytes(sc.shuf, int(e.rawLen))
	}
	out, err := r.dec.decodeBlock(dst, sc.shuf, b[:e.storedLen], e.codec, int(e.rawLen))
	if err != nil {
		return nil, r.corrupt(s.name, i, j, e.offset, err)
	}
	return out, nil
}

// Verify reads every block of every chunk, checking every CRC, that every
// block decodes to the right length, and that every value is finite and
// within the column's manifest [Min, Max]. It checks chunks on GOMAXPROCS
// goroutines and returns the problem in the lowest-numbered bad chunk (the
// same error whatever the scheduling), or ctx.Err().
func (r *Reader) Verify(ctx context.Context) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	cols := append(append(append([]Column(nil), r.m.Features...), r.m.Targets...), r.m.weightCols()...)
	var (
		next atomic.Int64 // next chunk to check
		mu   sync.Mutex
		bad  = len(r.chunks) // lowest bad chunk so far
		err  error
		wg   sync.WaitGroup
	)
	fail := func(i int, e error) {
		mu.Lock()
		if i < bad {
			bad, err = i, e
		}
		mu.Unlock()
	}
	stopAt := func() int {
		mu.Lock()
		defer mu.Unlock()
		return bad
	}
	for range min(runtime.GOMAXPROCS(0), max(len(r.chunks), 1)) {
		wg.Go(func() {
			sc := r.getScratch()
			defer r.putScratch(sc)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(r.chunks) || i > stopAt() {
					return
				}
				if e := ctx.Err(); e != nil {
					fail(-1, e)
					return
				}
				if e := r.verifyChunk(sc, cols, i); e != nil {
					fail(i, e)
				}
			}
		})
	}
	wg.Wait()
	return err
}

// verifyChunk checks every block of chunk i and its values.
func (r *Reader) verifyChunk(sc *scratch, cols []Column, i int) (err error) {
	file := r.segs[r.chunks[i].seg].name
	defer r.catchFault(&err, file, i)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for j := range cols {
		raw, err := r.block(sc, 0, i, j)
		if err != nil {
			return err
		}
		for k := 0; k+8 <= len(raw); k += 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw[k : k+8]))
			if math.IsNaN(v) || math.IsInf(v, 0) || v < cols[j].Min || v > cols[j].Max {
				return r.corrupt(file, i, j, -1, fmt.Errorf("row %d: value %v outside the manifest's range [%v, %v]", k/8, v, cols[j].Min, cols[j].Max))
			}
		}
	}
	r.release(&r.chunks[i])
	return nil
}

// Close releases the mapped files and the decoder. Reads after Close return
// ErrClosed; a second Close returns nil.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.direct != nil {
		r.direct.close()
	}
	for _, s := range r.segs {
		if s.dio != nil {
			if err := s.dio.Close(); err != nil {
				errs = append(errs, fmt.Errorf("chunkstore: close %s: %w", s.name, err))
			}
		}
		if s.mf != nil {
			if err := s.mf.Close(); err != nil {
				errs = append(errs, fmt.Errorf("chunkstore: close %s: %w", s.name, err))
			}
		}
	}
	if r.dec != nil {
		r.dec.close()
	}
	r.free = nil
	return errors.Join(errs...)
}
