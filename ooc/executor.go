package ooc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Executor runs the data passes of a fit and of a search (Tune). nil in
// RunOptions means the local pipeline (LocalExecutor: stream.Run with
// Workers goroutines).
type Executor interface {
	// Pass returns, of length job.OutLen(), first the sum over every
	// chunk of src of the job's per-chunk sums (PassWorker.AddRows),
	// reduced in chunk order: ((0 + c₀) + c₁) + …, job.SumLen() values;
	// then the per-row values the chunks append (the scores of the rows a
	// PassMulti scores), concatenated in chunk order. A chunk's worker is
	// told the number of its first row in src (rows counted from 0 over
	// every chunk in order), which decides the rows a job holds out. An
	// executor that reduces the sums in another order gives a slightly
	// different (equally valid) model.
	Pass(ctx context.Context, src stream.Source, job *PassJob) ([]float64, error)
}

// RowReader is implemented by an Executor that can also read given rows
// of a source where the data is (package beam's, as a job): Fit then draws
// its centres through it, and this process reads no chunk of the data
// itself (the statistics come from the source, as a chunk store's
// manifest gives them). ReadRows returns the features of rows idx
// (distinct, ascending, numbered from 0 over src's chunks in order),
// row-major, as src.ReadChunk gives them.
type RowReader interface {
	ReadRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error)
}

// rootRows reads rows of a view of the data (the training rows of Tune's
// hold-out) through rr at the rows of the source the view wraps
// (stream.RootRows), where an executor finds the data: Tune draws its
// centres through it.
type rootRows struct{ rr RowReader }

func (r rootRows) ReadRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error) {
	root, rows := stream.RootRows(src, idx)
	return r.rr.ReadRows(ctx, root, rows)
}

// PassKind says what a pass computes.
type PassKind string

// Pass kinds.
const (
	// PassRHS computes, per chunk, K_bᵀ[Y_b 1] (M × (K+1), row-major)
	// followed by the K column sums of the encoded targets Y_b.
	PassRHS PassKind = "rhs"
	// PassKernel computes, per chunk, K_bᵀ K_b U (M × K, row-major).
	PassKernel PassKind = "kernel"
	// PassMultiRHS is PassRHS for several kernels at once (Groups): per
	// chunk, over its training rows (see Holdout), for each group g,
	// K_gᵀ[Y 1] (M × (K+1)), in group order, then the K column sums of
	// the encoded targets. Tune's right-hand side.
	PassMultiRHS PassKind = "multi_rhs"
	// PassMulti is PassKernel for several kernels and several right-hand
	// sides at once, with validation scores in the same pass: per chunk,
	// over its training rows, for each group g with U, K_gᵀ K_g U_g
	// (M × Cols_g), in group order; and for each row it scores, one row
	// of values appended after the sums: K_g(x, C) Alpha_g (Cols_g
	// values) for each group with Alpha, in group order, then the row's
	// target values as read (targetCols). A CG iteration of Tune for
	// every live (σ, λ), which scores the held-out rows with the previous
	// iterate.
	PassMulti PassKind = "multi"
	// PassLogisticGrad is the gradient pass of a Newton step of the
	// logistic loss (targets as y = ±1 per output: the class for binary,
	// one against the rest for each of the K classes of multiclass; row
	// weights w, 1 without Weight, times the row's class weight with
	// ClassWeights). Its kernels are Groups (one kernel block each, as
	// PassMulti's); group g's U is M × Cols_g, Cols_g a multiple of K:
	// Cols_g/K copies of the K outputs (one per candidate λ of a search
	// sharing the pass; column c reads output c mod K). With f = K_g U_g
	// it computes, per group in group order, K_gᵀ G (M × Cols_g) with
	// G_ic = −wᵢ y_ic σ(−y_ic f_ic), then per column Σᵢ wᵢ σ(f_ic)σ(−f_ic)
	// (the Hessian weights' sums) and Σᵢ wᵢ log(1 + e^(−y_ic f_ic)) (the
	// loss); then, once, Σ wᵢ. The weights are computed from the same
	// kernel block. With Line, the pass also searches along a step Δ:
	// group g's U is then M × 2·Cols_g, each row [α (Cols_g) | Δ
	// (Cols_g)], f = K_g (α + Δ) above, and after each group's loss sums
	// come len(Line) × Cols_g more: Σᵢ wᵢ log(1 + e^(−y_ic f_ic(t))) with
	// f(t) = K_g (α + tΔ), for each length t of Line in order (the scores
	// are linear in t, so one kernel block serves every length).
	PassLogisticGrad PassKind = "logistic_grad"
	// PassLogisticHess is a CG pass of a Newton step: group g's U is
	// M × 2·Cols_g, each row [u (Cols_g) | α (Cols_g)]; it computes, per
	// group, K_gᵀ (H ∘ K_g u) (M × Cols_g), H_ic = wᵢ σ(f_ic)σ(−f_ic) with
	// f = K_g α, from the same kernel block.
	PassLogisticHess PassKind = "logistic_hess"
)

