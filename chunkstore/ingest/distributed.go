package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// A distributed ingest runs Run's work as independent tasks that a runner
// (falkon-ooc-beam ingest) spreads over processes and machines sharing a
// filesystem, in four steps:
//
//  1. NewPlan, on the driver: the inputs are listed and inspected, the
//     columns chosen and the column report begun, exactly as Run does; the
//     Plan (JSON) is what every task needs to know.
//  2. Plan.ReadFile(i), one task per input file: the file is read by Run's
//     readers, its rows written to a temporary store of its own (a
//     "piece"), and a FileSummary returned: its rows, what the constant
//     and identifier checks need, its class labels, its first row.
//  3. Plan.Layout, on the driver: the summaries are merged in file order
//     by Run's code (the checks, the labels, the decision on the columns),
//     which gives the store's rows, columns and labels.
//  4. Plan.WritePart(k), one task per range of the store's chunks: the
//     range's rows are read back from the pieces and written as segment k
//     (chunkstore.CreatePart); then Plan.Finish, on the driver, merges the
//     parts' statistics in chunk order, writes the manifest last
//     (chunkstore.Assemble) and moves the store into place.
//
// The store has the same chunks, bit for bit, and the same manifest as
// Run's, except for the segments (one per chunk range instead of one per
// gigabyte, so the blocks' offsets and the store ID over them differ) and
// the creation time. Standard input and --nulls mean are not supported.
//
// Categorical features are encoded as Run encodes them: each ReadFile
// stores the raw codes of its levels in its piece and returns the file's
// featenc.Counter in its summary; Layout merges the counters in file
// order, as Run merges them, and chooses the levels (Layout.Encoding);
// WritePart expands the codes, and time columns, into their features. A
// column target-encoded above Config.MaxLevels is summed per file
// (FileSummary.Targets, by row of the file), merged by Layout in file
// order with the folds rotated by the file's offset, as Run merges them,
// and WritePart writes each row's out-of-fold value from
// Layout.TargetFolds.

// Plan is a distributed ingest as every task sees it. Its fields are
// exported for encoding/json only.
type Plan struct {
	Config Config     `json:"config"`
	Files  []PlanFile `json:"files"`
	// Skipped are the files of predictions written by falkon-ooc that
	// the input folders or globs held, which are not read (SkippedNote).
	Skipped []string `json:"skipped_predictions,omitempty"`
	// The chosen columns (features, then targets, then the weight), their
	// chunkstore types, the constant and identifier checks of the default
	// features, which are class labels, and which partition keys are
	// numbers.
	Names       []string     `json:"names"`
	NFeat       int          `json:"nfeat"`
	Specs       []string     `json:"specs"`
	Checks      []*CheckSpec `json:"checks"`
	Labeled     []bool       `json:"labeled"`
	PartNumeric []bool       `json:"part_numeric"`
	// Categorical marks the categorical features (levels counted, then
	// one-hot); Time the date and timestamp features with time features.
	Categorical []bool `json:"categorical,omitempty"`
	Time        []bool `json:"time,omitempty"`
	// The column report before the checks, and each chosen column's place
	// in it.
	Report   []chunkstore.InputColumn `json:"report"`
	ReportAt []int                    `json:"report_at"`
	// BatchRows and ChunkRows are Run's for these columns.
	BatchRows int `json:"batch_rows"`
	ChunkRows int `json:"chunk_rows"`
	// Work is the directory, beside Config.Out, that holds the pieces and
	// the store being built: every task must reach it by this path. It is
	// "" when Config.Out is a URL: the runner keeps the pieces and the
	// store's files (ReadFileTo, WritePartFrom, FinishTo).
	Work string `json:"work"`

	unlock func() error // the driver's lock on Config.Out
	start  time.Time
}

// PlanFile is one input of a Plan.
type PlanFile struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	Rows    int64     `json:"rows"` // Parquet: from the footer; text: -1
}

// CheckSpec says how a default feature is checked (see autoCheck).
type CheckSpec struct {
	Named   bool `json:"named"`
	Boolean bool `json:"boolean"`
}

