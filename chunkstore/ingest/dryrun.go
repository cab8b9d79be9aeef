package ingest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/colstats"
)

// DryRun reads the inputs as Run would, with the same Config (Out and
// Force are ignored), and returns the Result that Run would return,
// without writing a store: the files, the rows (and those dropped), the
// features and targets and the report on every column, after the checks
// that need every row (constant columns, row identifiers, class labels,
// the means of --nulls mean). Chunks and ChunkRows are those the store
// would have; BytesOut is 0. It reads every row once, as Run does. With
// Nulls "error" (the default) it does not stop at the first NULL, NaN or
// ±Inf: it counts them per column (InputColumn.Bad), says in the column's
// note where the first is and what Nulls would do, and reads on as Nulls
// "mean" would.
func DryRun(ctx context.Context, inputs []string, cfg Config) (*Result, error) {
	return dryRun(ctx, inputs, cfg, memory.DefaultAllocator)
}

func dryRun(ctx context.Context, inputs []string, cfg Config, mem memory.Allocator) (*Result, error) {
	start := time.Now()
	cfg.Out, cfg.Force = "", false
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	for _, in := range inputs {
		if in == "-" {
			return nil, errors.New("standard input (-) cannot be read without a store to spool it beside; give a file")
		}
	}
	s := newSession(cfg, mem)
	s.dry = true
	paths, skipped, err := expandInputs(inputs)
	if err != nil {
		return nil, err
	}
	s.skipped = skipped
	if err := s.plan(ctx, paths, nil); err != nil {
		return nil, err
	}
	// With Nulls "error" the dry run counts bad values per column instead
	// of stopping at the first.
	if cfg.Nulls == "error" {
		s.count = true
		s.counts = make([]chunkstore.BadCounts, len(s.names))
		s.firstAt = make([]badAt, len(s.names))
		for j := range s.firstAt {
			s.firstAt[j].file = -1
		}
	}
	var total int64
	for _, f := range s.files {
		total += f.size
	}
	chunkRows := cfg.ChunkRows
	if chunkRows == 0 {
		chunkRows = ChunkRowsFor(len(s.names))
	}
	est := s.memoryEstimate(chunkRows, s.inFlight())
	if cfg.Progress != nil {
		cfg.Progress(Progress{BytesTotal: total, Files: len(s.files), Memory: &est})
	}
	rows := newRowSink(nil, s.nfeat, cfg.Nulls == "mean")
	if cfg.Nulls == "mean" {
		s.countNulls(&rowSink{})
	}
	dropped, err := s.pump(ctx, rows, total, start)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	keep, err := s.decide()
	if err != nil {
		return nil, err
	}
	remap := make([][]float64, len(s.names))
	for j, l := range s.labels {
		if l != nil {
			var labels []string
			labels, remap[j] = l.finish()
			s.report[s.reportAt[j]].Note = labelNote(len(labels))
		}
	}
	s.finishTargets(remap)
	if err := s.encode(keep); err != nil {
		return nil, err
	}
	s.reportBad()
	if _, err := s.fillValues(keep, rows.means); err != nil {
		return nil, err
	}
	res := &Result{
		Rows:      rows.n,
		Dropped:   dropped,
		Filled:    s.filled(keep),
		Features:  []string{},
		Targets:   []string{},
		BytesIn:   total,
		Columns:   slices.Clone(s.report),
		Memory:    est,
		ChunkRows: chunkRows,
		Chunks:    int((rows.n + int64(chunkRows) - 1) / int64(chunkRows)),
	}
	s.setColumns(res, keep)
	for _, f := range s.files {
		res.Files = append(res.Files, f.name)
	}
	res.Skipped = s.skipped
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// rowSink counts the rows pump reads and passes them on to w (nil: to
// nothing), and with stats keeps the features' statistics (colstats, as a
// store's writer keeps them), for the means of Nulls "mean": Run and
// DryRun compute them alike.
type rowSink struct {
	w       sink
	n       int64
	stats   []colstats.Stats
	scratch []colstats.Stats
	shift   []float64 // each feature's first value, as the store's writer shifts by it
}

// newRowSink returns a rowSink to w, with the statistics of the first
// nfeat columns when stats.
func newRowSink(w sink, nfeat int, stats bool) *rowSink {
	r := &rowSink{w: w}
	if stats {
		r.stats = make([]colstats.Stats, nfeat)
		r.scratch = make([]colstats.Stats, nfeat)
		for j := range r.stats {
			r.stats[j], r.scratch[j] = colstats.New(), colstats.New()
		}
	}
	return r
}

func (r *rowSink) Append(cols [][]float64) error {
	if r.w != nil {
		if err := r.w.Append(cols); err != nil {
			return err
		}
	}
	n := len(cols[0])
	if r.stats != nil && n > 0 {
		if r.shift == nil {
			r.shift = make([]float64, len(r.stats))
			for j := range r.shift {
				r.shift[j] = cols[j][0]
			}
		}
		for j := range r.stats {
			r.scratch[j].Chunk(cols[j], r.shift[j], true)
			r.stats[j].Merge(&r.scratch[j])
		}
	}
	r.n += int64(n)
	return nil
}

// means is a meansFunc over the rows appended.
func (r *rowSink) means() (int64, []float64, error) {
	means := make([]float64, len(r.stats))
	for j := range r.stats {
		means[j] = r.stats[j].Summary().Mean
	}
	return r.n, means, nil
}