// PassGroup is one kernel of a PassMulti or PassMultiRHS job and its
// right-hand sides. The kernel block K_g is between a chunk's rows,
// standardised as the job says, and the job's centres.
type PassGroup struct {
	Kernel kernel.Kernel `json:"kernel"`
	// Cols is the number of columns of U and Alpha (PassMulti).
	Cols int `json:"cols,omitempty"`
	// U is M × Cols, row-major: the training rows give K_gᵀ K_g U. nil:
	// the group adds no sums (PassMulti).
	U []float64 `json:"u,omitempty"`
	// Alpha is M × Cols, row-major: the scored rows get K_g(x, C) Alpha.
	// nil: the group scores nothing (PassMulti).
	Alpha []float64 `json:"alpha,omitempty"`
}

// Holdout names the rows stream.Holdout(src, Fraction, Seed) holds out
// (stream.HeldOutRows).
type Holdout struct {
	Fraction float64 `json:"fraction"`
	Seed     uint64  `json:"seed"`
}

// PassJob describes one pass, self-contained and serialisable with
// encoding/json (the round trip is exact), so that an executor can ship
// it to remote workers. K_b is the kernel block between a chunk's rows,
// standardised as (x − Mean)·InvStd, and the centres.
type PassJob struct {
	Kind      PassKind         `json:"kind"`
	Kernel    kernel.Kernel    `json:"kernel"`
	Precision kernel.Precision `json:"precision"`
	// M centres of D features; K outputs (after encoding the targets).
	M int `json:"m"`
	D int `json:"d"`
	K int `json:"k"`
	// Centers holds the M × D centres, row-major, standardised.
	Centers []float64 `json:"centers"`
	// Mean and InvStd standardise the rows; both nil: no
	// standardisation.
	Mean   []float64 `json:"mean,omitempty"`
	InvStd []float64 `json:"inv_std,omitempty"`
	// Task and Classes encode the targets of PassRHS: regression reads K
	// target columns as they are; binary reads one column and encodes
	// Classes[0] as −1 and Classes[1] as +1; multiclass reads one column
	// and encodes class j as the j-th unit vector of length K.
	Task    Task      `json:"task"`
	Classes []float64 `json:"classes,omitempty"`
	// U is the M × K right-hand side of PassKernel, row-major.
	U []float64 `json:"u,omitempty"`
	// Features and Targets name the source's columns in errors about
	// non-finite values; nil: x0, x1, … and y0, y1, ….
	Features []string `json:"features,omitempty"`
	Targets  []string `json:"targets,omitempty"`
	// Groups are the kernels of PassMulti and PassMultiRHS (Kernel is
	// not read): one set of centres, one kernel block per group.
	Groups []PassGroup `json:"groups,omitempty"`
	// Holdout, for PassMulti and PassMultiRHS, splits each chunk: the
	// rows it holds out are the scored rows, the others the training
	// rows. nil: every row is both (a pass over a validation source has
	// no U, so it trains nothing).
	Holdout *Holdout `json:"holdout,omitempty"`
	// ScoreRows is the number of rows of the source a PassMulti with an
	// Alpha scores (the held-out rows, or every row without Holdout); 0
	// when no group has Alpha.
	ScoreRows int64 `json:"score_rows,omitempty"`
	// Weight, when not "", names the source's column of row weights
	// (stream.Weighter): the pass reads them and weighs every row's
	// contribution — K_bᵀ W K_b U, K_bᵀ W [Y 1] — and a right-hand side
	// also sums the weights (one more value after the target sums); a
	// scored row's values end with its weight. A negative or non-finite
	// weight is an error naming it.
	Weight string `json:"weight,omitempty"`
	// WeightExp, with Weight, multiplies every weight by 2^WeightExp as it
	// is read (exact; math.Ldexp): FitPlan.WeightExp, which brings the
	// weights' mean near 1, so that a denormal or a huge weight loses no
	// digits in the products and sums. At most maxWeightExp in magnitude.
	WeightExp int `json:"weight_exp,omitempty"`
	// ClassWeights, for PassKernel and PassMulti of a classification,
	// weighs each training row by its class's weight (in the order of
	// Classes; times its Weight when set): the pass reads the targets.
	// nil: no class weights.
	ClassWeights []float64 `json:"class_weights,omitempty"`
	// Line, for PassLogisticGrad, are the step lengths of a line search
	// along the step Δ the groups' U carry (each in (0, 1), at most
	// maxLine); nil: no search.
	Line []float64 `json:"line,omitempty"`

	// centers, when set by Fit, are the prepared centres shared by the
	// workers of the local pipeline, with the standardisation as their
	// input map (kernel.Centers.WithInputMap); nil: each worker prepares
	// its own.
	centers *kernel.Centers
	// groupCenters are the same for Groups (nil: each worker prepares its
	// own).
	groupCenters []*kernel.Centers
}

