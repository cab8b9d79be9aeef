package metrics_test

import (
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/metrics"
)

func TestRegression(t *testing.T) {
	var r metrics.Regression
	r.Add([]float64{1, 2}, []float64{1, 4})
	r.Add([]float64{3}, []float64{1})
	// errors 0, -2, 2 → MSE 8/3; truth mean 2, Σ(y−ȳ)² = 1+4+1 = 6.
	if got, want := r.MSE(), 8.0/3; math.Abs(got-want) > 1e-15 {
		t.Errorf("MSE = %v, want %v", got, want)
	}
	if got, want := r.RMSE(), math.Sqrt(8.0/3); math.Abs(got-want) > 1e-15 {
		t.Errorf("RMSE = %v, want %v", got, want)
	}
	if got, want := r.RelErr(), 8.0/6; math.Abs(got-want) > 1e-15 {
		t.Errorf("RelErr = %v, want %v", got, want)
	}
	if r.Count() != 3 {
		t.Errorf("Count = %d", r.Count())
	}
	var empty metrics.Regression
	if !math.IsNaN(empty.MSE()) {
		t.Error("MSE of nothing is not NaN")
	}
}

func TestBinary(t *testing.T) {
	var b metrics.Binary
	b.Add([]float64{0.9, -0.2, 0.3, -0.8}, []bool{true, true, false, false})
	if got := b.ErrorRate(); got != 0.5 {
		t.Errorf("ErrorRate = %v, want 0.5", got)
	}
	// Pairs (pos, neg): (0.9,0.3) (0.9,-0.8) (-0.2,-0.8) right; (-0.2,0.3) wrong → 3/4.
	if got := b.AUC(); got != 0.75 {
		t.Errorf("AUC = %v, want 0.75", got)
	}
	if got := metrics.AUC([]float64{1, 1, 1}, []bool{true, false, true}); got != 0.5 {
		t.Errorf("AUC with all ties = %v, want 0.5", got)
	}
	if got := metrics.AUC([]float64{1, 2}, []bool{true, true}); !math.IsNaN(got) {
		t.Errorf("AUC with one class = %v, want NaN", got)
	}
}

func TestMulticlass(t *testing.T) {
	var m metrics.Multiclass
	m.Add([]int{0, 1, 2, 2}, []int{0, 1, 1, 2})
	if got := m.ErrorRate(); got != 0.25 {
		t.Errorf("ErrorRate = %v, want 0.25", got)
	}
}
