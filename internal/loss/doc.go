// Package loss is the losses a fit minimises, as a pass over the data
// sees them: for a tile of rows with scores f, targets y and row weights
// w, each row's value w·ℓ(y, f), gradient weight w·∂ℓ/∂f and Hessian
// weight w·∂²ℓ/∂f². Newton's method on J(α) = (1/n) Σ wᵢ ℓ(yᵢ, (K_nM α)ᵢ)
// + (λ/2) αᵀK̃α needs nothing else of the loss: the gradient pass sums
// K_nMᵀ g and the values, a CG pass multiplies K_nM u by the Hessian
// weights.
//
// # Overview
//
// A Loss works on a Tile: N rows of Cols scores, row i's at
// F[i·Stride:], column c being output c mod K of the targets Y (N × K),
// and the rows' weights W (nil: 1 each). Grad turns the scores into the
// gradient weights and sums the Hessian weights and the values per
// column; Values sums the values along a line f + s·d for several
// lengths s (a line search in the same pass); HessMul scales a product
// K_nM u by the Hessian weights. Curvature is ℓ″ where no target is
// known (the preconditioner's weights at the centres).
//
// Squared is ℓ(y, f) = (f − y)²/2; Logistic is ℓ(y, f) = log(1 + e^(−yf))
// for y = ±1. Sigmoid and Softplus are the stable functions the logistic
// loss, Platt calibration and the probabilities of a logistic model
// share.
//
// # Concurrency
//
// Squared and Logistic hold no state: their methods are safe for
// concurrent use on different tiles and sums.
//
// # Invariants
//
//   - A Loss allocates nothing; it writes only the slices it is given.
//   - Each sum adds the tile's rows in order, so a tile's sums do not
//     depend on how the columns are grouped.
//   - Sigmoid and Softplus never overflow: Sigmoid(x) ∈ [0, 1] and
//     Softplus(z) ≥ max(z, 0) for every finite x and z.
package loss