// SumLen returns the number of summed values of a pass's result: M·(K+1)
// + K for PassRHS, G·M·(K+1) + K for PassMultiRHS with G groups (each
// with one more, the sum of the weights, when Weight is set), M·K for
// PassKernel, Σ M·Cols over the groups with U for PassMulti and
// PassLogisticHess, and Σ (M+2+len(Line))·Cols over the groups, plus 1,
// for PassLogisticGrad.
func (j *PassJob) SumLen() int {
	switch j.Kind {
	case PassRHS:
		return j.M*(j.K+1) + j.K + j.weighted()
	case PassMultiRHS:
		return len(j.Groups)*j.M*(j.K+1) + j.K + j.weighted()
	case PassMulti:
		n := 0
		for _, g := range j.Groups {
			if g.U != nil {
				n += j.M * g.Cols
			}
		}
		return n
	case PassLogisticGrad, PassLogisticHess:
		n := 0
		for _, g := range j.Groups {
			n += j.M * g.Cols
			if j.Kind == PassLogisticGrad {
				n += (2 + len(j.Line)) * g.Cols
			}
		}
		if j.Kind == PassLogisticGrad {
			n++
		}
		return n
	}
	return j.M * j.K
}

// logistic reports whether the job is a pass of the logistic loss.
func (j *PassJob) logistic() bool { return j.Kind == PassLogisticGrad || j.Kind == PassLogisticHess }

// RowLen returns the number of values a PassMulti appends per scored
// row: the Cols of every group with Alpha and the target columns; 0 when
// no group has Alpha, and for the other kinds.
func (j *PassJob) RowLen() int {
	if j.Kind != PassMulti {
		return 0
	}
	n := 0
	for _, g := range j.Groups {
		if g.Alpha != nil {
			n += g.Cols
		}
	}
	if n == 0 {
		return 0
	}
	return n + j.targetCols() + j.weighted()
}

// weighted is 1 for a job with row weights, else 0.
func (j *PassJob) weighted() int {
	if j.Weight != "" {
		return 1
	}
	return 0
}

// ReadsWeights reports whether the pass reads the source's row weights.
func (j *PassJob) ReadsWeights() bool { return j.Weight != "" }

// OutLen returns the length of a pass's result: SumLen() + ScoreRows ·
// RowLen().
func (j *PassJob) OutLen() int {
	return j.SumLen() + int(j.ScoreRows)*j.RowLen()
}

