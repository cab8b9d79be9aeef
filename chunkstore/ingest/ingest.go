package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// Config says what to ingest and how. A zero field means its default.
type Config struct {
	// Out is the store directory to create. Required; it must not exist,
	// unless Force.
	Out string `json:"out"`
	// Force lets the new store replace a store at Out.
	Force bool `json:"force,omitempty"`
	// Targets names the target columns, in order. Empty: a store without
	// targets.
	Targets []string `json:"targets"`
	// Features names the feature columns, in order. Empty: every numeric,
	// bool or string column of the first input, in its order, except the
	// targets, the Exclude columns and string columns named like a row
	// identifier. A string column (or a dictionary of strings) is a
	// categorical feature: one-hot features of its levels (featenc).
	Features []string `json:"features"`
	// Categorical names integer columns (or text columns of numbers) that
	// are categorical features, their levels the decimal digits, rather
	// than numbers. With Features given, each must be among them.
	Categorical []string `json:"categorical,omitempty"`
	// MaxLevels is the most one-hot levels a categorical column gets: the
	// most frequent ones; the others share one "(other)" feature. 0:
	// DefaultMaxLevels.
	MaxLevels int `json:"max_levels,omitempty"`
	// AboveMaxLevels is the encoding of a categorical column of more
	// levels than MaxLevels: "target" (the default) makes it one feature,
	// the mean of the target over the rows of the row's level, out of
	// fold (featenc.Target), when the store has one target, numeric or of
	// two classes; "onehot", or any other store, gives its MaxLevels most
	// frequent levels one-hot features and the rest "(other)".
	AboveMaxLevels string `json:"above_max_levels,omitempty"`
	// TimeFeatures lists cyclic features (featenc: "hour", "dow", "doy")
	// of every date and timestamp feature: each adds a sine and a cosine
	// of its phase beside the days since 1970-01-01 (featenc.Time). Date
	// and timestamp columns are then default features too. Empty: they
	// are stored as days only, and only when named in Features.
	TimeFeatures []string `json:"time_features,omitempty"`
	// Exclude names columns that are not features. Each must exist in the
	// first input.
	Exclude []string `json:"exclude"`
	// Weight names a numeric column of row weights, stored as the store's
	// weight column (chunkstore.Manifest.Weight; format version 2):
	// neither a feature nor a target. A weight must be finite and ≥ 0; a
	// negative one is a *ValueError naming the file, row and column (a
	// NULL, NaN or ±Inf one follows Nulls). "": no weights.
	Weight string `json:"weight,omitempty"`
	// Nulls says what a NULL, NaN or ±Inf in a chosen column does: "error"
	// (the default) stops with a *ValueError, "drop" skips the row, "mean"
	// stores in a feature the mean of the column's other values (computed
	// over the rows stored; InputColumn.Nulls counts the values filled) and
	// skips a row whose target is bad, as "drop" does.
	Nulls string `json:"nulls"`
	// ChunkRows is the number of rows per stored chunk. 0: chunkstore's
	// default, fewer for wide inputs so that a chunk of float64 holds at
	// most MaxChunkBytes (at least 1024 rows; see ChunkRowsFor).
	ChunkRows int `json:"chunk_rows"`
	// Codec is the store's chunk codec. "": chunkstore's default.
	Codec string `json:"codec"`
	// Workers bounds the goroutines that decode input and compress chunks.
	// 0: runtime.GOMAXPROCS(0).
	Workers int `json:"workers"`
	// NoHeader says that text files have no header row; their columns are
	// named c0, c1, … . Parquet files are not affected.
	NoHeader bool `json:"no_header"`
	// Columns names the columns of text files that have no header row
	// (implies NoHeader); it must list every column. Parquet files are not
	// affected.
	Columns []string `json:"columns"`
	// MaxLine is the longest text record read, in bytes: a line, or lines
	// joined by a quoted field. A longer one stops the ingest with a
	// *LineTooLongError naming the file and line. 0: DefaultMaxLine.
	MaxLine int `json:"max_line,omitempty"`
	// BatchRows is the number of rows read from an input at a time. 0:
	// about 8 MiB of float64 values, between 1024 and 65536 rows.
	BatchRows int `json:"batch_rows"`
	// Progress, if not nil, is called after each batch is written, from a
	// single goroutine. It must return quickly.
	Progress func(Progress) `json:"-"`
	// Remote, if not nil, reads the inputs named by URLs (see Remote).
	// A distributed ingest whose Out is a URL needs it too.
	Remote Remote `json:"-"`

	noDirect bool // tests: read every Parquet column through pqarrow
}

