package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/metrics"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// PredictOptions configures prediction over a source. The zero value is
// ready to use.
type PredictOptions struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each chunk (on the caller's
	// goroutine) with the chunks done and the total.
	Progress func(done, total int)
	// Std asks Predict for the predictive standard deviation of every
	// score (Batch.Std); the model must have an Uncertainty.
	Std bool
}

// PredictTo computes the scores of rows of raw (unstandardised) features
// x (rows × D, row-major) into out (rows × K): regression values, binary
// scores (> 0 means Classes[1]) or one score per class. x is not changed.
func (m *Model) PredictTo(out, x []float64, rows int) {
	if len(x) != rows*m.d || len(out) != rows*m.k {
		panic(fmt.Sprintf("ooc: PredictTo: len(x) = %d, len(out) = %d for %d rows, d = %d, k = %d", len(x), len(out), rows, m.d, m.k))
	}
	z := slices.Clone(x)
	if m.invStd != nil {
		standardize(z, m.featureMean, m.invStd)
	}
	m.scoreChunk(m.centers.NewWorkspace(), out, z, rows)
}

// scoreChunk writes the scores of the standardised rows z to out.
func (m *Model) scoreChunk(ws *kernel.Workspace, out, z []float64, rows int) {
	m.scoreChunkWith(m.centers, ws, out, z, rows)
}

// scoreChunkWith writes the scores of the rows x, as centres c (m.centers
// for standardised rows, m.mapped for raw ones) load them, to out.
func (m *Model) scoreChunkWith(c *kernel.Centers, ws *kernel.Workspace, out, x []float64, rows int) {
	c.KvTo(ws, out, x, rows, m.alpha, m.k)
	for i := 0; i < len(out); i += m.k {
		for j := range m.k {
			out[i+j] += m.targetMean[j]
		}
	}
}

// Label turns one row of scores (length K) into a prediction in the
// target's own values: the regression value, or the class value.
func (m *Model) Label(scores []float64) float64 {
	switch m.task {
	case TaskBinary:
		if scores[0] > 0 {
			return m.classes[1]
		}
		return m.classes[0]
	case TaskMulticlass:
		return m.classes[argmax(scores)]
	}
	return scores[0]
}

// ClassIndex returns the index in Classes (and ClassNames) of the class
// predicted by one row of scores (length K); 0 for regression.
func (m *Model) ClassIndex(scores []float64) int {
	switch m.task {
	case TaskBinary:
		if scores[0] > 0 {
			return 1
		}
	case TaskMulticlass:
		return argmax(scores)
	}
	return 0
}

func argmax(v []float64) int {
	best := 0
	for j, x := range v {
		if x > v[best] {
			best = j
		}
	}
	return best
}

// Batch is one chunk of predictions, passed in chunk order.
type Batch struct {
	Chunk  int
	Rows   int
	Scores []float64 // Rows × K
	// Targets holds the source's targets (Rows × NumTargets) when the
	// prediction asked for them, else nil.
	Targets []float64
	// Weights holds the rows' weights when the prediction asked for the
	// targets and the source carries weights (stream.Weighter), else nil.
	Weights []float64
	// Std holds the predictive standard deviation of each score (Rows ×
	// K) with PredictOptions.Std, else nil.
	Std []float64
}

type predPart struct {
	rows              int
	scores, y, w, std []float64
}

// Predict streams src (features in the model's order, raw) through the
// model and calls fn with each chunk's scores, in chunk order. A NaN or
// infinite feature is an error (a *stream.ValueError naming the chunk,
// row and column). With
// withTargets the source's targets are passed along. The slices in a
// Batch are valid only during the call.
func (m *Model) Predict(ctx context.Context, src stream.Source, opt PredictOptions, withTargets bool, fn func(Batch) error) error {
	if src.Dim() != m.d {
		return fmt.Errorf("the data has %d feature columns, the model was fitted on %d", src.Dim(), m.d)
	}
	if opt.Std && m.uncertainty == nil {
		return fmt.Errorf("the model has no predictive standard deviations: fit it with --uncertainty (Config.Uncertainty)")
	}
	src = spread(src)
	chunks := src.NumChunks()
	done := 0
	weights := withTargets && stream.WeightColumn(src) != ""
	return stream.Run(ctx, src, stream.Options{Workers: opt.Workers}, stream.Job[*predPart]{
		Targets:    withTargets,
		Weights:    weights,
		NewPartial: func() *predPart { return &predPart{} },
		NewWorker: func() func(context.Context, stream.Chunk, *predPart) error {
			ws := m.mapped.NewWorkspace()
			var buf []float64
			return func(_ context.Context, c stream.Chunk, p *predPart) error {
				p.rows = c.Rows
				p.scores = slices.Grow(p.scores[:0], c.Rows*m.k)[:c.Rows*m.k]
				// The kernel standardises each row as it loads it and
				// flags the first non-finite one (Workspace.NonFinite).
				if opt.Std {
					p.std = slices.Grow(p.std[:0], c.Rows*m.k)[:c.Rows*m.k]
					m.stdChunk(m.mapped, ws, &buf, p.scores, p.std, c.X, c.Rows, false)
				} else {
					m.scoreChunkWith(m.mapped, ws, p.scores, c.X, c.Rows)
				}
				if r := ws.NonFinite(); r >= 0 {
					return stream.CheckFinite(c.X[r*m.d:(r+1)*m.d], m.features).(*stream.ValueError).At(r)
				}
				p.y = append(p.y[:0], c.Y...)
				if weights {
					if err := stream.CheckWeights(c.W, stream.WeightColumn(src)); err != nil {
						return err
					}
				}
				p.w = append(p.w[:0], c.W...)
				return nil
			}
		},
		Reduce: func(chunk int, p *predPart) error {
			b := Batch{Chunk: chunk, Rows: p.rows, Scores: p.scores}
			if withTargets {
				b.Targets = p.y
			}
			if weights {
				b.Weights = p.w
			}
			if opt.Std {
				b.Std = p.std
			}
			if err := fn(b); err != nil {
				return err
			}
			done++
			if opt.Progress != nil {
				opt.Progress(done, chunks)
			}
			return nil
		},
	})
}

