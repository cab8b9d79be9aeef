package summary

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// MaxClassLines is the most classes whose metrics and confusion matrix
// ClassReport prints one line each; beyond it, it gives the macro
// figures and the worst recall (--json has every class).
const MaxClassLines = 10

// pad indents a block's lines after its first to the value column.
const pad = "           "

// ClassReport writes, under a summary's metrics line, the classes'
// precision, recall and F1 and the confusion matrix (rows: the true
// class; columns: the label given), each line after the first indented
// to the summary's value column. Nothing for regression.
func ClassReport(w io.Writer, m *ooc.Metrics) {
	if len(m.Classes) == 0 {
		return
	}
	if len(m.Classes) > MaxClassLines {
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
		rows = append(rows, []string{c.Class, Count(c.Support), opt(c.Precision), opt(c.Recall), opt(c.F1)})
	}
	block(w, "classes    ", rows)
	names := make([]string, len(m.Classes))
	for i, c := range m.Classes {
		names[i] = c.Class
	}
	cm := [][]string{append([]string{"true \\ label"}, names...)}
	for t, row := range m.Confusion {
		r := []string{m.Classes[t].Class}
		for _, v := range row {
			r = append(r, Count(v))
		}
		cm = append(cm, r)
	}
	block(w, "confusion  ", cm)
}

// block writes rows as a Table whose first line starts with head and
// the others with pad.
func block(w io.Writer, head string, rows [][]string) {
	var b strings.Builder
	Table(&b, rows, 1)
	for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if i > 0 {
			head = pad
		}
		fmt.Fprintln(w, head+l)
	}
}

// DecisionLine says how a binary model labels its rows: from which
// probability of the second class, chosen how. "" for other tasks.
func DecisionLine(m *ooc.Model) string {
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

// Count formats a row count, or a weight sum with 4 significant digits
// when the rows are weighted (not whole).
func Count(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Table writes rows (the first a header) in columns two spaces apart:
// the first left columns aligned left, the others right; trailing
// spaces trimmed.
func Table(w io.Writer, rows [][]string, left int) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for j, c := range r {
			width[j] = max(width[j], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for j, c := range r {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			if j > 0 {
				b.WriteString("  ")
			}
			if j < left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
