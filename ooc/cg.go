package ooc

import (
	"context"

	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
)

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

// cgState is the state of CG (engine.State), checkpointed by Fit.
type cgState = engine.State

func newCGState(b []float64, k int) *cgState { return engine.NewState(b, k) }

// conjugateGradient is engine.CG with its stop as a Status.
func conjugateGradient(ctx context.Context, op engine.Operator, st *cgState, k, iters int, tol float64,
	after func(*cgState) error) (Status, error) {
	converged, err := engine.CG(ctx, op, st, k, iters, tol, after)
	if err != nil {
		return "", err
	}
	if converged {
		return StatusConverged, nil
	}
	return StatusIterationLimit, nil
}

// colResidual is the worst ‖r‖/‖b‖ over columns [c0, c0+k) of st.
func colResidual(st *cgState, c0, k int) float64 { return st.ColResidual(c0, k) }

var (
	setCols  = engine.SetCols
	getCols  = engine.GetCols
	parallel = engine.Parallel
)
