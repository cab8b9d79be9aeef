// Package dense implements the dense M × M float64 algebra of FALKON's
// preconditioner (Rudi, Carratino and Rosasco, "FALKON: An optimal large
// scale kernel method", NIPS 2017; Meanti et al., "Kernel methods through
// the roof", NeurIPS 2020) without cgo:
//
//	T = chol(K_MM + εM I)     Cholesky
//	S = T Tᵀ / M + λI         UUt, then add λ to the diagonal
//	A = chol(S)               Cholesky
//	T⁻¹, T⁻ᵀ, A⁻¹, A⁻ᵀ        SolveUpper, SolveUpperT (and the Vec forms)
//
// # Overview
//
// Matrices are row-major float64 slices with a stride (leading dimension)
// ≥ the number of columns, as in gonum's blas64.General and
// blas64.Symmetric: pass mat.SymDense.RawSymmetric().Data and .Stride.
// Triangular and symmetric matrices live in the upper triangle (j ≥ i);
// no routine reads or writes the strict lower triangle of a triangular or
// symmetric argument, so a caller can keep a second factor there.
//
//	Cholesky(a, n, lda, workers) (ok, col)            A = UᵀU, U over A's upper triangle
//	UUt(u, n, ldu, alpha, c, ldc, workers)            C = alpha U Uᵀ, upper triangle of c
//	SolveUpper(u, n, ldu, b, k, ldb, workers)         B ← U⁻¹ B   (B n×k)
//	SolveUpperT(u, n, ldu, b, k, ldb, workers)        B ← U⁻ᵀ B
//	SolveUpperVec(u, n, ldu, x), SolveUpperTVec(...)  x ← U⁻¹ x, U⁻ᵀ x
//	Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, c, ldc, workers)  C += alpha op(A) op(B)
//
// FALKON's one-buffer layout (package precond; the paper's code and the
// Python falkon library keep T and A in one M × M array):
//
//	TransposeUpper(a, n, lda)                         T from the upper to the lower triangle
//	RowNorms2(u, n, ldu, alpha, out)                  diag(alpha U Uᵀ)
//	UUtPacked(a, n, lda, alpha, workers, mon)         alpha U Uᵀ, U in the lower triangle, into the strict upper one
//	SolveTri(Tri{Data, N, Stride, Lower, Diag}, ...)  solves on either triangle, diagonal aside
//	CholeskyMon(a, n, lda, workers, mon)              Cholesky with progress and cancellation
//	PivotedCholesky(a, n, lda, tol, workers, mon)     rank-revealing (LAPACK dpstrf), blocked
//
// Matrices may be stored as float32 (type parameter E): the packed
// operands, the micro-kernel and all sums stay float64, results are
// rounded to float32 when stored, and right-hand sides of solves are
// float64. A float32 preconditioner so needs half the memory at the
// float64 speed.
//
// The O(n³) routines are blocked (Cholesky: right-looking with 256-wide
// panels and a recursive diagonal block; UUt: a sequence of rank-256
// updates; SolveUpper with k ≥ 32: recursive) so that nearly all their flops
// run through one GEMM, which packs its operands in the manner of Goto and
// van de Geijn (ACM TOMS 34(3), 2008) and hands them to a register-blocked
// micro-kernel. On amd64 the micro-kernel is Go assembly, chosen at start-up
// from the CPU's features (golang.org/x/sys/cpu): AVX-512F (12×16 tile) or
// AVX2 with FMA (6×8 tile). Elsewhere, or when built with the noasm tag, it
// is a portable 4×4 Go kernel, about 14 times slower (4 against 57 GFLOP/s
// per core on the Zen 4 of bench/RESULTS.md); Kernel reports which one
// runs. Solves with few right-hand sides (k < 32) would spend more time
// packing U than multiplying; they run four rows of U at a time through
// AVX2 dot-product and axpy kernels (Go loops under noasm) over a transposed
// copy of B, reading U once per call and splitting the right-hand sides
// among workers.
//
// Errors: a matrix that is not positive definite is a result of Cholesky
// (ok = false and the failing column), not a panic. Shape errors (negative
// dimensions, a stride smaller than the column count, a slice too short for
// its shape) are programmer errors and panic.
//
// # Concurrency
//
// Each call runs at most workers goroutines (workers < 1 means 1) and waits
// for all of them before returning; nothing is kept between calls. Every
// routine splits the columns or row blocks of its output among workers, and
// every output element is computed by one goroutine in an order that does
// not depend on the split, so results are identical, bit for bit, for any
// number of workers. Calls on disjoint data may run concurrently.
// The package uses sync.WaitGroup rather than errgroup: the workers cannot
// fail and take no context, since a call is a bounded computation with no
// I/O (a factorisation at M = 20 000 is tens of seconds of CPU, and a caller
// that must cancel it can run it in its own goroutine and drop the result).
//
// # Invariants
//
//   - Inputs that are not outputs are never modified; outputs are the
//     upper triangle of a (Cholesky), of c (UUt), b (solves) and c (Gemm).
//   - The strict lower triangle of every triangular or symmetric argument is
//     neither read nor written; in Gemm, elements of C outside its m×n
//     window (stride padding) are not touched.
//   - Outputs must not overlap inputs, except where a routine works in place
//     (Cholesky on a, solves on b).
//   - Each GEMM-based call allocates its packing buffers, at most 384 KiB
//     of packed A and 8 MiB of packed B (256 × 4096 doubles) per worker,
//     and the small-k solves a k×n copy of B (none when k = 1 and ldb = 1,
//     the CG case, which allocates nothing); nothing else.
//   - All micro-kernels compute the same sums in the same order; the
//     assembly ones use fused multiply-adds and so differ from the Go kernel
//     by rounding only (FuzzKernel holds them to the reference loop).
package dense