// Progress reports how far Run has got.
type Progress struct {
	Rows       int64  // rows written so far
	Dropped    int64  // rows dropped so far (Nulls == "drop")
	BytesIn    int64  // input bytes consumed so far (estimated within a file)
	BytesTotal int64  // size of all inputs on disk
	File       string // the file being written
	// Memory, in the first call only (before any row is read), is the
	// estimate of Run's peak memory; the caller may set a soft memory
	// limit from it (runtime/debug.SetMemoryLimit), as the CLI does.
	Memory    *Memory
	FileIndex int           // its index in Result.Files
	Files     int           // number of input files
	Elapsed   time.Duration // since Run started
}

// Result summarises a finished ingest.
type Result struct {
	Rows    int64 `json:"rows"`    // rows in the store
	Dropped int64 `json:"dropped"` // rows skipped for NULL, NaN or ±Inf
	// Filled counts the feature values that were NULL, NaN or ±Inf and
	// hold their column's mean (Nulls "mean"); InputColumn.Nulls has them
	// by column.
	Filled   int64    `json:"filled,omitempty"`
	Features []string `json:"features"`         // feature columns, in store order
	Targets  []string `json:"targets"`          // target columns, in store order
	Weight   string   `json:"weight,omitempty"` // the weight column, or ""
	Chunks   int      `json:"chunks"`           // chunks in the store
	// ChunkRows is the rows per chunk (the last may hold fewer).
	ChunkRows int `json:"chunk_rows"`
	// Memory is the estimate of the peak memory (see Progress.Memory).
	Memory   Memory   `json:"memory_estimate"`
	BytesIn  int64    `json:"bytes_in"` // size of the inputs on disk
	BytesOut int64    `json:"bytes_out"`
	Seconds  float64  `json:"seconds"`
	Files    []string `json:"files"` // the input files, in the order read
	// Skipped are the files of predictions written by falkon-ooc found in
	// the input folders or by a glob, which are not read (SkippedNote).
	Skipped []string `json:"skipped_predictions,omitempty"`
	// Columns says what ingest did with every column of the inputs, in
	// input order: feature, target, or skipped and why. The store's
	// manifest records the same list (chunkstore.Reader.InputColumns).
	Columns []chunkstore.InputColumn `json:"columns"`
}

// MaxChunkBytes bounds a chunk of float64 rows when Config.ChunkRows is 0:
// the store's writer holds up to Workers+2 chunks at once, so a wide input
// (10 000 columns) with chunkstore's default of 32 768 rows would need
// 2.6 GB per chunk.
const MaxChunkBytes = 32 << 20

// ChunkRowsFor returns the rows per chunk Run uses for cols columns when
// Config.ChunkRows is 0: chunkstore.DefaultChunkRows, or fewer so that a
// chunk holds at most MaxChunkBytes of float64, but at least 256.
func ChunkRowsFor(cols int) int {
	return min(chunkstore.DefaultChunkRows, max(256, MaxChunkBytes/(8*max(cols, 1))))
}

// batchRowsFor returns the rows of a read batch for cols columns when
// Config.BatchRows is 0: 1 MiB values (8 MiB of float64), at least 128
// and at most 65 536 rows.
func batchRowsFor(cols int) int {
	return min(max((1<<20)/max(cols, 1), 128), 65536)
}

// Run ingests the inputs into a new store at cfg.Out. Inputs are Parquet or
// delimited text files, directories (their data files, sorted by name) and
// glob patterns. See the package documentation for the rules.
func Run(ctx context.Context, inputs []string, cfg Config) (*Result, error) {
	return run(ctx, inputs, cfg, memory.DefaultAllocator)
}

