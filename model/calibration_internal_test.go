package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/loss"
)

// TestFitPlattRecovers draws scores s ~ N(0, 1.5²) and classes from
// P(1 | s) = σ(a s + b) with known a, b: the fit must recover them.
// Tolerance: the maximum-likelihood estimate's standard error at n = 2·10⁵
// is ≈ 0.01 for a and b at n = 10⁵; Platt's smoothed targets shift them
// by O(1/n).
func TestFitPlattRecovers(t *testing.T) {
	for _, tc := range []struct{ a, b float64 }{{2, -0.5}, {0.7, 0.3}, {5, 1}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.a*100)))
		n := 100000
		s, y := make([]float64, n), make([]int, n)
		for i := range n {
			s[i] = 1.5 * rng.NormFloat64()
			if rng.Float64() < loss.Sigmoid(tc.a*s[i]+tc.b) {
				y[i] = 1
			}
		}
		a, b := fitPlatt(s, y)
		if math.Abs(a-tc.a) > 0.05*tc.a || math.Abs(b-tc.b) > 0.05 {
			t.Errorf("Platt on σ(%g s + %g): got a = %.4f, b = %.4f", tc.a, tc.b, a, b)
		}
	}
}

// TestFitTemperatureRecovers draws 5-class scores and classes from
// softmax(s / T) with a known T: the fit must recover it within 3 %
// (the estimate's relative standard error at n = 3·10⁴ is ≈ 1 %).
func TestFitTemperatureRecovers(t *testing.T) {
	const k = 5
	for _, temp := range []float64{0.1, 0.5, 2} {
		rng := rand.New(rand.NewPCG(2, uint64(temp*1000)))
		n := 30000
		scores, truth := make([]float64, n*k), make([]int, n)
		p := make([]float64, k)
		for i := range n {
			s := scores[i*k : (i+1)*k]
			for j := range s {
				s[j] = temp * 2 * rng.NormFloat64() // logits of spread ≈ 2 after division
			}
			softmaxTo(p, s, 1/temp)
			u, acc := rng.Float64(), 0.0
			truth[i] = k - 1
			for j, q := range p {
				if acc += q; u < acc {
					truth[i] = j
					break
				}
			}
		}
		got := fitTemperature(scores, k, truth)
		if math.Abs(got-temp) > 0.03*temp {
			t.Errorf("temperature: got %.4f, want %g", got, temp)
		}
	}
}

// TestFitTemperatureBounds: scores that always pick the right class
// drive T towards 0, scores unrelated to the class towards ∞; both stay
// within the bounds and finite.
func TestFitTemperatureBounds(t *testing.T) {
	scores := []float64{1, 0, 0, 1, 1, 0, 0, 1}
	if got := fitTemperature(scores, 2, []int{0, 1, 0, 1}); !(got >= 1/maxBeta && got < 0.05) {
		t.Errorf("separable: T = %v, want small and ≥ %v", got, 1/maxBeta)
	}
	if got := fitTemperature(scores, 2, []int{0, 0, 1, 1}); !(got <= 1/minBeta && got > 10) {
		t.Errorf("uninformative: T = %v, want large and ≤ %v", got, 1/minBeta)
	}
}

func TestProbaRowSumsToOne(t *testing.T) {
	p := make([]float64, 3)
	for _, cal := range []*Calibration{nil, {Method: CalibrationTemperature, Temperature: 0.2}} {
		for _, s := range [][]float64{{0.2, 0.9, -0.1}, {-1, -2, -3}, {800, -800, 0}} {
			probaRow(TaskMulticlass, cal, p, s)
			if sum := p[0] + p[1] + p[2]; math.Abs(sum-1) > 1e-15 || argmax(p) != argmax(s) {
				t.Errorf("cal %v scores %v: probabilities %v", cal, s, p)
			}
		}
	}
	q := make([]float64, 2)
	for _, s := range []float64{-3, -0.2, 0, 0.4, 7} {
		probaRow(TaskBinary, nil, q, []float64{s})
		if want := min(max((s+1)/2, 0), 1); q[1] != want || q[0]+q[1] != 1 {
			t.Errorf("uncalibrated binary %v: %v", s, q)
		}
	}
}
