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
// Fit is ooc.Fit with such an Executor; NewExecutor returns one to pass
// as ooc.RunOptions.Executor. Options says which runner, where the store
// and a temporary directory are, and how many ranges a pass has. The
// command falkon-ooc-beam (cmd/falkon-ooc-beam) is falkon-ooc fit on top
// of Fit, and is also the worker binary that runners start.
//
// Ingest builds the store itself on Beam: one task per input file reads
// it with package ingest's readers into a temporary piece, the driver
// merges the files' summaries in file order (constant and identifier
// columns, class labels), one task per chunk range writes one segment
// file, and the driver writes the manifest last. The store equals
// ingest.Run's but for its segments, store ID and creation time.
//
// Inputs and the store may be objects (s3://, gs://): see Ingest's
// "Object storage". The segments are written as objects and the manifest
// last, after each segment's size is checked; every reader refuses a
// store without a manifest, so a store appears only when it is whole.
//
// Predict applies a model to Parquet and CSV files as one task per
// input file, each writing its predictions as Parquet beside its input,
// through falkon-ooc predict's own code (model/predictfile).
//
// A pass's description (pass.Job as JSON) travels in the pipeline when
// it is small, else in a file under Options.Temp that each worker process
// reads once per pass. bench/BEAM.md has the costs: per-job overhead on
// Prism, bytes shipped per pass, and an estimate for a cluster.
//
// # Where the store lives
//
// A path (no scheme) must name the same store on every worker: a shared
// filesystem, or a local copy at the same path. A URL (gs://, s3://, or
// memfs:// in tests) is read through Beam's filesystem package: meta.json
// whole, the segments through an io.ReaderAt that serves the chunks of a
// range with one forward stream per segment (Beam's filesystems cannot
// seek), or with true range reads when the filesystem implements
// RangeOpener. s3:// objects are read with range requests (GetObject
// with Range, by an AWS SDK client configured as Beam's s3 filesystem
// is: AWS_REGION, AWS_ENDPOINT_URL, credentials).
//
// # Failures
//
// A range's part is computed from nothing and emitted once, at the end of
// its bundle, so a bundle retried by the engine is never half-counted; the
// reduction counts each range once and checks that a repeated delivery is
// bit-identical. Prism does not retry bundles: a failed pass job is run
// again as a whole (with a new result file), up to the configured number
// of attempts.
//
// # Concurrency
//
// An Executor runs one pass at a time (Pass serialises calls); a fit uses
// it from one goroutine. On a worker, each range runs Options.Workers
// goroutines (default: every CPU), and one process may run several
// ranges at once; they share one open store.
//
// # Invariants
//
//   - For a given store, Config and number of partitions the model is
//     bit-identical from run to run, whatever the runner, the retries and
//     Options.Workers; against ooc.Fit's local pipeline it differs only in
//     the rounding of the sums (tested within 1e-9 relative).
//   - Every pass reads every row of the store exactly once in its result:
//     the reduction refuses a missing range and the driver compares the
//     rows counted with the store's.
//   - The workers refuse a store whose ID differs from the one the
//     driver opened.
//   - A program that runs as a remote worker calls beam.Init (of the
//     Beam SDK) at the start of main, after flag.Parse, as
//     falkon-ooc-beam does.
package beam
