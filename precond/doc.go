// Package precond builds and applies the preconditioner of FALKON
// (Rudi, Carratino, Rosasco, "FALKON: An Optimal Large Scale Kernel
// Method", NIPS 2017; the weighted form of the appendix, Def. 3).
//
// # Overview
//
// For M Nyström centres with kernel matrix K_MM, regularisation λ and
// optional diagonal weights D (centres drawn by leverage scores),
//
//	T = chol(D K_MM D + εMI),   A = chol(T Tᵀ / M + λI),   B = D T⁻¹ A⁻¹
//
// so that Bᵀ H B is well conditioned for H = K_nMᵀK_nM + λnK_MM. The
// package knows nothing of data or kernels: the solver computes K_MM and
// passes it in.
//
// For M beyond RAM, MethodNystrom (BuildNystrom) replaces K_MM inside the
// preconditioner with a rank-r basis drawn by randomly pivoted Cholesky
// from r rows of K_MM (the solver picks them by index): 8·M·r bytes
// instead of 4–8·M². Its B is M × M and Bᵀ K_MM B ≠ I, so the solver adds
// λ·K_MM·u itself (ExplicitLambda).
//
// Where the M × M buffer does not fit in memory but the exact
// preconditioner is wanted, Options.OutOfCore makes Build keep T and A on
// disk: factorised left-looking in row panels that fit
// OutOfCore.MaxBytes (DiskPanelRows, DiskMemoryBytes), stored in float64
// in unlinked files of OutOfCore.Dir (DiskBytes), and each solve reads
// its factor once, panel by panel. Close releases the files.
//
// # Concurrency
//
// A Preconditioner is read-only after New; its methods may be called
// concurrently on distinct arguments. The solves of an out-of-core
// preconditioner (and of the WithLambda copies that share its T) share
// one panel buffer and run one at a time.
//
// # Invariants
//
// T and A are upper triangular and share one M × M buffer, as in the
// paper's code and the Python falkon library: K_MM is computed into its
// upper triangle (Build, block by block) or handed over (New), T is
// factorised there and moved, transposed, to the lower triangle with its
// diagonal kept aside, and TTᵀ/M + λI is formed and factorised in the
// upper triangle. The preconditioner holds Bytes(M, precision): 8M² bytes
// in Float64, 4M² in Float32, plus O(M). The vectors the factors apply to,
// and all arithmetic, are float64 in both precisions; Float32 rounds the
// stored factors only (and needs a larger jitter, DefaultJitter32).
package precond
