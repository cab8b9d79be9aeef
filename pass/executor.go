package pass

import (
	"context"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Executor runs passes: package ooc hands it every pass over the data of
// a fit and of a search (ooc.RunOptions.Executor; nil means
// LocalExecutor), package beam runs them as Beam jobs.
type Executor interface {
	// Pass returns, of length job.OutLen(), first the sum over every
	// chunk of src of the job's per-chunk sums (Worker.AddRows),
	// reduced in chunk order: ((0 + c₀) + c₁) + …, job.SumLen() values;
	// then the per-row values the chunks append (the scores of the rows a
	// GroupKernelProduct scores), concatenated in chunk order. A chunk's worker is
	// told the number of its first row in src (rows counted from 0 over
	// every chunk in order), which decides the rows a job holds out. An
	// executor that reduces the sums in another order gives a slightly
	// different (equally valid) model.
	Pass(ctx context.Context, src stream.Source, job *Job) ([]float64, error)
}

// RowReader is implemented by an Executor that can also read given rows
// of a source where the data is (package beam's, as a job): ooc's fits and
// searches then draw their centres through it, and the calling process
// reads no chunk of the data itself (the statistics come from the source, as a chunk store's
// manifest gives them). ReadRows returns the features of rows idx
// (distinct, ascending, numbered from 0 over src's chunks in order),
// row-major, as src.ReadChunk gives them.
type RowReader interface {
	ReadRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error)
}

// TargetRowReader is a RowReader that also reads the targets and the
// weights of given rows where the data is: ooc's FitTuned draws its
// search's row subsample through it. ReadRowsWithTargets returns, for rows
// idx (as ReadRows), their features as ReadRows gives them, their
// targets (len(idx) × src.NumTargets(), row-major, as src.ReadChunk gives
// them), and their weights when src carries row weights
// (stream.Weighter), else nil.
type TargetRowReader interface {
	RowReader
	ReadRowsWithTargets(ctx context.Context, src stream.Source, idx []int64) (x, y, w []float64, err error)
}

// LocalExecutor runs passes on this machine: stream.Run with Workers
// goroutines (0 means GOMAXPROCS), each with its own Worker, partial
// results reduced in chunk order, nothing allocated per chunk.
type LocalExecutor struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// OnChunk, when set, is called after each chunk's contribution is
	// reduced, in chunk order on one goroutine, with the chunk's index
	// and the values of the rows it scores (valid during the call only):
	// progress, and the scores of a pass as they come.
	OnChunk func(chunk int, placed []float64)
}

// bigPartial is the number of summed values from which LocalExecutor
// keeps only as many chunks' partial sums in flight as it has workers
// (8 MiB each).
const bigPartial = 1 << 20

// Pass implements Executor.
func (e LocalExecutor) Pass(ctx context.Context, src stream.Source, job *Job) ([]float64, error) {
	workers, onChunk := e.Workers, e.OnChunk
	if err := job.validate(); err != nil {
		return nil, err
	}
	if src.Dim() != job.D {
		return nil, fmt.Errorf("pass: the source has %d features, the job %d", src.Dim(), job.D)
	}
	if job.readsTargets() && src.NumTargets() != job.targetCols() {
		return nil, fmt.Errorf("pass: the source has %d target columns, the job reads %d", src.NumTargets(), job.targetCols())
	}
	first := make([]int64, src.NumChunks())
	var rows int64
	for i := range first {
		first[i] = rows
		rows += int64(src.ChunkRows(i))
	}
	n, ns := job.OutLen(), job.SumLen()
	out := make([]float64, n)
	at := ns // where the next chunk's row values go
	type part struct{ sum, placed []float64 }
	if job.Weight != "" && stream.WeightColumn(src) == "" {
		return nil, fmt.Errorf("pass: the job weighs the rows by %q, and the source carries no weights", job.Weight)
	}
	opt := stream.Options{Workers: workers}
	if ns >= bigPartial {
		opt.InFlight = max(workers, 1) // as many partials as workers (a Gram pass's are M × M)
	}
	err := stream.Run(ctx, src, opt, stream.Job[*part]{
		Targets:    job.readsTargets(),
		Weights:    job.Weight != "",
		NewPartial: func() *part { return &part{sum: make([]float64, ns)} },
		NewWorker: func() func(context.Context, stream.Chunk, *part) error {
			w := job.newWorker()
			return func(_ context.Context, c stream.Chunk, p *part) error {
				clear(p.sum)
				var err error
				p.placed, err = w.AddRows(p.sum, first[c.Index], c.X, c.Y, c.W, c.Rows, p.placed[:0])
				return err
			}
		},
		Reduce: func(chunk int, p *part) error {
			addTo(out[:ns], p.sum)
			if len(p.placed) > n-at {
				return fmt.Errorf("pass: the chunks score more than the job's %d rows", job.ScoreRows)
			}
			at += copy(out[at:], p.placed)
			if onChunk != nil {
				onChunk(chunk, p.placed)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if at != n {
		return nil, fmt.Errorf("pass: the chunks scored %d rows, the job says %d", (at-ns)/max(job.RowLen(), 1), job.ScoreRows)
	}
	return out, nil
}

// addTo adds src to dst element by element.
func addTo(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}
