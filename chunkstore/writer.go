package chunkstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/colstats"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// DefaultChunkRows is the chunk size used when Options.ChunkRows is 0. See
// bench/RESULTS.md "Chunk codecs": at 32 Ki rows a column block is 256 KiB,
// large enough that per-block overhead and compression ratio have levelled
// off, and a chunk of 28 float64 features is 7 MiB, small enough that a
// handful of workers keep bounded, cache-friendly buffers.
const DefaultChunkRows = 32768

// DefaultSegmentBytes is the segment size after which a writer starts a new
// segment file, when Options.SegmentBytes is 0.
const DefaultSegmentBytes = 1 << 30

// ColumnSpec names one column to write and its source type.
type ColumnSpec struct {
	Name string // column name as in the source file
	Type string // source type: "float64","float32","int8","int16","int32","int64","uint8","uint16","uint32","uint64","bool"
}

// Options configures a Writer. A zero field means its default.
type Options struct {
	// ChunkRows is the number of rows per chunk; 0 means DefaultChunkRows.
	ChunkRows int `json:"chunk_rows"`
	// Codec names the block codec (see Codecs); "" means DefaultCodec.
	Codec string `json:"codec"`
	// Workers is the number of compression goroutines; 0 means GOMAXPROCS.
	// The bytes written do not depend on it.
	Workers int `json:"workers"`
	// Sources is recorded in the manifest.
	Sources []SourceFile `json:"sources,omitempty"`
	// SegmentBytes is the size after which a new segment file is started;
	// 0 means DefaultSegmentBytes.
	SegmentBytes int64 `json:"segment_bytes,omitempty"`
	// InputColumns is recorded in the manifest (see also SetInputColumns).
	InputColumns []InputColumn `json:"-"`
	// Labels maps each target of type LabelType to its label names (see
	// SetLabels).
	Labels map[string][]string `json:"-"`
	// Created is recorded in the manifest; zero means the time of Close.
	// Tests set it to reproduce a store byte for byte.
	Created time.Time `json:"-"`
	// Replace lets Close replace a store that appeared at the directory
	// after Create (written by another writer meanwhile). Without it, Close
	// replaces only a store that was there at Create, and fails otherwise.
	Replace bool `json:"-"`
	// Weight, when not "", names the last of Create's target columns as
	// the column of row weights instead: stored after the targets, in the
	// manifest's weight (format version 2). Its values must be ≥ 0.
	Weight string `json:"weight,omitempty"`
	// Encoding, when not nil, is recorded in the manifest (format version
	// 3): how the features named in it were made from the inputs'
	// categorical and time columns. Each of its features must be one of
	// Create's features.
	Encoding *featenc.Spec `json:"-"`
	// Nulls is recorded in the manifest: the NULL policy of the ingest
	// that wrote the store ("", "error", "drop" or "mean"; "" and "error"
	// are not recorded).
	Nulls string `json:"-"`
}

// writer states
const (
	stateOpen = iota
	stateClosed
	stateAborted
)

// Writer writes a store. Its methods must not be called concurrently.
type Writer struct {
	dir, tmp string
	features []ColumnSpec
	targets  []ColumnSpec
	ncol     int
	opt      Options
	spec     codecSpec
	enc      *encoder
	state    int

	// Append side.
	cur   *chunkJob
	rows  int64
	made  int
	nbuf  int
	free  chan *chunkJob
	jobs  chan *chunkJob
	order chan *chunkJob
	wg    sync.WaitGroup
	stop  sync.Once

	bytes    atomic.Int64
	errMu    sync.Mutex
	err      error         // sticky pipeline error
	overflow []atomic.Bool // per column: distinct set overflowed
	shift    []float64     // per column: first value, subtracted for the statistics

	// Owned by the output goroutine until the pipeline stops.
	seg      *segWriter
	segInfos []SegmentInfo
	indexes  [][]byte
	stats    []colstats.Stats
	nchunks  int

	final *Manifest // the manifest written by a successful Close

	lock *fileutil.Locker // held from Create to the end of Close or Abort
	kind dirKind          // what was at dir at Create

	// A part (CreatePart): one segment of a store written elsewhere.
	part       bool
	segBase    int    // the number of the part's segment
	partFirst  int    // the part's first chunk (nchunks is the output goroutine's)
	chunkStats []byte // every chunk's statistics, column by column

	// failHook, if set, is called at named stages of Close; tests use it
	// to simulate failures.
	failHook func(stage string) error
}