// FileSummary is what ReadFile tells the driver about one input.
type FileSummary struct {
	File    int   `json:"file"`
	Rows    int64 `json:"rows"`
	Dropped int64 `json:"dropped"`
	// Checks holds, per chosen column with a check, the file's summary.
	Checks []*CheckSummary `json:"checks"`
	// Labels holds, per column of class labels, the file's labels in the
	// order of the codes its piece stores.
	Labels [][]string `json:"labels"`
	// First is the file's first stored row (label codes of the piece);
	// nil when it has no rows.
	First []float64 `json:"first"`
	// Levels holds, per categorical feature (Plan.Categorical), the
	// file's levels as its counter counted them.
	Levels []*featenc.Counter `json:"levels,omitempty"`
	// Targets holds, per categorical feature that may be target-encoded,
	// the file's sums of the target per level, by row of the file.
	Targets []*featenc.TargetSums `json:"targets,omitempty"`
	// Err is the error that stopped the file's reading, as Run reports it;
	// ValueErr and ParseErr hold it when it is one of those types.
	Err      string      `json:"err,omitempty"`
	ValueErr *ValueError `json:"value_error,omitempty"`
	ParseErr *ParseError `json:"parse_error,omitempty"`
}

// err returns the file's error, of its type when Run's is a *ValueError
// or a *ParseError.
func (fs *FileSummary) err() error {
	switch {
	case fs.ValueErr != nil && fs.ValueErr.Error() == fs.Err:
		return fs.ValueErr
	case fs.ParseErr != nil && fs.ParseErr.Error() == fs.Err:
		return fs.ParseErr
	}
	return errors.New(fs.Err)
}