// Metrics summarises predictions against known targets. Fields that do
// not apply to the task are nil. For classification, LogLoss and ECE are
// those of the model's probabilities (Model.ProbaTo): calibrated when the
// model carries a Calibration, else of its uncalibrated scores.
type Metrics struct {
	Rows      int64    `json:"rows"`
	MSE       *float64 `json:"mse,omitempty"`
	RMSE      *float64 `json:"rmse,omitempty"`
	RelErr    *float64 `json:"rel_error,omitempty"`
	ErrorRate *float64 `json:"error_rate,omitempty"`
	// Accuracy is 1 − ErrorRate.
	Accuracy *float64 `json:"accuracy,omitempty"`
	// AUC is the ROC AUC of the scores: binary, or the one-vs-rest macro
	// average over classes for multiclass (metrics.MulticlassAUC).
	AUC *float64 `json:"auc,omitempty"`
	// LogLoss is the mean negative log-probability of the true class
	// (metrics.LogLoss).
	LogLoss *float64 `json:"log_loss,omitempty"`
	// ECE is the expected calibration error of the top-label
	// probability in metrics.DefaultBins equal-width bins
	// (metrics.Reliability).
	ECE *float64 `json:"ece,omitempty"`
}

// Evaluator accumulates the metrics of a model's predictions batch by
// batch. For classification it keeps every row's scores and class
// (8K + 8 bytes a row), for the AUC and calibration.
type Evaluator struct {
	m      *Model
	reg    metrics.Regression
	scores []float64 // rows × K, classification
	truth  []int     // class index of each row, classification
	w      []float64 // row weights, classification (AddWeighted)
}

// NewEvaluator returns an evaluator for m's task.
func (m *Model) NewEvaluator() *Evaluator { return &Evaluator{m: m} }

// Add adds a batch's scores against its targets (rows × K scores; rows
// targets, one column, for classification; rows × K for regression).
func (e *Evaluator) Add(scores, targets []float64, rows int) error {
	m := e.m
	if m.task == TaskRegression {
		e.reg.Add(scores, targets)
		return nil
	}
	for r := range rows {
		ci, ok := slices.BinarySearch(m.classes, targets[r])
		if !ok {
			return fmt.Errorf("target %q: value %v is not one of the model's classes %v", m.targets[0], targets[r], m.classes)
		}
		e.truth = append(e.truth, ci)
	}
	e.scores = append(e.scores, scores[:rows*m.k]...)
	return nil
}

// AddWeighted is Add with a weight per row: every metric becomes the
// weighted one (Σ wᵢ·lossᵢ / Σ wᵢ; the weighted AUC). An Evaluator takes
// Add or AddWeighted, not both; w nil is Add.
func (e *Evaluator) AddWeighted(scores, targets, w []float64, rows int) error {
	if w == nil {
		return e.Add(scores, targets, rows)
	}
	m := e.m
	if m.task == TaskRegression {
		e.reg.AddWeighted(scores[:rows*m.k], targets[:rows*m.k], w, m.k)
		return nil
	}
	if err := e.Add(scores, targets, rows); err != nil {
		return err
	}
	e.w = append(e.w, w[:rows]...)
	return nil
}

// Metrics returns the metrics so far.
func (e *Evaluator) Metrics() *Metrics {
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	out := &Metrics{}
	if e.m.task == TaskRegression {
		out.Rows = e.reg.Count() / int64(e.m.k)
		out.MSE, out.RMSE, out.RelErr = f(e.reg.MSE()), f(e.reg.RMSE()), f(e.reg.RelErr())
		return out
	}
	n := len(e.truth)
	out.Rows = int64(n)
	if n == 0 {
		return out
	}
	q := probaQuality(e.m, e.m.ownCalibration(), e.scores, e.truth, e.w)
	out.ErrorRate, out.Accuracy = f(1-q.accuracy), f(q.accuracy)
	out.LogLoss, out.ECE = f(q.logLoss), f(q.ece)
	if e.m.task == TaskBinary {
		pos := make([]bool, n)
		for i, t := range e.truth {
			pos[i] = t == 1
		}
		out.AUC = f(metrics.AUCWeighted(e.scores, pos, e.w))
	} else {
		out.AUC = f(metrics.MulticlassAUCWeighted(e.scores, e.m.k, e.truth, e.w))
	}
	return out
}

// Evaluate predicts src, whose targets must be the model's targets in
// order, and returns the metrics.
func (m *Model) Evaluate(ctx context.Context, src stream.Source, opt PredictOptions) (*Metrics, error) {
	ev, err := m.evaluate(ctx, src, opt)
	if err != nil {
		return nil, err
	}
	return ev.Metrics(), nil
}

// evaluate predicts src into an Evaluator.
func (m *Model) evaluate(ctx context.Context, src stream.Source, opt PredictOptions) (*Evaluator, error) {
	if want := len(m.targets); src.NumTargets() != want {
		return nil, fmt.Errorf("the data has %d target columns, the model has %d", src.NumTargets(), want)
	}
	ev := m.NewEvaluator()
	err := m.Predict(ctx, src, opt, true, func(b Batch) error {
		return ev.AddWeighted(b.Scores, b.Targets, b.Weights, b.Rows)
	})
	if err != nil {
		return nil, err
	}
	return ev, nil
}
