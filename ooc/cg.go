package ooc

import (
	"context"
	"math"
)

// operator applies a symmetric positive definite operator to k column
// vectors at once: dst = W src, both M × k row-major.
type operator interface {
	MulTo(ctx context.Context, dst, src []float64) error
}

// Status says why CG stopped. Reaching the iteration limit is a status,
// not an error.
type Status string

// CG statuses.
const (
	StatusIterationLimit Status = "iteration_limit" // ran all iterations
	StatusConverged      Status = "converged"       // residual below Tolerance
	StatusPatience       Status = "patience"        // validation stopped improving (Config.Patience)
	// StatusNoDescent: the logistic loss's objective did not fall along a
	// Newton step at any length its line search tried; the model is the
	// one before that step.
	StatusNoDescent Status = "no_descent"
)

// cgState is the state of k simultaneous conjugate-gradient solves
// (one per output column), enough to resume them exactly.
type cgState struct {
	Iter int       // iterations done
	Beta []float64 // M × k solution
	R    []float64 // M × k residual b − Wβ
	P    []float64 // M × k search direction
	RS   []float64 // k: rᵀr per column
	BN   []float64 // k: ‖b‖ per column
	// Step is, after an iteration, the step a_j each column took along
	// the P the operator was last applied to (0: the column is frozen).
	// Not checkpointed: it is only read by the after callback.
	Step []float64
}

func newCGState(b []float64, k int) *cgState {
	st := &cgState{
		Beta: make([]float64, len(b)),
		R:    append([]float64(nil), b...),
		P:    append([]float64(nil), b...),
		RS:   colDots(b, b, k, nil),
	}
	st.BN = make([]float64, k)
	for j, v := range st.RS {
		st.BN[j] = math.Sqrt(v)
	}
	return st
}

// relResidual is the largest ‖r_j‖/‖b_j‖ over the columns.
func (st *cgState) relResidual() float64 {
	worst := 0.0
	for j, rs := range st.RS {
		if st.BN[j] > 0 {
			worst = max(worst, math.Sqrt(rs)/st.BN[j])
		}
	}
	return worst
}

// colDots returns, for each of the k columns, Σ_i a_ij b_ij.
func colDots(a, b []float64, k int, dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, k)
	}
	clear(dst)
	for i := 0; i < len(a); i += k {
		for j := range k {
			dst[j] += a[i+j] * b[i+j]
		}
	}
	return dst
}

// conjugateGradient runs CG on W β = b for k columns from st until st.Iter
// reaches iters or every column's relative residual is ≤ tol. After each
// iteration it calls after (which may checkpoint, validate or report).
// Columns that have converged (or whose b is 0) are frozen: their step is
// 0, so numerical noise cannot undo them.
func conjugateGradient(ctx context.Context, op operator, st *cgState, k, iters int, tol float64,
	after func(*cgState) error) (Status, error) {
	wp := make([]float64, len(st.P))
	pwp := make([]float64, k)
	if len(st.Step) != k {
		st.Step = make([]float64, k)
	}
	step := st.Step
	rsNew := make([]float64, k)
	for st.Iter < iters {
		if tol > 0 && st.relResidual() <= tol {
			return StatusConverged, nil
		}
		if err := op.MulTo(ctx, wp, st.P); err != nil {
			return "", err
		}
		colDots(st.P, wp, k, pwp)
		for j := range k {
			step[j] = 0
			if st.RS[j] > 0 && pwp[j] > 0 && !(tol > 0 && st.BN[j] > 0 && math.Sqrt(st.RS[j])/st.BN[j] <= tol) {
				step[j] = st.RS[j] / pwp[j]
			}
		}
		for i := 0; i < len(st.P); i += k {
			for j := range k {
				st.Beta[i+j] += step[j] * st.P[i+j]
				st.R[i+j] -= step[j] * wp[i+j]
			}
		}
		colDots(st.R, st.R, k, rsNew)
		for j := range k {
			g := 0.0
			if step[j] != 0 && st.RS[j] > 0 {
				g = rsNew[j] / st.RS[j]
			}
			for i := j; i < len(st.P); i += k {
				st.P[i] = st.R[i] + g*st.P[i]
			}
			if step[j] != 0 {
				st.RS[j] = rsNew[j]
			}
		}
		st.Iter++
		if after != nil {
			if err := after(st); err != nil {
				return "", err
			}
		}
	}
	if tol > 0 && st.relResidual() <= tol {
		return StatusConverged, nil
	}
	return StatusIterationLimit, nil
}