// readsTargets reports whether the pass reads the target columns.
func (j *PassJob) readsTargets() bool {
	return j.Kind == PassRHS || j.Kind == PassMultiRHS || j.RowLen() > 0 || j.ClassWeights != nil || j.logistic()
}

// ReadsTargets reports whether the pass reads the target columns (an
// executor asks its source for them only then).
func (j *PassJob) ReadsTargets() bool { return j.readsTargets() }

// targetCols is the number of target columns PassRHS reads.
func (j *PassJob) targetCols() int {
	if j.Task == TaskRegression {
		return j.K
	}
	return 1
}

// validate checks the job's shapes and values.
func (j *PassJob) validate() error {
	const maxDim = 1 << 24
	bad := func(format string, a ...any) error {
		return fmt.Errorf("ooc: invalid pass job: "+format, a...)
	}
	multi := j.Kind == PassMulti || j.Kind == PassMultiRHS
	switch {
	case j.Kind != PassRHS && j.Kind != PassKernel && !multi && !j.logistic():
		return bad("unknown kind %q", j.Kind)
	case j.logistic() && j.Task != TaskBinary && j.Task != TaskMulticlass:
		return bad("a %s pass of a %s task: the logistic loss is for classification", j.Kind, j.Task)
	case j.M < 1 || j.D < 1 || j.K < 1 || j.M > maxDim || j.D > maxDim || j.K > maxDim:
		return bad("shape M=%d D=%d K=%d", j.M, j.D, j.K)
	case len(j.Centers) != j.M*j.D:
		return bad("%d centre values for M × D = %d × %d", len(j.Centers), j.M, j.D)
	case (j.Mean == nil) != (j.InvStd == nil) || j.Mean != nil && (len(j.Mean) != j.D || len(j.InvStd) != j.D):
		return bad("standardisation has %d means and %d inverse deviations for D = %d", len(j.Mean), len(j.InvStd), j.D)
	case !j.Precision.Valid():
		return bad("precision %v", j.Precision)
	case j.Kind == PassKernel && len(j.U) != j.M*j.K:
		return bad("len(U) = %d, want M × K = %d", len(j.U), j.M*j.K)
	case j.Features != nil && len(j.Features) != j.D:
		return bad("%d feature names for D = %d", len(j.Features), j.D)
	}
	for _, a := range [][]float64{j.Centers, j.Mean, j.InvStd} {
		for _, v := range a {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad("non-finite centre or standardisation value %v", v)
			}
		}
	}
	if j.WeightExp < -maxWeightExp || j.WeightExp > maxWeightExp || j.WeightExp != 0 && j.Weight == "" {
		return bad("weight exponent %d (weight column %q)", j.WeightExp, j.Weight)
	}
	if j.Line != nil {
		if j.Kind != PassLogisticGrad || len(j.Line) > maxLine {
			return bad("%d line search lengths in a %s pass", len(j.Line), j.Kind)
		}
		for _, t := range j.Line {
			if !(t > 0 && t < 1) {
				return bad("line search length %v", t)
			}
		}
	}
	if multi {
		if err := j.validateMulti(); err != nil {
			return bad("%v", err)
		}
	} else if j.logistic() {
		if err := j.validateLogistic(); err != nil {
			return bad("%v", err)
		}
	} else if err := j.Kernel.Validate(j.D); err != nil {
		return bad("%v", err)
	}
	if j.ClassWeights != nil {
		if j.Kind != PassKernel && j.Kind != PassMulti && !j.logistic() || len(j.ClassWeights) != len(j.Classes) {
			return bad("%d class weights in a %s pass of %d classes", len(j.ClassWeights), j.Kind, len(j.Classes))
		}
		for _, v := range j.ClassWeights {
			if !(v >= 0) || math.IsInf(v, 0) {
				return bad("class weight %v", v)
			}
		}
	}
	if j.Kind != PassKernel || j.ClassWeights != nil {
		switch j.Task {
		case TaskRegression:
		case TaskBinary:
			if len(j.Classes) != 2 || j.K != 1 {
				return bad("binary task with %d classes and K = %d", len(j.Classes), j.K)
			}
		case TaskMulticlass:
			if len(j.Classes) != j.K || j.K < 2 {
				return bad("multiclass task with %d classes and K = %d", len(j.Classes), j.K)
			}
		default:
			return bad("task %q", j.Task)
		}
		if j.Task != TaskRegression && !slices.IsSorted(j.Classes) {
			return bad("classes %v are not sorted", j.Classes)
		}
		if j.Targets != nil && len(j.Targets) != j.targetCols() {
			return bad("%d target names for %d target columns", len(j.Targets), j.targetCols())
		}
	}
	return nil
}

