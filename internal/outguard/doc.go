// Package outguard is the one check every output of falkon-ooc and
// falkon-ooc-beam passes before any work: --out, the side files beside a
// model (MODEL.json, MODEL.ckpt, MODEL.ckpt.basis, MODEL.store and its
// key), --plot and predictions.
//
// # Overview
//
// A command lists what it will write as [Output] values and what it reads
// with [Inputs], then calls [Check]. Check refuses:
//
//   - two outputs that are the same file (--out m.png --plot m.png);
//   - an output that is an input, or a directory it replaces that holds
//     one (device and inode compared after the directory walk and the
//     glob's expansion, so links and other spellings count; the model
//     predict reads is an input);
//   - an output inside an input folder or inside a chunk store;
//   - a directory where a file goes;
//   - unless force, an existing file that is not provably falkon-ooc's
//     own kind of output ([Kind]): a model's magic number "FKOM", a
//     checkpoint's "FKCP", a summary's "format", a store with the key fit
//     writes beside it, a PNG's signature, a Parquet file with the
//     predictions key in its footer.
//
// [Prepare] then checks that the output's directory is writable and
// removes the leftovers of dead runs there (fileutil.Clean, which removes
// only what its content proves falkon-ooc's).
//
// The refusals are [*Error] values, worded alike for both binaries;
// Error.Usage marks a mistake on the command line (exit 2).
//
// # Concurrency
//
// Every function is safe for concurrent use; they read the file system
// and, for Prepare, create and remove a temporary file.
//
// # Invariants
//
// Check writes nothing. An output whose path is a URL (s3://, gs://) is
// not checked here: object stores have no device and inode, and the
// commands that write objects check their names themselves.
package outguard
