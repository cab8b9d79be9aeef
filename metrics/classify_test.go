package metrics_test

import (
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/metrics"
)

func TestMulticlassAUC(t *testing.T) {
	// 3 classes, 4 rows. Class 0: scores 0.9 (pos), 0.1, 0.2, 0.3 → 1.
	// Class 1: pos rows 1 (0.8) and 2 (0.3); neg 0.05, 0.4 → pairs
	// (0.8>0.05, 0.8>0.4, 0.3>0.05, 0.3<0.4) = 3/4. Class 2 never true:
	// left out. Mean (1 + 0.75) / 2.
	scores := []float64{
		0.9, 0.05, 0.05,
		0.1, 0.8, 0.1,
		0.2, 0.3, 0.5,
		0.3, 0.4, 0.3,
	}
	truth := []int{0, 1, 1, 0}
	if got, want := metrics.MulticlassAUC(scores, 3, truth), 0.875; got != want {
		t.Errorf("MulticlassAUC = %v, want %v", got, want)
	}
	// With two classes it is the binary AUC of either column.
	s2 := []float64{0.9, -0.9, -0.2, 0.2, 0.3, -0.3, -0.8, 0.8}
	tr2 := []int{1, 1, 0, 0}
	bin := metrics.AUC([]float64{0.9, -0.2, 0.3, -0.8}, []bool{true, true, false, false})
	if got := metrics.MulticlassAUC([]float64{-s2[0], s2[0], -s2[2], s2[2], -s2[4], s2[4], -s2[6], s2[6]}, 2, tr2); got != bin {
		t.Errorf("two-class MulticlassAUC = %v, want the binary AUC %v", got, bin)
	}
	if got := metrics.MulticlassAUC([]float64{1, 2}, 2, []int{0}); !math.IsNaN(got) {
		t.Errorf("MulticlassAUC of one row = %v, want NaN", got)
	}
}

func TestLogLoss(t *testing.T) {
	var l metrics.LogLoss
	if !math.IsNaN(l.Value()) {
		t.Error("log-loss of nothing is not NaN")
	}
	l.Add(0.5)
	l.Add(1)
	l.Add(0) // clipped to 1e-15
	want := (math.Log(2) + 0 - math.Log(metrics.LogLossEps)) / 3
	if got := l.Value(); math.Abs(got-want) > 1e-14 {
		t.Errorf("log-loss = %v, want %v", got, want)
	}
	if l.Count() != 3 {
		t.Errorf("Count = %d", l.Count())
	}
}

func TestReliability(t *testing.T) {
	r := metrics.Reliability{Bins: 10}
	if !math.IsNaN(r.ECE()) {
		t.Error("ECE of nothing is not NaN")
	}
	// Bin (0.8, 0.9]: confidences 0.85 ×4, 3 right → |0.75 − 0.85| = 0.1.
	// Bin (0.5, 0.6]: 0.55 ×2 (0.55·10 = 5.5 → bin 5), 1 right → |0.5 − 0.55| = 0.05.
	// Bin (0.9, 1]: 1.0 ×2, both right → 0.
	for i := range 4 {
		r.Add(0.85, i < 3)
	}
	r.Add(0.55, true)
	r.Add(0.55, false)
	r.Add(1, true)
	r.Add(1, true)
	want := 4.0/8*0.1 + 2.0/8*0.05
	if got := r.ECE(); math.Abs(got-want) > 1e-15 {
		t.Errorf("ECE = %v, want %v", got, want)
	}
	// Perfectly calibrated: confidence 0.7, 70 % right.
	var p metrics.Reliability
	for i := range 100 {
		p.Add(0.7, i%10 < 7)
	}
	if got := p.ECE(); math.Abs(got) > 1e-12 {
		t.Errorf("ECE of calibrated predictions = %v, want 0", got)
	}
	if p.Bins != metrics.DefaultBins {
		t.Errorf("Bins = %d after the first Add, want the default %d", p.Bins, metrics.DefaultBins)
	}
}