// validateMulti checks the groups, the hold-out and ScoreRows of a
// PassMulti or PassMultiRHS job.
func (j *PassJob) validateMulti() error {
	const maxDim = 1 << 24
	if len(j.Groups) == 0 || len(j.Groups) > maxDim {
		return fmt.Errorf("%d groups", len(j.Groups))
	}
	for i, g := range j.Groups {
		if err := g.Kernel.Validate(j.D); err != nil {
			return fmt.Errorf("group %d: %v", i, err)
		}
		if j.Kind == PassMultiRHS {
			if g.Cols != 0 || g.U != nil || g.Alpha != nil {
				return fmt.Errorf("group %d of a %s pass has columns", i, j.Kind)
			}
			continue
		}
		if g.Cols < 1 || g.Cols > maxDim {
			return fmt.Errorf("group %d has %d columns", i, g.Cols)
		}
		for _, a := range [][]float64{g.U, g.Alpha} {
			if a != nil && len(a) != j.M*g.Cols {
				return fmt.Errorf("group %d: %d values for M × Cols = %d × %d", i, len(a), j.M, g.Cols)
			}
		}
	}
	if h := j.Holdout; h != nil && !(h.Fraction > 0 && h.Fraction < 1) {
		return fmt.Errorf("hold-out fraction %v", h.Fraction)
	}
	if j.ScoreRows < 0 || (j.RowLen() == 0) != (j.ScoreRows == 0) {
		return fmt.Errorf("%d rows scored with %d values each", j.ScoreRows, j.RowLen())
	}
	if j.ScoreRows > 0 && j.ScoreRows*int64(j.RowLen()) > math.MaxInt32*int64(64) {
		return fmt.Errorf("%d rows scored with %d values each: too many", j.ScoreRows, j.RowLen())
	}
	return nil
}

// maxLine bounds PassJob.Line.
const maxLine = 64

// maxWeightExp bounds |PassJob.WeightExp|: 2^1100 brings the smallest
// denormal (2^-1074) to 1.
const maxWeightExp = 1100

// validateLogistic checks the groups of a logistic pass.
func (j *PassJob) validateLogistic() error {
	const maxDim = 1 << 24
	if len(j.Groups) == 0 || len(j.Groups) > maxDim {
		return fmt.Errorf("%d groups", len(j.Groups))
	}
	if j.Holdout != nil || j.ScoreRows != 0 {
		return fmt.Errorf("a %s pass holds out and scores no rows", j.Kind)
	}
	u := 1
	if j.Kind == PassLogisticHess || j.Line != nil {
		u = 2
	}
	for i, g := range j.Groups {
		if err := g.Kernel.Validate(j.D); err != nil {
			return fmt.Errorf("group %d: %v", i, err)
		}
		if g.Cols < j.K || g.Cols%j.K != 0 || g.Cols > maxDim {
			return fmt.Errorf("group %d has %d columns for K = %d", i, g.Cols, j.K)
		}
		if len(g.U) != u*j.M*g.Cols || g.Alpha != nil {
			return fmt.Errorf("group %d: %d values of U for M = %d, Cols = %d (and Alpha %d)", i, len(g.U), j.M, g.Cols, len(g.Alpha))
		}
	}
	return nil
}

// NewWorker validates the job and returns a worker for one goroutine,
// with its own prepared centres (O(M·D) memory) and scratch. The job
// must not change while its workers are in use.
func (j *PassJob) NewWorker() (*PassWorker, error) {
	if err := j.validate(); err != nil {
		return nil, err
	}
	return j.newWorker(), nil
}