type chunkJob struct {
	rows    int
	cols    [][]float64
	raw     []byte
	scratch []byte
	blocks  [][]byte
	crcs    []uint32
	stats   []colstats.Stats
	done    chan struct{}
}

type segWriter struct {
	f          *os.File
	bw         *bufio.Writer
	name       string
	off        int64
	firstChunk int
	chunks     int
	index      []byte
}

// Create starts a store that will appear at dir when Close succeeds. It
// builds it in a temporary directory beside dir (same parent, name starting
// with "." and carrying this process's id and start time, see
// internal/fileutil) and on Close fsyncs the files and the directory, then
// renames it into place. An existing store at dir is replaced only by a
// successful Close; an existing directory that is neither empty nor a store
// (no meta.json), or any other file, makes Create fail. A store that another
// writer installs at dir after Create is not replaced unless opt.Replace.
//
// The writer holds an exclusive lock on dir (a hidden lock file beside it)
// until Close or Abort: a second Create of the same dir, in this or another
// process, fails at once with an error matching ErrBusy.
func Create(dir string, features, targets []ColumnSpec, opt Options) (*Writer, error) {
	spec, err := checkCreate(dir, features, targets, &opt)
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	if _, err := classify(dir); err != nil {
		return nil, err
	}
	lock, err := lockStore(dir)
	if err != nil {
		return nil, err
	}
	// Classify again under the lock: a writer that finished meanwhile may
	// have installed a store.
	kind, err := classify(dir)
	if err != nil {
		lock.Release()
		return nil, err
	}
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	tmp, err := fileutil.MkdirTemp(parent, base)
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("chunkstore: create %s: %w", dir, err)
	}
	w, err := buildWriter(dir, tmp, features, targets, opt, spec)
	if err != nil {
		os.RemoveAll(tmp)
		lock.Release()
		return nil, err
	}
	w.lock, w.kind = lock, kind
	w.start()
	return w, nil
}

// checkCreate checks Create's arguments and sets opt's defaults.
func checkCreate(dir string, features, targets []ColumnSpec, opt *Options) (codecSpec, error) {
	fail := func(err error) (codecSpec, error) {
		return codecSpec{}, fmt.Errorf("chunkstore: create %s: %w", dir, err)
	}
	if len(features) == 0 {
		return fail(errors.New("no feature columns"))
	}
	if n := len(features) + len(targets); n > MaxColumns {
		return fail(fmt.Errorf("%d columns, more than %d", n, MaxColumns))
	}
	names := make(map[string]bool)
	for j, c := range append(append([]ColumnSpec(nil), features...), targets...) {
		if c.Name == "" {
			return fail(errors.New("empty column name"))
		}
		if names[c.Name] {
			return fail(fmt.Errorf("duplicate column %q", c.Name))
		}
		names[c.Name] = true
		if !sourceTypes[c.Type] && (c.Type != LabelType || j < len(features)) {
			return fail(fmt.Errorf("column %q: unknown source type %q", c.Name, c.Type))
		}
	}
	if opt.Weight != "" && (len(targets) == 0 || targets[len(targets)-1].Name != opt.Weight) {
		return fail(fmt.Errorf("the weight column %q is not the last target column", opt.Weight))
	}
	if opt.Weight != "" && targets[len(targets)-1].Type == LabelType {
		return fail(fmt.Errorf("the weight column %q holds labels", opt.Weight))
	}
	switch opt.Nulls {
	case "error":
		opt.Nulls = ""
	case "", "drop", "mean":
	default:
		return fail(fmt.Errorf("unknown NULL policy %q", opt.Nulls))
	}
	if opt.Encoding != nil {
		m := Manifest{Encoding: opt.Encoding}
		for _, c := range features {
			m.Features = append(m.Features, Column{Name: c.Name})
		}
		if err := m.checkEncoding(); err != nil {
			return fail(err)
		}
	}
	if opt.ChunkRows == 0 {
		opt.ChunkRows = DefaultChunkRows
	}
	if opt.ChunkRows < 1 || opt.ChunkRows > MaxChunkRows {
		return fail(fmt.Errorf("chunk rows %d out of range [1, %d]", opt.ChunkRows, MaxChunkRows))
	}
	if opt.Workers == 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Workers < 0 {
		return fail(fmt.Errorf("negative workers %d", opt.Workers))
	}
	if opt.SegmentBytes == 0 {
		opt.SegmentBytes = DefaultSegmentBytes
	}
	spec, err := parseCodec(opt.Codec)
	if err != nil {
		return codecSpec{}, err
	}
	opt.Codec = spec.name
	return spec, nil
}

