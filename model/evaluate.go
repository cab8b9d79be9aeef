package model

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/metrics"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Metrics summarises predictions against known targets. Fields that do
// not apply to the task are nil. Every metric is weighted by the row
// weights when there are any (a row of weight w counts w times). For
// classification, the labels are the model's (Model.ClassIndex: the
// decision its probabilities imply), and LogLoss and ECE are those of
// its probabilities (Model.ProbaTo): calibrated when the model carries a
// Calibration, else of its uncalibrated scores. The definitions are
// package metrics'.
type Metrics struct {
	Rows int64    `json:"rows"`
	MSE  *float64 `json:"mse,omitempty"`
	RMSE *float64 `json:"rmse,omitempty"`
	// MAE is the mean absolute error; R2 the coefficient of
	// determination 1 − Σ(ŷ−y)²/Σ(y−ȳ)², which is 1 − RelErr.
	MAE       *float64 `json:"mae,omitempty"`
	R2        *float64 `json:"r2,omitempty"`
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
	// BalancedAccuracy is the mean recall over the classes present
	// (metrics.Confusion.BalancedAccuracy).
	BalancedAccuracy *float64 `json:"balanced_accuracy,omitempty"`
	// PRAUC is, for binary, the area under the precision–recall curve of
	// the second class by its scores, as average precision
	// (metrics.AveragePrecision); a random ranking scores its share of
	// the rows.
	PRAUC *float64 `json:"pr_auc,omitempty"`
	// Classes holds precision, recall and F1 per class, in the order of
	// the model's classes ("per_class": predict's --json has "classes",
	// the class names).
	Classes []ClassMetrics `json:"per_class,omitempty"`
	// Confusion is the confusion matrix: Confusion[t][p] is the rows (or
	// weight) of true class t labelled p, in the order of Classes.
	Confusion [][]float64 `json:"confusion,omitempty"`
}

// ClassMetrics are one class's metrics of the labels (metrics.Confusion).
// Precision is null (nil) when no row is labelled with the class;
// recall and F1 when the class has no row either.
type ClassMetrics struct {
	Class string `json:"class"`
	// Support is the rows of the class (their weight with row weights).
	Support   float64  `json:"support"`
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
}

// Brief returns a copy of m without the per-class metrics and the
// confusion matrix: what a history of many validations keeps.
func (m *Metrics) Brief() Metrics {
	b := *m
	b.Classes, b.Confusion = nil, nil
	return b
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

// NewEvaluator returns an evaluator of the scores of a model of task,
// classes (sorted; nil for regression), targets and k outputs that does
// not exist yet (a trainer's validation), with uncalibrated
// probabilities. It panics on a shape that no model has.
func NewEvaluator(task Task, classes []float64, targets []string, k int) *Evaluator {
	if k < 1 || len(targets) == 0 || (task != TaskRegression && len(classes) < 2) {
		panic(fmt.Sprintf("model: NewEvaluator: %s with %d classes, %d targets, k = %d", task, len(classes), len(targets), k))
	}
	return &Evaluator{m: &Model{task: task, classes: classes, targets: targets, k: k}}
}

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
		out.MAE, out.R2 = f(e.reg.MAE()), f(e.reg.R2())
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
	nc, k := len(e.m.classes), e.m.k
	conf := metrics.NewConfusion(nc)
	for i, t := range e.truth {
		w := 1.0
		if e.w != nil {
			w = e.w[i]
		}
		conf.AddWeighted(t, e.m.ClassIndex(e.scores[i*k:(i+1)*k]), w)
	}
	out.BalancedAccuracy = f(conf.BalancedAccuracy())
	names := e.m.ClassNames()
	out.Confusion = make([][]float64, nc)
	for c := range nc {
		out.Classes = append(out.Classes, ClassMetrics{Class: names[c], Support: conf.Support(c),
			Precision: f(conf.Precision(c)), Recall: f(conf.Recall(c)), F1: f(conf.F1(c))})
		out.Confusion[c] = make([]float64, nc)
		for p := range nc {
			out.Confusion[c][p] = conf.At(c, p)
		}
	}
	if e.m.task == TaskBinary {
		pos := make([]bool, n)
		for i, t := range e.truth {
			pos[i] = t == 1
		}
		out.AUC = f(metrics.AUCWeighted(e.scores, pos, e.w))
		out.PRAUC = f(metrics.AveragePrecisionWeighted(e.scores, pos, e.w))
	} else {
		out.AUC = f(metrics.MulticlassAUCWeighted(e.scores, e.m.k, e.truth, e.w))
	}
	return out
}

