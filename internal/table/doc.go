// Package table holds what chunkstore/ingest (Parquet/CSV into a store)
// and tabular (predict's streaming reader) share when they read a table
// file, so that whatever ingest refuses, predict refuses the same way
// (STYLE.md §2c, "One table reader"): arrow-go keeps one file.Reader
// under both pqarrow and its column readers in the same manner.
//
// # Overview
//
// [OpenParquet] opens a Parquet file and checks its footer before any page
// is read: every column chunk's sizes and offsets, and the file's row
// count against its row groups'. [RowGroupEnds] and [PanicError] name the
// row groups of a failed read. For delimited text, [SniffComma] picks the
// delimiter, [CheckHead] refuses what is not line-delimited text,
// [CheckNames] refuses unusable header names, [IsNull] knows the NULL
// tokens, [Infer] a column's kind from a sample, and [ParseNumber],
// [ParseBool] and [ParseDate] read its values. [Columns] lists a file's
// columns: its own, then the Hive partition keys of its path
// ([HiveKeys]), whose values come from the folder names.
//
// # Concurrency
//
// Every function is safe for concurrent use.
//
// # Invariants
//
// A value is a number for both readers exactly when ParseNumber accepts
// it: decimal notation with an optional exponent, NaN and ±Inf (which the
// callers flag), never Go's digit separators (1_000) or hexadecimal
// floats, which strconv.ParseFloat also accepts.
package table
