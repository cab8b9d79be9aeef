package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// maxClassLines is the most classes whose metrics and confusion matrix
// the text summaries print one line each; beyond it they give the macro
// figures and the worst recall (--json has every class).
const maxClassLines = 10

// writeClassReport prints, under a summary's metrics line, the classes'
// precision, recall and F1 and the confusion matrix (rows: the true
// class; columns: the label given), each line after the first indented
// to the summary's value column. Nothing for regression.
func writeClassReport(w io.Writer, m *ooc.Metrics) {
	if len(m.Classes) == 0 {
		return
	}
	const pad = "           "
	if len(m.Classes) > maxClassLines {
		var f1 float64
		n := 0
		worst := -1
		for i, c := range m.Classes {
			if c.F1 != nil {
				f1 += *c.F1
				n++
			}
			if c.Recall != nil && (worst < 0 || *c.Recall < *m.Classes[worst].Recall) {
				worst = i
			}
		}
		line := fmt.Sprintf("classes    %d", len(m.Classes))
		if n > 0 {
			line += fmt.Sprintf(": macro F1 %.4g", f1/float64(n))
		}
		if worst >= 0 {
			line += fmt.Sprintf(", lowest recall %.4g (%s)", *m.Classes[worst].Recall, m.Classes[worst].Class)
		}
		fmt.Fprintln(w, line+"; each class's precision, recall and F1 and the confusion matrix are in --json")
		return
	}
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'f', 4, 64)
	}
	rows := [][]string{{"class", "rows", "precision", "recall", "F1"}}
	for _, c := range m.Classes {
		rows = append(rows, []string{c.Class, count(c.Support), opt(c.Precision), opt(c.Recall), opt(c.F1)})
	}
	var b strings.Builder
	printTable(&b, rows, 1)
	for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		head := pad
		if i == 0 {
			head = "classes    "
		}
		fmt.Fprintln(w, head+l)
	}
	b.Reset()
	cm := [][]string{append([]string{"true \\ label"}, classNames(m)...)}
	for t, row := range m.Confusion {
		r := []string{m.Classes[t].Class}
		for _, v := range row {
			r = append(r, count(v))
		}
		cm = append(cm, r)
	}
	printTable(&b, cm, 1)
	for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		head := pad
		if i == 0 {
			head = "confusion  "
		}
		fmt.Fprintln(w, head+l)
	}
}

func classNames(m *ooc.Metrics) []string {
	s := make([]string, len(m.Classes))
	for i, c := range m.Classes {
		s[i] = c.Class
	}
	return s
}

// count formats a row count, or a weight sum with 4 significant digits
// when the rows are weighted (not whole).
func count(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// decisionLine says how a binary model labels its rows: from which
// probability of the second class, chosen how. "" for other tasks.
func decisionLine(m *ooc.Model) string {
	d, ok := m.Decision()
	if !ok {
		return ""
	}
	names := m.ClassNames()
	how := "the default"
	switch {
	case d.Rule != "":
		how = fmt.Sprintf("--threshold %s, chosen on %d validation rows", d.Rule, d.Rows)
	case d.Threshold != 0.5 || m.Config().Threshold != "":
		how = "--threshold"
	}
	return fmt.Sprintf("%s when p(%s) ≥ %.4g (%s), else %s", names[1], names[1], d.Threshold, how, names[0])
}

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
