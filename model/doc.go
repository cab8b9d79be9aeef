// Package model holds a fitted FALKON model on its own: what it predicts
// and how it is stored, without any of the training. A service imports
// this package and nothing of package ooc, which fits the models.
//
// # Overview
//
// A Model is
//
//	f(x) = Σ_j α_j K(z(x), c_j) + μ
//
// with z the standardisation of the training features, c_j the M
// Nyström centres, α the coefficients and μ the training mean of each of
// the K outputs (Rudi, Carratino and Rosasco, "FALKON: An Optimal Large
// Scale Kernel Method", NeurIPS 2017; Meanti, Carratino, Rosasco and
// Rudi, "Kernel methods through the roof", NeurIPS 2020). Its task is
// regression, binary classification (one score; > 0 means the second
// class) or multiclass classification (one score per class).
//
//   - Load, Parse, Model.Save and Model.WriteTo read and write the model
//     file (docs/MODEL_FORMAT.md: a versioned container of JSON metadata
//     and float64 arrays with a CRC32C trailer). New builds a model from
//     its parts (Params), for a trainer.
//   - A Predictor predicts batches of rows in memory with reused scratch
//     space: scores, classes, calibrated probabilities (Calibration) and
//     predictive standard deviations (Uncertainty). A PredictorPool lends
//     predictors to concurrent callers. Model.PredictTo and
//     Model.PredictStdTo are the same without reuse, for one-off calls.
//   - Model.Predict streams a stream.Source through the model chunk by
//     chunk; Model.Evaluate and an Evaluator compute the metrics of
//     predictions against known targets (Metrics).
//   - Relabel and AlignLabels map the codes of a string target's labels
//     between sources ingested apart and the model's classes.
//   - Calibrate fits a model's calibration on validation rows.
//
// # Concurrency
//
// A Model is immutable: New and Load return it complete (its kernel
// centres prepared), accessors return copies, and methods that change
// something (WithUncertainty, WithProvenance, Calibrate) return a new
// model. It is safe for concurrent use. A Predictor and an Evaluator are
// not: each goroutine uses its own. A PredictorPool is safe for
// concurrent use.
//
// # Invariants
//
//   - A model's parts are consistent, checked by New and by Parse before
//     anything is decoded: D feature names, K target means, 2 classes and
//     1 output for binary, K classes for multiclass, an Uncertainty only
//     for regression, a calibration that fits the task. A damaged or
//     hand-edited file is an error matching ErrFormat, never a panic.
//   - Inputs are never changed; outputs go to the first argument of a
//     ...To method (a Prediction for a Predictor), which the caller owns.
//   - Predictor.PredictTo gives the scores of Model.Predict bit for bit
//     and, after its first call, allocates nothing for batches of the
//     same or fewer rows. A NaN or infinite feature is an error naming
//     its row and column.
//   - A model is written in the lowest format version that holds it, and
//     every version from MinVersion to Version is read: a file loads and
//     predicts as the build that wrote it did.
package model
