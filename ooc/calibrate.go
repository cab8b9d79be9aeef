package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"

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

// Calibration turns a classifier's scores into probabilities. Fit
// computes it when RunOptions.Validation is set (Calibrate does the same
// for any model and source) by minimising the log-loss of the
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
		panic(fmt.Sprintf("ooc: ProbaTo: %s model, len(scores) = %d, len(dst) = %d for %d rows, k = %d", m.task, len(scores), len(dst), rows, m.k))
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
	if m.calibration == nil && m.cfg.Loss == LossLogistic {
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
	if cal != nil && cal.Method == calibrationOwn {
		if task == TaskBinary {
			p := sigmoid(s[0])
			dst[0], dst[1] = 1-p, p
			return
		}
		sum := 0.0
		for j, v := range s {
			dst[j] = sigmoid(v)
			sum += dst[j]
		}
		for j := range dst {
			dst[j] /= sum
		}
		return
	}
	if task == TaskBinary {
		var p float64
		if cal != nil {
			p = sigmoid(cal.A*s[0] + cal.B)
		} else {
			p = min(max((s[0]+1)/2, 0), 1)
		}
		dst[0], dst[1] = 1-p, p
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

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
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

// fitPlatt returns A, B minimising the log-loss of sigmoid(A s + B)
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
	loss := func(a, b float64) float64 {
		var l float64
		for i, v := range s {
			z := a*v + b
			// −t log σ(z) − (1−t) log(1−σ(z)) = log(1+e^z) − t z, stably.
			l += softplus(z) - target(i)*z
		}
		return l
	}
	b = math.Log((npos + 1) / (nneg + 1))
	cur := loss(a, b)
	for range 100 {
		var ga, gb, haa, hab, hbb float64
		for i, v := range s {
			p := sigmoid(a*v + b)
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
			if next = loss(a+step*da, b+step*db); next <= cur {
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

func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
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
	if m.cfg.Loss == LossLogistic {
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

// Calibrate returns a copy of the classification model m whose
// probabilities are calibrated on val (one pass over it; its targets
// must be m's), as Fit does with RunOptions.Validation (see
// Calibration). It is an error for a regression model or a source
// without rows.
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
	return m.withCalibration(newCalibration(m, ev.scores, ev.truth)), nil
}

// calibrateFit returns the fit's model m calibrated on the validation
// rows of opts, reusing ev, the scores of the last validation pass, when
// it scored the same CG iterate (else nil: one more validation pass); m
// itself without validation rows or for regression.
func calibrateFit(ctx context.Context, m *Model, opts RunOptions, ev *Evaluator) (*Model, error) {
	if opts.Validation == nil || m.task == TaskRegression {
		return m, nil
	}
	if ev == nil {
		var err error
		if ev, err = m.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers}); err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
	}
	return m.withCalibration(newCalibration(m, ev.scores, ev.truth)), nil
}

// targetLabels returns the label names of src's first target
// (stream.Labeler), or nil.
func targetLabels(src stream.Source) []string {
	if l, ok := src.(stream.Labeler); ok {
		if labels := l.TargetLabels(); len(labels) == src.NumTargets() && len(labels) > 0 {
			return labels[0]
		}
	}
	return nil
}

// classNames returns the label names of the classes cls (codes into
// labels), or nil when labels is nil.
func classNames(target string, labels []string, cls []float64) ([]string, error) {
	if labels == nil {
		return nil, nil
	}
	names := make([]string, len(cls))
	for i, c := range cls {
		j := int(c)
		if c != math.Trunc(c) || j < 0 || j >= len(labels) {
			return nil, configErr("target %q: value %v is not the code of one of its %d labels", target, c, len(labels))
		}
		names[i] = labels[j]
	}
	return slices.Clone(names), nil
}

// relabel returns src with the codes of its first target's labels
// mapped to code[label], for a source whose label codes differ from the
// model's (a validation store ingested on its own numbers the labels it
// has). It returns src when it has no labels or the same codes, and an
// error naming a label that code lacks.
func relabel(src stream.Source, what, target string, code map[string]float64) (stream.Source, error) {
	labels := targetLabels(src)
	if labels == nil || code == nil {
		return src, nil
	}
	codes := make([]float64, len(labels))
	same := true
	for j, l := range labels {
		c, ok := code[l]
		if !ok {
			known := make([]string, 0, len(code))
			for k := range code {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("%s: target %q has the label %q, which the model's classes %q lack", what, target, l, known)
		}
		codes[j] = c
		same = same && c == float64(j)
	}
	if same {
		return src, nil
	}
	return &relabeled{Source: src, codes: codes}, nil
}

// relabeled maps the label codes of its source's first target.
type relabeled struct {
	stream.Source
	codes []float64
}

// WeightColumn and ReadWeights forward the source's row weights.
func (r *relabeled) WeightColumn() string { return stream.WeightColumn(r.Source) }
func (r *relabeled) ReadWeights(ctx context.Context, i int, w []float64) error {
	return r.Source.(stream.Weighter).ReadWeights(ctx, i, w)
}

func (r *relabeled) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if err := r.Source.ReadChunk(ctx, i, x, y); err != nil || y == nil {
		return err
	}
	k := r.NumTargets()
	for at := 0; at < len(y); at += k {
		if j := int(y[at]); y[at] == float64(j) && j >= 0 && j < len(r.codes) {
			y[at] = r.codes[j]
		}
	}
	return nil
}

// AlignLabels returns val with the codes of its label target mapped to
// those of train's (both as stream.Labeler reports them), for a
// validation source ingested apart from the training data, which numbers
// only the labels it has; val itself when neither has labels or the codes
// already agree. A label of val that train lacks is an error naming it.
// Fit does this with RunOptions.Validation.
func AlignLabels(train, val stream.Source) (stream.Source, error) {
	_, targets := stream.ColumnsOf(train)
	if len(targets) == 0 {
		return val, nil
	}
	return relabel(val, "the validation data", targets[0], labelCodes(targetLabels(train)))
}

// labelCodes maps the training source's label names to their codes
// (nil when its first target has none).
func labelCodes(labels []string) map[string]float64 {
	if labels == nil {
		return nil
	}
	code := make(map[string]float64, len(labels))
	for j, l := range labels {
		code[l] = float64(j)
	}
	return code
}

// modelCodes maps m's class names to its class values (nil when its
// classes are not labels).
func (m *Model) modelCodes() map[string]float64 {
	if m.classNames == nil {
		return nil
	}
	code := make(map[string]float64, len(m.classNames))
	for i, n := range m.classNames {
		code[n] = m.classes[i]
	}
	return code
}

// Relabel returns src with the codes of its label target (stream.Labeler)
// mapped to the model's, so that Evaluate and Predict's targets match the
// model's classes whatever order the source numbered its labels in; src
// itself when they already match or the source has no labels. A label
// that the model lacks is an error naming it.
func (m *Model) Relabel(src stream.Source) (stream.Source, error) {
	if len(m.targets) == 0 || m.task == TaskRegression {
		return src, nil
	}
	return relabel(src, "the data", m.targets[0], m.modelCodes())
}