// session is one Run.
type session struct {
	cfg      Config
	skipped  []string // prediction files left out by expandInputs
	mem      memory.Allocator
	files    []*fileInfo
	names    []string // chosen columns: features, then targets
	nfeat    int      // how many of names are features
	specs    []string // chunkstore type of each chosen column
	report   []chunkstore.InputColumn
	reportAt []int        // per chosen column: its index in report
	checks   []*autoCheck // per chosen column: nil, or the constant and identifier checks of a default feature
	labels   []*labelSet  // per chosen column: nil, or the labels of a string target
	// cats, per chosen column: nil, or the levels of a categorical
	// feature, counted over the files done so far (in file order).
	cats []*featenc.Counter
	// times, per chosen column: a date or timestamp feature encoded with
	// Config.TimeFeatures.
	times []bool
	// te, per chosen column: nil, or the sums of the target per level of
	// a categorical feature that may be target-encoded, merged over the
	// files done so far (in file order, as cats).
	te []*featenc.TargetSums
	// oof, per column of spec: nil, or the store's values of a
	// target-encoded column.
	oof []*featenc.OutOfFold
	// count (DryRun with Nulls "error"): bad values are counted per
	// column (counts, under countMu) instead of stopping the pass, and
	// their rows handled as Nulls "mean" handles them.
	count bool
	// dry: a dry run (inspect), which notes in the column report what
	// ingest would refuse before reading (checkStrays).
	dry bool
	// strays, in a dry run, holds the notes of checkStrays per chosen
	// column.
	strays  map[int]string
	countMu sync.Mutex
	counts  []chunkstore.BadCounts
	firstAt []badAt // per chosen column: where its first bad value is
	// spec and enc encode the categorical columns once the pass has
	// counted their levels; encCol maps a chosen column to its column in
	// spec, or -1.
	spec      *featenc.Spec
	enc       *featenc.Encoder
	encCol    []int
	batchRows int // rows per batch
	workers   int // goroutines per stage
	pool      chan *batch

	// Nulls "mean": the first pass stores 0 for a bad feature value and
	// marks its place with a 1 in a store of the same shape, mask; nulls
	// counts them per feature. install fills them with the mean.
	mask     sink        // the store of NULL places (DryRun: a counter)
	maskCols [][]float64 // per feature: a batch of zeros, 1s set while appending
	nulls    []int64
}

// sink takes the rows pump reads, in input order: a *chunkstore.Writer,
// or a counter when nothing is written (DryRun).
type sink interface {
	Append(cols [][]float64) error
}

// labelNote is the column report's note on a string target with n labels.
func labelNote(n int) string {
	return fmt.Sprintf("class labels: %d distinct, stored as codes 0–%d in sorted order", n, max(n-1, 0))
}

// batch is a block of rows of one file on its way to the store.
type batch struct {
	cols    [][]float64 // one per chosen column, len == n
	n       int
	dropped int
	bytesIn int64    // the share of the file's bytes this batch accounts for
	sums    []colSum // per chosen column with a check: the batch's summary
	// nullRows holds, with Nulls "mean", the rows of each feature whose
	// value was bad (0 in cols).
	nullRows [][]int
}

