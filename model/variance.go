package model

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// Predictive uncertainty. A regression model fitted with one (package
// ooc's Config.Uncertainty) keeps an M × r factor W = [u₁ … u_r] and the
// weights wᵢ = σᵢ/(σᵢ + λ) of its directions, and gives each output j at
// x the variance
//
//	Scale[j]·v(x) + Noise[j],   v(x) = max(Prior − Σᵢ wᵢ (uᵢᵀ k_x)², 0),
//
// with k_x = K(C, x): the deterministic-training-conditional variance of
// a Gaussian process on the centres, truncated to the r directions that
// carry most of the data's signal (package ooc derives it). One kernel
// evaluation gives both the scores and the projections uᵢᵀ k_x, as the
// columns of K(X, C)·[α | W].

// ErrNoUncertainty is returned when standard deviations are asked of a
// model that has no Uncertainty.
var ErrNoUncertainty = errors.New("the model has no predictive standard deviations: it was fitted without an uncertainty (Config.Uncertainty)")

// UncertaintyMethod is how a fit obtained the predictive variance.
type UncertaintyMethod string

// Uncertainty methods; "" is none.
const (
	UncertaintyPrecond UncertaintyMethod = "precond"
	UncertaintyExact   UncertaintyMethod = "exact"
)

// Uncertainty is what a model keeps to give predictive standard
// deviations (Model.PredictStdTo, PredictOptions.Std, Predictor), and how
// well they did on the fit's validation rows. The variance of output j at
// x is
//
//	Scale[j]·v(x) + Noise[j],   v(x) = Prior − ‖Wᵀk_x‖²
//
// with W the model's M × Rank factor, its directions weighted (see the
// package's variance.go).
type Uncertainty struct {
	Method UncertaintyMethod `json:"method"`
	Rank   int               `json:"rank"`
	// Prior is k(x, x), the same for every x (distance kernels).
	Prior float64 `json:"prior"`
	// Sigma holds σᵢ, the data's signal in each of the Rank directions
	// kept, largest first; Lambda is the variance's λ, fitted on the
	// validation rows: direction i carries the weight σᵢ/(σᵢ + Lambda).
	// FitLambda is the fit's λ, for comparison.
	Sigma     []float64 `json:"sigma"`
	Lambda    float64   `json:"lambda"`
	FitLambda float64   `json:"fit_lambda"`
	// Scale (a²) and Noise (s², the noise variance in the target's
	// units²) per output, fitted on Rows validation rows.
	Scale []float64 `json:"scale"`
	Noise []float64 `json:"noise"`
	Rows  int64     `json:"rows"`
	// ResidualVar is the mean squared validation residual per output:
	// the best constant variance, the baseline of NLPDConstant.
	ResidualVar []float64 `json:"residual_var"`
	// EffectiveDim is Σᵢ σᵢ/(σᵢ + Lambda) over the directions kept.
	EffectiveDim float64 `json:"effective_dim"`
	// RankError and RankErrorMax are the median and largest relative
	// difference between v(x) at rank r and at full rank (at Lambda), on
	// up to 500 validation rows; 0 at full rank, and not measured (both
	// −1) for M above 12 000.
	RankError    float64 `json:"rank_error"`
	RankErrorMax float64 `json:"rank_error_max"`
	// RankKept is the share of the data's reduction of the prior
	// variance, Σₓ (Prior − v(x)), that rank r keeps of full rank's on
	// the same rows: in [0, 1] (truncation drops only positive terms), 1
	// at full rank, −1 when not measured (as RankError; also in models
	// written before it existed, where it is 0).
	RankKept float64 `json:"rank_kept,omitempty"`
	// Coverage50/90/95 are the shares of validation residuals inside the
	// central 50, 90 and 95 % Gaussian intervals; NLPD is the mean
	// negative log predictive density there, NLPDConstant that of the
	// best constant variance (the baseline).
	Coverage50   float64 `json:"coverage_50"`
	Coverage90   float64 `json:"coverage_90"`
	Coverage95   float64 `json:"coverage_95"`
	NLPD         float64 `json:"nlpd"`
	NLPDConstant float64 `json:"nlpd_constant"`
	Seconds      float64 `json:"seconds"`
}

// validate checks an Uncertainty read from a file against the model's
// shape.
func (u *Uncertainty) validate(m, k int, task Task) error {
	if u == nil {
		return nil
	}
	switch {
	case task != TaskRegression:
		return fmt.Errorf("uncertainty in a %s model", task)
	case u.Rank < 1 || u.Rank > m:
		return fmt.Errorf("uncertainty rank %d for M = %d", u.Rank, m)
	case len(u.Scale) != k || len(u.Noise) != k:
		return fmt.Errorf("uncertainty has %d scales and %d noise variances for %d outputs", len(u.Scale), len(u.Noise), k)
	case !(u.Prior > 0) || math.IsInf(u.Prior, 0):
		return fmt.Errorf("uncertainty prior %v", u.Prior)
	case len(u.Sigma) != u.Rank:
		return fmt.Errorf("uncertainty has %d signal values for rank %d", len(u.Sigma), u.Rank)
	case !(u.Lambda > 0) || math.IsInf(u.Lambda, 0):
		return fmt.Errorf("uncertainty lambda %v", u.Lambda)
	}
	for _, v := range u.Sigma {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("uncertainty signal value %v", v)
		}
	}
	for j := range u.Scale {
		if !(u.Scale[j] >= 0) || !(u.Noise[j] >= 0) || math.IsInf(u.Scale[j], 0) || math.IsInf(u.Noise[j], 0) {
			return fmt.Errorf("uncertainty scale %v, noise %v", u.Scale[j], u.Noise[j])
		}
	}
	return nil
}