// newWriter returns a writer of the store dir built in tmp, its
// goroutines not started (see start).
func buildWriter(dir, tmp string, features, targets []ColumnSpec, opt Options, spec codecSpec) (*Writer, error) {
	enc, err := newEncoder(spec, opt.Workers)
	if err != nil {
		return nil, fmt.Errorf("chunkstore: create %s: %w", dir, err)
	}
	ncol := len(features) + len(targets)
	w := &Writer{
		dir: dir, tmp: tmp,
		features: append([]ColumnSpec(nil), features...),
		targets:  append([]ColumnSpec(nil), targets...),
		ncol:     ncol, opt: opt, spec: spec, enc: enc,
		nbuf:     opt.Workers + 2,
		overflow: make([]atomic.Bool, ncol),
		shift:    make([]float64, ncol),
		stats:    make([]colstats.Stats, ncol),
	}
	w.opt.Sources = append([]SourceFile(nil), opt.Sources...)
	for j := range w.stats {
		w.stats[j] = colstats.New()
	}
	return w, nil
}

// start starts the compression goroutines and the output goroutine.
func (w *Writer) start() {
	w.free = make(chan *chunkJob, w.nbuf)
	w.jobs = make(chan *chunkJob, w.nbuf)
	w.order = make(chan *chunkJob, w.nbuf)
	w.wg.Add(w.opt.Workers + 1)
	for range w.opt.Workers {
		go w.work()
	}
	go w.output()
}

// lockStore takes the lock of the store directory dir.
func lockStore(dir string) (*fileutil.Locker, error) {
	lock, err := fileutil.Lock(fileutil.LockPath(dir))
	if err != nil {
		var le *fileutil.LockedError
		if errors.As(err, &le) {
			who := "another writer"
			if le.PID > 0 {
				who = fmt.Sprintf("process %d", le.PID)
			}
			return nil, &busyError{fmt.Sprintf("chunkstore: create %s: %s is writing a store there already (lock file %s)", dir, who, le.Path)}
		}
		return nil, fmt.Errorf("chunkstore: create %s: %w", dir, err)
	}
	return lock, nil
}

