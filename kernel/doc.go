// Package kernel implements the kernel functions of falkon-ooc and the fused
// kernel-block products of the FALKON solver (Rudi, Carratino, Rosasco,
// "FALKON: An Optimal Large Scale Kernel Method", NIPS 2017; Meanti et al.,
// "Kernel methods through the roof", NeurIPS 2020).
//
// # Overview
//
// A Kernel is a plain, serialisable description (kind and parameters) with
// a scalar reference Eval. Centers prepares M centres C for the solver's hot
// loop, which for each row block X_b of a streamed chunk computes
//
//	w += K(X_b, C)ᵀ (K(X_b, C)·u + v_b)        (Centers.KtKvAdd)
//
// without ever storing K(X, C): the rows are processed in tiles of
// Centers.TileRows rows, each tile's kernel block is built by a
// register-blocked Gram micro-kernel over centres packed in panels, turned
// into kernel values by a vectorised exp (and sqrt), and consumed by both
// matrix-vector products while it is still in cache. KvTo (predictions,
// K·u) and BlockTo (dense blocks, K_MM) share the same tiles.
//
// Distance kernels use r² = ‖x‖² + ‖c‖² − 2x·c on the σ-scaled data, with
// negative values clamped to 0. Its absolute error is a few ulp of
// ‖x‖² + ‖c‖², so kernels involving r = √r² (Laplacian, Matérn) lose
// relative accuracy in r for points much closer than √ε·‖x‖; values
// themselves stay within about √ε of the exact ones in that case and within
// 1e-14-ish otherwise (float64).
//
// The arithmetic lives in kernel/internal/tile: AVX-512 or AVX2+FMA
// assembly on amd64 chosen at run time, and a pure-Go fallback under the
// noasm build tag or on other architectures.
//
// # Concurrency
//
// A Centers is read-only after NewCenters and safe for concurrent use. A
// Workspace is per-goroutine scratch and is not: give each worker its own
// (Centers.NewWorkspace). Once a Workspace has seen the largest number of
// outputs k, calls allocate nothing.
//
// # Invariants
//
//   - Inputs (x, u, v, the centres passed to NewCenters) are never
//     modified; outputs go to the first slice argument (w, out, dst).
//   - All matrices are row-major: x is rows × d, u and w are M × k, v and
//     out are rows × k, dst is rows × M.
//   - BlockTo with x = the centres gives an exactly symmetric matrix with
//     exactly 1 on the diagonal for distance kernels (see BlockTo).
//   - Results do not depend on how the caller splits rows into calls, up to
//     the order of the floating-point sums into w.
package kernel
