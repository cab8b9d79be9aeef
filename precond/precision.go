package precond

// Float32Suffices reports whether storing and factorising the Cholesky
// preconditioner in float32 gives the fit float64 gives, for
// regularisation λ and the float32 jitter ε (0 means DefaultJitter32).
//
// The float32 preconditioner factorises K_MM + εMI with ε = 10⁻⁵, which
// float32 rounding needs (float64's is 10⁻¹³), and the solver's
// regulariser is λ·TᵀT: the fit it converges to minimises
// ‖K_nM α − y‖²/n + λ αᵀ(K_MM + εMI) α. In an eigendirection of K_MM
// with eigenvalue s the regulariser is λ(s + εM) instead of λs; the
// directions the fit is decided in are those near s = λM, where the data
// term s²/M meets λs, and there the float32 regulariser is larger by the
// factor 1 + ε/λ. The rule keeps that factor within 1 + 1/c:
// λ ≥ c·ε with c = Float32MinLambdaRatio, measured on the msd and susy
// shapes (bench/RESULTS.md, "When auto stores the preconditioner in
// float32"): at λ = 0.6ε float32 cost 1 % of test MSE, at 1.2ε 0.4 % of
// AUC, at 10ε 0.6 % of MSE (within a 1 % bar; no binary task was
// measured there).
func Float32Suffices(lambda, jitter float64) bool {
	if jitter == 0 {
		jitter = DefaultJitter32
	}
	return lambda >= Float32MinLambdaRatio*jitter
}

// Float32MinLambdaRatio is the smallest λ/ε of Float32Suffices.
const Float32MinLambdaRatio = 10
