// Package engine is the numerical core the fits and searches of package
// ooc share: conjugate gradient on several columns at once (CG, State)
// and the CG operator of σ groups × λ candidates that share every pass
// over the data (Grid). A fit is a grid of one σ and one λ; a search
// (ooc.Tune) is a grid of many, whose candidates leave the pass when
// they stop. The stopping rules are written here once (Rule, Tracker,
// IsHalvingStep, WorseHalf): every fit and search, squared or logistic
// loss, applies them to its candidates' validation metrics.
//
// # Overview
//
// Grid.MulTo applies, on each live candidate's K columns, FALKON's
// preconditioned operator W(p) = A⁻ᵀ(T⁻ᵀ K_nMᵀ W K_nM T⁻¹A⁻¹p / n +
// λ A⁻¹p), T shared by the candidates of a σ group and A each
// candidate's own. The pass over the data is the caller's (Grid.Pass):
// the engine hands it, per live group, the columns U = T⁻¹A⁻¹p side by
// side (and the candidates' α, to score validation rows in the same
// pass) and takes back K_gᵀ W K_g U_g. Grid.After sees the pass's
// validation before its step is taken and may stop candidates; a stopped
// candidate gets 0, which freezes it in CG. StepAlpha carries each
// candidate's α = Bβ along CG's steps (an axpy instead of two triangular
// solves per validation).
//
// # Concurrency
//
// A Grid and a State are not safe for concurrent use. Grid.MulTo runs
// the candidates' solves on up to Grid.Workers goroutines; its callbacks
// run on the goroutine that called it.
//
// # Invariants
//
//   - A candidate's columns are computed as they would be alone: a grid
//     of one candidate gives ooc.Fit's operator, and sharing a pass
//     changes a candidate's values only by the rounding of solves on
//     more columns at once.
//   - CG freezes a column whose step is 0 (converged, b = 0, or an
//     operator's 0), so that noise cannot undo it.
//   - MulTo makes exactly one call of Pass.
//   - A Tracker's best iterate is its lowest validation metric; Rule's
//     MinImprovement decides only when patience runs out, never which
//     iterate is kept.
package engine
