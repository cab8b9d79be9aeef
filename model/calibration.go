package model

import (
	"context"
	"fmt"
	"math"

	"github.com/falkon-ooc/falkon-ooc/internal/loss"
	"github.com/falkon-ooc/falkon-ooc/metrics"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Calibration methods.
const (
	// CalibrationPlatt maps a binary score s to the probability of
	// Classes()[1] by 1 / (1 + exp(−(A·s + B))) (Platt 1999).
	CalibrationPlatt = "platt"
	// CalibrationTemperature maps multiclass scores s to probabilities
	// by softmax(s / T) (Guo et al. 2017).
	CalibrationTemperature = "temperature"
)

// Calibration turns a classifier's scores into probabilities. A trainer
// computes it on validation rows (Calibrate and Model.CalibratedOn do
// the same for any model and rows) by minimising the log-loss of the
// probabilities on the validation rows: Platt scaling for binary models
// (two parameters, with Platt's smoothed targets (N₊+1)/(N₊+2) and
// 1/(N₋+2)), a softmax temperature for multiclass models (one parameter,
// which keeps the predicted class). Both problems are convex and solved
// by Newton's method with a backtracking line search.
//
// Platt: J. Platt, "Probabilistic outputs for support vector machines",
// 1999; H.-T. Lin, C.-J. Lin, R. Weng, "A note on Platt's probabilistic
// outputs", 2007. Temperature: C. Guo, G. Pleiss, Y. Sun, K. Weinberger,
// "On Calibration of Modern Neural Networks", ICML 2017.
type Calibration struct {
	// Method is CalibrationPlatt or CalibrationTemperature.
	Method string `json:"method"`
	// A and B are Platt's parameters.
	A float64 `json:"a,omitempty"`
	B float64 `json:"b,omitempty"`
	// Temperature is T > 0 of the softmax.
	Temperature float64 `json:"temperature,omitempty"`
	// Rows is the number of validation rows it was fitted on.
	Rows int64 `json:"rows"`
	// The log-loss and expected calibration error (metrics.Reliability,
	// metrics.DefaultBins equal-width bins) on those rows of the
	// uncalibrated probabilities (Model.ProbaTo's mapping without
	// calibration) and of the calibrated ones (in-sample).
	LogLossBefore float64 `json:"log_loss_before"`
	LogLossAfter  float64 `json:"log_loss_after"`
	ECEBefore     float64 `json:"ece_before"`
	ECEAfter      float64 `json:"ece_after"`
}

// validate checks a calibration read from a file (nil is valid).
func (c *Calibration) validate(task Task) error {
	if c == nil {
		return nil
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case task == TaskBinary && c.Method == CalibrationPlatt && finite(c.A) && finite(c.B):
	case task == TaskMulticlass && c.Method == CalibrationTemperature && c.Temperature > 0 && finite(c.Temperature):
	default:
		return fmt.Errorf("calibration %q (a = %v, b = %v, temperature = %v) does not fit a %s model", c.Method, c.A, c.B, c.Temperature, task)
	}
	return nil
}

// NumClasses returns the number of classes (2 for binary, K for
// multiclass, 0 for regression): the row width of ProbaTo.
func (m *Model) NumClasses() int { return len(m.classes) }

// ProbaTo writes the class probabilities of rows rows of scores (rows ×
// K, from PredictTo or Predict) into dst (rows × NumClasses()), in the
// order of Classes and ClassNames; each row sums to 1. With a
// Calibration they are calibrated (Platt or temperature). Without one
// they are the uncalibrated mapping of the scores: for binary (targets
// encoded ±1) P(Classes[1]) = (s + 1)/2 clipped to [0, 1]; for
// multiclass (targets encoded one-hot) max(s_j, 0) normalised to sum 1
// (uniform when every score is ≤ 0). It panics for a regression model or
// mismatched lengths.
func (m *Model) ProbaTo(dst, scores []float64, rows int) {
	c := len(m.classes)
	if m.task == TaskRegression || len(scores) != rows*m.k || len(dst) != rows*c {
		panic(fmt.Sprintf("model: ProbaTo: %s model, len(scores) = %d, len(dst) = %d for %d rows, k = %d", m.task, len(scores), len(dst), rows, m.k))
	}
	cal := m.ownCalibration()
	for r := range rows {
		probaRow(m.task, cal, dst[r*c:(r+1)*c], scores[r*m.k:(r+1)*m.k])
	}
}

// calibrationOwn marks the probabilities of a model of the logistic loss:
// σ(f) for binary, the outputs' σ(f_c) normalised for multiclass (one
// against the rest). Never stored.
const calibrationOwn = "own"

// ownCalibration is the model's calibration or, for a model of the
// logistic loss without one, its own probabilities (calibrationOwn).
func (m *Model) ownCalibration() *Calibration {
	if m.calibration == nil && m.loss == LossLogistic {
		return &Calibration{Method: calibrationOwn}
	}
	return m.calibration
}

// HasProba reports whether ProbaTo gives calibrated probabilities: the
// model has a calibration, or it was fitted with the logistic loss (whose
// scores are log-odds).
func (m *Model) HasProba() bool { return m.ownCalibration() != nil }

// probaRow writes one row's probabilities.
func probaRow(task Task, cal *Calibration, dst, s []float64) {
	if task == TaskBinary {
		p := binaryProba(cal, s[0])
		dst[0], dst[1] = 1-p, p
		return
	}
	if cal != nil && cal.Method == calibrationOwn {
		sum := 0.0
		for j, v := range s {
			dst[j] = loss.Sigmoid(v)
			sum += dst[j]
		}
		for j := range dst {
			dst[j] /= sum
		}
		return
	}
	if cal != nil {
		softmaxTo(dst, s, 1/cal.Temperature)
		return
	}
	var sum float64
	for j, v := range s {
		dst[j] = max(v, 0)
		sum += dst[j]
	}
	if sum == 0 {
		for j := range dst {
			dst[j] = 1 / float64(len(dst))
		}
		return
	}
	for j := range dst {
		dst[j] /= sum
	}
}

// binaryProba is a binary model's probability of Classes[1] at score s
// under cal (nil: uncalibrated).
func binaryProba(cal *Calibration, s float64) float64 {
	switch {
	case cal == nil:
		return min(max((s+1)/2, 0), 1)
	case cal.Method == calibrationOwn:
		return loss.Sigmoid(s)
	}
	return loss.Sigmoid(cal.A*s + cal.B)
}

// softmaxTo writes softmax(β s) into dst.
func softmaxTo(dst, s []float64, beta float64) {
	mx := math.Inf(-1)
	for _, v := range s {
		mx = max(mx, beta*v)
	}
	var sum float64
	for j, v := range s {
		dst[j] = math.Exp(beta*v - mx)
		sum += dst[j]
	}
	for j := range dst {
		dst[j] /= sum
	}
}

// quality is what calibration is judged by on a set of rows.
type quality struct{ accuracy, logLoss, ece float64 }

// probaQuality returns the accuracy of the predicted classes, and the
// log-loss and ECE of the probabilities of task's model m under cal (nil:
// uncalibrated), on rows of scores (rows × K) with true class indices
// truth.
func probaQuality(m *Model, cal *Calibration, scores []float64, truth []int, w []float64) quality {
	c, k := len(m.classes), m.k
	p := make([]float64, c)
	var ll metrics.LogLoss
	var rel metrics.Reliability
	right := 0
	var wright, wsum float64 // with weights
	for r, t := range truth {
		s := scores[r*k : (r+1)*k]
		ok := m.ClassIndex(s) == t
		if ok {
			right++
		}
		probaRow(m.task, cal, p, s)
		top := argmax(p)
		if w != nil {
			if ok {
				wright += w[r]
			}
			wsum += w[r]
			ll.AddWeighted(p[t], w[r])
			rel.AddWeighted(p[top], top == t, w[r])
			continue
		}
		ll.Add(p[t])
		rel.Add(p[top], top == t)
	}
	acc := float64(right) / float64(len(truth))
	if w != nil {
		acc = wright / wsum
	}
	return quality{accuracy: acc, logLoss: ll.Value(), ece: rel.ECE()}
}

// fitPlatt returns A, B minimising the log-loss of σ(A s + B)
// against Platt's smoothed targets for the classes y (0 or 1).
func fitPlatt(s []float64, y []int) (a, b float64) {
	var npos, nneg float64
	for _, v := range y {
		if v == 1 {
			npos++
		} else {
			nneg++
		}
	}
	hi, lo := (npos+1)/(npos+2), 1/(nneg+2)
	target := func(i int) float64 {
		if y[i] == 1 {
			return hi
		}
		return lo
	}
	obj := func(a, b float64) float64 {
		var l float64
		for i, v := range s {
			z := a*v + b
			// −t log σ(z) − (1−t) log(1−σ(z)) = log(1+e^z) − t z, stably.
			l += loss.Softplus(z) - target(i)*z
		}
		return l
	}
	b = math.Log((npos + 1) / (nneg + 1))
	cur := obj(a, b)
	for range 100 {
		var ga, gb, haa, hab, hbb float64
		for i, v := range s {
			p := loss.Sigmoid(a*v + b)
			d := p - target(i)
			w := max(p*(1-p), 1e-12)
			ga += d * v
			gb += d
			haa += w * v * v
			hab += w * v
			hbb += w
		}
		// Solve the 2 × 2 Newton system (a ridge of 1e-12 for safety).
		haa += 1e-12
		hbb += 1e-12
		det := haa*hbb - hab*hab
		if !(det > 0) {
			break
		}
		da := -(hbb*ga - hab*gb) / det
		db := -(haa*gb - hab*ga) / det
		if -(ga*da + gb*db) < 1e-12*(1+cur) { // Newton decrement: converged
			break
		}
		step := 1.0
		var next float64
		for ; step > 1e-10; step /= 2 {
			if next = obj(a+step*da, b+step*db); next <= cur {
				break
			}
		}
		if step <= 1e-10 {
			break
		}
		a, b = a+step*da, b+step*db
		done := math.Abs(step*da) < 1e-10*(1+math.Abs(a)) && math.Abs(step*db) < 1e-10*(1+math.Abs(b))
		cur = next
		if done {
			break
		}
	}
	return a, b
}

// Bounds of the inverse temperature β = 1/T.
const minBeta, maxBeta = 1e-6, 1e6

// fitTemperature returns T minimising the log-loss of softmax(s / T) on
// rows of k scores against the classes truth. In β = 1/T the log-loss
// Σ_i (log Σ_j exp(β s_ij) − β s_i,y_i) is convex, with derivative
// Σ_i (E_p[s_i] − s_i,y_i) and second derivative Σ_i Var_p[s_i].
func fitTemperature(scores []float64, k int, truth []int) float64 {
	p := make([]float64, k)
	loss := func(beta float64) float64 {
		var l float64
		for r, t := range truth {
			s := scores[r*k : (r+1)*k]
			mx := math.Inf(-1)
			for _, v := range s {
				mx = max(mx, beta*v)
			}
			var sum float64
			for _, v := range s {
				sum += math.Exp(beta*v - mx)
			}
			l += mx + math.Log(sum) - beta*s[t]
		}
		return l
	}
	beta := 1.0
	cur := loss(beta)
	for range 100 {
		var g, h float64
		for r, t := range truth {
			s := scores[r*k : (r+1)*k]
			softmaxTo(p, s, beta)
			var mean, sq float64
			for j, v := range s {
				mean += p[j] * v
				sq += p[j] * v * v
			}
			g += mean - s[t]
			h += sq - mean*mean
		}
		if !(h > 0) {
			break
		}
		d := -g / h
		if g*g/h < 1e-12*(1+cur) { // Newton decrement: converged
			break
		}
		step := 1.0
		var next, nb float64
		for ; step > 1e-10; step /= 2 {
			nb = min(max(beta+step*d, minBeta), maxBeta)
			if next = loss(nb); next <= cur {
				break
			}
		}
		if step <= 1e-10 || nb == beta {
			break
		}
		done := math.Abs(nb-beta) < 1e-10*beta
		beta, cur = nb, next
		if done {
			break
		}
	}
	return 1 / beta
}

// newCalibration fits the calibration of m's task on rows of scores
// with true class indices truth; nil for regression or no rows.
func newCalibration(m *Model, scores []float64, truth []int) *Calibration {
	if m.task == TaskRegression || len(truth) == 0 {
		return nil
	}
	c := &Calibration{Rows: int64(len(truth))}
	if m.task == TaskBinary {
		c.Method = CalibrationPlatt
		c.A, c.B = fitPlatt(scores, truth)
	} else {
		c.Method = CalibrationTemperature
		c.Temperature = fitTemperature(scores, m.k, truth)
	}
	// Before: the model's probabilities without a calibration (its own
	// σ(f) for the logistic loss).
	var own *Calibration
	if m.loss == LossLogistic {
		own = &Calibration{Method: calibrationOwn}
	}
	before, after := probaQuality(m, own, scores, truth, nil), probaQuality(m, c, scores, truth, nil)
	c.LogLossBefore, c.ECEBefore = before.logLoss, before.ece
	c.LogLossAfter, c.ECEAfter = after.logLoss, after.ece
	return c
}

// withCalibration returns a copy of m with calibration c.
func (m *Model) withCalibration(c *Calibration) *Model {
	cp := *m
	cp.calibration = c
	return &cp
}

// CalibratedOn returns a copy of the classification model m whose
// probabilities are calibrated on the rows ev accumulated (an Evaluator
// of m, or of a model of the same scores), as Calibrate does; m itself
// for regression or an evaluator without rows.
func (m *Model) CalibratedOn(ev *Evaluator) *Model {
	if m.task == TaskRegression || len(ev.truth) == 0 {
		return m
	}
	return m.withCalibration(newCalibration(m, ev.scores, ev.truth))
}

// Calibrate returns a copy of the classification model m whose
// probabilities are calibrated on val (one pass over it; its targets
// must be m's; see Calibration). It is an error for a regression model
// or a source without rows.
func Calibrate(ctx context.Context, m *Model, val stream.Source, opt PredictOptions) (*Model, error) {
	if m.task == TaskRegression {
		return nil, fmt.Errorf("calibrate: a regression model has no probabilities")
	}
	val, err := m.Relabel(val)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	ev, err := m.evaluate(ctx, val, opt)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	if len(ev.truth) == 0 {
		return nil, fmt.Errorf("calibrate: the validation data has no rows")
	}
	return m.CalibratedOn(ev), nil
}