// checkOut refuses an existing cfg.Out unless cfg.Force.
func checkOut(cfg Config) error {
	if cfg.Force {
		return nil
	}
	if _, err := os.Lstat(cfg.Out); err == nil {
		return fmt.Errorf("%s already exists; remove it or choose another --out", cfg.Out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func run(ctx context.Context, inputs []string, cfg Config, mem memory.Allocator) (*Result, error) {
	var spooled map[string]string
	res, err := run1(ctx, inputs, cfg, mem, &spooled)
	if err != nil && len(spooled) > 0 {
		err = renameSpooled(err, spooled)
	}
	return res, err
}

// checkConfig checks cfg's fields that do not depend on the inputs and
// sets the defaults of Nulls and NoHeader.
func checkConfig(cfg *Config) error {
	switch cfg.Nulls {
	case "":
		cfg.Nulls = "error"
	case "error", "drop", "mean":
	default:
		return fmt.Errorf("nulls must be \"error\", \"drop\" or \"mean\", not %q", cfg.Nulls)
	}
	if cfg.ChunkRows < 0 || cfg.Workers < 0 || cfg.BatchRows < 0 || cfg.MaxLevels < 0 {
		return errors.New("chunk rows, workers, batch rows and max levels must not be negative")
	}
	if cfg.MaxLevels == 0 {
		cfg.MaxLevels = DefaultMaxLevels
	}
	switch cfg.AboveMaxLevels {
	case "":
		cfg.AboveMaxLevels = "target"
	case "target", "onehot":
	default:
		return fmt.Errorf("the encoding above --max-levels must be \"target\" or \"onehot\", not %q", cfg.AboveMaxLevels)
	}
	tf, err := featenc.ParseCyclic(cfg.TimeFeatures)
	if err != nil {
		return err
	}
	cfg.TimeFeatures = tf
	if len(cfg.Columns) > 0 {
		cfg.NoHeader = true
	}
	return nil
}

// newSession returns a session for cfg (checked by checkConfig).
func newSession(cfg Config, mem memory.Allocator) *session {
	s := &session{cfg: cfg, mem: mem, workers: cfg.Workers}
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	return s
}

// plan reads what ingest needs to know of the files at paths before
// reading their rows (format, columns, types, Hive keys), chooses the
// stored columns and builds the column report; named maps a spooled
// pipe's temporary file to the name the user knows it by.
func (s *session) plan(ctx context.Context, paths []string, named map[string]string) error {
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := s.inspect(p)
		if err != nil {
			return err
		}
		if name, ok := named[p]; ok {
			fi.name = name
		}
		s.files = append(s.files, fi)
	}
	if err := s.unifyPartitions(); err != nil {
		return err
	}
	if err := s.choose(); err != nil {
		return err
	}
	s.batchRows = s.cfg.BatchRows
	if s.batchRows == 0 {
		s.batchRows = batchRowsFor(len(s.names))
	}
	return nil
}

func run1(ctx context.Context, inputs []string, cfg Config, mem memory.Allocator, spooledOut *map[string]string) (*Result, error) {
	start := time.Now()
	if cfg.Out == "" {
		return nil, errors.New("no output store given")
	}
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	if err := checkOut(cfg); err != nil {
		return nil, err
	}
	s := newSession(cfg, mem)

	inputs, spooled, err := spoolPipes(inputs, cfg.Out)
	*spooledOut = spooled
	defer func() {
		for p := range spooled {
			os.Remove(p)
		}
	}()
	if err != nil {
		return nil, err
	}
	paths, skipped, err := expandInputs(inputs)
	if err != nil {
		return nil, err
	}
	s.skipped = skipped
	if err := s.plan(ctx, paths, spooled); err != nil {
		return nil, err
	}

	feats, targs := s.columnSpecs(nil)
	sources, total := s.sources()
	// The first pass writes every chosen column to a store under a
	// temporary name beside cfg.Out; columns found constant or
	// identifier-like during the pass are then left out by a copy (see
	// install), else the store is renamed into place.
	//
	// The lock on cfg.Out, held until the store is installed, makes a
	// second ingest to the same --out fail at once.
	out := filepath.Clean(cfg.Out)
	unlock, err := chunkstore.Lock(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkOut(cfg); err != nil { // again, under the lock
		return nil, err
	}
	tmpDir, err := fileutil.MkdirTemp(filepath.Dir(out), filepath.Base(out))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", cfg.Out, err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, filepath.Base(out))
	chunkRows := cfg.ChunkRows
	if chunkRows == 0 {
		chunkRows = ChunkRowsFor(len(s.names))
	}
	opt := chunkstore.Options{ChunkRows: chunkRows, Codec: cfg.Codec, Workers: cfg.Workers, Sources: sources, Weight: cfg.Weight}
	if cfg.Nulls == "mean" { // kept for predict: a model fitted on the store fills NULLs alike
		opt.Nulls = cfg.Nulls
	}
	est := s.memoryEstimate(chunkRows, s.inFlight())
	if cfg.Progress != nil {
		cfg.Progress(Progress{BytesTotal: total, Files: len(s.files), Memory: &est})
	}
	w, err := chunkstore.Create(tmp, feats, targs, opt)
	if err != nil {
		return nil, err
	}
	maskPath := tmp + ".nulls"
	var mask *chunkstore.Writer
	if cfg.Nulls == "mean" {
		if mask, err = s.createMask(maskPath, feats, opt); err != nil {
			return nil, errors.Join(err, w.Abort())
		}
	}
	rs := newRowSink(w, s.nfeat, cfg.Nulls == "mean")
	dropped, err := s.pump(ctx, rs, total, start)
	if err == nil {
		err = ctx.Err() // a cancellation that raced with the last batch
	}
	var keep []int
	if err == nil {
		keep, err = s.decide()
	}
	if err == nil && mask != nil {
		err = mask.Close()
		mask = nil
	}
	if err != nil {
		if mask != nil {
			err = errors.Join(err, mask.Abort())
		}
		return nil, errors.Join(err, w.Abort())
	}
	rows := w.Rows()
	w.SetInputColumns(s.report)
	remap := make([][]float64, len(s.names))
	for j, l := range s.labels {
		if l == nil {
			continue
		}
		var labels []string
		labels, remap[j] = l.finish()
		if err := w.SetLabels(s.names[j], labels); err != nil {
			return nil, errors.Join(err, w.Abort())
		}
		s.report[s.reportAt[j]].Note = labelNote(len(labels))
	}
	s.finishTargets(remap)
	if err := s.encode(keep); err != nil {
		return nil, errors.Join(err, w.Abort())
	}
	opt.Encoding = s.spec
	w.SetInputColumns(s.report)
	if err := w.Close(); err != nil {
		return nil, err
	}
	fill, err := s.fillValues(keep, rs.means)
	if err != nil {
		return nil, err
	}
	if err := s.install(ctx, tmp, keep, remap, fill, maskPath, opt); err != nil {
		return nil, err
	}

	return s.result(rows, dropped, keep, total, est, start)
}

// columnSpecs returns the store's features and targets (the weight last)
// among the chosen columns keep (nil: all of them).
func (s *session) columnSpecs(keep []int) (feats, targs []chunkstore.ColumnSpec) {
	for j, name := range s.names {
		if keep != nil && !slices.Contains(keep, j) {
			continue
		}
		spec := chunkstore.ColumnSpec{Name: name, Type: s.specs[j]}
		if j < s.nfeat {
			feats = append(feats, spec)
		} else {
			targs = append(targs, spec)
		}
	}
	return feats, targs
}

// sources returns the inputs as the manifest records them, and their
// total size.
func (s *session) sources() ([]chunkstore.SourceFile, int64) {
	var total int64
	sources := make([]chunkstore.SourceFile, len(s.files))
	for i, f := range s.files {
		abs, err := filepath.Abs(f.path)
		if err != nil || f.name != f.path || IsURL(f.path) {
			abs = f.name // a spooled pipe: its name, not the temporary file's
		}
		// A text file's row count is not known before it is read: -1.
		sources[i] = chunkstore.SourceFile{Path: abs, Size: f.size, ModTime: f.modTime, Rows: f.rows}
		total += f.size
	}
	return sources, total
}

// result returns the Result of an ingest whose store is in place at
// s.cfg.Out.
func (s *session) result(rows, dropped int64, keep []int, total int64, est Memory, start time.Time) (*Result, error) {
	r, err := chunkstore.Open(s.cfg.Out)
	if err != nil {
		return nil, fmt.Errorf("reopen the new store: %w", err)
	}
	chunks, chunkRows := r.NumChunks(), r.Manifest().ChunkRows
	if err := r.Close(); err != nil {
		return nil, err
	}
	bytesOut, err := dirSize(s.cfg.Out)
	if err != nil {
		return nil, err
	}
	return s.resultOf(rows, dropped, keep, total, est, start, chunks, chunkRows, bytesOut), nil
}

// resultOf returns the Result of an ingest whose store has chunks chunks
// of chunkRows rows and bytesOut bytes.
func (s *session) resultOf(rows, dropped int64, keep []int, total int64, est Memory, start time.Time, chunks, chunkRows int, bytesOut int64) *Result {
	res := &Result{
		Rows:     rows,
		Dropped:  dropped,
		Filled:   s.filled(keep),
		Features: []string{},
		Targets:  []string{},
		BytesIn:  total,
		Columns:  slices.Clone(s.report),
	}
	s.setColumns(res, keep)
	res.Chunks, res.ChunkRows, res.Memory, res.BytesOut = chunks, chunkRows, est, bytesOut
	for _, f := range s.files {
		res.Files = append(res.Files, f.name)
	}
	res.Skipped = s.skipped
	res.Seconds = time.Since(start).Seconds()
	return res
}

// inFlight is the number of files pump reads at once.
func (s *session) inFlight() int {
	return max(1, min(s.workers, len(s.files), maxFilesInFlight))
}

// pump reads the files, several at a time, and appends their batches to w
// in input order. It returns the number of rows dropped.
func (s *session) pump(ctx context.Context, w sink, total int64, start time.Time) (int64, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(rctx)

	// Files in flight: each holds up to queue+1 batches (8 MiB each by
	// default) and its readers' buffers, so memory stays bounded however
	// many workers there are; a file's columns are decoded in parallel
	// anyway.
	inFlight := s.inFlight()
	const queue = 2 // batches buffered per file
	s.pool = make(chan *batch, inFlight*(queue+2))
	chans := make([]chan *batch, len(s.files))
	for i := range chans {
		chans[i] = make(chan *batch, queue)
	}
	sem := make(chan struct{}, inFlight)
	g.Go(func() error {
		for i, f := range s.files {
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			g.Go(func() error {
				defer func() { <-sem }()
				defer close(chans[i])
				err := s.readFileSafe(gctx, f, chans[i])
				f.ok = err == nil // seen by the writer after the close
				return err
			})
		}
		return nil
	})

	var rows, dropped, bytesIn int64
	werr := func() error {
		for i, f := range s.files {
			var fileBytes int64
			fileFirst, fileRows := rows, int64(0)
			for {
				var b *batch
				var ok bool
				select {
				case b, ok = <-chans[i]:
				case <-gctx.Done():
					return gctx.Err()
				}
				if !ok {
					break
				}
				if b.n > 0 {
					cols := b.cols
					for j := range cols {
						cols[j] = cols[j][:b.n]
					}
					for j, c := range s.checks {
						if c != nil {
							vals := cols[j]
							if len(b.nullRows[j]) > 0 {
								vals = without(vals, b.nullRows[j]) // Nulls "mean": 0s that are not values
							}
							c.add(b.sums[j], vals)
						}
					}
					if err := w.Append(cols); err != nil {
						return err
					}
					if err := s.appendMask(b); err != nil {
						return err
					}
					s.sumTargets(f, b, fileRows)
					fileRows += int64(b.n)
				}
				rows += int64(b.n)
				dropped += int64(b.dropped)
				bytesIn += b.bytesIn
				fileBytes += b.bytesIn
				s.putBatch(b)
				if s.cfg.Progress != nil {
					s.cfg.Progress(Progress{Rows: rows, Dropped: dropped, BytesIn: bytesIn, BytesTotal: total,
						File: f.name, FileIndex: i, Files: len(s.files), Elapsed: time.Since(start)})
				}
			}
			if !f.ok {
				return errReader // the reader's error comes from g.Wait
			}
			s.mergeLevels(f, fileFirst)
			bytesIn += f.size - fileBytes
		}
		return nil
	}()
	if werr != nil {
		cancel()
	}
	gerr := g.Wait()
	switch {
	case gerr != nil && !errors.Is(gerr, context.Canceled):
		return 0, gerr // a reader's own error explains the writer's stop
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case werr != nil:
		return 0, werr
	case gerr != nil:
		return 0, gerr
	}
	if s.cfg.Progress != nil {
		s.cfg.Progress(Progress{Rows: rows, Dropped: dropped, BytesIn: bytesIn, BytesTotal: total,
			File: "", FileIndex: len(s.files), Files: len(s.files), Elapsed: time.Since(start)})
	}
	return dropped, nil
}

func (s *session) getBatch() *batch {
	select {
	case b := <-s.pool:
		b.n, b.dropped, b.bytesIn = 0, 0, 0
		for j := range b.nullRows {
			b.nullRows[j] = b.nullRows[j][:0]
		}
		return b
	default:
	}
	b := &batch{cols: make([][]float64, len(s.names)), sums: make([]colSum, len(s.names)), nullRows: make([][]int, len(s.names))}
	for j := range b.cols {
		b.cols[j] = make([]float64, s.batchRows)
	}
	return b
}

func (s *session) putBatch(b *batch) {
	for j := range b.cols {
		b.cols[j] = b.cols[j][:cap(b.cols[j])]
	}
	select {
	case s.pool <- b:
	default:
	}
}

// send hands b to the writer, or gives up when ctx is done.
func send(ctx context.Context, out chan<- *batch, b *batch) error {
	select {
	case out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxFilesInFlight bounds the files read at once.
const maxFilesInFlight = 4

// errReader stops the writer when a reader has failed.
var errReader = errors.New("reader failed")

// guard runs fn, turning a panic into an error: arrow-go panics on some
// malformed files (a fuzzed Parquet page header without its data-page
// header dereferences nil in serializedPageReader.Next), and a panic in a
// goroutine cannot be recovered by its parent.
func guard(fn func() error) func() error {
	return func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("internal error in the reader (malformed input?): %v", p)
			}
		}()
		return fn()
	}
}

// readFileSafe reads f, turning a panic in the Arrow readers into an error.
func (s *session) readFileSafe(ctx context.Context, f *fileInfo, out chan<- *batch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: internal error while reading: %v", f.path, p)
		}
	}()
	return s.readFile(ctx, f, out)
}

