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

// Executor runs the data passes of a fit. nil in RunOptions means the
// local pipeline (LocalExecutor: stream.Run with Workers goroutines).
type Executor interface {
	// Pass returns the sum over every chunk of the training source of the
	// job's per-chunk contribution (PassWorker.Add), reduced in chunk
	// order: out = ((0 + c₀) + c₁) + …, of length job.OutLen(). An
	// executor that reduces in another order gives a slightly different
	// (equally valid) model.
	Pass(ctx context.Context, src stream.Source, job *PassJob) ([]float64, error)
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
)

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

	// centers, when set by Fit, are the prepared centres shared by the
	// workers of the local pipeline, with the standardisation as their
	// input map (kernel.Centers.WithInputMap); nil: each worker prepares
	// its own.
	centers *kernel.Centers
}

// OutLen returns the length of a pass's result: M·(K+1) + K for PassRHS,
// M·K for PassKernel.
func (j *PassJob) OutLen() int {
	if j.Kind == PassRHS {
		return j.M*(j.K+1) + j.K
	}
	return j.M * j.K
}

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
	switch {
	case j.Kind != PassRHS && j.Kind != PassKernel:
		return bad("unknown kind %q", j.Kind)
	case j.M < 1 || j.D < 1 || j.K < 1 || j.M > maxDim || j.D > maxDim || j.K > maxDim:
		return bad("shape M=%d D=%d K=%d", j.M, j.D, j.K)
	case len(j.Centers) != j.M*j.D:
		return bad("%d centre values for M × D = %d × %d", len(j.Centers), j.M, j.D)
	case (j.Mean == nil) != (j.InvStd == nil) || j.Mean != nil && (len(j.Mean) != j.D || len(j.InvStd) != j.D):
		return bad("standardisation has %d means and %d inverse deviations for D = %d", len(j.Mean), len(j.InvStd), j.D)
	case j.Precision != kernel.Float64 && j.Precision != kernel.Float32:
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
	if err := j.Kernel.Validate(j.D); err != nil {
		return bad("%v", err)
	}
	if j.Kind == PassRHS {
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
	c := j.centers
	if c == nil {
		c = kernel.NewCenters(j.Kernel, j.Centers, j.M, j.D, j.Precision).WithInputMap(j.Mean, j.InvStd)
	}
	w := &PassWorker{job: j, c: c, ws: c.NewWorkspace(), features: j.Features, targets: j.Targets}
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
}

// Add adds one chunk's contribution to dst (len job.OutLen()): x holds
// rows × D raw features, row-major, and y (PassRHS only) the rows ×
// target-column values. Neither is modified: the standardisation is the
// kernel's input map, applied as each row is loaded into a kernel tile,
// so each row is read once. A NaN or infinite value, or a target that is
// not one of the classes, is an error; a non-finite value gives a
// *stream.ValueError naming its row (within the chunk) and column, a
// feature's before a target's. In steady state Add allocates nothing.
func (w *PassWorker) Add(dst, x, y []float64, rows int) error {
	j := w.job
	if len(dst) != j.OutLen() {
		return fmt.Errorf("ooc: pass worker: len(dst) = %d, want %d", len(dst), j.OutLen())
	}
	if rows < 0 || len(x) != rows*j.D {
		return fmt.Errorf("ooc: pass worker: len(x) = %d for %d rows of %d features", len(x), rows, j.D)
	}
	k := j.K
	if j.Kind == PassKernel {
		w.c.KtKvAdd(w.ws, dst, x, rows, j.U, nil, k)
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
	sum := dst[j.M*k1:]
	for r := range rows {
		for c := range k {
			sum[c] += w.v[r*k1+c]
		}
	}
	w.c.KtKvAdd(w.ws, dst[:j.M*k1], x, rows, nil, w.v, k1)
	return w.nonFinite(x)
}

// nonFinite returns the *stream.ValueError for the first non-finite row
// of x that the kernel met in the last call (Workspace.NonFinite), or nil.
func (w *PassWorker) nonFinite(x []float64) error {
	r := w.ws.NonFinite()
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

// localPass is LocalExecutor.Pass with a report after each chunk reduced.
func localPass(ctx context.Context, src stream.Source, job *PassJob, workers int, onChunk func(chunk int)) ([]float64, error) {
	if err := job.validate(); err != nil {
		return nil, err
	}
	if src.Dim() != job.D {
		return nil, fmt.Errorf("ooc: pass: the source has %d features, the job %d", src.Dim(), job.D)
	}
	if job.Kind == PassRHS && src.NumTargets() != job.targetCols() {
		return nil, fmt.Errorf("ooc: pass: the source has %d target columns, the job reads %d", src.NumTargets(), job.targetCols())
	}
	n := job.OutLen()
	out := make([]float64, n)
	err := stream.Run(ctx, src, stream.Options{Workers: workers}, stream.Job[[]float64]{
		Targets:    job.Kind == PassRHS,
		NewPartial: func() []float64 { return make([]float64, n) },
		NewWorker: func() func(context.Context, stream.Chunk, []float64) error {
			w := job.newWorker()
			return func(_ context.Context, c stream.Chunk, p []float64) error {
				clear(p)
				return w.Add(p, c.X, c.Y, c.Rows)
			}
		},
		Reduce: func(chunk int, p []float64) error {
			addTo(out, p)
			if onChunk != nil {
				onChunk(chunk)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
