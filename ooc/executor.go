package ooc

import (
	"context"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// rowReader returns the pass.RowReader of an executor that is one, as a
// rootRows (so that it reads a view's rows where the data is), or nil: a
// fit or search then draws its centres through it, and reads no chunk of
// the data itself.
func rowReader(e pass.Executor) pass.RowReader {
	if r, ok := e.(pass.RowReader); ok {
		return rootRows{r}
	}
	return nil
}

// rootRows reads rows of a view of the data (the training rows of a
// hold-out) through rr at the rows of the source the view wraps
// (stream.RootRows), where an executor finds the data: the searches draw
// their centres through it.
type rootRows struct{ rr pass.RowReader }

func (r rootRows) ReadRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error) {
	root, rows := stream.RootRows(src, idx)
	return r.rr.ReadRows(ctx, root, rows)
}

// targetRowReader returns the pass.TargetRowReader of an executor that is
// one, as a rootRows, or nil: FitTuned then draws its search's row
// subsample through it.
func targetRowReader(e pass.Executor) pass.TargetRowReader {
	if r, ok := e.(pass.TargetRowReader); ok {
		return rootRows{r}
	}
	return nil
}

// ReadRowsWithTargets reads rows of a view of the data at the rows of the
// source it wraps, as ReadRows does; rr must be a pass.TargetRowReader
// (targetRowReader's).
func (r rootRows) ReadRowsWithTargets(ctx context.Context, src stream.Source, idx []int64) (x, y, w []float64, err error) {
	root, rows := stream.RootRows(src, idx)
	return r.rr.(pass.TargetRowReader).ReadRowsWithTargets(ctx, root, rows)
}

// readSample reads rows idx (ascending) of src with their targets and,
// when src carries row weights, their weights: through rr, where the
// data is, when rr is not nil; else here, reading only the chunks that
// hold one and calling report after each (nil: no reports).
func readSample(ctx context.Context, src stream.Source, idx []int64, rr pass.TargetRowReader, report func(done, chunks int)) (x, y, w []float64, err error) {
	weighted := stream.WeightColumn(src) != ""
	if rr == nil {
		if x, y, err = readRows(ctx, src, idx, report); err != nil || !weighted {
			return x, y, nil, err
		}
		w, err = readWeights(ctx, src, idx)
		return x, y, w, err
	}
	if x, y, w, err = rr.ReadRowsWithTargets(ctx, src, idx); err != nil {
		return nil, nil, nil, err
	}
	n := len(idx)
	if len(x) != n*src.Dim() || len(y) != n*src.NumTargets() || weighted != (w != nil) || w != nil && len(w) != n {
		return nil, nil, nil, fmt.Errorf("the executor read %d features, %d targets and %d weights for %d rows of %d features and %d targets (weighted: %v)",
			len(x), len(y), len(w), n, src.Dim(), src.NumTargets(), weighted)
	}
	if report != nil {
		report(src.NumChunks(), src.NumChunks())
	}
	return x, y, w, nil
}

// weightValues is the number of values after the targets in a row that
// job scores: 1, the row's weight, when the pass reads weights; else 0.
func weightValues(job *pass.Job) int {
	if job.ReadsWeights() {
		return 1
	}
	return 0
}

// plain is the scoredPass as a passFunc: the values of the rows it
// scores stay in its result.
func (p scoredPass) plain() passFunc {
	return func(ctx context.Context, job *pass.Job, report func(done, chunks int, rows int64)) ([]float64, error) {
		return p(ctx, job, report, nil)
	}
}