// Lock takes the lock that Create holds on a store directory, for a caller
// that builds a store elsewhere and moves it to dir with Install. It fails
// at once, with an error matching ErrBusy, if another writer holds it.
// unlock releases it. Create of the same dir fails while it is held.
func Lock(dir string) (unlock func() error, err error) {
	l, err := lockStore(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

// Install moves the complete, closed store at src to dst, durably (the
// parent directory is fsynced). If dst is absent or an empty directory the
// store is renamed there, never over something that appears meanwhile. If
// dst is a store it is replaced atomically when replace is set (the old one
// is removed), else Install fails with an error matching fs.ErrExist.
// Anything else at dst is refused. The caller should hold Lock(dst).
func Install(src, dst string) error { return install(src, dst, false) }

// Replace is Install that replaces a store at dst.
func Replace(src, dst string) error { return install(src, dst, true) }

func install(src, dst string, replace bool) error {
	dst = filepath.Clean(dst)
	kind, err := classify(dst)
	if err != nil {
		return err
	}
	parent := filepath.Dir(dst)
	switch kind {
	case dirAbsent:
		if err := fileutil.RenameNoReplace(src, dst); err != nil {
			return fmt.Errorf("chunkstore: install %s: %w", dst, err)
		}
	case dirEmpty:
		if err := os.Remove(dst); err != nil {
			return fmt.Errorf("chunkstore: install %s: %w", dst, err)
		}
		if err := fileutil.RenameNoReplace(src, dst); err != nil {
			return fmt.Errorf("chunkstore: install %s: %w", dst, err)
		}
	case dirStore:
		if !replace {
			return fmt.Errorf("chunkstore: install %s: %w", dst, fs.ErrExist)
		}
		old, err := replaceDir(src, dst)
		if err != nil {
			return err
		}
		if err := fileutil.SyncDir(parent); err != nil {
			return fmt.Errorf("chunkstore: %w", err)
		}
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("chunkstore: store installed at %s but removing the old one at %s failed: %w", dst, old, err)
		}
	}
	if err := fileutil.SyncDir(parent); err != nil {
		return fmt.Errorf("chunkstore: %w", err)
	}
	return nil
}

type dirKind int

const (
	dirAbsent dirKind = iota
	dirEmpty
	dirStore
)

// classify says what is at dir, refusing anything Create must not replace.
func classify(dir string) (dirKind, error) {
	refuse := func(what string) error {
		return fmt.Errorf("chunkstore: create %s: %s exists and is not a chunk store (%s); refusing to replace it", dir, dir, what)
	}
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return dirAbsent, nil
	}
	if err != nil {
		return 0, fmt.Errorf("chunkstore: create %s: %w", dir, err)
	}
	if !st.IsDir() {
		if st.Mode()&fs.ModeSymlink != 0 {
			return 0, refuse("a symbolic link")
		}
		return 0, refuse("a file")
	}
	if st, err := os.Lstat(filepath.Join(dir, ManifestName)); err == nil && st.Mode().IsRegular() {
		return dirStore, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return 0, fmt.Errorf("chunkstore: create %s: %w", dir, err)
	}
	names, _ := f.Readdirnames(1)
	f.Close()
	if len(names) == 0 {
		return dirEmpty, nil
	}
	return 0, refuse("a non-empty directory without " + ManifestName)
}

func (w *Writer) setErr(err error) {
	w.errMu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.errMu.Unlock()
}

func (w *Writer) getErr() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// Append adds rows given column by column: cols holds one slice per column,
// features first then targets, all of equal length. Every value must be
// finite. Append copies the values; the caller may reuse cols afterwards.
func (w *Writer) Append(cols [][]float64) error {
	if w.state != stateOpen {
		return ErrClosed
	}
	if err := w.getErr(); err != nil {
		return err
	}
	if len(cols) != w.ncol {
		return fmt.Errorf("chunkstore: append: %d columns, want %d (%d features + %d targets)", len(cols), w.ncol, len(w.features), len(w.targets))
	}
	n := len(cols[0])
	for j, c := range cols {
		if len(c) != n {
			return fmt.Errorf("chunkstore: append: column %q has %d values, column %q has %d", w.colName(j), len(c), w.colName(0), n)
		}
		for r, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("chunkstore: append: column %q row %d (store row %d): value %v is not finite", w.colName(j), r, w.rows+int64(r), v)
			}
			if v < 0 && w.opt.Weight != "" && j == w.ncol-1 {
				return fmt.Errorf("chunkstore: append: column %q row %d (store row %d): weight %v is negative", w.colName(j), r, w.rows+int64(r), v)
			}
		}
	}
	if w.rows == 0 && n > 0 && !w.part {
		for j, c := range cols {
			w.shift[j] = c[0]
		}
	}
	off := 0
	for off < n {
		if w.cur == nil {
			w.cur = w.getJob()
		}
		k := min(n-off, w.opt.ChunkRows-w.cur.rows)
		for j, c := range cols {
			copy(w.cur.cols[j][w.cur.rows:], c[off:off+k])
		}
		w.cur.rows += k
		off += k
		w.rows += int64(k)
		if w.cur.rows == w.opt.ChunkRows {
			w.submit()
		}
	}
	return w.getErr()
}

func (w *Writer) colName(j int) string {
	if j < len(w.features) {
		return w.features[j].Name
	}
	return w.targets[j-len(w.features)].Name
}

// Rows reports the number of rows appended so far.
func (w *Writer) Rows() int64 { return w.rows }

// BytesWritten reports the bytes of segment data written so far.
func (w *Writer) BytesWritten() int64 { return w.bytes.Load() }