func (s *session) readFile(ctx context.Context, f *fileInfo, out chan<- *batch) error {
	var real, virt []int // chosen columns read from the file, and from its path
	for j, n := range s.names {
		if f.index[n] >= f.nreal {
			virt = append(virt, j)
		} else {
			real = append(real, j)
		}
	}
	if len(virt) > 0 {
		return s.readWithPartitions(ctx, f, out, real, virt)
	}
	if f.format == formatParquet {
		return s.readParquet(ctx, f, out)
	}
	return s.readText(ctx, f, out)
}

// readWithPartitions reads the chosen columns real of f through a session
// that knows only those, and adds the partition columns virt (constant in
// the file) to each batch.
func (s *session) readWithPartitions(ctx context.Context, f *fileInfo, out chan<- *batch, real, virt []int) error {
	if len(real) == 0 {
		return fmt.Errorf("%s: every chosen column is a partition key from the path; choose at least one column of the file", f.name)
	}
	sub := &session{cfg: s.cfg, mem: s.mem, batchRows: s.batchRows, workers: s.workers, pool: make(chan *batch, 4)}
	if wj := len(s.names) - 1; s.cfg.Weight != "" && slices.Contains(virt, wj) {
		// The weight is a key of the path: one value for the file,
		// checked here; the file's own columns carry none.
		sub.cfg.Weight = ""
		k := f.index[s.names[wj]] - f.nreal
		if v := f.part[k]; !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: the weight column %q is %s, from the path's partition key %s=%s: weights must be finite and ≥ 0",
				f.name, s.cfg.Weight, f.partText[k], s.cfg.Weight, f.partText[k])
		}
	}
	for _, j := range real {
		if j < s.nfeat {
			sub.nfeat++ // real keeps the order: features, then targets
		}
		sub.names = append(sub.names, s.names[j])
		sub.checks = append(sub.checks, s.checks[j])
		sub.labels = append(sub.labels, s.labels[j])
		sub.cats = append(sub.cats, s.cats[j])
	}
	subOut := make(chan *batch, 1)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(subOut)
		if f.format == formatParquet {
			return sub.readParquet(gctx, f, subOut)
		}
		return sub.readText(gctx, f, subOut)
	})
	g.Go(func() error {
		for b := range subOut {
			full := s.getBatch()
			full.n, full.dropped, full.bytesIn = b.n, b.dropped, b.bytesIn
			for k, j := range real {
				full.cols[j], b.cols[k] = b.cols[k][:cap(b.cols[k])], full.cols[j]
				full.sums[j] = b.sums[k]
				full.nullRows[j], b.nullRows[k] = b.nullRows[k], full.nullRows[j][:0]
			}
			sub.putBatch(b)
			for _, j := range virt {
				v := f.part[f.index[s.names[j]]-f.nreal]
				col := full.cols[j][:full.n]
				for i := range col {
					col[i] = v
				}
				if s.checks[j] != nil {
					full.sums[j] = colSum{}
					if full.n > 0 {
						full.sums[j] = summarise(col)
					}
				}
			}
			if err := send(gctx, out, full); err != nil {
				for range subOut {
				}
				return err
			}
		}
		return nil
	})
	return g.Wait()
}

