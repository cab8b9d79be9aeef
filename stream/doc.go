// Package stream pulls the chunks of a data set through a pool of worker
// goroutines with bounded memory, and is the public Go interface over
// chunk readers.
//
// # Overview
//
// A Source is a data set cut into chunks of rows: the chunk store's
// Reader is one, MemSource holds rows in memory, and a Go program can
// implement Source over its own data. Run performs one streaming pass: each
// worker decodes a chunk into its own buffers and computes a partial
// result (for FALKON, one chunk's contribution K_bᵀ(K_b u + v_b) to an
// M-vector); Reduce receives the partials in chunk order.
//
// A Source may say more through optional interfaces checked with a type
// assertion: its column names (Columner), feature statistics (Statser),
// target values (TargetValuer), label names (Labeler) and row weights
// (Weighter: a column that is neither a feature nor a target, read into
// Chunk.W when Job.Weights asks). Subdivide and Holdout forward all of
// them; Holdout's split of one chunk is HeldOutRows, from the number of
// the chunk's first row, so any chunking of the same rows splits alike.
//
// # Concurrency
//
// Run starts Options.Workers goroutines and waits for all of them before
// it returns. Source implementations must allow concurrent ReadChunk calls
// with distinct destination slices. A Job's worker functions never share
// scratch; Reduce runs on the caller's goroutine.
//
// # Invariants
//
// Memory of a pass is bounded by Options.Workers chunk buffers and
// Options.InFlight partials, whatever the size of the source. Partials are
// reduced strictly in chunk order, so a pass gives bit-identical results
// for any number of workers. The context is checked once per chunk.
package stream
