package ooc

import (
	"context"

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
