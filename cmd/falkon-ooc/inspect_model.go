package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// inspectModelJSON is the --json document of inspect MODEL: the model's
// own summary (ooc.Model.SummaryJSON) beside the file's name and size.
type inspectModelJSON struct {
	Version string          `json:"version"`
	Path    string          `json:"path"`
	Bytes   int64           `json:"bytes"` // the model file's size
	Model   json.RawMessage `json:"model"`
}

// inspectModel describes the model file at path (size bytes).
func inspectModel(e *env, o *inspectOpts, path string, size int64) error {
	m, err := loadModel(path)
	if err != nil {
		return err
	}
	if o.jsonOut {
		summary, err := m.SummaryJSON()
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, inspectModelJSON{Version: version, Path: path, Bytes: size, Model: summary})
	}
	printModel(e.stdout, path, size, m)
	return nil
}

func printModel(w io.Writer, path string, size int64, m *ooc.Model) {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	tr := m.Training()
	cfg := m.Config()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s (%s)\n", path, mb(size))
	task := string(m.Task())
	switch m.Task() {
	case ooc.TaskRegression:
		task += fmt.Sprintf(", %d output(s)", m.K())
	default:
		task += fmt.Sprintf(", %d classes: %s", len(m.Classes()), strings.Join(m.ClassNames(), ", "))
	}
	fmt.Fprintf(tw, "task\t%s\n", task)
	if m.Task() != ooc.TaskRegression {
		fmt.Fprintf(tw, "proba\t%s\n", calibrationLine(m))
	}
	if l := decisionLine(m); l != "" {
		fmt.Fprintf(tw, "decision\t%s\n", l)
	}
	if l := classWeightLine(m); l != "" {
		fmt.Fprintf(tw, "weights\t%s\n", l)
	}
	if u := m.Uncertainty(); u != nil {
		for i, l := range uncertaintyLines(u, m.M()) {
			fmt.Fprintf(tw, "%s\t%s\n", []string{"std", ""}[min(i, 1)], l)
		}
	}
	if c := m.Conformal(); c != nil {
		fmt.Fprintf(tw, "conformal\t%s\n", conformalLine(c))
	}
	fmt.Fprintf(tw, "targets\t%s\n", strings.Join(m.Targets(), ", "))
	fmt.Fprintf(tw, "features\t%d: %s\n", m.D(), strings.Join(m.Features(), ", "))
	std := "z-scored with the training statistics"
	if m.FeatureStd() == nil {
		std = "not standardised"
	}
	fmt.Fprintf(tw, "data\tn = %s rows, d = %d, features %s\n", group(tr.N), m.D(), std)
	for _, l := range weightLines(m) {
		fmt.Fprintf(tw, "%s\t%s\n", l[0], l[1])
	}
	fmt.Fprintf(tw, "kernel\t%s, %s\n", m.Kernel(), m.Precision())
	fmt.Fprintf(tw, "lambda\t%s\n", g(cfg.Lambda))
	sampling := string(cfg.Sampling)
	if sampling == "" {
		sampling = string(ooc.SamplingUniform)
	}
	centres := fmt.Sprintf("M = %d, %s sampling, seed %d", m.M(), sampling, cfg.Seed)
	if tr.DuplicateCenters > 0 {
		centres += fmt.Sprintf(", %d duplicates", tr.DuplicateCenters)
	}
	fmt.Fprintf(tw, "centres\t%s\n", centres)
	pre := string(cfg.Preconditioner)
	if pre == "" {
		pre = "cholesky"
	}
	if tr.NystromRank > 0 {
		pre += fmt.Sprintf(" (basis rank %d, missing %s of tr K_MM)", tr.NystromRank, g(tr.NystromResidual))
	}
	fmt.Fprintf(tw, "precond\t%s, rank %d, jitter %s\n", pre, tr.Rank, g(tr.Jitter))
	residual := "none"
	if n := len(tr.Residuals); n > 0 {
		residual = g(tr.Residuals[n-1])
	}
	fmt.Fprintf(tw, "solver\t%d of %d iterations (%s), residual %s\n", tr.Iterations, cfg.Iterations, tr.Status, residual)
	fmt.Fprintf(tw, "time\t%.2f s, %.3f s per iteration\n", tr.Seconds, tr.SecondsPerIteration)
	if tr.PrecondSeconds > 0 {
		fmt.Fprintf(tw, "\t%.2f s for K_MM and the preconditioner\n", tr.PrecondSeconds)
	}
	factors := "T and A"
	if tr.NystromRank > 0 {
		factors = "the Nyström basis"
	}
	fmt.Fprintf(tw, "memory\t%s for the preconditioner (%s)", mb(tr.PrecondBytes), factors)
	if tr.PeakRSS > 0 {
		fmt.Fprintf(tw, ", peak RSS %s", mb(tr.PeakRSS))
	}
	fmt.Fprintln(tw)
	if tr.Status == ooc.StatusPatience {
		fmt.Fprintf(tw, "patience\tstopped after %d validations without improvement; the model is iteration %d's\n", cfg.Patience, tr.BestIteration)
	}
	if len(tr.Phases) > 0 {
		fmt.Fprintf(tw, "phases\t%s\n", phaseSummary(tr.Phases))
	}
	tw.Flush()
	if tr.Search != nil && tr.Handoff != nil {
		fmt.Fprintf(w, "\nsearch (fit --tune):\n")
		writeTuneTable(w, tr.Search)
		writeHandoff(w, tr.Search, tr.Handoff)
	}
	if len(tr.Validation) == 0 {
		fmt.Fprintf(w, "\nvalidation: none\n")
		return
	}
	fmt.Fprintf(w, "\nvalidation:\n")
	// One column per metric the task has.
	metrics := []struct {
		name string
		get  func(*ooc.Metrics) *float64
	}{
		{"rmse", func(m *ooc.Metrics) *float64 { return m.RMSE }},
		{"mae", func(m *ooc.Metrics) *float64 { return m.MAE }},
		{"r2", func(m *ooc.Metrics) *float64 { return m.R2 }},
		{"mse", func(m *ooc.Metrics) *float64 { return m.MSE }},
		{"rel_error", func(m *ooc.Metrics) *float64 { return m.RelErr }},
		{"error_rate", func(m *ooc.Metrics) *float64 { return m.ErrorRate }},
		{"accuracy", func(m *ooc.Metrics) *float64 { return m.Accuracy }},
		{"balanced_accuracy", func(m *ooc.Metrics) *float64 { return m.BalancedAccuracy }},
		{"auc", func(m *ooc.Metrics) *float64 { return m.AUC }},
		{"pr_auc", func(m *ooc.Metrics) *float64 { return m.PRAUC }},
		{"log_loss", func(m *ooc.Metrics) *float64 { return m.LogLoss }},
	}
	head := []string{"iteration", "rows"}
	var shown []int
	for i, mt := range metrics {
		for _, v := range tr.Validation {
			if mt.get(&v.Metrics) != nil {
				head = append(head, mt.name)
				shown = append(shown, i)
				break
			}
		}
	}
	rows := [][]string{head}
	for _, v := range tr.Validation {
		r := []string{strconv.Itoa(v.Iteration), strconv.FormatInt(v.Rows, 10)}
		for _, i := range shown {
			s := "-"
			if p := metrics[i].get(&v.Metrics); p != nil {
				s = g(*p)
			}
			r = append(r, s)
		}
		rows = append(rows, r)
	}
	printTable(w, rows, 0)
	if fm := tr.ValidationFinal; fm != nil {
		fmt.Fprintf(w, "\nthe saved model on the validation rows:\nmetrics    %s\n", metricsLine(fm))
		writeClassReport(w, fm)
	}
}

// phaseSummary sums the phases by name, in the order they first ran:
// "sample 0.1 s, kmm 2.0 s, …, iteration ×20 41.2 s (CPU 80.1 s)".
func phaseSummary(phases []ooc.Phase) string {
	type sum struct {
		n         int
		wall, cpu float64
	}
	var order []string
	sums := map[string]*sum{}
	for _, p := range phases {
		s, ok := sums[p.Name]
		if !ok {
			s = &sum{}
			sums[p.Name] = s
			order = append(order, p.Name)
		}
		s.n++
		s.wall += p.Wall
		s.cpu += p.CPU
	}
	parts := make([]string, len(order))
	for i, name := range order {
		s := sums[name]
		times := ""
		if s.n > 1 {
			times = fmt.Sprintf(" ×%d", s.n)
		}
		parts[i] = fmt.Sprintf("%s%s %.2f s (CPU %.2f s)", name, times, s.wall, s.cpu)
	}
	return strings.Join(parts, ", ")
}