func (w *Writer) getJob() *chunkJob {
	if w.made < w.nbuf {
		w.made++
		cr := w.opt.ChunkRows
		j := &chunkJob{
			cols:   make([][]float64, w.ncol),
			raw:    make([]byte, 8*cr),
			blocks: make([][]byte, w.ncol),
			crcs:   make([]uint32, w.ncol),
			stats:  make([]colstats.Stats, w.ncol),
			done:   make(chan struct{}, 1),
		}
		if w.spec.shuffle || w.spec.auto {
			j.scratch = make([]byte, 8*cr)
		}
		for c := range j.cols {
			j.cols[c] = make([]float64, cr)
			j.stats[c] = colstats.New()
		}
		return j
	}
	j := <-w.free
	j.rows = 0
	return j
}

func (w *Writer) submit() {
	j := w.cur
	w.cur = nil
	w.order <- j
	w.jobs <- j
}

// work compresses chunks.
func (w *Writer) work() {
	defer w.wg.Done()
	for j := range w.jobs {
		raw := j.raw[:8*j.rows]
		for c := range j.cols {
			v := j.cols[c][:j.rows]
			floatsToBytes(raw, v)
			j.blocks[c], j.crcs[c] = w.enc.encode(j.blocks[c], raw, j.scratch, w.enc.shuffleFor(v))
			j.stats[c].Chunk(v, w.shift[c], w.overflow[c].Load())
		}
		j.done <- struct{}{}
	}
}

// output writes compressed chunks in order and merges their statistics.
func (w *Writer) output() {
	defer w.wg.Done()
	for j := range w.order {
		<-j.done
		if w.getErr() == nil {
			if err := w.writeChunk(j); err != nil {
				w.setErr(err)
			}
		}
		w.free <- j
	}
}

func (w *Writer) writeChunk(j *chunkJob) error {
	if w.seg != nil && w.seg.off >= w.opt.SegmentBytes {
		if err := w.finishSegment(); err != nil {
			return err
		}
	}
	if w.seg == nil {
		if err := w.startSegment(); err != nil {
			return err
		}
	}
	s := w.seg
	ci := chunkIndex{rows: uint32(j.rows), entries: make([]entry, w.ncol)}
	var zeros [8]byte
	for c, b := range j.blocks {
		ci.entries[c] = entry{
			offset:    s.off,
			storedLen: uint32(len(b) - trailerSize),
			rawLen:    uint32(8 * j.rows),
			crc:       j.crcs[c],
			codec:     b[len(b)-trailerSize],
		}
		if _, err := s.bw.Write(b); err != nil {
			return fmt.Errorf("chunkstore: write %s: %w", s.name, err)
		}
		end := s.off + int64(len(b))
		next := align8(end)
		if _, err := s.bw.Write(zeros[:next-end]); err != nil {
			return fmt.Errorf("chunkstore: write %s: %w", s.name, err)
		}
		w.bytes.Add(next - s.off)
		s.off = next
	}
	s.index = appendChunkIndex(s.index, ci)
	s.chunks++
	w.nchunks++
	if w.part {
		for c := range j.stats {
			w.chunkStats = j.stats[c].AppendBinary(w.chunkStats)
		}
	}
	for c := range j.stats {
		w.stats[c].Merge(&j.stats[c])
		if w.stats[c].Overflow() {
			w.overflow[c].Store(true)
		}
	}
	return nil
}

func (w *Writer) startSegment() error {
	k := w.segBase + len(w.segInfos)
	name := segmentName(k)
	f, err := os.OpenFile(filepath.Join(w.tmp, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("chunkstore: %w", err)
	}
	s := &segWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20), name: name, firstChunk: w.nchunks}
	if _, err := s.bw.Write(appendHeader(nil, w.version())); err != nil {
		f.Close()
		return fmt.Errorf("chunkstore: write %s: %w", name, err)
	}
	s.off = headerSize
	w.bytes.Add(headerSize)
	w.seg = s
	return nil
}

