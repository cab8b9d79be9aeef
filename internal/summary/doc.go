// Package summary writes the lines of a classifier's text summary that
// falkon-ooc and falkon-ooc-beam share, so that both programs print a
// prediction's (and falkon-ooc a fit's, a search's and inspect's) class
// report and decision the same way.
//
// # Overview
//
// ClassReport writes, under a summary's "metrics" line, each class's
// precision, recall and F1 and the confusion matrix (or, for more than
// MaxClassLines classes, the macro F1 and the lowest recall).
// DecisionLine says how a binary model labels its rows. Table aligns
// rows of cells in columns, and Count formats a row count or a weight sum.
//
// # Concurrency
//
// The functions keep no state and are safe for concurrent use.
//
// # Invariants
//
// Every line a function writes ends in a newline; lines after a block's
// first are indented to the summaries' value column (11 spaces), so the
// blocks stand under a "name       value" line.
package summary