// Rescored returns an Evaluator of the model m over the rows e holds
// (e's model must have m's scores: m is the same model calibrated or
// with another Decision), so that m's metrics on them need no pass.
func (e *Evaluator) Rescored(m *Model) *Evaluator {
	if m.task != e.m.task || m.k != e.m.k || len(m.classes) != len(e.m.classes) {
		panic("model: Rescored with a model of other outputs")
	}
	cp := *e
	cp.m = m
	return &cp
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

// evalMagic starts an Evaluator's binary encoding.
const evalMagic = "FKEV"

// MarshalBinary encodes what e accumulated — regression's compensated
// sums, or classification's rows (scores, classes, weights), 8K + 8
// bytes a row — so that parts of a data set scored apart (package beam's
// predict tasks) are merged (UnmarshalBinary, Merge) into the metrics of
// the whole.
func (e *Evaluator) MarshalBinary() ([]byte, error) {
	reg, err := e.reg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := append([]byte(evalMagic), 1)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(reg)))
	b = append(b, reg...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(e.truth)))
	for _, v := range e.scores {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	for _, c := range e.truth {
		b = binary.LittleEndian.AppendUint32(b, uint32(c))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(e.w)))
	for _, v := range e.w {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

// UnmarshalBinary restores into e, an Evaluator of the model that
// encoded b (NewEvaluator), what MarshalBinary encoded; what e held is
// replaced.
func (e *Evaluator) UnmarshalBinary(b []byte) error {
	bad := errors.New("model: not an encoded Evaluator of this model")
	if len(b) < 9 || string(b[:4]) != evalMagic || b[4] != 1 {
		return bad
	}
	nreg := int(binary.LittleEndian.Uint32(b[5:]))
	b = b[9:]
	if nreg > len(b) {
		return bad
	}
	if err := e.reg.UnmarshalBinary(b[:nreg]); err != nil {
		return err
	}
	b = b[nreg:]
	if len(b) < 8 {
		return bad
	}
	n := binary.LittleEndian.Uint64(b)
	b = b[8:]
	k := uint64(e.m.k)
	if n > uint64(len(b))/(8*k+4) {
		return bad
	}
	e.scores = make([]float64, n*k)
	for i := range e.scores {
		e.scores[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	b = b[8*n*k:]
	e.truth = make([]int, n)
	for i := range e.truth {
		c := binary.LittleEndian.Uint32(b[4*i:])
		if int(c) >= max(len(e.m.classes), 1) {
			return fmt.Errorf("model: an encoded Evaluator with class %d of %d", c, len(e.m.classes))
		}
		e.truth[i] = int(c)
	}
	b = b[4*n:]
	if len(b) < 8 {
		return bad
	}
	nw := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if (nw != 0 && nw != n) || uint64(len(b)) != 8*nw {
		return bad
	}
	e.w = nil
	for i := range nw {
		e.w = append(e.w, math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
	}
	if e.m.task == TaskRegression && n != 0 {
		return bad
	}
	return nil
}

// Merge adds what o (an Evaluator of the same model) accumulated to e,
// as if o's rows had been added after e's: classification's metrics are
// then exactly one Evaluator's over both sets of rows in that order;
// regression's differ only by the rounding of the merged sums. Both must
// have been fed by Add, or both by AddWeighted.
func (e *Evaluator) Merge(o *Evaluator) error {
	if o.m.task != e.m.task || o.m.k != e.m.k {
		return errors.New("ooc: merging the metrics of two models' predictions")
	}
	if len(e.truth) > 0 && len(o.truth) > 0 && (e.w == nil) != (o.w == nil) {
		return errors.New("ooc: merging weighted and unweighted metrics")
	}
	e.reg.Merge(&o.reg)
	e.scores = append(e.scores, o.scores...)
	e.truth = append(e.truth, o.truth...)
	e.w = append(e.w, o.w...)
	return nil
}
