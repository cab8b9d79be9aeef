package pass

import (
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
)

// Kind says what a pass computes.
type Kind string

// Pass kinds.
const (
	// TargetProduct computes, per chunk, K_bᵀ[Y_b 1] (M × (K+1),
	// row-major) followed by the K column sums of the encoded targets
	// Y_b: a fit's right-hand side.
	TargetProduct Kind = "target_product"
	// KernelProduct computes, per chunk, K_bᵀ K_b U (M × K, row-major):
	// a CG iteration of a fit.
	KernelProduct Kind = "kernel_product"
	// GroupTargetProduct is TargetProduct for several kernels at once
	// (Groups): per chunk, over its training rows (see Holdout), for each group g,
	// K_gᵀ[Y 1] (M × (K+1)), in group order, then the K column sums of
	// the encoded targets. Tune's right-hand side.
	GroupTargetProduct Kind = "group_target_product"
	// GroupKernelProduct is KernelProduct for several kernels and
	// several right-hand sides at once, with validation scores in the same pass: per chunk,
	// over its training rows, for each group g with U, K_gᵀ K_g U_g
	// (M × Cols_g), in group order; and for each row it scores, one row
	// of values appended after the sums: K_g(x, C) Alpha_g (Cols_g
	// values) for each group with Alpha, in group order, then the row's
	// target values as read (targetCols). A CG iteration of Tune for
	// every live (σ, λ), which scores the held-out rows with the previous
	// iterate.
	GroupKernelProduct Kind = "group_kernel_product"
	// LogisticGradient is the gradient pass of a Newton step of the
	// logistic loss (targets as y = ±1 per output: the class for binary,
	// one against the rest for each of the K classes of multiclass; row
	// weights w, 1 without Weight, times the row's class weight with
	// ClassWeights). Its kernels are Groups (one kernel block each, as
	// GroupKernelProduct's); group g's U is M × Cols_g, Cols_g a
	// multiple of K: Cols_g/K copies of the K outputs (one per candidate λ of a search
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
	// are linear in t, so one kernel block serves every length). With
	// ScoreRows, it also scores the rows (the held-out rows with a
	// Holdout, else every row) with K_g U_g — [K_g α | K_g Δ] with Line,
	// so that the scores of α + tΔ are K_g α + t·K_g Δ for any t — as
	// GroupKernelProduct scores with Alpha: per row, every group's
	// columns, the target values as read, then the weight: the
	// validation of a Newton step in its own gradient pass.
	LogisticGradient Kind = "logistic_gradient"
	// LogisticHessianProduct is a CG pass of a Newton step: group g's U is
	// M × 2·Cols_g, each row [u (Cols_g) | α (Cols_g)]; it computes, per
	// group, K_gᵀ (H ∘ K_g u) (M × Cols_g), H_ic = wᵢ σ(f_ic)σ(−f_ic) with
	// f = K_g α, from the same kernel block.
	LogisticHessianProduct Kind = "logistic_hessian_product"
	// Gram computes, per chunk, K_bᵀ W K_b (M × M, row-major; W the
	// rows' weights with Weight, else I) over its training rows (see
	// Holdout; nil: every row), in tiles of GramTile rows: the exact
	// predictive variance's K_nMᵀ W K_nM. Its Kernel is the kernel of
	// K_b; it reads no targets.
	Gram Kind = "gram"
	// Scores scores rows with a fitted model's coefficients: for each row
	// it scores (the rows its Holdout holds out, or every row without
	// one), in order, K_b(x, C)·Alpha (K values, without a target mean),
	// the row's target values as read (targetCols), then its weight with
	// Weight (as read, times 2^WeightExp). It sums nothing (SumLen 0): a
	// classifier's calibration and a final validation on held-out rows,
	// without the calling process reading them. Its Kernel is the
	// model's; the scores are Model.Predict's to the bit when Kernel,
	// Centers, Precision and the standardisation are the model's.
	Scores Kind = "scores"
)

// GramTile is the number of rows of the kernel blocks whose products a
// Gram pass sums, one tile after the other, within a chunk.
const GramTile = 256

// maxGramM bounds M in a Gram pass, whose sums are M × M.
const maxGramM = 1 << 16

// Group is one kernel of a job with Groups and its right-hand sides. The kernel block K_g is between a chunk's rows,
// standardised as the job says, and the job's centres.
type Group struct {
	Kernel kernel.Kernel `json:"kernel"`
	// Cols is the number of columns of U and Alpha (GroupKernelProduct).
	Cols int `json:"cols,omitempty"`
	// U is M × Cols, row-major: the training rows give K_gᵀ K_g U. nil:
	// the group adds no sums (GroupKernelProduct).
	U []float64 `json:"u,omitempty"`
	// Alpha is M × Cols, row-major: the scored rows get K_g(x, C) Alpha.
	// nil: the group scores nothing (GroupKernelProduct).
	Alpha []float64 `json:"alpha,omitempty"`
}

