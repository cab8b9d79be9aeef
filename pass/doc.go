// Package pass is the protocol of a pass over the data: what one pass
// computes (a Job), the per-chunk function that computes it (a Worker),
// and what runs a job over every chunk of a source (an Executor).
//
// # Overview
//
// Every pass a FALKON fit or search makes over its data is a sum over
// the source's chunks of a pure function of (chunk, job): a fit's
// right-hand side K_nMᵀ[Y 1] (TargetProduct), a CG iteration's K_nMᵀ
// K_nM U (KernelProduct), a search's every σ and λ at once with the
// held-out rows scored in the same pass (GroupTargetProduct,
// GroupKernelProduct), a Newton step of the logistic loss
// (LogisticGradient, LogisticHessianProduct), the exact predictive
// variance's K_nMᵀ W K_nM (Gram), and a fitted model's scores of the
// held-out rows with their targets, for its calibration and final
// validation (Scores). A Job says which (its
// Kind) with everything it needs (centres, kernel, standardisation,
// target encoding, right-hand sides, the hold-out, row and class
// weights), so that it can be shipped to another process: its JSON
// encoding (MarshalJSON) carries a Version, and a decoder refuses a
// version it does not read (ErrVersion). A new loss or search is a new
// Kind, not a new loop.
//
// Job.NewWorker validates the job and returns a Worker, whose AddRows adds
// one chunk's contribution to the sums and appends the values of the rows
// it scores. An Executor runs a job over a source: LocalExecutor on this
// machine (stream.Run with a Worker per goroutine), package beam's as Beam
// jobs on a cluster. An Executor that can also read given rows of the
// data where it is implements RowReader, so that a trainer draws its
// Nyström centres without reading a chunk itself.
//
// Package ooc builds the jobs and drives the solvers; this package knows
// kernels (package kernel), sources (package stream) and the task of the
// targets (package model), and nothing of training.
//
// # Concurrency
//
// A Job is read, never written, by its workers: it must not change while
// a pass runs. A Worker is not safe for concurrent use: each goroutine
// has its own (Job.NewWorker). LocalExecutor.Pass runs its workers on
// its own goroutines, waits for them, and calls OnChunk on one goroutine
// in chunk order; it may be called from several goroutines at once.
//
// # Invariants
//
// An executor returns the sums reduced in chunk order, ((0 + c₀) + c₁) +
// …, then the scored rows' values in chunk order: LocalExecutor's result
// is the same, bit for bit, for any number of workers, and so is a
// remote executor's that keeps the order. The rows a job holds out
// depend on their numbers in the source (stream.HeldOutRows), not on the
// chunking; a pass of any kind with a Holdout is, bit for bit, the pass
// without it over the training side of stream.Holdout with the same
// fraction and seed, so that an executor that reads only whole sources
// runs a fit over held-out data. A steady-state chunk allocates nothing in a Worker beyond the
// growth of the scored rows. Inputs are never modified; a NaN or
// infinite value in a chunk is an error naming its row and column
// (*stream.ValueError). The encoding round trip is exact (float64 values
// keep every bit); Prepared centres are never encoded.
package pass
