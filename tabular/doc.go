// Package tabular streams rows of Parquet and delimited text files in and
// out, batch by batch, for prediction: numeric columns as float64, any
// other column passed through unchanged beside the results.
//
// # Overview
//
// A Reader reads the named numeric columns of a list of files (Parquet, or
// CSV/TSV optionally gzip-compressed; "-" is a text stream given in
// Options.Stdin) in file order, one Batch of at most Options.BatchRows rows
// at a time, and carries the Options.Keep columns — of any type, strings
// and timestamps too — along with them. A NULL, NaN or ±Inf in a numeric
// column is an error naming the file, column and row, or the row is dropped
// (Options.Nulls "drop") or the value set to 0 ("zero") or to the
// column's Options.Fill value ("fill"). A column named
// after a key=value folder of a file's path (a Hive partition key) is read
// from the path, as chunkstore/ingest reads it (internal/table.Columns): a
// numeric column is the key's number in every row, a kept one its text. Optional columns
// (the targets of a model, when the input has them) are read when every
// one is present and a bad value there is NaN, never an error.
//
// A Writer writes, batch by batch, the kept columns and named float64
// columns as CSV, JSON Lines or Parquet (zstd pages, one row group per
// batch); kept columns keep their Parquet type.
//
// chunkstore/ingest, which turns the same files into a chunk store with
// statistics, and this package are the module's two Arrow importers; no
// Arrow type appears in either API.
//
// # Concurrency
//
// A Reader or a Writer is used by one goroutine at a time. A Batch is
// owned by the caller once returned by Next and stays valid after the
// next call.
//
// # Invariants
//
// Memory is bounded by a batch: a Reader holds one batch of the chosen
// columns and the Parquet pages being decoded (256 KiB of read buffer per
// column), never a whole file. Rows come out in input order; Batch.Dropped
// counts the rows left out of the batch. Row numbers in errors are 1-based
// within their file (a text file's header line not counted).
package tabular
