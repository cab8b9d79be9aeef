package metrics_test

import (
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/metrics"
)

// near is |got − want| ≤ 1e-15 · max(1, |want|): the metrics here are a
// few exact sums and one division, so only the last bits may differ.
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-15*math.Max(1, math.Abs(want))
}

func TestConfusion(t *testing.T) {
	// Rows (truth, decided): the matrix is
	//
	//	      0  1  2  3
	//	t0 [  3  1  0  0 ]
	//	t1 [  0  2  1  0 ]
	//	t2 [  1  0  2  0 ]
	//	t3 [  0  0  0  0 ]   class 3 never seen nor decided
	c := metrics.NewConfusion(4)
	for _, r := range [][3]int{{0, 0, 3}, {0, 1, 1}, {1, 1, 2}, {1, 2, 1}, {2, 0, 1}, {2, 2, 2}} {
		for range r[2] {
			c.Add(r[0], r[1])
		}
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"At(0,1)", c.At(0, 1), 1},
		{"Total", c.Total(), 10},
		{"Support(2)", c.Support(2), 3},
		{"Decided(0)", c.Decided(0), 4},
		{"Accuracy", c.Accuracy(), 7.0 / 10},
		{"Precision(0)", c.Precision(0), 3.0 / 4},
		{"Precision(1)", c.Precision(1), 2.0 / 3},
		{"Precision(2)", c.Precision(2), 2.0 / 3},
		{"Precision(3)", c.Precision(3), nan},
		{"Recall(0)", c.Recall(0), 3.0 / 4},
		{"Recall(1)", c.Recall(1), 2.0 / 3},
		{"Recall(3)", c.Recall(3), nan},
		{"F1(0)", c.F1(0), 6.0 / 8},
		{"F1(2)", c.F1(2), 4.0 / 6},
		{"F1(3)", c.F1(3), nan},
		{"MacroF1", c.MacroF1(), (6.0/8 + 4.0/6 + 4.0/6) / 3},
		{"BalancedAccuracy", c.BalancedAccuracy(), 25.0 / 36},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if c.Count() != 10 || c.Classes() != 4 {
		t.Errorf("Count, Classes = %d, %d; want 10, 4", c.Count(), c.Classes())
	}

	// A class with rows but never decided: precision undefined, recall
	// and F1 0. Everything decided as the majority: balanced accuracy ½.
	b := metrics.NewConfusion(2)
	for i := range 20 {
		b.Add(min(i/19, 1), 0) // 19 of class 0, 1 of class 1, all decided 0
	}
	if p, r, f := b.Precision(1), b.Recall(1), b.F1(1); !math.IsNaN(p) || r != 0 || f != 0 {
		t.Errorf("never-decided class: precision, recall, F1 = %v, %v, %v; want NaN, 0, 0", p, r, f)
	}
	if got := b.BalancedAccuracy(); got != 0.5 {
		t.Errorf("majority vote: balanced accuracy = %v, want 0.5 (accuracy %v)", got, b.Accuracy())
	}

	// Weighted: a row of weight 3 is three rows; Merge is adding after;
	// Reset empties.
	w, r := metrics.NewConfusion(2), metrics.NewConfusion(2)
	w.AddWeighted(1, 1, 3)
	w.AddWeighted(0, 1, 0.5)
	r.AddWeighted(0, 0, 2)
	w.Merge(r)
	if got, want := w.Precision(1), 3/3.5; !near(got, want) {
		t.Errorf("weighted precision = %v, want %v", got, want)
	}
	if got, want := w.Accuracy(), 5/5.5; !near(got, want) {
		t.Errorf("merged accuracy = %v, want %v", got, want)
	}
	w.Reset()
	if w.Count() != 0 || !math.IsNaN(w.Accuracy()) {
		t.Errorf("after Reset: Count %d, accuracy %v; want 0, NaN", w.Count(), w.Accuracy())
	}
}

func TestConfusionNoAllocation(t *testing.T) {
	c := metrics.NewConfusion(3)
	if a := testing.AllocsPerRun(100, func() { c.AddWeighted(1, 2, 0.5) }); a != 0 {
		t.Errorf("AddWeighted allocates %v times a row", a)
	}
}

func TestRegressionR2MAE(t *testing.T) {
	var r metrics.Regression
	r.Add([]float64{1, 2}, []float64{1, 4})
	r.Add([]float64{3}, []float64{1})
	// errors 0, -2, 2: MAE 4/3; Σ(y−ȳ)² = 6 → R² = 1 − 8/6.
	if got, want := r.MAE(), 4.0/3; !near(got, want) {
		t.Errorf("MAE = %v, want %v", got, want)
	}
	if got, want := r.R2(), -1.0/3; !near(got, want) {
		t.Errorf("R2 = %v, want %v (worse than the mean)", got, want)
	}
	var w metrics.Regression
	// weights 1, 3: MAE (1·1 + 3·2)/4; ȳ_w = (0 + 3·4)/4 = 3,
	// Σw(y−ȳ)² = 9 + 3 = 12, Σw e² = 1 + 12 = 13.
	w.AddWeighted([]float64{1, 2}, []float64{0, 4}, []float64{1, 3}, 1)
	if got, want := w.MAE(), 7.0/4; !near(got, want) {
		t.Errorf("weighted MAE = %v, want %v", got, want)
	}
	if got, want := w.R2(), 1-13.0/12; !near(got, want) {
		t.Errorf("weighted R2 = %v, want %v", got, want)
	}
	var e metrics.Regression
	if !math.IsNaN(e.MAE()) || !math.IsNaN(e.R2()) {
		t.Errorf("MAE, R2 of nothing = %v, %v; want NaN", e.MAE(), e.R2())
	}
	// The encoding carries the absolute errors.
	b, _ := w.MarshalBinary()
	var back metrics.Regression
	if err := back.UnmarshalBinary(b); err != nil || back.MAE() != w.MAE() {
		t.Errorf("round trip: MAE %v (%v), want %v", back.MAE(), err, w.MAE())
	}
}