// finishSegment writes the index and footer, fsyncs and closes the segment.
func (w *Writer) finishSegment() error {
	s := w.seg
	w.seg = nil
	ft := footer{
		indexOffset: uint64(s.off),
		indexLength: uint64(len(s.index)),
		firstChunk:  uint32(s.firstChunk),
		chunks:      uint32(s.chunks),
		columns:     uint32(w.ncol),
		indexCRC:    crc32c(s.index),
		version:     w.version(),
	}
	_, err := s.bw.Write(s.index)
	if err == nil {
		_, err = s.bw.Write(appendFooter(nil, ft))
	}
	if err == nil {
		err = s.bw.Flush()
	}
	if err == nil {
		err = w.hook("sync-segment")
	}
	if err == nil {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("chunkstore: write %s: %w", s.name, err)
	}
	size := s.off + int64(len(s.index)) + footerSize
	w.bytes.Add(size - s.off)
	w.segInfos = append(w.segInfos, SegmentInfo{Name: s.name, FirstChunk: s.firstChunk, Chunks: s.chunks, Bytes: size})
	w.indexes = append(w.indexes, s.index)
	return nil
}

func (w *Writer) hook(stage string) error {
	if w.failHook != nil {
		return w.failHook(stage)
	}
	return nil
}

// stopPipeline waits for the workers and the output goroutine to finish.
func (w *Writer) stopPipeline() {
	w.stop.Do(func() {
		close(w.order)
		close(w.jobs)
		w.wg.Wait()
		w.enc.close()
	})
}

// Close flushes the last partial chunk, writes the index, footer and
// manifest, fsyncs everything and renames the store into place. On failure
// the temporary directory is removed and an existing store at dir is left
// untouched. A second Close returns ErrClosed.
func (w *Writer) Close() error {
	if w.state != stateOpen {
		return ErrClosed
	}
	w.state = stateClosed
	err := w.finish()
	if err != nil {
		if w.seg != nil {
			w.seg.f.Close()
			w.seg = nil
		}
		if rerr := os.RemoveAll(w.tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("chunkstore: remove temporary %s: %w", w.tmp, rerr))
		}
	}
	if lerr := w.lock.Release(); lerr != nil {
		err = errors.Join(err, fmt.Errorf("chunkstore: %w", lerr))
	}
	return err
}

func (w *Writer) finish() error {
	if w.cur != nil && w.cur.rows > 0 && w.getErr() == nil {
		w.submit()
	}
	w.stopPipeline()
	if err := w.getErr(); err != nil {
		return err
	}
	if w.seg != nil {
		if err := w.finishSegment(); err != nil {
			return err
		}
	}
	m := w.manifest()
	b, err := encodeManifest(m)
	if err != nil {
		return err
	}
	if err := w.hook("manifest"); err != nil {
		return err
	}
	// WriteFile fsyncs the temporary directory after the rename.
	if err := fileutil.WriteFile(filepath.Join(w.tmp, ManifestName), 0o644, func(wr io.Writer) error {
		_, err := wr.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("chunkstore: %w", err)
	}
	if err := w.hook("install"); err != nil {
		return err
	}
	if err := w.install(); err != nil {
		return err
	}
	w.final = m
	return nil
}

// Manifest returns the manifest written by a successful Close (rows,
// statistics, StoreID…), or nil before Close or after a failure.
func (w *Writer) Manifest() *Manifest { return w.final }

// version is the format version the writer writes: FormatV3 with an
// encoding, FormatV2 with a weight column, else CurrentFormatVersion.
func (w *Writer) version() FormatVersion {
	if w.opt.Encoding != nil {
		return FormatV3
	}
	if w.opt.Weight != "" {
		return FormatV2
	}
	return CurrentFormatVersion
}

func (w *Writer) manifest() *Manifest {
	created := w.opt.Created
	if created.IsZero() {
		created = time.Now().UTC()
	}
	m := &Manifest{
		FormatVersion: int(w.version()),
		Rows:          w.rows,
		ChunkRows:     w.opt.ChunkRows,
		Chunks:        w.nchunks,
		Codec:         w.spec.name,
		Features:      make([]Column, len(w.features)),
		Targets:       make([]Column, len(w.targets)),
		Sources:       w.opt.Sources,
		InputColumns:  w.opt.InputColumns,
		Encoding:      w.opt.Encoding,
		Nulls:         w.opt.Nulls,
		Created:       created,
		Segments:      w.segInfos,
		StoreID:       storeID(w.indexes),
	}
	if m.Sources == nil {
		m.Sources = []SourceFile{}
	}
	if m.Segments == nil {
		m.Segments = []SegmentInfo{}
	}
	for j := range w.ncol {
		var c *Column
		var spec ColumnSpec
		if j < len(w.features) {
			c, spec = &m.Features[j], w.features[j]
		} else {
			c, spec = &m.Targets[j-len(w.features)], w.targets[j-len(w.features)]
		}
		c.Name, c.Type = spec.Name, spec.Type
		setColumn(c, &w.stats[j])
		if j >= len(w.features) {
			c.Labels = w.opt.Labels[spec.Name]
		}
	}
	if w.opt.Weight != "" {
		wc := m.Targets[len(m.Targets)-1]
		wc.Distinct = nil // weights are no class labels
		m.Targets, m.Weight = m.Targets[:len(m.Targets)-1], &wc
	}
	return m
}

// install moves the finished temporary directory to w.dir, without the
// marker that told it from a user's directory while it was temporary.
func (w *Writer) install() error {
	kind, err := classify(w.dir)
	if err != nil {
		return err
	}
	if err := fileutil.Unmark(w.tmp); err != nil {
		return fmt.Errorf("chunkstore: %w", err)
	}
	parent := filepath.Dir(w.dir)
	appeared := func() error {
		return fmt.Errorf("chunkstore: create %s: a store appeared at %s while this one was being written; not replacing it", w.dir, w.dir)
	}
	switch kind {
	case dirAbsent:
		if err := fileutil.RenameNoReplace(w.tmp, w.dir); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return appeared()
			}
			return fmt.Errorf("chunkstore: %w", err)
		}
	case dirEmpty:
		if err := os.Rename(w.tmp, w.dir); err != nil {
			// Some systems do not rename over an empty directory.
			if rerr := os.Remove(w.dir); rerr != nil {
				return fmt.Errorf("chunkstore: %w", err)
			}
			if err := os.Rename(w.tmp, w.dir); err != nil {
				return fmt.Errorf("chunkstore: %w", err)
			}
		}
	case dirStore:
		if w.kind != dirStore && !w.opt.Replace {
			return appeared()
		}
		old, err := replaceDir(w.tmp, w.dir)
		if err != nil {
			return err
		}
		if err := fileutil.SyncDir(parent); err != nil {
			return fmt.Errorf("chunkstore: %w", err)
		}
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("chunkstore: store installed at %s but removing the old one at %s failed: %w", w.dir, old, err)
		}
	}
	if err := fileutil.SyncDir(parent); err != nil {
		return fmt.Errorf("chunkstore: %w", err)
	}
	return nil
}

