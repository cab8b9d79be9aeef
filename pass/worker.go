package pass

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// NewWorker validates the job and returns a worker for one goroutine,
// with its own prepared centres (O(M·D) memory) and scratch. The job
// must not change while its workers are in use.
func (j *Job) NewWorker() (*Worker, error) {
	if err := j.validate(); err != nil {
		return nil, err
	}
	return j.newWorker(), nil
}

// newWorker is NewWorker on a validated job.
func (j *Job) newWorker() *Worker {
	w := &Worker{job: j, features: j.Features, targets: j.Targets}
	if j.Kind == GroupKernelProduct || j.Kind == GroupTargetProduct || j.logistic() {
		w.multi = j.newMulti()
	} else {
		w.c = j.Prepared
		if w.c == nil {
			w.c = kernel.NewCenters(j.Kernel, j.Centers, j.M, j.D, j.Precision).WithInputMap(j.Mean, j.InvStd)
		}
		w.ws = w.c.NewWorkspace()
	}
	if w.features == nil {
		w.features = defaultNames("x", j.D)
	}
	if w.targets == nil {
		w.targets = defaultNames("y", j.targetCols())
	}
	return w
}

func defaultNames(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return s
}

// Worker computes chunk contributions of one Job. It is not safe
// for concurrent use: each goroutine has its own.
type Worker struct {
	job               *Job
	c                 *kernel.Centers
	ws                *kernel.Workspace
	v                 []float64 // encoded targets, rows × (K+1)
	features, targets []string
	multi             *multiWorker // GroupKernelProduct and GroupTargetProduct
	cw                []float64    // rows' weights times their classes' (ClassWeights)
	sw                []float64    // rows' weights times 2^WeightExp
	lg                *logisticState
	score             *scoreState // the rows a LogisticGradient scores
	gram              *gramState
	scores            *scoresState // Scores
	hold              *holdState   // TargetProduct, KernelProduct and the logistic passes with a Holdout
}

// AddRows adds one chunk's contribution to dst (len job.SumLen()) and
// appends the values of the rows it scores (job.RowLen() each, GroupKernelProduct
// and LogisticGradient only) to placed, which it returns. first is the number of the chunk's
// first row in the source (rows counted from 0 over every chunk in
// order): it decides which rows the job's Holdout holds out. x and y are
// as for Add, rw the rows' weights (read when job.ReadsWeights(), else
// nil); none is modified. In steady state it allocates nothing beyond
// placed's growth.
func (w *Worker) AddRows(dst []float64, first int64, x, y, rw []float64, rows int, placed []float64) ([]float64, error) {
	if w.job.Weight != "" {
		if len(rw) != rows {
			return placed, fmt.Errorf("pass: worker: %d weights for %d rows", len(rw), rows)
		}
		if err := stream.CheckWeights(rw, w.job.Weight); err != nil {
			return placed, err
		}
		if e := w.job.WeightExp; e != 0 {
			w.sw = slices.Grow(w.sw[:0], rows)[:rows]
			for i, v := range rw {
				w.sw[i] = math.Ldexp(v, e)
			}
			rw = w.sw
		}
	} else {
		rw = nil
	}
	switch w.job.Kind {
	case Gram:
		return placed, w.addGram(dst, first, x, rw, rows)
	case Scores:
		return w.addScores(dst, first, x, y, rw, rows, placed)
	}
	if w.multi == nil || w.job.logistic() {
		if w.job.ScoreRows > 0 {
			var err error
			if placed, err = w.scoreLogistic(first, x, y, rw, rows, placed); err != nil {
				return placed, err
			}
		}
		if w.job.Holdout != nil {
			return placed, w.addTraining(dst, first, x, y, rw, rows)
		}
		return placed, w.add(dst, x, y, rw, rows)
	}
	return w.addMulti(dst, first, x, y, rw, rows, placed)
}

// Add adds one chunk's contribution to dst (len job.SumLen()): x holds
// rows × D raw features, row-major, and y (TargetProduct only) the rows ×
// target-column values. Neither is modified: the standardisation is the
// kernel's input map, applied as each row is loaded into a kernel tile,
// so each row is read once. A NaN or infinite value, or a target that is
// not one of the classes, is an error; a non-finite value gives a
// *stream.ValueError naming its row (within the chunk) and column, a
// feature's before a target's. In steady state Add allocates nothing.
func (w *Worker) Add(dst, x, y []float64, rows int) error {
	j := w.job
	if j.Holdout != nil || j.RowLen() > 0 || j.Weight != "" {
		return fmt.Errorf("pass: worker: a %s pass that holds out, scores or weighs rows needs AddRows", j.Kind)
	}
	if w.multi != nil && !j.logistic() {
		_, err := w.addMulti(dst, 0, x, y, nil, rows, nil)
		return err
	}
	if j.Kind == Gram {
		return w.addGram(dst, 0, x, nil, rows)
	}
	return w.add(dst, x, y, nil, rows)
}

