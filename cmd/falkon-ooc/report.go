package main

import (
	"fmt"
	"io"

	"github.com/falkon-ooc/falkon-ooc/internal/summary"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// writeClassReport prints, under a summary's metrics line, the classes'
// precision, recall and F1 and the confusion matrix (summary.ClassReport,
// as falkon-ooc-beam predict prints them). Nothing for regression.
func writeClassReport(w io.Writer, m *ooc.Metrics) { summary.ClassReport(w, m) }

// decisionLine says how a binary model labels its rows
// (summary.DecisionLine). "" for other tasks.
func decisionLine(m *ooc.Model) string { return summary.DecisionLine(m) }

// classWeightLine says what a fit's class weights did to the decision:
// they move the raw scores' boundary (score 0); calibrated probabilities
// put it back where the classes' frequencies are, so the threshold alone
// decides. "" without class weights.
func classWeightLine(m *ooc.Model) string {
	if m.Training().ClassWeights == nil {
		return ""
	}
	d, ok := m.Decision()
	if !ok {
		return "the balanced class weights weigh each class the same in the loss, which moves the scores toward the smaller classes; labels are the class of the largest probability"
	}
	names := m.ClassNames()
	b := m.ScoreBoundary()
	if m.Calibration() == nil {
		return fmt.Sprintf("the balanced class weights moved the scores' boundary (score 0, p(%s) = %.4g); without calibration the labels follow it", names[1], b)
	}
	s := fmt.Sprintf("the balanced class weights drew the scores' boundary (score 0) at p(%s) = %.4g; the labels follow the calibrated probabilities at %.4g instead", names[1], b, d.Threshold)
	if d.Rule == "" {
		s += ", so the weights shaped the scores but not the threshold: --threshold balanced chooses equal recall of both classes"
	}
	return s
}