// IntervalZ returns z with P(|N(0,1)| ≤ z) = level, for the central
// interval mean ± z·std of a Gaussian predictive distribution (level in
// (0, 1)).
func IntervalZ(level float64) float64 { return math.Sqrt2 * math.Erfinv(level) }

// WithUncertainty returns a copy of the regression model m that keeps u
// and its M × u.Rank factor w (New takes the same as
// Params.Uncertainty and Params.UncertaintyFactor). It takes ownership of
// u and w: the caller must not change them afterwards. An u that does
// not fit m is an error.
func (m *Model) WithUncertainty(u *Uncertainty, w []float64) (*Model, error) {
	if err := u.validate(m.m, m.k, m.task); err != nil {
		return nil, err
	}
	if u == nil || len(w) != m.m*u.Rank {
		return nil, fmt.Errorf("%d uncertainty factor values for M=%d", len(w), m.m)
	}
	cp := *m
	cp.uncertainty, cp.uw = u, w
	cp.kvAug = m.centers.NewWeights(augment(m.alpha, w, m.m, m.k, u.Rank), m.k+u.Rank)
	cp.uwt = directionWeights(u)
	return &cp, nil
}

// directionWeights returns σᵢ/(σᵢ + λ) for the directions of u.
func directionWeights(u *Uncertainty) []float64 {
	w := make([]float64, len(u.Sigma))
	for i, s := range u.Sigma {
		w[i] = s / (s + u.Lambda)
	}
	return w
}

// augment returns [α | W], M × (k + r).
func augment(alpha, w []float64, m, k, r int) []float64 {
	out := make([]float64, m*(k+r))
	for i := range m {
		copy(out[i*(k+r):], alpha[i*k:(i+1)*k])
		copy(out[i*(k+r)+k:], w[i*r:(i+1)*r])
	}
	return out
}

// scoreAug computes K(X,C)·[α | U] for the rows x, as centres c load
// them, into the caller's scratch buf (rows × (K + Rank)), writes the
// scores (rows × K) to out and returns buf's rows.
func (m *Model) scoreAug(c *kernel.Centers, ws *kernel.Workspace, buf *[]float64, out, x []float64, rows int) []float64 {
	k, kr := m.k, m.k+m.uncertainty.Rank
	*buf = slices.Grow((*buf)[:0], rows*kr)[:rows*kr]
	b := *buf
	c.KvWeightsTo(ws, b, x, rows, m.kvAug)
	for i := range rows {
		for j := range k {
			out[i*k+j] = b[i*kr+j] + m.targetMean[j]
		}
	}
	return b
}

// projChunk writes the scores (rows × K) of the rows x to out and the
// projections uᵢᵀk_x (rows × Rank) to p: one kernel evaluation.
func (m *Model) projChunk(c *kernel.Centers, ws *kernel.Workspace, buf *[]float64, out, p, x []float64, rows int) {
	k, r := m.k, m.uncertainty.Rank
	b := m.scoreAug(c, ws, buf, out, x, rows)
	for i := range rows {
		copy(p[i*r:(i+1)*r], b[i*(k+r)+k:(i+1)*(k+r)])
	}
}

// stdChunk writes the scores (rows × K) of the rows x to out and, per
// row, v(x) (when rawV) or the standard deviation of each output
// (rows × K) to sd: one kernel evaluation.
func (m *Model) stdChunk(c *kernel.Centers, ws *kernel.Workspace, buf *[]float64, out, sd, x []float64, rows int, rawV bool) {
	u := m.uncertainty
	k, r := m.k, u.Rank
	b := m.scoreAug(c, ws, buf, out, x, rows)
	for i := range rows {
		v := u.Prior
		for q, g := range b[i*(k+r)+k : (i+1)*(k+r)] {
			v -= m.uwt[q] * g * g
		}
		v = max(v, 0)
		if rawV {
			sd[i] = v
			continue
		}
		for j := range k {
			sd[i*k+j] = math.Sqrt(u.Scale[j]*v + u.Noise[j])
		}
	}
}

// Uncertainty returns how the model's predictive standard deviations are
// computed and how they did on the fit's validation rows, or nil when the
// model has none.
func (m *Model) Uncertainty() *Uncertainty {
	if m.uncertainty == nil {
		return nil
	}
	u := *m.uncertainty
	u.Sigma = slices.Clone(u.Sigma)
	u.Scale, u.Noise, u.ResidualVar = slices.Clone(u.Scale), slices.Clone(u.Noise), slices.Clone(u.ResidualVar)
	return &u
}

// PredictStdTo computes, as PredictTo does, the scores of rows of raw
// features x (rows × D) into out (rows × K), and the predictive standard
// deviation of each into std (rows × K): the deviation of a new target
// value around the score, noise included. A central interval of level p
// is out ± IntervalZ(p)·std. It panics when the model has no Uncertainty
// or on a shape mismatch.
func (m *Model) PredictStdTo(out, std, x []float64, rows int) {
	if m.uncertainty == nil {
		panic("model: PredictStdTo: " + ErrNoUncertainty.Error())
	}
	if len(x) != rows*m.d || len(out) != rows*m.k || len(std) != rows*m.k {
		panic(fmt.Sprintf("model: PredictStdTo: len(x) = %d, len(out) = %d, len(std) = %d for %d rows, d = %d, k = %d",
			len(x), len(out), len(std), rows, m.d, m.k))
	}
	var buf []float64
	m.stdChunk(m.mapped, m.mapped.NewWorkspace(), &buf, out, std, x, rows, false)
}