// finish applies the Nulls policy to a batch whose first row is row first
// (0-based) of its file: an error for the earliest bad value, or the bad
// rows removed. A negative weight is refused first (in a row the Nulls
// policy would drop, too).
func (s *session) finish(f *fileInfo, b *batch, first int64, bads []bad) error {
	if err := s.checkWeights(f, b, first); err != nil {
		return err
	}
	if err := s.dropBad(f, b, first, bads); err != nil {
		return err
	}
	for j, c := range s.checks {
		if c != nil {
			b.sums[j] = colSum{}
			vals := b.cols[j][:b.n]
			if len(b.nullRows[j]) > 0 {
				vals = without(vals, b.nullRows[j]) // Nulls "mean": 0s that are not values
			}
			if len(vals) > 0 {
				b.sums[j] = summarise(vals)
			}
		}
	}
	return nil
}

// setColumns sets res's Features, Targets and Weight to the stored columns
// keep.
func (s *session) setColumns(res *Result, keep []int) {
	for _, j := range keep {
		switch {
		case j < s.nfeat && s.encCol != nil && s.encCol[j] >= 0:
			res.Features = append(res.Features, s.spec.Columns[s.encCol[j]].Features...)
		case j < s.nfeat:
			res.Features = append(res.Features, s.names[j])
		case s.isWeight(j):
			res.Weight = s.names[j]
		default:
			res.Targets = append(res.Targets, s.names[j])
		}
	}
}

