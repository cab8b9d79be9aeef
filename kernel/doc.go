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
// without ever storing K(X, C). The rows are processed in tiles of
// Centers.TileRows rows (chosen from M so that the tile's kernel block stays
// in L2, at most 64), and each tile in column blocks: a register-blocked
// micro-kernel (4 rows × 16 float64 or 32 float32 centres, 8 rows × 32
// for float32 with AVX-512; centres packed in panels) accumulates the
// dot products and, while they are still in registers, turns them into
// kernel values with a vectorised exp (and sqrt); K·u is taken from each
// column block while it is in cache, then Kᵀ(K·u + v) from the tile,
// four rows per pass. KvTo
// (predictions, K·u) and BlockTo (dense blocks, K_MM) share the same
// tiles. KvTo and KvWeightsTo take the last 1 or 2 rows of a tile one
// row at a time (a one-row micro-kernel over several panels, then the
// kernel function on the row) instead of padding them with zero rows to
// a micro-tile: a call of one row costs one row's kernel values, not
// four, and gets the bits the row gets in any larger call.
//
// The arithmetic lives in kernel/internal/tile: AVX-512 or AVX2+FMA
// assembly on amd64 (and AMX tiles for BF16's cross term), chosen at run
// time from the CPU features, and a pure-Go fallback under the noasm
// build tag or on other architectures.
//
// # Accuracy
//
// Distance kernels use r² = ‖x‖² + ‖c‖² − 2x·c on the data scaled by
// √a/σⱼ (a = 1/2 Gaussian, 1 Laplacian, 3 and 5 Matérn), clamped at 0. Its
// absolute error is a few ulp of ‖x‖² + ‖c‖², so float64 kernel values are
// within about 1e-14 of Eval for standardised data, except that the kernels
// of r = √r² (Laplacian, Matérn) lose relative accuracy in r for points
// closer than about √ε·‖x‖; there the value is still within √ε of exact.
// The vectorised exp is within 5e-16 (float64) and 2e-7 (float32)
// relative of math.Exp and flushes results below about 1e-307 (float64)
// and 5e-38 (float32) to zero. Float32 tiles are accurate to a few 1e-6
// for standardised data; their products are accumulated in float64.
//
// BF16 computes the cross term x·c of the products (not of BlockTo, so
// K_MM keeps the exactness below) on the AMX unit of Intel CPUs that have
// AMX-BF16: x and c are split as hi + lo in bfloat16 and the three
// products hi·hi' + hi·lo' + lo·hi' are accumulated in float32, within
// about 2⁻¹⁶ of Σ|xⱼcⱼ|; norms, the kernel function and the products are
// Float32's. Its kernel values are within a few 1e-6 to 1e-5 of Eval
// for standardised data (TestBF16). The AMX unit needs the tile state,
// which Linux grants on request (arch_prctl, from Linux 5.16); without
// AMX, BF16 computes exactly what Float32 does.
//
// Rows of x that hold a NaN or ±Inf are loaded into the tile as zero
// rows, so the arithmetic stays finite and the same in every variant, and
// the first such row is reported by Workspace.NonFinite after the call: a
// caller checks that instead of making a pass of its own over the data.
// (Centres must be finite.)
//
// # Input map
//
// Centers.WithInputMap gives centres whose products take each row x as
// (x − shift)·scale per feature, applied while the row is loaded into a
// tile: the solver's standardisation costs no pass and no copy of the
// data, and gives bit for bit the values of standardising the rows first.
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
//   - Each kernel value depends only on its row and centre, not on the
//     tile, block or call it is computed in; so BlockTo with x = the
//     centres, in any split of the rows, gives an exactly symmetric matrix,
//     with exactly 1 on the diagonal for distance kernels (see BlockTo).
//   - How the caller splits rows into calls changes w only through the
//     order of floating-point additions.
package kernel
