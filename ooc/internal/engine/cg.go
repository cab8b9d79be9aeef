package engine

import (
	"context"
	"math"
)

// Operator applies a symmetric positive definite operator to k column
// vectors at once: dst = W src, both rows × k row-major.
type Operator interface {
	MulTo(ctx context.Context, dst, src []float64) error
}

// State is the state of k simultaneous conjugate-gradient solves (one
// per column), enough to resume them exactly.
type State struct {
	Iter int       // iterations done
	Beta []float64 // rows × k solution
	R    []float64 // rows × k residual b − Wβ
	P    []float64 // rows × k search direction
	RS   []float64 // k: rᵀr per column
	BN   []float64 // k: ‖b‖ per column
	// Step is, after an iteration, the step a_j each column took along
	// the P the operator was last applied to (0: the column is frozen).
	// Not part of a checkpoint: only the after callback of CG reads it.
	Step []float64
}

// NewState returns the state of CG on W β = b (rows × k) from β = 0.
func NewState(b []float64, k int) *State {
	st := &State{
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

// RelResidual is the largest ‖r_j‖/‖b_j‖ over the columns.
func (st *State) RelResidual() float64 { return st.ColResidual(0, len(st.RS)) }

// ColResidual is the largest ‖r_j‖/‖b_j‖ over columns [c0, c0+k).
func (st *State) ColResidual(c0, k int) float64 {
	worst := 0.0
	for j := c0; j < c0+k; j++ {
		if st.BN[j] > 0 {
			worst = max(worst, math.Sqrt(st.RS[j])/st.BN[j])
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

// CG runs conjugate gradient on W β = b for k columns from st until
// st.Iter reaches iters or every column's relative residual is ≤ tol,
// and reports whether it stopped on tol. After each iteration it calls
// after (which may checkpoint, validate or report; its error ends CG).
// Columns that have converged (or whose b is 0) are frozen: their step is
// 0, so numerical noise cannot undo them; so is a column whose pᵀWp is
// not positive (an operator freezes a column by returning 0 on it).
func CG(ctx context.Context, op Operator, st *State, k, iters int, tol float64, after func(*State) error) (converged bool, err error) {
	wp := make([]float64, len(st.P))
	pwp := make([]float64, k)
	if len(st.Step) != k {
		st.Step = make([]float64, k)
	}
	step := st.Step
	rsNew := make([]float64, k)
	for st.Iter < iters {
		if tol > 0 && st.RelResidual() <= tol {
			return true, nil
		}
		if err := op.MulTo(ctx, wp, st.P); err != nil {
			return false, err
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
				return false, err
			}
		}
	}
	return tol > 0 && st.RelResidual() <= tol, nil
}
