package ooc

import (
	"context"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// heldVal scores Fit's validation rows inside its CG passes when they
// are held out of the data the fit reads (RunOptions.Validation and the
// training source are the two sides of one stream.Holdout): each CG pass
// is then a pass.GroupKernelProduct over the whole data that computes the product on
// the training rows and scores the held-out rows with the α of the
// previous iterate, as Tune's passes do. The validation of iterate i is
// known after pass i + 1, before its step is taken; the last iterate is
// scored by one pass of its own (final). The training rows and their
// order are those of the training source, so the products are those of
// the fit's own passes up to the chunking of the pass: with a source of
// 32 chunks or more (stream.Spread leaves it whole) they are the same to
// the bit.
type heldVal struct {
	passFn scoredPass // over the whole data, through the fit's executor
	job    *pass.Job  // pass.GroupKernelProduct with one group: U the fit's u
	base   *pass.Job  // the fit's own CG pass, whose class weights it takes
	rows   int64      // the held-out rows
	report func(Progress)
	iters  int // Config.Iterations, for the reports
	// alphaOf returns α of the iterate st (Fit's: carried for
	// regression, from β for classification).
	alphaOf func(st *cgState) []float64
	ymean   []float64
	enc     targetEncoding
	targets []string
	kt      int

	// Set by solveCG: the CG state, whether an iterate is validated,
	// and what to do with its validation (errPatience stops CG).
	st   *cgState
	due  func(iter int) bool
	done func(vp *ValPoint) error

	scored     int        // the iterate the last pass scored (0: none)
	ev         *Evaluator // its metrics
	yv, wv, sc []float64  // scratch of addRows
}

// newHeldVal returns the in-pass validation of the fit of plan over
// whole, the data its training rows (plan's source) and the validation
// rows (rows of them, which hold holds out) were split from.
func newHeldVal(plan *FitPlan, cs *centreSample, enc targetEncoding, op *fitOperator, whole stream.Source, hold *pass.Holdout,
	rows int64, ymean []float64, opts RunOptions, alphaOf func(st *cgState) []float64) *heldVal {
	job := *op.passJob
	job.Kind, job.U, job.Prepared, job.Holdout = pass.GroupKernelProduct, nil, nil, hold
	job.Targets = plan.Targets
	if enc.task != TaskRegression {
		job.Targets = plan.Targets[:1]
	}
	job.Groups = []pass.Group{{Kernel: plan.Config.Kernel, Cols: enc.k}}
	job.PreparedGroups = []*kernel.Centers{op.passJob.Prepared}
	return &heldVal{passFn: scoredPassOver(whole, opts), job: &job, base: op.passJob, rows: rows, ymean: ymean, report: op.report, iters: plan.Config.Iterations,
		alphaOf: alphaOf, enc: enc, targets: plan.Targets, kt: plan.TargetColumns}
}

// pass makes the CG pass after iterate iter with u (M × k): it returns
// K_nMᵀ W K_nM u over the training rows and, when iter is due for a
// validation, scores the held-out rows with α of iter.
func (h *heldVal) pass(ctx context.Context, iter int, u []float64, progress func(done, chunks int, rows int64)) ([]float64, error) {
	g := &h.job.Groups[0]
	g.U, g.Alpha, h.job.ScoreRows, h.scored = u, nil, 0, 0
	h.job.ClassWeights = h.base.ClassWeights
	if h.due(iter) {
		g.Alpha, h.job.ScoreRows, h.scored = h.alphaOf(h.st), h.rows, iter
		h.ev = h.enc.evaluator(h.targets)
	}
	return h.run(ctx, progress)
}

// run makes the pass of h.job, adding the scored rows to h.ev.
func (h *heldVal) run(ctx context.Context, progress func(done, chunks int, rows int64)) ([]float64, error) {
	rowLen, weighted := h.job.RowLen(), weightValues(h.job)
	var addErr error
	out, err := h.passFn(ctx, h.job, progress, func(vals []float64) {
		if addErr == nil {
			addErr = h.addRows(vals, rowLen, weighted)
		}
	})
	if err == nil {
		err = addErr
	}
	if err != nil {
		return nil, err
	}
	return out[:h.job.SumLen()], nil
}

// validated hands the validation of iterate iter, if the last pass
// scored it, to done.
func (h *heldVal) validated(iter int) error {
	if h.scored != iter || iter == 0 {
		return nil
	}
	return h.done(&ValPoint{Iteration: iter, Metrics: h.ev.Metrics().Brief()})
}

// final scores the held-out rows with α of the iterate st in a pass of
// their own (the training rows add nothing to it).
func (h *heldVal) final(ctx context.Context, st *cgState) (*ValPoint, error) {
	g := &h.job.Groups[0]
	g.U, g.Alpha, h.job.ScoreRows = nil, h.alphaOf(st), h.rows
	h.ev = h.enc.evaluator(h.targets)
	h.report(Progress{Stage: StageValidate, Iteration: st.Iter, Iterations: h.iters})
	if _, err := h.run(ctx, func(done, chunks int, rows int64) {
		h.report(Progress{Stage: StageValidate, Iteration: st.Iter, Iterations: h.iters, Chunk: done, Chunks: chunks, Rows: rows})
	}); err != nil {
		return nil, fmt.Errorf("validation after iteration %d: %w", st.Iter, err)
	}
	return &ValPoint{Iteration: st.Iter, Metrics: h.ev.Metrics().Brief()}, nil
}

// addRows adds scored rows (vals: rows of rowLen values, the k scores
// without the target mean, the target columns, then the weight when
// weighted is 1) to h.ev.
func (h *heldVal) addRows(vals []float64, rowLen, weighted int) error {
	if rowLen == 0 || len(vals) == 0 {
		return nil
	}
	k, kt := h.enc.k, rowLen-h.enc.k-weighted
	n := len(vals) / rowLen
	h.sc = slices.Grow(h.sc[:0], n*k)[:n*k]
	h.yv = slices.Grow(h.yv[:0], n*kt)[:n*kt]
	var w []float64
	if weighted == 1 {
		h.wv = slices.Grow(h.wv[:0], n)[:n]
		w = h.wv
	}
	for r := range n {
		row := vals[r*rowLen : (r+1)*rowLen]
		for j := range k {
			h.sc[r*k+j] = row[j] + h.ymean[j]
		}
		copy(h.yv[r*kt:(r+1)*kt], row[k:k+kt])
		if w != nil {
			w[r] = row[rowLen-1]
		}
	}
	return h.ev.AddWeighted(h.sc, h.yv, w, n)
}
