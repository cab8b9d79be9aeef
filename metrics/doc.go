// Package metrics computes the prediction metrics that falkon-ooc reports
// everywhere (predict, validation during fit, tune, demo), so that every
// place computes them the same way.
//
// # Overview
//
// Regression (Regression): MSE, RMSE, MAE, R² = 1 − Σ(ŷ−y)²/Σ(y−ȳ)² and
// the relative error 1 − R² (0 is perfect, 1 is no better than the
// mean).
//
// Classification from decided labels (Confusion): the confusion matrix,
// accuracy, precision, recall and F1 per class, and balanced accuracy
// (the mean recall over the classes present).
//
// Classification from scores: ROC AUC (AUC, AUCWeighted; one-vs-rest
// macro MulticlassAUC), average precision — the area under the
// precision–recall curve — for binary (AveragePrecision), the
// thresholds on a binary probability that maximise F1, equalise the two
// recalls or minimise a cost (ChooseThreshold).
//
// Probabilities: log-loss (LogLoss) and the expected calibration error
// of top-label confidences in equal-width bins (Reliability).
//
// Every metric has a weighted form in which a row of integer weight w
// counts as the row repeated w times (and weight 0 drops it).
//
// Accumulators take rows in any number of Add calls, so metrics of data
// larger than memory are computed in one pass and without an allocation
// per row: Regression, Confusion, LogLoss and Reliability keep O(1),
// O(k²), O(1) and O(bins) memory. The ranking metrics (AUC, average
// precision, thresholds) sort the scores, so their callers keep one
// float64 score and one bit per row.
//
// # Concurrency
//
// Accumulators are not safe for concurrent use. The functions are.
//
// # Invariants
//
// Sums are compensated (Neumaier), so results do not drift over 10⁹ rows.
// A metric that is undefined on the rows given (precision of a class
// never predicted, AUC with one class present, any metric of no rows) is
// NaN, never a made-up 0 or 1.
package metrics