// Holdout names the rows stream.Holdout(src, Fraction, Seed) holds out
// (stream.HeldOutRows).
type Holdout struct {
	Fraction float64 `json:"fraction"`
	Seed     uint64  `json:"seed"`
}

// Job describes one pass, self-contained and serialisable with
// encoding/json (the round trip is exact), so that an executor can ship
// it to remote workers. K_b is the kernel block between a chunk's rows,
// standardised as (x − Mean)·InvStd, and the centres.
type Job struct {
	Kind      Kind             `json:"kind"`
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
	// Task and Classes encode the targets of TargetProduct: regression reads K
	// target columns as they are; binary reads one column and encodes
	// Classes[0] as −1 and Classes[1] as +1; multiclass reads one column
	// and encodes class j as the j-th unit vector of length K.
	Task    model.Task `json:"task"`
	Classes []float64  `json:"classes,omitempty"`
	// U is the M × K right-hand side of KernelProduct, row-major.
	U []float64 `json:"u,omitempty"`
	// Alpha is the M × K coefficients of Scores, row-major.
	Alpha []float64 `json:"alpha,omitempty"`
	// Features and Targets name the source's columns in errors about
	// non-finite values; nil: x0, x1, … and y0, y1, ….
	Features []string `json:"features,omitempty"`
	Targets  []string `json:"targets,omitempty"`
	// Groups are the kernels of GroupTargetProduct, GroupKernelProduct
	// and the logistic passes (Kernel is not read): one set of centres,
	// one kernel block per group.
	Groups []Group `json:"groups,omitempty"`
	// Holdout splits each chunk: the rows it holds out are the scored
	// rows (GroupKernelProduct), the others the training rows, over which
	// every kind sums. A pass over a source with a Holdout is the pass
	// over the training side of stream.Holdout(src, Fraction, Seed),
	// chunk by chunk. nil: every row is both (a pass over a validation
	// source has no U, so it trains nothing).
	Holdout *Holdout `json:"holdout,omitempty"`
	// ScoreRows is the number of rows of the source a GroupKernelProduct
	// with an Alpha, a LogisticGradient, or a Scores pass scores (the
	// held-out rows, or every row without Holdout); 0 when no group has
	// Alpha (and for a LogisticGradient that scores nothing).
	ScoreRows int64 `json:"score_rows,omitempty"`
	// Weight, when not "", names the source's column of row weights
	// (stream.Weighter): the pass reads them and weighs every row's
	// contribution — K_bᵀ W K_b U, K_bᵀ W [Y 1] — and a right-hand side
	// also sums the weights (one more value after the target sums); a
	// scored row's values end with its weight. A negative or non-finite
	// weight is an error naming it.
	Weight string `json:"weight,omitempty"`
	// WeightExp, with Weight, multiplies every weight by 2^WeightExp as it
	// is read (exact; math.Ldexp): ooc.FitPlan.WeightExp, which brings
	// the weights' mean near 1, so that a denormal or a huge weight loses no
	// digits in the products and sums. At most maxWeightExp in magnitude.
	WeightExp int `json:"weight_exp,omitempty"`
	// ClassWeights, for KernelProduct and GroupKernelProduct of a
	// classification, weighs each training row by its class's weight (in the order of
	// Classes; times its Weight when set): the pass reads the targets.
	// nil: no class weights.
	ClassWeights []float64 `json:"class_weights,omitempty"`
	// Line, for LogisticGradient, are the step lengths of a line search
	// along the step Δ the groups' U carry (each in (0, 1), at most
	// maxLine); nil: no search.
	Line []float64 `json:"line,omitempty"`

	// Prepared, when set, are the prepared centres of Kernel shared by
	// the workers of this process (LocalExecutor), with the
	// standardisation as their input map (kernel.Centers.WithInputMap):
	// they must be the ones the job's fields define. nil: each worker
	// prepares its own. Never encoded: a remote worker prepares its own.
	Prepared *kernel.Centers `json:"-"`
	// PreparedGroups are the same for Groups, one per group (nil, or a
	// nil entry: each worker prepares its own).
	PreparedGroups []*kernel.Centers `json:"-"`
}

