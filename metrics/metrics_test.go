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

// TestRegressionMerge: parts merged (through their binary encoding) give
// one accumulator's metrics but for rounding; the encoding round-trips.
func TestRegressionMerge(t *testing.T) {
	pred, truth := make([]float64, 1000), make([]float64, 1000)
	for i := range pred {
		truth[i] = float64(i%17) * 1.3
		pred[i] = truth[i] + float64(i%5-2)*0.1
	}
	var whole, merged metrics.Regression
	whole.Add(pred, truth)
	for _, cut := range [][2]int{{0, 10}, {10, 10}, {10, 999}, {999, 1000}} {
		var part metrics.Regression
		part.Add(pred[cut[0]:cut[1]], truth[cut[0]:cut[1]])
		b, err := part.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back metrics.Regression
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if back != part {
			t.Fatalf("round trip: %+v, want %+v", back, part)
		}
		merged.Merge(&back)
	}
	if merged.Count() != whole.Count() {
		t.Fatalf("count %d, want %d", merged.Count(), whole.Count())
	}
	for _, p := range [][2]float64{{merged.MSE(), whole.MSE()}, {merged.RelErr(), whole.RelErr()}} {
		if math.Abs(p[0]-p[1]) > 1e-14*math.Abs(p[1]) {
			t.Fatalf("merged %v, whole %v", p[0], p[1])
		}
	}
	var r metrics.Regression
	if err := r.UnmarshalBinary([]byte{1, 2, 3}); err == nil || err.Error() != "metrics: not an encoded Regression" {
		t.Fatalf("got %v", err)
	}
}