// add is Add for TargetProduct and KernelProduct, with row weights rw (nil: 1).
func (w *Worker) add(dst, x, y, rw []float64, rows int) error {
	j := w.job
	if err := w.checkShape(dst, x, y, rows, j.ClassWeights != nil || j.logistic()); err != nil {
		return err
	}
	k := j.K
	if j.logistic() {
		return w.addLogistic(dst, x, y, rw, rows)
	}
	if j.Kind == KernelProduct {
		if j.ClassWeights != nil {
			var err error
			if rw, err = w.classWeigh(y, rw, rows); err != nil {
				return cmp.Or(stream.CheckFinite(x, w.features), err)
			}
		}
		w.c.KtWKvAdd(w.ws, dst, x, rows, j.U, rw, nil, k)
		return w.nonFinite(x)
	}
	kt := j.targetCols()
	if len(y) != rows*kt {
		return fmt.Errorf("pass: worker: len(y) = %d for %d rows of %d targets", len(y), rows, kt)
	}
	k1 := k + 1
	w.v = slices.Grow(w.v[:0], rows*k1)[:rows*k1]
	err := stream.CheckFinite(y, w.targets)
	if err == nil {
		err = EncodeTargets(j.Task, j.Classes, w.targets, y, rows, kt, k, w.v, k1)
	}
	if err != nil {
		// The features' error first, as the kernel would find it.
		return cmp.Or(stream.CheckFinite(x, w.features), err)
	}
	weighRows(w.v, rw, k1)
	sum := dst[j.M*k1:]
	for r := range rows {
		for c := range k {
			sum[c] += w.v[r*k1+c]
		}
	}
	if rw != nil {
		for _, v := range rw {
			sum[k] += v
		}
	}
	w.c.KtKvAdd(w.ws, dst[:j.M*k1], x, rows, nil, w.v, k1)
	return w.nonFinite(x)
}

// classWeigh returns the rows' weights times their classes' weights
// (rw nil: 1), in the worker's scratch; an error for a target that is not
// a class.
func (w *Worker) classWeigh(y, rw []float64, rows int) ([]float64, error) {
	j := w.job
	if len(y) != rows*j.targetCols() {
		return nil, fmt.Errorf("pass: worker: len(y) = %d for %d rows of %d targets", len(y), rows, j.targetCols())
	}
	if err := stream.CheckFinite(y, w.targets); err != nil {
		return nil, err
	}
	w.cw = slices.Grow(w.cw[:0], rows)[:rows]
	for r := range rows {
		ci, ok := slices.BinarySearch(j.Classes, y[r])
		if !ok {
			return nil, &classError{target: w.targets[0], value: y[r], row: r, classes: j.Classes}
		}
		w.cw[r] = j.ClassWeights[ci]
		if rw != nil {
			w.cw[r] *= rw[r]
		}
	}
	return w.cw, nil
}

// weighRows scales row r of v (rows × stride) by rw[r]; nothing when rw
// is nil.
func weighRows(v, rw []float64, stride int) {
	for r, wr := range rw {
		row := v[r*stride : (r+1)*stride]
		for c := range row {
			row[c] *= wr
		}
	}
}

// checkShape checks the lengths of AddRows's dst, x and, with checkY
// when the pass reads targets, y.
func (w *Worker) checkShape(dst, x, y []float64, rows int, checkY bool) error {
	j := w.job
	if len(dst) != j.SumLen() {
		return fmt.Errorf("pass: worker: len(dst) = %d, want %d", len(dst), j.SumLen())
	}
	if rows < 0 || len(x) != rows*j.D {
		return fmt.Errorf("pass: worker: len(x) = %d for %d rows of %d features", len(x), rows, j.D)
	}
	if kt := j.targetCols(); checkY && j.readsTargets() && len(y) != rows*kt {
		return fmt.Errorf("pass: worker: len(y) = %d for %d rows of %d targets", len(y), rows, kt)
	}
	return nil
}

// nonFinite returns the *stream.ValueError for the first non-finite row
// of x that the kernel met in the last call (Workspace.NonFinite), or nil.
func (w *Worker) nonFinite(x []float64) error { return w.nonFiniteIn(w.ws, x) }

// nonFiniteIn is nonFinite for the last call on workspace ws.
func (w *Worker) nonFiniteIn(ws *kernel.Workspace, x []float64) error {
	r := ws.NonFinite()
	if r < 0 {
		return nil
	}
	d := w.job.D
	return stream.CheckFinite(x[r*d:(r+1)*d], w.features).(*stream.ValueError).At(r)
}

// EncodeTargets writes the targets of rows (y: rows × kt values as
// read, kt target columns named names) into v (rows × stride) as the
// passes encode them for a task of k outputs: regression copies the kt =
// k values; binary encodes classes[0] as −1 and classes[1] as +1;
// multiclass encodes class j as the j-th unit vector of length k. The
// column after the k outputs, when stride > k, is set to 1. A target
// that is not one of the (sorted) classes is an error naming its row
// within y; y is not checked for non-finite values (stream.CheckFinite).
func EncodeTargets(task model.Task, classes []float64, names []string, y []float64, rows, kt, k int, v []float64, stride int) error {
	for r := range rows {
		out := v[r*stride : r*stride+stride]
		switch task {
		case model.TaskRegression:
			copy(out, y[r*kt:r*kt+kt])
		default:
			ci, ok := slices.BinarySearch(classes, y[r])
			if !ok {
				return &classError{target: names[0], value: y[r], row: r, classes: classes}
			}
			if task == model.TaskBinary {
				out[0] = float64(2*ci - 1) // −1 for the first class, +1 for the second
			} else {
				clear(out[:k])
				out[ci] = 1
			}
		}
		if stride > k {
			out[k] = 1
		}
	}
	return nil
}
