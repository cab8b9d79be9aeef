package ooc

import (
	"context"

	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

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