// newWorker is NewWorker on a validated job.
func (j *PassJob) newWorker() *PassWorker {
	w := &PassWorker{job: j, features: j.Features, targets: j.Targets}
	if j.Kind == PassMulti || j.Kind == PassMultiRHS || j.logistic() {
		w.multi = j.newMulti()
	} else {
		w.c = j.centers
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

// PassWorker computes chunk contributions of one PassJob. It is not safe
// for concurrent use: each goroutine has its own.
type PassWorker struct {
	job               *PassJob
	c                 *kernel.Centers
	ws                *kernel.Workspace
	v                 []float64 // encoded targets, rows × (K+1)
	features, targets []string
	multi             *multiWorker // PassMulti and PassMultiRHS
	cw                []float64    // rows' weights times their classes' (ClassWeights)
	sw                []float64    // rows' weights times 2^WeightExp
	lg                *logisticState
}

// AddRows adds one chunk's contribution to dst (len job.SumLen()) and
// appends the values of the rows it scores (job.RowLen() each, PassMulti
// only) to placed, which it returns. first is the number of the chunk's
// first row in the source (rows counted from 0 over every chunk in
// order): it decides which rows the job's Holdout holds out. x and y are
// as for Add, rw the rows' weights (read when job.ReadsWeights(), else
// nil); none is modified. In steady state it allocates nothing beyond
// placed's growth.
func (w *PassWorker) AddRows(dst []float64, first int64, x, y, rw []float64, rows int, placed []float64) ([]float64, error) {
	if w.job.Weight != "" {
		if len(rw) != rows {
			return placed, fmt.Errorf("ooc: pass worker: %d weights for %d rows", len(rw), rows)
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
	if w.multi == nil || w.job.logistic() {
		return placed, w.add(dst, x, y, rw, rows)
	}
	return w.addMulti(dst, first, x, y, rw, rows, placed)
}

// Add adds one chunk's contribution to dst (len job.SumLen()): x holds
// rows × D raw features, row-major, and y (PassRHS only) the rows ×
// target-column values. Neither is modified: the standardisation is the
// kernel's input map, applied as each row is loaded into a kernel tile,
// so each row is read once. A NaN or infinite value, or a target that is
// not one of the classes, is an error; a non-finite value gives a
// *stream.ValueError naming its row (within the chunk) and column, a
// feature's before a target's. In steady state Add allocates nothing.
func (w *PassWorker) Add(dst, x, y []float64, rows int) error {
	j := w.job
	if j.Holdout != nil || j.RowLen() > 0 || j.Weight != "" {
		return fmt.Errorf("ooc: pass worker: a %s pass that holds out, scores or weighs rows needs AddRows", j.Kind)
	}
	if w.multi != nil && !j.logistic() {
		_, err := w.addMulti(dst, 0, x, y, nil, rows, nil)
		return err
	}
	return w.add(dst, x, y, nil, rows)
}

// add is Add for PassRHS and PassKernel, with row weights rw (nil: 1).
func (w *PassWorker) add(dst, x, y, rw []float64, rows int) error {
	j := w.job
	if err := w.checkShape(dst, x, y, rows, j.ClassWeights != nil || j.logistic()); err != nil {
		return err
	}
	k := j.K
	if j.logistic() {
		return w.addLogistic(dst, x, y, rw, rows)
	}
	if j.Kind == PassKernel {
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
		return fmt.Errorf("ooc: pass worker: len(y) = %d for %d rows of %d targets", len(y), rows, kt)
	}
	k1 := k + 1
	w.v = slices.Grow(w.v[:0], rows*k1)[:rows*k1]
	err := stream.CheckFinite(y, w.targets)
	if err == nil {
		err = encodeTargets(j.Task, j.Classes, w.targets, y, rows, kt, k, w.v, k1)
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
func (w *PassWorker) classWeigh(y, rw []float64, rows int) ([]float64, error) {
	j := w.job
	if len(y) != rows*j.targetCols() {
		return nil, fmt.Errorf("ooc: pass worker: len(y) = %d for %d rows of %d targets", len(y), rows, j.targetCols())
	}
	if err := stream.CheckFinite(y, w.targets); err != nil {
		return nil, err
	}
	w.cw = slices.Grow(w.cw[:0], rows)[:rows]
	for r := range rows {
		ci, ok := slices.BinarySearch(j.Classes, y[r])
		if !ok {
			return nil, fmt.Errorf("target %q: value %v in row %d of the chunk is not one of the classes %v", w.targets[0], y[r], r, j.Classes)
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
func (w *PassWorker) checkShape(dst, x, y []float64, rows int, checkY bool) error {
	j := w.job
	if len(dst) != j.SumLen() {
		return fmt.Errorf("ooc: pass worker: len(dst) = %d, want %d", len(dst), j.SumLen())
	}
	if rows < 0 || len(x) != rows*j.D {
		return fmt.Errorf("ooc: pass worker: len(x) = %d for %d rows of %d features", len(x), rows, j.D)
	}
	if kt := j.targetCols(); checkY && j.readsTargets() && len(y) != rows*kt {
		return fmt.Errorf("ooc: pass worker: len(y) = %d for %d rows of %d targets", len(y), rows, kt)
	}
	return nil
}

// nonFinite returns the *stream.ValueError for the first non-finite row
// of x that the kernel met in the last call (Workspace.NonFinite), or nil.
func (w *PassWorker) nonFinite(x []float64) error { return w.nonFiniteIn(w.ws, x) }

// nonFiniteIn is nonFinite for the last call on workspace ws.
func (w *PassWorker) nonFiniteIn(ws *kernel.Workspace, x []float64) error {
	r := ws.NonFinite()
	if r < 0 {
		return nil
	}
	d := w.job.D
	return stream.CheckFinite(x[r*d:(r+1)*d], w.features).(*stream.ValueError).At(r)
}

// encodeTargets writes the encoded targets of rows into v (rows × stride;
// the column after the k outputs, when stride > k, is set to 1).
func encodeTargets(task Task, classes []float64, names []string, y []float64, rows, kt, k int, v []float64, stride int) error {
	for r := range rows {
		out := v[r*stride : r*stride+stride]
		switch task {
		case TaskRegression:
			copy(out, y[r*kt:r*kt+kt])
		default:
			ci, ok := slices.BinarySearch(classes, y[r])
			if !ok {
				return fmt.Errorf("target %q: value %v in row %d of the chunk is not one of the classes %v",
					names[0], y[r], r, classes)
			}
			if task == TaskBinary {
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

// LocalExecutor runs passes on this machine: stream.Run with Workers
// goroutines (0 means GOMAXPROCS), each with its own PassWorker, partial
// results reduced in chunk order, nothing allocated per chunk.
type LocalExecutor struct {
	Workers int
}

// Pass implements Executor.
func (e LocalExecutor) Pass(ctx context.Context, src stream.Source, job *PassJob) ([]float64, error) {
	return localPass(ctx, src, job, e.Workers, nil)
}

// localPass is LocalExecutor.Pass with a report after each chunk reduced,
// given the chunk's row values (placed, valid during the call).
func localPass(ctx context.Context, src stream.Source, job *PassJob, workers int, onChunk func(chunk int, placed []float64)) ([]float64, error) {
	if err := job.validate(); err != nil {
		return nil, err
	}
	if src.Dim() != job.D {
		return nil, fmt.Errorf("ooc: pass: the source has %d features, the job %d", src.Dim(), job.D)
	}
	if job.readsTargets() && src.NumTargets() != job.targetCols() {
		return nil, fmt.Errorf("ooc: pass: the source has %d target columns, the job reads %d", src.NumTargets(), job.targetCols())
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
		return nil, fmt.Errorf("ooc: pass: the job weighs the rows by %q, and the source carries no weights", job.Weight)
	}
	err := stream.Run(ctx, src, stream.Options{Workers: workers}, stream.Job[*part]{
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
				return fmt.Errorf("ooc: pass: the chunks score more than the job's %d rows", job.ScoreRows)
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
		return nil, fmt.Errorf("ooc: pass: the chunks scored %d rows, the job says %d", (at-ns)/max(job.RowLen(), 1), job.ScoreRows)
	}
	return out, nil
}