// exchangeDirs is fileutil.Exchange; tests replace it to exercise the
// fallback.
var exchangeDirs = fileutil.Exchange

// replaceDir puts directory src at dst, where dst is an existing directory,
// and returns where the old dst now is (to be removed by the caller). dst is
// never missing: it is swapped atomically where the system allows, else
// renamed aside and back on failure.
func replaceDir(src, dst string) (string, error) {
	if err := exchangeDirs(src, dst); err == nil {
		return src, nil
	}
	parent, base := filepath.Split(filepath.Clean(dst))
	old := filepath.Join(parent, fileutil.TempName(base+".old"))
	if err := os.Rename(dst, old); err != nil {
		return "", fmt.Errorf("chunkstore: move old store aside: %w", err)
	}
	if err := os.Rename(src, dst); err != nil {
		if rerr := os.Rename(old, dst); rerr != nil {
			return "", fmt.Errorf("chunkstore: install store: %w (and restoring the old store from %s failed: %v)", err, old, rerr)
		}
		return "", fmt.Errorf("chunkstore: install store: %w", err)
	}
	return old, nil
}

// Abort discards everything written: it stops the workers and removes the
// temporary directory. An existing store at dir is untouched. Abort after
// Close or Abort does nothing and returns nil, so `defer w.Abort()` is safe.
func (w *Writer) Abort() error {
	if w.state != stateOpen {
		return nil
	}
	w.state = stateAborted
	w.stopPipeline()
	var errs []error
	if w.seg != nil {
		w.seg.f.Close()
		w.seg = nil
	}
	if w.part {
		return w.removePart()
	}
	if err := os.RemoveAll(w.tmp); err != nil {
		errs = append(errs, fmt.Errorf("chunkstore: abort: %w", err))
	}
	if err := w.lock.Release(); err != nil {
		errs = append(errs, fmt.Errorf("chunkstore: abort: %w", err))
	}
	return errors.Join(errs...)
}
