// Package beam runs the data passes of a FALKON fit (package ooc) as
// Apache Beam jobs, so that a fit over a store too large for one machine
// runs on a cluster: Dataflow, Flink or Spark through Beam's portable
// runner, or Prism, Beam's local runner, which runs in this process.
//
// # Overview
//
// Every pass of FALKON over the data is a map-reduce: each chunk of the
// store gives a vector (K_bᵀ(K_b u) for a CG iteration, K_bᵀY for the
// right-hand side) and the vectors are summed. A pass here is one Beam
// job: the store's chunks are cut into P contiguous ranges; a DoFn per
// range opens the store, decodes its chunks and sums their contributions
// in chunk order (on all the worker's cores); every range's part is
// grouped under one key, summed in range order and written to a file,
// which the driver reads back. The result is therefore deterministic for a
// given P. The driver — centres, the M × M algebra, CG, checkpoints — stays
// in the calling process.
//
// # Where the store lives
//
// A path (no scheme) must name the same store on every worker: a shared
// filesystem, or a local copy at the same path. A URL (gs://, s3://, or
// memfs:// in tests) is read through Beam's filesystem package: meta.json
// whole, the segments through an io.ReaderAt that serves the chunks of a
// range with one forward stream per segment (Beam's filesystems cannot
// seek), or with true range reads when the filesystem implements
// RangeOpener.
//
// # Failures
//
// A range's part is computed from nothing and emitted once, at the end of
// its bundle, so a bundle retried by the engine is never half-counted; the
// reduction counts each range once and checks that a repeated delivery is
// bit-identical. Prism does not retry bundles: a failed pass job is run
// again as a whole (with a new result file), up to the configured number
// of attempts.
package beam