// CheckSummary is one column of one file as the constant and identifier
// checks see it: the summary of its values and, for a column named like
// an identifier, its values in order, up to the first repeated one (or
// idExactLimit of them, or the first that is not an integer).
type CheckSummary struct {
	N        int64     `json:"n"`
	First    float64   `json:"first"`
	Last     float64   `json:"last"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Inc      bool      `json:"inc"`
	Dec      bool      `json:"dec"`
	Integral bool      `json:"integral"`
	Values   []float64 `json:"values,omitempty"`
}

// Layout is the store as the merged summaries decide it: what WritePart
// and Finish need.
type Layout struct {
	Keep    []int   `json:"keep"` // the chosen columns stored
	Rows    int64   `json:"rows"`
	Dropped int64   `json:"dropped"`
	Chunks  int     `json:"chunks"`
	Offsets []int64 `json:"offsets"` // each file's first row in the store
	// FileRows holds each file's rows.
	FileRows []int64 `json:"file_rows"`
	// Remap holds, per file and chosen column of class labels, the final
	// code of each of the piece's codes (nil: the same).
	Remap  [][][]float64       `json:"remap"`
	Labels map[string][]string `json:"labels"`
	// Shift is the store's first row (the kept columns, final codes): the
	// statistics of every part are taken relative to it.
	Shift  []float64                `json:"shift"`
	Report []chunkstore.InputColumn `json:"report"`
	// Encoding is the encoding of the categorical and time features, as
	// Run chooses it from the merged levels (nil: none).
	Encoding *featenc.Spec `json:"encoding,omitempty"`
	// TargetFolds holds, per target-encoded column (by source column),
	// the values its stored rows get, out of fold.
	TargetFolds map[string]*featenc.OutOfFold `json:"target_folds,omitempty"`
}

// NewPlan checks cfg and the inputs, inspects them and chooses the
// columns as Run does (with the same errors), takes the lock on cfg.Out
// and makes the work directory beside it. Close releases them.
//
// When cfg.Out is a URL (object storage: cfg.Remote must be set), NewPlan
// neither checks nor locks it and makes no work directory: the runner
// checks whether a store is there, keeps the pieces where its tasks reach
// them, and writes the store's files itself (ReadFileTo, WritePartFrom,
// FinishTo).
func NewPlan(ctx context.Context, inputs []string, cfg Config) (*Plan, error) {
	start := time.Now()
	if cfg.Out == "" {
		return nil, errors.New("no output store given")
	}
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	if cfg.Nulls == "mean" {
		return nil, errors.New("--nulls mean is not supported by a distributed ingest; use --nulls drop or error, or falkon-ooc ingest")
	}
	for _, in := range inputs {
		if in == "-" {
			return nil, errors.New("standard input (-) cannot be read by a distributed ingest; give files")
		}
	}
	remoteOut := IsURL(cfg.Out)
	if remoteOut && cfg.Remote == nil {
		return nil, fmt.Errorf("%s: a store at a URL is written only by an ingest that reaches object storage (falkon-ooc-beam ingest)", cfg.Out)
	}
	if !remoteOut {
		if err := checkOut(cfg); err != nil {
			return nil, err
		}
	}
	s := newSession(cfg, memory.DefaultAllocator)
	paths, skipped, err := expandInputs(inputs)
	if err != nil {
		return nil, err
	}
	if err := s.plan(ctx, paths, nil); err != nil {
		return nil, err
	}
	p := &Plan{Config: cfg, Names: s.names, NFeat: s.nfeat, Specs: s.specs, Report: s.report, ReportAt: s.reportAt,
		BatchRows: s.batchRows, ChunkRows: cfg.ChunkRows, Skipped: skipped, start: start}
	p.Config.Progress = nil
	if p.ChunkRows == 0 {
		p.ChunkRows = ChunkRowsFor(len(s.names))
	}
	for _, f := range s.files {
		p.Files = append(p.Files, PlanFile{Path: f.path, Size: f.size, ModTime: f.modTime, Rows: f.rows})
	}
	for j := range s.names {
		var cs *CheckSpec
		if c := s.checks[j]; c != nil {
			cs = &CheckSpec{Named: c.named, Boolean: c.boolean}
		}
		p.Checks = append(p.Checks, cs)
		p.Labeled = append(p.Labeled, s.labels[j] != nil)
		p.Categorical = append(p.Categorical, s.cats[j] != nil)
		p.Time = append(p.Time, s.times[j])
	}
	first := s.files[0]
	for k := first.nreal; k < len(first.names); k++ {
		p.PartNumeric = append(p.PartNumeric, first.types[k].class == classNumeric)
	}
	if remoteOut {
		return p, nil
	}
	out := filepath.Clean(cfg.Out)
	if p.unlock, err = chunkstore.Lock(out); err != nil {
		return nil, err
	}
	if err := checkOut(cfg); err != nil { // again, under the lock
		p.unlock()
		return nil, err
	}
	if p.Work, err = fileutil.MkdirTemp(filepath.Dir(out), filepath.Base(out)); err != nil {
		p.unlock()
		return nil, fmt.Errorf("create %s: %w", cfg.Out, err)
	}
	for _, d := range []string{p.pieceDir(), p.storeDir()} {
		if err := os.Mkdir(d, 0o777); err != nil {
			p.Close()
			return nil, fmt.Errorf("create %s: %w", cfg.Out, err)
		}
	}
	return p, nil
}

// Close removes the work directory and releases the lock on Config.Out.
func (p *Plan) Close() error {
	var err error
	if p.Work != "" {
		err = os.RemoveAll(p.Work)
	}
	if p.unlock != nil {
		err = errors.Join(err, p.unlock())
		p.unlock = nil
	}
	return err
}

func (p *Plan) pieceDir() string { return filepath.Join(p.Work, "pieces") }
func (p *Plan) storeDir() string {
	return filepath.Join(p.Work, filepath.Base(filepath.Clean(p.Config.Out)))
}
func (p *Plan) piece(i int) string {
	return filepath.Join(p.pieceDir(), fmt.Sprintf("piece-%06d", i))
}

// session rebuilds the driver's session from the plan: the chosen
// columns, their checks and label sets (empty), without the files.
func (p *Plan) session() *session {
	s := newSession(p.Config, memory.DefaultAllocator)
	s.names, s.nfeat, s.specs, s.batchRows = p.Names, p.NFeat, p.Specs, p.BatchRows
	s.report, s.reportAt = slices.Clone(p.Report), p.ReportAt
	s.checks = make([]*autoCheck, len(p.Names))
	s.labels = make([]*labelSet, len(p.Names))
	s.cats = make([]*featenc.Counter, len(p.Names))
	s.times = make([]bool, len(p.Names))
	for j, n := range p.Names {
		if c := p.Checks[j]; c != nil {
			s.checks[j] = &autoCheck{name: n, named: c.Named, boolean: c.Boolean}
		}
		if p.Labeled[j] {
			s.labels[j] = newLabelSet(n)
		}
		if j < len(p.Categorical) && p.Categorical[j] {
			s.cats[j] = featenc.NewCounter(0)
		}
		s.times[j] = j < len(p.Time) && p.Time[j]
	}
	s.initTargets()
	return s
}

// encodedSession is session with lay's encoding of the features.
func (p *Plan) encodedSession(lay *Layout) (*session, error) {
	s := p.session()
	if err := s.useEncoding(lay.Encoding, lay.TargetFolds, lay.Keep); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadFile reads input i into its piece and summarises it (a task of step
// 2). An error in the data (the file's, as Run reports it) is returned in
// FileSummary.Err; the error result is for failures of the task itself.
func (p *Plan) ReadFile(ctx context.Context, i int) (*FileSummary, error) {
	return p.ReadFileTo(ctx, i, p.piece(i))
}

// ReadFileTo is ReadFile that writes the piece to the directory piece, a
// path of this machine that must not exist (a runner whose pieces live
// elsewhere, such as object storage, copies it there).
func (p *Plan) ReadFileTo(ctx context.Context, i int, piece string) (*FileSummary, error) {
	if i < 0 || i >= len(p.Files) {
		return nil, fmt.Errorf("ingest: file %d of %d", i, len(p.Files))
	}
	sum := &FileSummary{File: i}
	err := p.readFile(ctx, i, piece, sum)
	if err != nil && ctx.Err() == nil {
		os.RemoveAll(piece)
		fs := &FileSummary{File: i, Err: err.Error()}
		_ = errors.As(err, &fs.ValueErr)
		_ = errors.As(err, &fs.ParseErr)
		return fs, nil
	}
	return sum, err
}

func (p *Plan) readFile(ctx context.Context, i int, piece string, sum *FileSummary) error {
	s := p.session()
	var specs []chunkstore.ColumnSpec
	for _, n := range s.names {
		specs = append(specs, chunkstore.ColumnSpec{Name: n, Type: "float64"})
	}
	w, err := chunkstore.Create(piece, specs[:s.nfeat], specs[s.nfeat:],
		chunkstore.Options{ChunkRows: p.ChunkRows, Codec: "s2", Workers: s.workers})
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := p.read(ctx, i, s, w, sum); err != nil {
		return err
	}
	return w.Close()
}

// read reads file i with the session s (the plan's), appending its rows
// to w (nil: nowhere) and summarising it into sum.
func (p *Plan) read(ctx context.Context, i int, s *session, w *chunkstore.Writer, sum *FileSummary) error {
	pf := p.Files[i]
	f := &fileInfo{path: pf.Path, size: pf.Size, modTime: pf.ModTime}
	var err error
	if f.remote, err = s.remoteFor(f.path); err != nil {
		return err
	}
	if f.format, err = sniffFormat(f); err != nil {
		return err
	}
	if err := s.inspectFile(f); err != nil {
		return err
	}
	// As the driver's unifyPartitions and choose left the file's types.
	if got := len(f.names) - f.nreal; got != len(p.PartNumeric) {
		return fmt.Errorf("%s: %d partition keys in its path, the plan has %d", f.name, got, len(p.PartNumeric))
	}
	for k, num := range p.PartNumeric {
		if !num {
			f.types[f.nreal+k] = partText
		}
	}
	for j, n := range s.names {
		i, ok := f.index[n]
		if !ok {
			return fmt.Errorf("%s: no column %q; its columns are: %s", f.path, clip(n), listNames(f.names))
		}
		if s.labels[j] != nil && f.types[i].class == classString {
			f.types[i].labels = s.labels[j]
		}
		if s.cats[j] != nil {
			f.types[i].cat = newCatCoder(n)
		}
	}
	// The file's own checks: summaries only (named columns record their
	// values here instead, in order).
	checks := make([]*autoCheck, len(s.names))
	type recorder struct {
		vals []float64
		seen map[float64]struct{}
		done bool
	}
	rec := make([]*recorder, len(s.names))
	for j, c := range s.checks {
		if c != nil {
			checks[j] = &autoCheck{name: c.name}
			if c.named {
				rec[j] = &recorder{seen: map[float64]struct{}{}}
			}
		}
	}
	s.files = []*fileInfo{f}
	s.pool = make(chan *batch, 4)
	ch := make(chan *batch, 2)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rerr := make(chan error, 1)
	go func() {
		defer close(ch)
		rerr <- s.readFileSafe(rctx, f, ch)
	}()
	var werr error
	for b := range ch {
		if werr != nil || b.n == 0 {
			sum.Dropped += int64(b.dropped)
			continue
		}
		cols := b.cols
		for j := range cols {
			cols[j] = cols[j][:b.n]
		}
		if sum.First == nil {
			for j := range cols {
				sum.First = append(sum.First, cols[j][0])
			}
		}
		for j, c := range checks {
			if c == nil {
				continue
			}
			c.add(b.sums[j], cols[j])
			if r := rec[j]; r != nil && !r.done {
				for _, v := range cols[j] {
					if len(r.vals) == idExactLimit || v != math.Trunc(v) {
						r.done = true
						break
					}
					r.vals = append(r.vals, v)
					if _, dup := r.seen[v]; dup {
						r.done = true
						break
					}
					r.seen[v] = struct{}{}
				}
			}
		}
		if w != nil {
			if werr = w.Append(cols); werr != nil {
				cancel()
			}
		}
		s.sumTargets(f, b, sum.Rows)
		sum.Rows += int64(b.n)
		sum.Dropped += int64(b.dropped)
		s.putBatch(b)
	}
	if err := <-rerr; err != nil && (werr == nil || !errors.Is(err, context.Canceled)) {
		return err
	}
	if werr != nil {
		return werr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for j, c := range checks {
		if c == nil {
			continue
		}
		cs := &CheckSummary{N: c.n, First: c.first, Last: c.last, Min: c.min, Max: c.max, Inc: c.inc, Dec: c.dec, Integral: c.integral}
		if rec[j] != nil {
			cs.Values = rec[j].vals
		}
		sum.Checks = append(sum.Checks, cs)
	}
	for _, l := range s.labels {
		if l != nil {
			sum.Labels = append(sum.Labels, slices.Clone(l.names))
		}
	}
	for j, c := range s.cats {
		if c != nil {
			sum.Levels = append(sum.Levels, f.types[f.index[s.names[j]]].cat.counter)
		}
	}
	for j, t := range s.te {
		if t != nil {
			sums := f.types[f.index[s.names[j]]].cat.sums
			if sums == nil { // no rows
				sums = featenc.NewTargetSums(0)
			}
			sum.Targets = append(sum.Targets, sums)
		}
	}
	return nil
}

// labelError returns the error Run gives when file i brings the labels of
// a column beyond chunkstore.MaxLabels, before holds the labels of the
// files before it: it reads the file again, here, with Run's reader and
// label sets that start from before, which fails where Run's does.
func (p *Plan) labelError(ctx context.Context, i int, before []*labelSet, err error) error {
	s := p.session()
	s.labels = before
	if rerr := p.read(ctx, i, s, nil, &FileSummary{}); rerr != nil {
		return rerr
	}
	return fmt.Errorf("%s: %w", p.Files[i].Path, err)
}

// Layout merges the files' summaries, in file order, as Run merges its
// batches: the first file with an error gives the error; the checks decide
// the stored columns and the labels their codes. The summaries must be
// ReadFile's, one per file, in any order.
func (p *Plan) Layout(ctx context.Context, sums []*FileSummary) (*Layout, error) {
	if len(sums) != len(p.Files) {
		return nil, fmt.Errorf("ingest: %d file summaries for %d files", len(sums), len(p.Files))
	}
	byFile := make([]*FileSummary, len(p.Files))
	for _, fs := range sums {
		if fs == nil || fs.File < 0 || fs.File >= len(p.Files) || byFile[fs.File] != nil {
			return nil, errors.New("ingest: the file summaries are not one per file")
		}
		byFile[fs.File] = fs
	}
	for _, fs := range byFile {
		if fs.Err != "" {
			return nil, fs.err()
		}
	}
	s := p.session()
	nchecks, nlabels, ncats, ntargets := 0, 0, 0, 0
	for j := range p.Names {
		if s.te[j] != nil {
			ntargets++
		}
		if s.checks[j] != nil {
			nchecks++
		}
		if s.labels[j] != nil {
			nlabels++
		}
		if s.cats[j] != nil {
			ncats++
		}
	}
	lay := &Layout{Remap: make([][][]float64, len(p.Files))}
	firstCode := make([][][]int, len(p.Files)) // per file, label column: piece code -> first-pass code
	var first []float64
	firstFile := -1
	for i, fs := range byFile {
		if len(fs.Checks) != nchecks || len(fs.Labels) != nlabels || len(fs.Levels) != ncats || slices.Contains(fs.Levels, nil) ||
			len(fs.Targets) != ntargets || slices.Contains(fs.Targets, nil) ||
			(fs.Rows > 0) != (len(fs.First) == len(p.Names)) {
			return nil, fmt.Errorf("ingest: the summary of %s does not fit the plan", p.Files[i].Path)
		}
		lay.Offsets = append(lay.Offsets, lay.Rows)
		lay.FileRows = append(lay.FileRows, fs.Rows)
		lay.Rows += fs.Rows
		lay.Dropped += fs.Dropped
		if fs.Rows > 0 && firstFile < 0 {
			first, firstFile = fs.First, i
		}
		k := 0
		for _, c := range s.checks {
			if c == nil {
				continue
			}
			cs := fs.Checks[k]
			k++
			c.add(colSum{n: int(cs.N), first: cs.First, last: cs.Last, min: cs.Min, max: cs.Max, inc: cs.Inc, dec: cs.Dec, integral: cs.Integral}, cs.Values)
		}
		k = 0
		for _, total := range s.cats { // in file order, as Run's mergeLevels
			if total != nil {
				total.Merge(fs.Levels[k])
				k++
			}
		}
		k = 0
		firstCode[i] = make([][]int, len(p.Names))
		before := make([]*labelSet, len(p.Names))
		for j, l := range s.labels {
			if l != nil {
				before[j] = &labelSet{column: l.column, codes: maps.Clone(l.codes), names: slices.Clone(l.names)}
			}
		}
		for j, l := range s.labels {
			if l == nil {
				continue
			}
			for _, name := range fs.Labels[k] {
				c, err := l.code(name)
				if err != nil {
					return nil, p.labelError(ctx, i, before, err)
				}
				firstCode[i][j] = append(firstCode[i][j], c)
			}
			k++
		}
	}
	keep, err := s.decide()
	if err != nil {
		return nil, err
	}
	lay.Keep = keep
	lay.Labels = map[string][]string{}
	final := make([][]float64, len(p.Names)) // first-pass code -> final code
	for j, l := range s.labels {
		if l == nil {
			continue
		}
		var labels []string
		labels, final[j] = l.finish()
		lay.Labels[s.names[j]] = labels
		s.report[s.reportAt[j]].Note = labelNote(len(labels))
	}
	// The sums of the target, in file order, each file's of the final
	// codes (see finishTargets).
	for i, fs := range byFile {
		k := 0
		for _, total := range s.te {
			if total == nil {
				continue
			}
			sums := fs.Targets[k]
			k++
			if t := s.nfeat; s.labels[t] != nil && len(firstCode[i][t]) > 0 {
				code := firstCode[i][t][0] // piece code 0, as the first pass would code it
				if f := final[t]; f != nil {
					code = int(f[code])
				}
				if code != 1 {
					sums.Complement()
				}
			}
			total.Merge(sums, lay.Offsets[i])
		}
	}
	if err := s.encode(keep); err != nil {
		return nil, err
	}
	lay.Encoding = s.spec
	lay.TargetFolds = s.targetFolds()
	for i := range p.Files {
		lay.Remap[i] = make([][]float64, len(p.Names))
		for j, codes := range firstCode[i] {
			if s.labels[j] == nil {
				continue
			}
			m := make([]float64, len(codes))
			identity := true
			for c, fc := range codes {
				m[c] = float64(fc)
				if final[j] != nil {
					m[c] = final[j][fc]
				}
				identity = identity && m[c] == float64(c)
			}
			if !identity {
				lay.Remap[i][j] = m
			}
		}
	}
	if firstFile >= 0 {
		for _, j := range keep {
			v := first[j]
			if m := lay.Remap[firstFile][j]; m != nil {
				v = m[int(v)]
			}
			if c := s.encCol[j]; j < s.nfeat && c >= 0 {
				// The first row's features, as WritePart expands it.
				dst := make([][]float64, s.enc.Width(c))
				for q := range dst {
					dst[q] = make([]float64, 1)
				}
				s.expandStored(c, []float64{v}, 0, dst)
				for _, d := range dst {
					lay.Shift = append(lay.Shift, d[0])
				}
				continue
			}
			lay.Shift = append(lay.Shift, v)
		}
	} else {
		feats, targs := s.storedSpecs(keep)
		lay.Shift = make([]float64, len(feats)+len(targs))
	}
	lay.Chunks = int((lay.Rows + int64(p.ChunkRows) - 1) / int64(p.ChunkRows))
	lay.Report = s.report
	return lay, nil
}

// partBounds returns the chunks [lo, hi) of part k out of parts over n
// chunks.
func partBounds(k, parts, n int) (lo, hi int) {
	return k * n / parts, (k + 1) * n / parts
}

// options returns the store's chunkstore options and columns for lay.
func (p *Plan) options(s *session, lay *Layout) (feats, targs []chunkstore.ColumnSpec, opt chunkstore.Options) {
	feats, targs = s.storedSpecs(lay.Keep)
	opt = chunkstore.Options{ChunkRows: p.ChunkRows, Codec: p.Config.Codec, Workers: p.Config.Workers,
		Weight: p.Config.Weight, Labels: lay.Labels, InputColumns: lay.Report, Encoding: lay.Encoding}
	return feats, targs, opt
}

// WritePart writes part k of parts of the store (a task of step 4): its
// chunks' rows, read back from the pieces, with the kept columns and the
// final label codes, as segment k.
func (p *Plan) WritePart(ctx context.Context, lay *Layout, k, parts int) (*chunkstore.Part, error) {
	return p.WritePartFrom(ctx, lay, k, parts, p.storeDir(), func(_ context.Context, i int) (*chunkstore.Reader, error) {
		return chunkstore.Open(p.piece(i))
	})
}

// WritePartFrom is WritePart that writes the segment into the existing
// directory dir, a path of this machine, and opens piece i with
// openPiece: for a runner that keeps the pieces and the store elsewhere
// (object storage) and copies the segment file into place.
func (p *Plan) WritePartFrom(ctx context.Context, lay *Layout, k, parts int, dir string,
	openPiece func(ctx context.Context, i int) (*chunkstore.Reader, error)) (*chunkstore.Part, error) {
	if parts < 1 || k < 0 || k >= parts {
		return nil, fmt.Errorf("ingest: part %d of %d", k, parts)
	}
	s, err := p.encodedSession(lay)
	if err != nil {
		return nil, err
	}
	feats, targs, opt := p.options(s, lay)
	lo, hi := partBounds(k, parts, lay.Chunks)
	w, err := chunkstore.CreatePart(dir, k, lo, feats, targs, opt, lay.Shift)
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	a, b := int64(lo)*int64(p.ChunkRows), min(int64(hi)*int64(p.ChunkRows), lay.Rows)
	cols := make([][]float64, len(lay.Keep))
	buf := make([][]float64, len(lay.Keep))
	for c := range buf {
		buf[c] = make([]float64, p.ChunkRows)
	}
	// out holds the stored columns: the read ones, with each encoded one
	// replaced by its features (in ebuf), as Run's install expands them.
	out := make([][]float64, 0, len(feats)+len(targs))
	ebuf := make([]float64, len(feats)*p.ChunkRows)
	for i := range p.Files {
		fa, fb := lay.Offsets[i], lay.Offsets[i]+lay.FileRows[i]
		if fb <= a || fa >= b {
			continue
		}
		r, err := openPiece(ctx, i)
		if err != nil {
			return nil, err
		}
		for c := range r.NumChunks() {
			ca := fa + int64(c)*int64(p.ChunkRows) // the piece chunk's first row in the store
			n := r.ChunkRows(c)
			from, to := max(a, ca), min(b, ca+int64(n))
			if from >= to {
				continue
			}
			for q := range cols {
				cols[q] = buf[q][:n]
			}
			if err := r.ReadColumns(ctx, c, lay.Keep, cols); err != nil {
				r.Close()
				return nil, err
			}
			out, e := out[:0], 0
			for q, j := range lay.Keep {
				cols[q] = cols[q][from-ca : to-ca]
				if m := lay.Remap[i][j]; m != nil {
					for x, v := range cols[q] {
						cols[q][x] = m[int(v)]
					}
				}
				if c := s.encCol[j]; j < s.nfeat && c >= 0 {
					width := s.enc.Width(c)
					for range width {
						out = append(out, ebuf[e*p.ChunkRows:e*p.ChunkRows+len(cols[q])])
						e++
					}
					s.expandStored(c, cols[q], from, out[len(out)-width:])
					continue
				}
				out = append(out, cols[q])
			}
			if err := w.Append(out); err != nil {
				r.Close()
				return nil, err
			}
		}
		if err := r.Close(); err != nil {
			return nil, err
		}
	}
	if got := w.Rows(); got != b-a {
		return nil, fmt.Errorf("ingest: part %d read %d rows from the pieces, want %d", k, got, b-a)
	}
	return w.ClosePart()
}

// Finish puts the parts (WritePart's, one per part, in part order)
// together: it writes the manifest last and moves the store to
// Config.Out (step 4).
func (p *Plan) Finish(ctx context.Context, lay *Layout, parts []*chunkstore.Part) (*Result, error) {
	s, err := p.encodedSession(lay)
	if err != nil {
		return nil, err
	}
	for _, f := range p.Files {
		s.files = append(s.files, &fileInfo{path: f.Path, name: f.Path, size: f.Size, modTime: f.ModTime, rows: f.Rows})
	}
	feats, targs, opt := p.options(s, lay)
	var total int64
	opt.Sources, total = s.sources()
	if _, err := chunkstore.Assemble(p.storeDir(), feats, targs, opt, parts); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.place(p.storeDir()); err != nil {
		return nil, err
	}
	s.report = lay.Report
	return s.result(lay.Rows, lay.Dropped, lay.Keep, total, Memory{}, p.start)
}

// FinishTo is Finish for a store at a URL (Config.Out): it merges the
// parts and calls put with the manifest's bytes. put must check that
// every part's segment file (Segment.Name under Config.Out, of
// Segment.Bytes bytes) is in place and then store the manifest
// (chunkstore.ManifestName) last: readers refuse a store without it, so
// the store appears only when it is whole.
func (p *Plan) FinishTo(ctx context.Context, lay *Layout, parts []*chunkstore.Part, put func(ctx context.Context, manifest []byte) error) (*Result, error) {
	s, err := p.encodedSession(lay)
	if err != nil {
		return nil, err
	}
	for _, f := range p.Files {
		s.files = append(s.files, &fileInfo{path: f.Path, name: f.Path, size: f.Size, modTime: f.ModTime, rows: f.Rows})
	}
	feats, targs, opt := p.options(s, lay)
	var total int64
	opt.Sources, total = s.sources()
	m, b, err := chunkstore.AssembleManifest(p.Config.Out, feats, targs, opt, parts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := put(ctx, b); err != nil {
		return nil, err
	}
	bytesOut := int64(len(b))
	for _, pt := range parts {
		bytesOut += pt.Segment.Bytes
	}
	s.report = lay.Report
	res := s.resultOf(lay.Rows, lay.Dropped, lay.Keep, total, Memory{}, p.start, lay.Chunks, m.ChunkRows, bytesOut)
	res.Skipped = p.Skipped
	return res, nil
}

// Parts returns the number of parts for want: at most one per chunk, so
// that none is empty (0 for a store of no rows).
func (l *Layout) Parts(want int) int {
	return min(max(want, 1), l.Chunks)
}
