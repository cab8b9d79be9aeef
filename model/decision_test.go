package model_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/metrics"
	"github.com/falkon-ooc/falkon-ooc/model"
)

// TestDecisionAgreesWithProba: no row's label disagrees with its
// probability. A binary model labels a row with Classes[1] exactly when
// the probability printed for it is ≥ the threshold: uncalibrated,
// Platt-calibrated (whose boundary is not at score 0) and of the
// logistic loss, at the default threshold and at others; a multiclass
// model labels the class of the largest probability.
func TestDecisionAgreesWithProba(t *testing.T) {
	const rows = 2000
	for _, tm := range testModels(t) {
		if tm.m.Task() == model.TaskRegression {
			continue
		}
		ths := []float64{0}
		if tm.m.Task() == model.TaskBinary {
			ths = []float64{model.DefaultThreshold, 0.3, 0.85}
		}
		for _, th := range ths {
			m := tm.m
			if th != model.DefaultThreshold && th != 0 {
				var err error
				if m, err = m.WithDecision(model.Decision{Threshold: th}); err != nil {
					t.Fatal(err)
				}
			}
			x := probe(rows, m.D(), 11)
			var dst model.Prediction
			if err := m.NewPredictor().PredictTo(&dst, x, rows, model.WantProba); err != nil {
				t.Fatal(err)
			}
			c, k := m.NumClasses(), m.K()
			disagree, signRule, positives := 0, 0, 0
			for r := range rows {
				p := dst.Proba[r*c : (r+1)*c]
				want := slices.Index(p, slices.Max(p))
				if m.Task() == model.TaskBinary {
					want = 0
					if p[1] >= th {
						want = 1
					}
					if (dst.Scores[r] > 0) != (p[1] >= 0.5) {
						signRule++
					}
				} else if p[dst.Class[r]] == p[want] {
					want = dst.Class[r] // ties: any largest probability
				}
				if dst.Class[r] != want || m.Label(dst.Scores[r*k:(r+1)*k]) != m.Classes()[want] {
					disagree++
				}
				positives += dst.Class[r]
			}
			if disagree != 0 {
				t.Errorf("%s, threshold %v: %d of %d rows are labelled against their probabilities", tm.name, th, disagree, rows)
			}
			if tm.name == "binary_platt" && th == model.DefaultThreshold && signRule == 0 {
				t.Errorf("%s: the score's sign and p ≥ ½ agree on every row: the test cannot tell the rules apart", tm.name)
			}
			if m.Task() == model.TaskBinary && (positives == 0 || positives == rows) {
				t.Errorf("%s, threshold %v: every row has one label (%d positives)", tm.name, th, positives)
			}
		}
	}
}

// TestDecisionFile: a decision is stored under the capability
// "decision" (format version 3) and read back; a model without one is
// written as before and labels at ½.
func TestDecisionFile(t *testing.T) {
	bin := fixture(t, "cmd/falkon-ooc/testdata/model_v1_binary.falkon")
	if d, ok := bin.Decision(); !ok || d.Threshold != 0.5 || d.Rule != "" || bin.Requires() != nil {
		t.Errorf("a model without a decision: %+v, %v, requires %v", d, ok, bin.Requires())
	}
	want := model.Decision{Threshold: 0.2875, Rule: "cost:1:5", Rows: 400}
	m, err := bin.WithDecision(want)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if v := b.Bytes()[4]; v != 3 {
		t.Errorf("written as version %d, want 3", v)
	}
	back, err := model.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := back.Decision(); d != want || !slices.Equal(back.Requires(), []string{"decision"}) {
		t.Errorf("read back %+v requiring %v, want %+v requiring [decision]", d, back.Requires(), want)
	}
}

func TestDecisionErrors(t *testing.T) {
	bin := fixture(t, "cmd/falkon-ooc/testdata/model_v1_binary.falkon")
	multi := fixture(t, "ooc/testdata/model_v1_multiclass_f64.fkom")
	for _, tc := range []struct {
		m    *model.Model
		d    model.Decision
		want string
	}{
		{multi, model.Decision{Threshold: 0.5}, "a decision threshold in a multiclass model"},
		{bin, model.Decision{Threshold: 0}, "decision threshold 0 outside (0, 1]"},
		{bin, model.Decision{Threshold: 0.5, Rule: "best"}, `decision rule: "best": not a threshold rule`},
	} {
		if _, err := tc.m.WithDecision(tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithDecision(%+v) = %v, want %q", tc.d, err, tc.want)
		}
	}
	for s, want := range map[string]string{
		"1.5":  "threshold 1.5: a number must be in (0, 1)",
		"0":    "threshold 0: a number must be in (0, 1)",
		"f2":   `threshold: a number in (0, 1), or a rule chosen on the validation rows: "f2": not a threshold rule: give "f1", "balanced" or "cost:FP:FN"`,
		"cost": `"cost": not a threshold rule`,
	} {
		if _, _, err := model.ParseThreshold(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseThreshold(%q) = %v, want %q", s, err, want)
		}
	}
	if th, rule, err := model.ParseThreshold("cost:1:5"); err != nil || th != 0 || rule == nil || rule.FN != 5 {
		t.Errorf("ParseThreshold(cost:1:5) = %v, %+v, %v", th, rule, err)
	}
}

