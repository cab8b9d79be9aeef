package model

import (
	"context"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
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
// It allocates a copy of x and a kernel workspace per call; a Predictor
// gives the same scores bit for bit without allocating.
func (m *Model) PredictTo(out, x []float64, rows int) {
	if len(x) != rows*m.d || len(out) != rows*m.k {
		panic(fmt.Sprintf("model: PredictTo: len(x) = %d, len(out) = %d for %d rows, d = %d, k = %d", len(x), len(out), rows, m.d, m.k))
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
	c.KvWeightsTo(ws, out, x, rows, m.kvAlpha)
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
	case TaskBinary, TaskMulticlass:
		return m.classes[m.ClassIndex(scores)]
	}
	return scores[0]
}

// ClassIndex returns the index in Classes (and ClassNames) of the class
// predicted by one row of scores (length K); 0 for regression. It is the
// label the probabilities imply (Decision): for binary, 1 when the
// probability of Classes[1] is at least the threshold; for multiclass,
// the largest score's class, whose probability is the largest.
func (m *Model) ClassIndex(scores []float64) int {
	switch m.task {
	case TaskBinary:
		if m.proba1(scores[0]) >= m.threshold() {
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
		return ErrNoUncertainty
	}
	src = stream.Spread(src)
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

// standardize sets x ← (x − mean) · invStd row by row, in place.
func standardize(x, mean, invStd []float64) {
	d := len(mean)
	for i := 0; i < len(x); i += d {
		row := x[i : i+d]
		for j := range row {
			row[j] = (row[j] - mean[j]) * invStd[j]
		}
	}
}
