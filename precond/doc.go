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
// # Concurrency
//
// A Preconditioner is read-only after New; its methods may be called
// concurrently on distinct arguments.
//
// # Invariants
//
// All factors are float64 whatever the precision of the kernel blocks.
// T and A are upper triangular. New reuses the storage of K_MM for T, so
// the factors hold 2 × 8M² bytes (Bytes reports it).
package precond