// SumLen returns the number of summed values of a pass's result: M·(K+1)
// + K for TargetProduct, G·M·(K+1) + K for GroupTargetProduct with G
// groups (each
// with one more, the sum of the weights, when Weight is set), M·K for
// KernelProduct, Σ M·Cols over the groups with U for GroupKernelProduct and
// LogisticHessianProduct, and Σ (M+2+len(Line))·Cols over the groups, plus 1,
// for LogisticGradient.
func (j *Job) SumLen() int {
	switch j.Kind {
	case TargetProduct:
		return j.M*(j.K+1) + j.K + j.weighted()
	case GroupTargetProduct:
		return len(j.Groups)*j.M*(j.K+1) + j.K + j.weighted()
	case Gram:
		return j.M * j.M
	case Scores:
		return 0
	case GroupKernelProduct:
		n := 0
		for _, g := range j.Groups {
			if g.U != nil {
				n += j.M * g.Cols
			}
		}
		return n
	case LogisticGradient, LogisticHessianProduct:
		n := 0
		for _, g := range j.Groups {
			n += j.M * g.Cols
			if j.Kind == LogisticGradient {
				n += (2 + len(j.Line)) * g.Cols
			}
		}
		if j.Kind == LogisticGradient {
			n++
		}
		return n
	}
	return j.M * j.K
}

// logistic reports whether the job is a pass of the logistic loss.
func (j *Job) logistic() bool { return j.Kind == LogisticGradient || j.Kind == LogisticHessianProduct }