// isWeight reports whether stored column j is the weight column (the last
// one, after the targets).
func (s *session) isWeight(j int) bool { return s.cfg.Weight != "" && j == len(s.names)-1 }

// checkWeights returns a *ValueError for the first negative weight of a
// batch whose first row is row first (0-based) of its file.
func (s *session) checkWeights(f *fileInfo, b *batch, first int64) error {
	if s.cfg.Weight == "" {
		return nil
	}
	for r, v := range b.cols[len(s.names)-1][:b.n] {
		if v < 0 {
			return &ValueError{File: f.path, Column: s.cfg.Weight, Row: first + int64(r) + 1,
				Value: fmt.Sprintf("%v, a negative weight (weights must be ≥ 0)", v), Header: f.format == formatText && f.header}
		}
	}
	return nil
}

// dropBad applies the Nulls policy to a batch (see finish).
func (s *session) dropBad(f *fileInfo, b *batch, first int64, bads []bad) error {
	any := false
	for j := range bads {
		if len(bads[j].rows) > 0 {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	if s.count {
		s.countBad(f, first, bads)
		return s.markBad(f, b, bads)
	}
	if s.cfg.Nulls == "mean" {
		return s.markBad(f, b, bads)
	}
	if s.cfg.Nulls != "drop" {
		col, row := -1, 0
		for j := range bads {
			if len(bads[j].rows) > 0 && (col < 0 || bads[j].rows[0] < row) {
				col, row = j, bads[j].rows[0]
			}
		}
		return &ValueError{File: f.path, Column: s.names[col], Row: first + int64(row) + 1,
			Value: bads[col].first, Header: f.format == formatText && f.header}
	}
	drop := make([]bool, b.n)
	for j := range bads {
		for _, r := range bads[j].rows {
			drop[r] = true
		}
	}
	s.uncount(f, b, drop)
	for j, col := range b.cols {
		k := 0
		for i := 0; i < b.n; i++ {
			if !drop[i] {
				col[k] = col[i]
				k++
			}
		}
		b.cols[j] = col
		if j == len(b.cols)-1 {
			b.dropped = b.n - k
		}
	}
	b.n -= b.dropped
	return nil
}

// dirSize adds up the sizes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
