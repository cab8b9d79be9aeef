// Package ooc is the FALKON solver over streamed data: kernel ridge
// regression by Nyström centres, a Cholesky-based preconditioner and
// conjugate gradient, reading the training data one chunk at a time.
//
// FALKON: Rudi, Carratino, Rosasco, "FALKON: An Optimal Large Scale
// Kernel Method", NIPS 2017; Meanti, Carratino, Rosasco, Rudi, "Kernel
// methods through the roof", NeurIPS 2020.
//
// # Overview
//
// Fit takes any stream.Source — a chunk store, stream.MemSource, or a type
// of the caller's — and a Config whose zero fields mean documented
// defaults. It draws M centres uniformly without replacement (seeded),
// builds K_MM and the preconditioner (package precond), makes one pass for
// the right-hand side and one pass per CG iteration, each computing the
// kernel blocks K(X_b, C) on the fly (package kernel): K_nM is never
// stored. It returns a Model, which predicts rows (PredictTo), whole
// sources in chunk order (Predict), evaluates metrics (Evaluate), and is
// saved and loaded in a versioned, checksummed binary format (Save, Load).
//
// Regression targets are centred and features standardised (with the
// source's statistics when Config.Columns gives them, else computed in the
// sampling pass). Binary targets (two distinct values) are encoded ±1;
// multiclass targets one-vs-all.
//
// A long fit can be checkpointed after every iteration (Config.Checkpoint)
// and resumed (Config.Resume): the resumed fit ends with the same model,
// bit for bit, as an uninterrupted one.
//
// # Concurrency
//
// Fit runs Config.Workers goroutines and waits for them; progress is
// reported through Config.Progress on the calling goroutine, and the
// package never prints. A Model returned by Fit or Load is safe for
// concurrent use.
//
// # Invariants
//
// Partial results are reduced in chunk order, so a fit gives bit-identical
// models for any number of workers. Memory is O(M²) plus a bounded number
// of chunk buffers (EstimateMemory), independent of the number of rows.
// Reaching the iteration limit is a Status, not an error.
package ooc