// RowLen returns the number of values a GroupKernelProduct appends per
// scored row: the Cols of every group with Alpha and the target columns
// (and the weight with Weight); 0 when no group has Alpha. For a
// LogisticGradient with ScoreRows: the columns of every group's U and the
// target columns (and the weight). A Scores pass appends K values, the
// target columns and the weight with Weight. 0 for the other kinds.
func (j *Job) RowLen() int {
	if j.Kind == Scores {
		return j.K + j.targetCols() + j.weighted()
	}
	if j.Kind == LogisticGradient && j.ScoreRows > 0 {
		n := 0
		for _, g := range j.Groups {
			n += g.Cols
		}
		if j.Line != nil {
			n *= 2
		}
		return n + j.targetCols() + j.weighted()
	}
	if j.Kind != GroupKernelProduct {
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
func (j *Job) weighted() int {
	if j.Weight != "" {
		return 1
	}
	return 0
}

// ReadsWeights reports whether the pass reads the source's row weights.
func (j *Job) ReadsWeights() bool { return j.Weight != "" }

// OutLen returns the length of a pass's result: SumLen() + ScoreRows ·
// RowLen().
func (j *Job) OutLen() int {
	return j.SumLen() + int(j.ScoreRows)*j.RowLen()
}

// readsTargets reports whether the pass reads the target columns.
func (j *Job) readsTargets() bool {
	return j.Kind == TargetProduct || j.Kind == GroupTargetProduct || j.RowLen() > 0 || j.ClassWeights != nil || j.logistic()
}

// ReadsTargets reports whether the pass reads the target columns (an
// executor asks its source for them only then).
func (j *Job) ReadsTargets() bool { return j.readsTargets() }

// targetCols is the number of target columns TargetProduct reads.
func (j *Job) targetCols() int {
	if j.Task == model.TaskRegression {
		return j.K
	}
	return 1
}

// validate checks the job's shapes and values.
func (j *Job) validate() error {
	const maxDim = 1 << 24
	bad := func(format string, a ...any) error {
		return fmt.Errorf("pass: invalid job: "+format, a...)
	}
	multi := j.Kind == GroupKernelProduct || j.Kind == GroupTargetProduct
	switch {
	case j.Kind != TargetProduct && j.Kind != KernelProduct && j.Kind != Gram && j.Kind != Scores && !multi && !j.logistic():
		return bad("unknown kind %q", j.Kind)
	case j.Kind == Gram && j.M > maxGramM:
		return bad("a %s pass of M = %d centres: at most %d", j.Kind, j.M, maxGramM)
	case j.Holdout != nil && !(j.Holdout.Fraction > 0 && j.Holdout.Fraction < 1):
		return bad("hold-out fraction %v", j.Holdout.Fraction)
	case j.logistic() && j.Task != model.TaskBinary && j.Task != model.TaskMulticlass:
		return bad("a %s pass of a %s task: the logistic loss is for classification", j.Kind, j.Task)
	case j.M < 1 || j.D < 1 || j.K < 1 || j.M > maxDim || j.D > maxDim || j.K > maxDim:
		return bad("shape M=%d D=%d K=%d", j.M, j.D, j.K)
	case len(j.Centers) != j.M*j.D:
		return bad("%d centre values for M × D = %d × %d", len(j.Centers), j.M, j.D)
	case (j.Mean == nil) != (j.InvStd == nil) || j.Mean != nil && (len(j.Mean) != j.D || len(j.InvStd) != j.D):
		return bad("standardisation has %d means and %d inverse deviations for D = %d", len(j.Mean), len(j.InvStd), j.D)
	case !j.Precision.Valid():
		return bad("precision %v", j.Precision)
	case j.Kind == KernelProduct && len(j.U) != j.M*j.K:
		return bad("len(U) = %d, want M × K = %d", len(j.U), j.M*j.K)
	case j.Kind == Scores && len(j.Alpha) != j.M*j.K || j.Kind != Scores && j.Alpha != nil:
		return bad("%d coefficients (Alpha) in a %s pass of M × K = %d × %d", len(j.Alpha), j.Kind, j.M, j.K)
	case j.Kind == Scores && (j.ScoreRows < 0 || j.ScoreRows*int64(j.RowLen()) > math.MaxInt32*int64(64)):
		return bad("%d rows scored with %d values each", j.ScoreRows, j.RowLen())
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
		if j.Kind != LogisticGradient || len(j.Line) > maxLine {
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
		if j.Kind != KernelProduct && j.Kind != GroupKernelProduct && !j.logistic() || len(j.ClassWeights) != len(j.Classes) {
			return bad("%d class weights in a %s pass of %d classes", len(j.ClassWeights), j.Kind, len(j.Classes))
		}
		for _, v := range j.ClassWeights {
			if !(v >= 0) || math.IsInf(v, 0) {
				return bad("class weight %v", v)
			}
		}
	}
	if j.Kind != KernelProduct && j.Kind != Gram || j.ClassWeights != nil {
		switch j.Task {
		case model.TaskRegression:
		case model.TaskBinary:
			if len(j.Classes) != 2 || j.K != 1 {
				return bad("binary task with %d classes and K = %d", len(j.Classes), j.K)
			}
		case model.TaskMulticlass:
			if len(j.Classes) != j.K || j.K < 2 {
				return bad("multiclass task with %d classes and K = %d", len(j.Classes), j.K)
			}
		default:
			return bad("task %q", j.Task)
		}
		if j.Task != model.TaskRegression && !slices.IsSorted(j.Classes) {
			return bad("classes %v are not sorted", j.Classes)
		}
		if j.Targets != nil && len(j.Targets) != j.targetCols() {
			return bad("%d target names for %d target columns", len(j.Targets), j.targetCols())
		}
	}
	return nil
}

// validateMulti checks the groups, the hold-out and ScoreRows of a
// GroupKernelProduct or GroupTargetProduct job.
func (j *Job) validateMulti() error {
	const maxDim = 1 << 24
	if len(j.Groups) == 0 || len(j.Groups) > maxDim {
		return fmt.Errorf("%d groups", len(j.Groups))
	}
	for i, g := range j.Groups {
		if err := g.Kernel.Validate(j.D); err != nil {
			return fmt.Errorf("group %d: %v", i, err)
		}
		if j.Kind == GroupTargetProduct {
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
	if j.ScoreRows < 0 || (j.RowLen() == 0) != (j.ScoreRows == 0) {
		return fmt.Errorf("%d rows scored with %d values each", j.ScoreRows, j.RowLen())
	}
	if j.ScoreRows > 0 && j.ScoreRows*int64(j.RowLen()) > math.MaxInt32*int64(64) {
		return fmt.Errorf("%d rows scored with %d values each: too many", j.ScoreRows, j.RowLen())
	}
	return nil
}

// maxLine bounds Job.Line.
const maxLine = 64

// maxWeightExp bounds |Job.WeightExp|: 2^1100 brings the smallest
// denormal (2^-1074) to 1.
const maxWeightExp = 1100

// validateLogistic checks the groups of a logistic pass.
func (j *Job) validateLogistic() error {
	const maxDim = 1 << 24
	if len(j.Groups) == 0 || len(j.Groups) > maxDim {
		return fmt.Errorf("%d groups", len(j.Groups))
	}
	if j.ScoreRows != 0 && j.Kind != LogisticGradient {
		return fmt.Errorf("a %s pass scores no rows", j.Kind)
	}
	if j.ScoreRows < 0 || j.ScoreRows > 0 && j.ScoreRows*int64(j.RowLen()) > math.MaxInt32*int64(64) {
		return fmt.Errorf("%d rows scored with %d values each", j.ScoreRows, j.RowLen())
	}
	u := 1
	if j.Kind == LogisticHessianProduct || j.Line != nil {
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
