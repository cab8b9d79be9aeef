package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Want says what Predictor.PredictTo computes beside the scores and the
// classes.
type Want uint8

const (
	// WantProba asks for the class probabilities (Model.ProbaTo) of a
	// classification model.
	WantProba Want = 1 << iota
	// WantStd asks for the predictive standard deviation of every score
	// (Model.PredictStdTo) of a model with an Uncertainty.
	WantStd
)

// ErrShape is matched (errors.Is) by an error of Predictor.PredictTo
// about the length of its input.
var ErrShape = errors.New("model: wrong input shape")

// Prediction holds the predictions of one batch of rows. The caller owns
// its slices, and PredictTo reuses them: it reslices each to the batch's
// size and grows it only when its capacity is too small, so a Prediction
// reused for batches of at most the same size costs no allocation. A
// slice that was not asked for is left empty (length 0).
type Prediction struct {
	// Rows is the number of rows predicted.
	Rows int
	// Scores holds Rows × K scores, row-major: regression values, binary
	// scores (> 0 means Classes()[1]) or one score per class.
	Scores []float64
	// Class holds, for classification, the index in Classes() and
	// ClassNames() of each row's predicted class (Model.ClassIndex).
	Class []int
	// Proba holds, with WantProba, Rows × NumClasses() probabilities
	// (Model.ProbaTo).
	Proba []float64
	// Std holds, with WantStd, the Rows × K predictive standard
	// deviations (Model.PredictStdTo).
	Std []float64
}

// Predictor predicts batches of rows of one model with scratch space
// that it keeps from call to call: after its first call, PredictTo makes
// no allocation for batches of the same or fewer rows. It holds a kernel
// workspace (about one kernel tile, TileRows × M values: 1 MiB or less
// unless M is very large) and the scratch of the standard deviations.
// A Predictor is not safe for concurrent use: give each goroutine its
// own, or take them from a PredictorPool.
type Predictor struct {
	m   *Model
	ws  *kernel.Workspace
	buf []float64 // K(X,C)·[α | W], rows × (K + Rank)
}

// NewPredictor returns a Predictor of m.
func (m *Model) NewPredictor() *Predictor {
	return &Predictor{m: m, ws: m.mapped.NewWorkspace()}
}

// Model returns the predictor's model.
func (p *Predictor) Model() *Model { return p.m }

// PredictTo predicts rows rows of raw (unstandardised) features x
// (rows × D, row-major, in the order of Features) into dst: the scores
// and, for classification, the classes, and what want asks for. x is
// not changed. The results are those of Model.Predict, bit for bit.
//
// It returns an error, leaving dst's contents unspecified, when len(x)
// is not rows × D (matching ErrShape), when want asks for what the model
// cannot give (probabilities of a regression model; standard deviations
// of a model without an Uncertainty: ErrNoUncertainty), or when a
// feature is NaN or infinite (a *stream.ValueError naming the row and
// the feature).
func (p *Predictor) PredictTo(dst *Prediction, x []float64, rows int, want Want) error {
	m := p.m
	if rows < 0 || len(x) != rows*m.d {
		return fmt.Errorf("%w: %d values for %d rows of %d features", ErrShape, len(x), rows, m.d)
	}
	if want&WantProba != 0 && m.task == TaskRegression {
		return errors.New("model: a regression model has no class probabilities")
	}
	std := want&WantStd != 0
	if std && m.uncertainty == nil {
		return ErrNoUncertainty
	}
	n := rows * m.k
	dst.Rows = rows
	dst.Scores = resize(dst.Scores, n)
	dst.Class = dst.Class[:0]
	dst.Proba = dst.Proba[:0]
	dst.Std = dst.Std[:0]
	if std {
		dst.Std = resize(dst.Std, n)
		m.stdChunk(m.mapped, p.ws, &p.buf, dst.Scores, dst.Std, x, rows, false)
	} else {
		m.scoreChunkWith(m.mapped, p.ws, dst.Scores, x, rows)
	}
	if r := p.ws.NonFinite(); r >= 0 {
		return stream.CheckFinite(x[r*m.d:(r+1)*m.d], m.features).(*stream.ValueError).At(r)
	}
	if m.task == TaskRegression {
		return nil
	}
	dst.Class = slices.Grow(dst.Class, rows)[:rows]
	for r := range rows {
		dst.Class[r] = m.ClassIndex(dst.Scores[r*m.k : (r+1)*m.k])
	}
	if want&WantProba != 0 {
		c := len(m.classes)
		dst.Proba = resize(dst.Proba, rows*c)
		cal := m.ownCalibration()
		for r := range rows {
			probaRow(m.task, cal, dst.Proba[r*c:(r+1)*c], dst.Scores[r*m.k:(r+1)*m.k])
		}
	}
	return nil
}

// resize returns s with length n, reallocated only when its capacity is
// below n.
func resize(s []float64, n int) []float64 { return slices.Grow(s[:0], n)[:n] }

// PredictorPool lends the Predictors of one model to concurrent callers,
// such as a server's request handlers: Get returns an idle predictor, or
// a new one when none is idle, and Put returns it for reuse. At most size
// predictors stay idle (the rest are dropped at Put), so the pool's
// memory is bounded by the callers' concurrency and size. Get and Put
// never block and, once the pool holds enough predictors, allocate
// nothing. A PredictorPool is safe for concurrent use.
type PredictorPool struct {
	m    *Model
	idle chan *Predictor
}

// NewPredictorPool returns a pool of m's predictors that keeps up to size
// of them idle (size < 1 means 1).
func NewPredictorPool(m *Model, size int) *PredictorPool {
	return &PredictorPool{m: m, idle: make(chan *Predictor, max(size, 1))}
}

// Get returns an idle predictor, or a new one.
func (pp *PredictorPool) Get() *Predictor {
	select {
	case p := <-pp.idle:
		return p
	default:
		return pp.m.NewPredictor()
	}
}

// Put returns p, which the caller no longer uses, to the pool. It panics
// when p is another model's.
func (pp *PredictorPool) Put(p *Predictor) {
	if p.m != pp.m {
		panic("model: PredictorPool.Put: a predictor of another model")
	}
	select {
	case pp.idle <- p:
	default:
	}
}
