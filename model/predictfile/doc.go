// Package predictfile applies a model to the rows of Parquet and CSV
// files read with package tabular, batch by batch, and writes the output
// columns of falkon-ooc predict: the prediction, the scores or calibrated
// probabilities, and the predictive standard deviations and intervals. It
// is the one implementation of predict's rows, used by falkon-ooc predict
// (all inputs into one output) and by falkon-ooc-beam predict (one output
// per input file, each a task of a Beam job). It imports the model and
// tabular, nothing of training.
//
// # Overview
//
// TableOptions turns a model and predict's input settings into the
// tabular.Options that read its features (and its targets, when the
// input has them). New returns a Predictor for a model and Options;
// Predictor.Files reads a tabular.Reader one batch ahead, predicts each
// batch on Options.Workers goroutines (each with its own
// model.Predictor, reused from batch to batch) and writes the output
// columns (Predictor.Columns) beside the kept input columns. Rows with
// targets are scored as they pass (Predictor.Ev, Predictor.Std).
//
// # Concurrency
//
// A Predictor is not safe for concurrent use; it runs its own workers.
//
// # Invariants
//
//   - The output never has two columns of one name: New refuses a kept
//     column named like an output column (CheckKeep).
//   - Predictions are those of model.Predictor, bit for bit, for any
//     number of workers.
//   - Reports never fail on what the data holds: a level that no target
//     falls inside has coverage 0 and width 0 (StdMetrics.Report).
package predictfile
