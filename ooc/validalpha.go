package ooc

import (
	"slices"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// valAlpha keeps α = Bβ of Fit's CG iterate between its validations, so
// that a validation scores the rows without the two triangular solves of
// B (precond.ApplyBTo) that building α from β costs: at M = 10⁴ those read
// both M × M factors once, about as long as scoring 3 600 validation rows
// at d = 8.
//
// Each CG step moves β by a_j p along column j, and the operator has just
// computed u = B p for that step's pass (fitOperator.MulTo leaves it in
// passJob.U), so α moves by a_j u: one axpy of M × k. The first validation
// (and the first after a resume) computes α from β with ApplyBTo; from
// then on α is carried. α carried and α = Bβ differ only by rounding (the
// same solves, summed in another order); the model Fit returns is always
// built from β (fitModel), and a calibration reuses only the scores of an
// exact validation (otherwise it scores the validation rows with that
// model once more).
//
// Fit carries α for regression only. A classifier's calibration wants
// the best validation's scores, and with α carried they are not the
// returned model's, so it would score the validation rows once more. On
// the higgs shape (10⁶ validation rows, M = 5·10⁴, bench/PAPER.md) one
// validation took 28 s, while the two solves it saves read 2 × 5 GB of
// float32 factors (about a second): a dozen validations would not repay
// the extra pass.
type valAlpha struct {
	alpha []float64 // M × k, row-major; valid when ok
	ok    bool
}

// step moves α by the CG step just taken: α[i, j] += step[j]·u[i, j] for
// the k = len(step) columns (step[j] = 0: column j is frozen). It does
// nothing on a nil valAlpha or before α is first computed.
func (va *valAlpha) step(step, u []float64) {
	if va == nil || !va.ok {
		return
	}
	k := len(step)
	for i := 0; i < len(va.alpha); i += k {
		for j, a := range step {
			va.alpha[i+j] += a * u[i+j]
		}
	}
}

// model returns the model of the CG iterate st for a validation: fitModel's
// model, with α carried by step (computed from β the first time, and
// always on a nil valAlpha), and whether its α is exactly fitModel's
// (computed from β now), so that its scores may stand for the returned
// model's in the calibration.
func (va *valAlpha) model(plan *FitPlan, cs *centreSample, enc targetEncoding, op *fitOperator, st *cgState,
	ymean []float64) (m *Model, exact bool, err error) {
	if va == nil {
		m, err = fitModel(plan, cs, enc, op, st, ymean, Training{})
		return m, true, err
	}
	exact = !va.ok
	va.alphaOf(op.pre, st, cs.m, enc.k)
	m, err = newModel(newModelMeta(plan, cs, enc, plan.Config, ymean, Training{}), slices.Clone(cs.centres),
		slices.Clone(va.alpha), nil, op.cfit)
	return m, exact, err
}

// alphaOf returns α (M × k) of the CG iterate st, which the steps since
// the last call have carried to it: computed from β by pre the first
// time (precond.ApplyBTo), carried by step from then on.
func (va *valAlpha) alphaOf(pre *precond.Preconditioner, st *cgState, m, k int) []float64 {
	if !va.ok {
		va.alpha = make([]float64, m*k)
		pre.ApplyBTo(va.alpha, st.Beta, k)
		va.ok = true
	}
	return va.alpha
}
