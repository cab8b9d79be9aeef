// Package chunkstore stores a numeric table on disk as compressed,
// checksummed column chunks, and reads it back chunk by chunk with bounded
// memory, for data sets larger than RAM.
//
// # Overview
//
// A store is a directory holding a manifest, meta.json (schema, row counts,
// per-column statistics, segment list, a fingerprint), and segment files of
// chunks. FORMAT.md in this package describes every byte. Rows are cut into
// chunks of a fixed number of rows (Options.ChunkRows; the last chunk may be
// shorter); within a chunk each column is one block: float64 values,
// little-endian, optionally byte-shuffled, compressed with the store's codec,
// followed by a codec byte and a CRC-32C that is checked before anything is
// decoded. The default codec, zstd+auto, is zstd with the blocks whose values
// are all integers or float32s byte-shuffled first (bench/RESULTS.md "Chunk
// codecs" has the measurements).
//
// Create returns a Writer: Append adds rows column by column, Close writes
// the store atomically (temporary directory, fsync, rename). Open returns a
// Reader over the segment files; ReadChunk decodes one chunk into
// row-major feature and target buffers, which is the shape stream.Source
// wants; Iter walks the chunks in order. NewReader builds a Reader over
// io.ReaderAts, for tests and for stores kept elsewhere.
//
// Values are stored as float64 whatever the source type (the manifest keeps
// the source type). Column statistics are computed by the writer in the same
// pass: Std is the population standard deviation.
//
// # Reading
//
// A Reader reads blocks with pread into per-goroutine scratch and asks the
// kernel to read the next 32 MiB ahead (fadvise WILLNEED), so that a store
// that fits in the page cache is read from the disk once and from memory
// on every later pass.
//
// A store larger than the page cache the process can keep is read from
// the disk on every pass anyway, and reading it through the page cache
// then only costs CPU: filling the cache and reclaiming it again, on the
// cores that decode (under a 1 GiB cgroup, 6 s of system time per fit of
// five passes over a 2 GB store; bench/RESULTS.md, "The I/O-bound
// corner"). Open therefore compares the segment files' total size with
// that room, the smaller of MemAvailable (/proc/meminfo) and, in a memory
// cgroup with a limit (v1 hierarchical_memory_limit, v2 the tightest
// memory.max up the tree), the limit less the cgroup's anonymous memory;
// when the store is larger, ReadChunk reads each chunk's blocks with one
// O_DIRECT read into an aligned buffer (the chunk's span widened to 4 KiB
// boundaries) instead, bypassing the page cache. As O_DIRECT has no kernel
// read-ahead, the Reader keeps its own: two goroutines read the next
// chunks (up to 32 MiB, at least 2 chunks) into a ring of aligned buffers
// while the current ones are decoded, whenever reads go forward. The
// checks are the same either way: a failed O_DIRECT read (a truncated
// file, an I/O error) makes ReadChunk read that chunk buffered, so the
// error is the buffered reader's, and a file system that refuses O_DIRECT
// (EINVAL at open or at a read) leaves the Reader reading buffered.
// ReadColumns and Verify always read buffered. The choice is made once,
// at Open.
//
// # Memory
//
// Nothing of the store is mapped, so the Reader's resident memory does
// not grow with the store. Each goroutine reading at a time holds a
// scratch set of 8 column buffers, an unshuffle buffer and a read buffer,
// about 10 × 8 × ChunkRows bytes (2.6 MiB at the default 32 768 rows;
// ScratchBytes gives the exact bound), kept for reuse until Close. Reading
// with O_DIRECT, the read buffer is a whole chunk's span instead, and the
// Reader adds its read-ahead ring (up to 32 MiB, at least two chunk spans),
// which ScratchBytes counts in full. A Writer holds Workers+2 chunks in
// flight, each about 2 × 8 × ChunkRows × columns bytes (raw plus
// compressed).
//
// # Concurrency
//
// A Reader is safe for concurrent use: ReadChunk, ReadColumns and Verify may
// run from many goroutines at once, with distinct destination slices. An
// Iter (sequential reading into one reused Block) is not; use one per
// goroutine. Close
// waits for reads in progress; reads after Close return ErrClosed. A Writer
// is not safe for concurrent use: one goroutine calls Append and Close; the
// Writer compresses chunks on Options.Workers goroutines of its own and
// writes them in order, so its output does not depend on the worker count.
//
// # Invariants
//
//   - Data at a store's final path is always complete: an interrupted or
//     failed write leaves the previous store (or nothing) in place.
//   - Every byte of a segment file is covered by a checksum, a magic number,
//     a version or a must-be-zero check; meta.json carries its own checksum.
//     Corruption is reported as a *CorruptError naming the file, chunk and
//     column, which matches ErrCorrupt; nothing read from disk causes a
//     panic, and no length read from disk is trusted before it is checked
//     against the manifest.
//   - A store written by a newer format version gives ErrVersion.
//   - Reading a chunk decodes nothing before its CRC has been checked, on
//     every read, and allocates nothing in steady state; resident memory
//     does not grow with the store.
package chunkstore