// TestDecidedOn: a rule's threshold is chosen on the evaluator's rows by
// the model's probabilities and does at least as well by its criterion
// there as the default ½.
func TestDecidedOn(t *testing.T) {
	bin := fixture(t, "cmd/falkon-ooc/testdata/model_v1_binary.falkon")
	m, err := bin.WithDecision(model.Decision{Threshold: 0.5}) // the same as none
	if err != nil {
		t.Fatal(err)
	}
	const rows = 3000
	x := probe(rows, m.D(), 5)
	scores := make([]float64, rows)
	m.PredictTo(scores, x, rows)
	// Truths: positive with the uncalibrated probability, so ½ is far
	// from the best F1 when positives are rare.
	targets := make([]float64, rows)
	cl := m.Classes()
	for i, s := range scores {
		targets[i] = cl[0]
		if math.Mod(float64(i)*0.618, 1) < 0.3*min(max((s+1)/2, 0), 1) {
			targets[i] = cl[1]
		}
	}
	ev := m.NewEvaluator()
	if err := ev.Add(scores, targets, rows); err != nil {
		t.Fatal(err)
	}
	f1 := func(mm *model.Model) float64 {
		c := metrics.NewConfusion(2)
		for i, s := range scores {
			truth := 0
			if targets[i] == cl[1] {
				truth = 1
			}
			c.Add(truth, mm.ClassIndex([]float64{s}))
		}
		return c.F1(1)
	}
	rule, _ := metrics.ParseThresholdRule("f1")
	d, err := m.DecidedOn(ev, rule)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := d.Decision()
	if got.Rule != "f1" || got.Rows != rows || !(f1(d) >= f1(m)) || got.Threshold == 0.5 {
		t.Errorf("f1 rule: %+v, F1 %v against %v at ½", got, f1(d), f1(m))
	}
	if met := ev.Rescored(d).Metrics(); met.Classes[1].F1 == nil || *met.Classes[1].F1 != f1(d) {
		t.Errorf("the rescored metrics' F1 %v is not the decision's %v", met.Classes[1].F1, f1(d))
	}
	multi := fixture(t, "ooc/testdata/model_v1_multiclass_f64.fkom")
	if _, err := multi.DecidedOn(multi.NewEvaluator(), rule); err == nil || !strings.Contains(err.Error(), "a decision threshold is for binary classification, not multiclass") {
		t.Errorf("DecidedOn of a multiclass model: %v", err)
	}
}

// TestMetricsOfLabels: the evaluator's per-class metrics, confusion
// matrix, balanced accuracy and PR-AUC, against hand-computed values;
// regression's R² and MAE.
func TestMetricsOfLabels(t *testing.T) {
	ev := model.NewEvaluator(model.TaskBinary, []float64{0, 1}, []string{"y"}, 1)
	// Uncalibrated: labelled 1 when (s+1)/2 ≥ ½. Rows: TP, FN, FP, TN.
	if err := ev.Add([]float64{0.9, -0.2, 0.3, -0.8}, []float64{1, 1, 0, 0}, 4); err != nil {
		t.Fatal(err)
	}
	m := ev.Metrics()
	if want := [][]float64{{1, 1}, {1, 1}}; len(m.Confusion) != 2 || !slices.Equal(m.Confusion[0], want[0]) || !slices.Equal(m.Confusion[1], want[1]) {
		t.Errorf("confusion %v, want %v", m.Confusion, want)
	}
	// PR-AUC: 0.9 (positive) at precision 1, then −0.2 (positive) at ⅔.
	if math.Abs(*m.PRAUC-(1+2.0/3)/2) > 1e-15 || *m.BalancedAccuracy != 0.5 || m.Classes[1].Class != "1" || *m.Classes[1].Precision != 0.5 || m.Classes[1].Support != 2 {
		t.Errorf("PR-AUC %v, balanced accuracy %v, class 1 %+v", *m.PRAUC, *m.BalancedAccuracy, m.Classes[1])
	}
	if b := m.Brief(); b.Classes != nil || b.Confusion != nil || b.PRAUC == nil {
		t.Errorf("Brief keeps %v / %v or drops the scalars", b.Classes, b.Confusion)
	}
	r := model.NewEvaluator(model.TaskRegression, nil, []string{"y"}, 1)
	if err := r.Add([]float64{1, 2, 3}, []float64{1, 4, 1}, 3); err != nil {
		t.Fatal(err)
	}
	if rm := r.Metrics(); *rm.MAE != 4.0/3 || math.Abs(*rm.R2-(-1.0/3)) > 1e-15 {
		t.Errorf("MAE %v, R2 %v; want 4/3, −1/3", *rm.MAE, *rm.R2)
	}
}
