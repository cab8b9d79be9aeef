// Package ingest turns Parquet and CSV/TSV files into a chunk store.
//
// # Overview
//
// Run reads any mix of Parquet files and delimited text files (CSV, TSV,
// optionally gzip-compressed), directories of such files (walked
// recursively, skipping hidden and "_" directories), glob patterns (a path
// element "**" matches zero or more directories) and pipes ("-" for
// standard input, /dev/stdin, named pipes: each is first copied to a
// hidden temporary file beside Config.Out, removed afterwards, since
// Parquet needs random access and an input is opened twice),
// checks that every input has the chosen columns with compatible types, and
// streams the rows, in input order, into a new chunkstore directory. It is
// the only package of the module that imports Apache Arrow; no Arrow type
// appears in its API.
//
// Parquet files are read batch by batch (never a whole file or row group at
// a time), with buffered streams and the chosen columns decoded in
// parallel: flat float, integer, bool and date columns by arrow-go's typed
// Parquet column readers straight into float64 buffers, every other type
// (decimals, timestamps, dictionaries) through pqarrow. Each batch's length
// is checked against the row count in the file's footer, since an
// unsupported encoding can make a column reader return fewer values than
// asked for without an error. Text files are read with arrow-go's csv
// package: a header row names the columns unless Config.NoHeader or
// Config.Columns says otherwise; the delimiter is a tab for .tsv files and is
// sniffed from the first line otherwise; gzip is recognised by its magic
// bytes. Column types of a text file are inferred from its first block
// (up to 1 MiB or 1000 rows): a column whose non-empty values all parse as
// numbers is numeric (stored as float64), one whose values are all true or
// false is bool, one whose values are all YYYY-MM-DD dates is a date, and
// anything else is a string.
//
// Hive partitions: every key=value element of a file's directory path
// becomes a column, constant within the file, after the file's own
// columns (internal/table.Columns, which tabular uses too, so predict
// reads them alike; InputColumn.FromPath marks them). A key is numeric (a default feature) when its value parses as a
// number in every file, else it is skipped (reason "partition"). Every
// file must have the same keys, and a key must not also be a column of the
// file.
//
// Column types: float64, float32, every integer width, bool, decimals and
// dictionary-encoded columns of those types are stored as float64 values
// (bool as 0 and 1). By default every numeric, bool or string column of the
// first input except the targets and the excluded columns is a feature
// (a string column named like an identifier is left out). Date and
// timestamp columns are never chosen by default; named in Config.Features or
// Config.Targets they are stored as days since 1970-01-01 (UTC), fractional
// for timestamps. Nested columns cannot be stored.
//
// Categorical features: a string column (or a dictionary of strings, or a
// binary column named in Config.Features), and an integer column named in
// Config.Categorical, becomes one-hot features (featenc): one per level
// among its Config.MaxLevels most frequent (ties by level), sorted, named
// "column=level"; the other levels share "column=(other)", and NULL is a
// level of its own, "column=(null)", never a bad value. The first pass
// stores each value's code and counts the levels per file (a bounded
// featenc.Counter: exact up to 2¹⁶ distinct levels, then a Misra–Gries
// summary, with the distinct count estimated); the counts are merged in
// file order, so the levels are the same for any worker count. A row that
// Config.Nulls drops takes its levels back. The install's copy then
// expands each code into its one-hot features with featenc's Encoder, the
// one predict uses, and the manifest records the encoding
// (chunkstore.Manifest.Encoding, format version 3). Features are divided
// by √2 instead of their standard deviation when a fit standardises them
// (chunkstore.Reader.FeatureStats), so that a change of level weighs as
// one standard deviation of a numeric feature in the kernel's distance.
// The column report says how many levels each column had (exact or
// estimated) and how many got features.
//
// A categorical column of more than Config.MaxLevels levels is instead
// target-encoded (Config.AboveMaxLevels "target", the default), when the
// store has one target, numeric or of two classes: one feature,
// "column:target_mean" (featenc.Target), the mean target of the row's
// level shrunk towards the overall mean by featenc.Smooth rows. The pass
// that counts the levels also sums the target per level and fold
// (featenc.TargetSums, as bounded as the counter), by each row's place
// in its file, and the sums are merged in file order with the folds
// rotated by the file's first row, so that store row r is in fold r mod
// featenc.Folds. Install's copy writes each row's value from the other
// folds' sums only (featenc.OutOfFold): a fit on in-fold means would
// learn the noise of rare levels' own targets. The manifest (and so the
// model) keeps every level's mean over all rows, which predict uses. A
// two-class string target is encoded as the share of its second class
// (sorted). With several targets, a multiclass target or none, or
// AboveMaxLevels "onehot", the column gets one-hot features of its
// MaxLevels most frequent levels, and the report says why. A categorical column chosen by
// default (not named in Config.Features or Config.Categorical) whose
// distinct levels are at least 90 % of its values (100 values or more) is
// a row identifier, and left out like one. A text column whose sampled
// values (the first 1000 rows) are numbers but for a few (at most 10 %,
// and at most max(3, 1 %) of them) would be read as strings, and so
// become categorical: a chosen feature like that is refused, naming the
// file, column, row and value, unless named in Config.Categorical
// (DryRun notes it in the column report instead).
//
// A distributed ingest (Plan) encodes categorical and time columns as Run
// does: each file's task counts its levels and returns its Counter, and
// the driver merges them in file order.
//
// Result.Columns (and the store's manifest, chunkstore.InputColumn) says
// what happened to every column of the first input: feature, target, or
// skipped with a reason. Among the features chosen by default (not named in
// Config.Features), a constant column (one value in every row, two rows or
// more) is dropped, and a column that looks like a row identifier is left
// out: integer values, all distinct, and either strictly increasing or
// decreasing over the whole input (at least 100 rows; strictly monotone
// implies distinct, so this needs no memory) or named like an identifier
// ("id", "*_id", "*Id", "*ID"). For a column named like an identifier but
// not monotone, distinctness is checked exactly on up to 2^20 values (about
// 40 MB); past that bound, distinct among the first 2^20 counts. Both
// checks need the whole input, so the first pass writes every candidate
// column to a store under a temporary name beside Config.Out; if a column
// is dropped, that store is copied chunk by chunk without it (one extra
// read and write of the store, only then), else renamed into place.
//
// A string column named in Config.Targets holds class labels: it is
// stored as integer codes 0 … k-1, k ≤ chunkstore.MaxLabels (100), in the
// sorted order of the labels, whose names the manifest keeps
// (chunkstore.Reader.TargetLabels). Codes are given as values are met
// (files are read in parallel); when that order is not the sorted one,
// the store is copied once with the codes remapped, so it is the same for
// any worker count.
//
// A NULL, NaN or ±Inf in a chosen column is an error (a *ValueError naming
// the file, the column and the 1-based row within that file), or with
// Config.Nulls == "drop" the row is skipped and counted in Result.Dropped.
// With Config.Nulls == "mean" a feature's bad value is stored as the mean
// of the column's other stored values (a row whose target is bad is
// dropped): the first pass stores 0 there and marks the place in a second
// store of the features' shape beside it; the copy that installs the
// store puts the mean in place (one extra read and write of the store,
// only when a value was filled). InputColumn.Nulls and Result.Filled count
// them.
//
// DryRun does all of this but the writing: it reads every row and returns
// the Result that Run would, without a store (falkon-ooc inspect DATA).
//
// # Concurrency
//
// Run reads up to four files at once and the columns of each batch in
// parallel, up to Config.Workers goroutines each, and writes the batches to
// the store in input order, so the store is the same for any worker count.
// Memory stays bounded (see Memory below). Config.Progress is called from
// a single goroutine.
//
// # Memory
//
// Run's peak Go heap is estimated before the first row is read, and
// reported in the first Progress (Progress.Memory) and in Result.Memory.
// With C the chosen columns, W the workers, F = min(W, files, 4) the files
// read at once, B = Config.BatchRows (default 2²⁰/C, in [128, 65 536]) and
// R = Config.ChunkRows (default min(32 768, 32 MiB / 8C), at least 256):
//
//	Total   = 32 MiB + Readers + Batches + Chunks + Levels
//	Readers = Σ over the F largest files being read of:
//	          Parquet: Σ over columns of (buffer + 2·pages + 32 KiB),
//	                   buffer = min(256 KiB, max(16 KiB, 64 MiB / C)),
//	                   pages  = min(4 MiB, the column's largest chunk,
//	                            compressed plus uncompressed bytes)
//	          text:    7 · min(Config.MaxLine, the file's size)
//	Batches = 4F · B · C · 8
//	Chunks  = 2(W+2) · R · C' · 8 + (W+3) · C' · 2 KiB,
//	          C' = C + K · (Config.MaxLevels + 1) for K categorical columns
//	Levels  = K · (F + 1) · (2¹⁶ · (64 + 64) + 16 KiB)
//	          + T · (F + 1) · 2¹⁶ · 144 for T columns that may be target-encoded
//
// A categorical column's levels are counted exactly up to 2¹⁶ distinct
// levels, then by a summary of bounded size (featenc.Counter), so a column
// of a million distinct strings takes no more than one of 2¹⁶; the
// estimate assumes 64 bytes per level on average.
//
// Before the columns are known (reading the first records of text files)
// the bound is InspectMemory: 32 MiB + 7 · Config.MaxLine. The command
// sets a soft memory limit of 1.25 × the larger of the two, so its peak
// RSS stays near that figure plus the program text (measured at 10 000
// Parquet columns and a 100 MiB text line: bench/RESULTS.md, "Ingest
// memory"). A Parquet column's reader state dominates wide
// files: about 150 KiB per column for a file of small row groups.
//
// A record longer than Config.MaxLine is refused as soon as the limit is
// passed, and a header name longer than 4096 bytes from the first bytes of
// the file, without reading the line whole.
//
// # Invariants
//
// The store's manifest lists the input files (absolute path, size,
// modification time and rows read); a text file's rows are recorded as -1,
// since chunkstore takes the list when the store is created, before the
// file has been read.
//
// The store is built under a temporary name by chunkstore.Create and appears
// under Config.Out only when Run succeeds; on any error or cancellation it is
// aborted and nothing is left at Config.Out. Run never panics on malformed
// input: a panic inside the Arrow readers is turned into an error naming the
// file.
package ingest
