package model

import (
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Projector gives a trainer the terms of a model's predictive variance
// (see Uncertainty) on rows of its own: the scores and the projections
// uᵢᵀk_x, from which it fits the variance's λ, scale and noise. A service
// that predicts uses a Predictor instead. A Projector keeps its scratch
// space from call to call and is not safe for concurrent use.
type Projector struct {
	m   *Model
	ws  *kernel.Workspace
	buf []float64 // K(X,C)·[α | W], rows × (K + Rank)
}

// NewProjector returns a Projector of m.
func (m *Model) NewProjector() *Projector {
	return &Projector{m: m, ws: m.mapped.NewWorkspace()}
}

// ProjectTo writes the scores (rows × K) of rows of raw features x to
// scores, and to proj (rows × Rank) the projections uᵢᵀk_x of each row's
// kernel vector on the directions of the model's Uncertainty, from one
// kernel evaluation: the terms of the variance v(x) (see Uncertainty),
// for a trainer that fits its λ, scale and noise. It panics when the
// model has no Uncertainty or on a shape mismatch; a non-finite feature
// is an error, as in PredictTo.
func (p *Projector) ProjectTo(scores, proj, x []float64, rows int) error {
	m := p.m
	if m.uncertainty == nil {
		panic("model: ProjectTo: " + ErrNoUncertainty.Error())
	}
	if len(x) != rows*m.d || len(scores) != rows*m.k || len(proj) != rows*m.uncertainty.Rank {
		panic(fmt.Sprintf("model: ProjectTo: len(x) = %d, len(scores) = %d, len(proj) = %d for %d rows, d = %d, k = %d, rank %d",
			len(x), len(scores), len(proj), rows, m.d, m.k, m.uncertainty.Rank))
	}
	m.projChunk(m.mapped, p.ws, &p.buf, scores, proj, x, rows)
	if r := p.ws.NonFinite(); r >= 0 {
		return stream.CheckFinite(x[r*m.d:(r+1)*m.d], m.features).(*stream.ValueError).At(r)
	}
	return nil
}
