package engine

import (
	"math"
	"slices"
	"testing"
)

// observeAll feeds the metrics of iterations 1, 2, … to a new tracker and
// returns the iteration at which it stopped (0: never), and the tracker.
func observeAll(r Rule, metrics []float64) (int, Tracker) {
	t := NewTracker()
	for i, v := range metrics {
		if _, stop := t.Observe(r, i+1, v); stop {
			return i + 1, t
		}
	}
	return 0, t
}

func TestRule(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name     string
		rule     Rule
		metrics  []float64
		stopAt   int // 0: never
		bestIter int
		best     float64
	}{
		// Three validations in a row without improvement stop it; the
		// best iterate is the lowest.
		{"patience", Rule{Patience: 3}, []float64{5, 4, 3, 3, 3.5, 3.2, 1}, 6, 3, 3},
		// Patience 1 stops at the first validation that is no better.
		{"patience 1", Rule{Patience: 1}, []float64{5, 4, 4, 1}, 3, 2, 4},
		// A negative or zero patience never stops: the best is the lowest
		// of all.
		{"never (negative)", Rule{Patience: -1}, []float64{5, 4, 4, 4, 4, 4, 4, 1}, 0, 8, 1},
		{"never (zero)", Rule{}, []float64{5, 4, 4, 4, 4, 4, 4, 1}, 0, 8, 1},
		// Improvements below MinImprovement (1 %) do not reset patience,
		// but the best iterate is still the lowest metric: 0.995 < 1 at
		// iteration 2 is kept though it counts as no improvement.
		{"min improvement", Rule{Patience: 2, MinImprovement: 0.01}, []float64{1, 0.995, 0.992, 0.5}, 3, 3, 0.992},
		// An improvement of more than MinImprovement resets the count.
		{"min improvement resets", Rule{Patience: 2, MinImprovement: 0.01}, []float64{1, 0.995, 0.9, 0.899, 0.898, 0.1}, 5, 5, 0.898},
		// Without MinImprovement any strict improvement resets it.
		{"any improvement", Rule{Patience: 2}, []float64{1, 0.995, 0.992, 0.991, 0.991, 0.991}, 6, 4, 0.991},
		// +Inf and NaN (a metric that could not be computed) never
		// improve, not even the first time.
		{"not finite", Rule{Patience: 2}, []float64{inf, math.NaN(), 3, 2}, 2, 0, inf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopAt, tr := observeAll(tc.rule, tc.metrics)
			if stopAt != tc.stopAt || tr.BestIter != tc.bestIter || tr.Best != tc.best {
				t.Errorf("stopped at %d, best %v at %d; want %d, %v at %d", stopAt, tr.Best, tr.BestIter, tc.stopAt, tc.best, tc.bestIter)
			}
		})
	}
}

func TestObserveBest(t *testing.T) {
	r := Rule{Patience: 5, MinImprovement: 0.5}
	tr := NewTracker()
	var bests []int
	for i, v := range []float64{4, 3, 3, 2.5, 1} {
		if best, _ := tr.Observe(r, i+1, v); best {
			bests = append(bests, i+1)
		}
	}
	// Every strict improvement is the best (the caller keeps its iterate),
	// whether or not it counts for patience.
	if want := []int{1, 2, 4, 5}; !slices.Equal(bests, want) {
		t.Errorf("best at %v, want %v", bests, want)
	}
	if tr.Ref != 1 || tr.Since != 0 || tr.Validated != 5 {
		t.Errorf("ref %v since %d validated %d, want 1, 0, 5", tr.Ref, tr.Since, tr.Validated)
	}
}

// TestStoppedResumes: a tracker restored from a checkpoint of a candidate
// that had run out of patience is stopped; one that had not, or a rule
// without patience, is not.
func TestStoppedResumes(t *testing.T) {
	r := Rule{Patience: 2}
	stopAt, tr := observeAll(r, []float64{3, 2, 2, 2, 1})
	if stopAt != 4 {
		t.Fatalf("stopped at %d, want 4", stopAt)
	}
	restored := Tracker{Best: tr.Best, BestIter: tr.BestIter, Ref: tr.Ref, Since: tr.Since, Validated: tr.Validated}
	if !r.Stopped(&restored) {
		t.Error("a restored tracker out of patience is not stopped")
	}
	if (Rule{Patience: 3}).Stopped(&restored) || (Rule{}).Stopped(&restored) {
		t.Error("stopped under a longer patience or none")
	}
	fresh := NewTracker()
	if r.Stopped(&fresh) {
		t.Error("a new tracker is stopped")
	}
}

func TestIsHalvingStep(t *testing.T) {
	var got []int
	for it := 0; it <= 40; it++ {
		if IsHalvingStep(it, 3) {
			got = append(got, it)
		}
	}
	if want := []int{3, 6, 12, 24}; !slices.Equal(got, want) {
		t.Errorf("halving steps of 3 up to 40: %v, want %v", got, want)
	}
	for _, h := range []int{0, -2} {
		for it := 0; it <= 8; it++ {
			if IsHalvingStep(it, h) {
				t.Errorf("IsHalvingStep(%d, %d) is true: halving is off", it, h)
			}
		}
	}
}

func TestWorseHalf(t *testing.T) {
	for _, tc := range []struct {
		best []float64
		want []int
	}{
		{[]float64{0.3, 0.1, 0.4, 0.2}, []int{0, 2}},
		{[]float64{0.3, 0.1, 0.4, 0.2, 0.25}, []int{0, 2}}, // the better ⌈5/2⌉ = 3 stay
		{[]float64{0.2, 0.2, 0.2}, []int{2}},               // ties keep the earlier
		{[]float64{math.Inf(1), 0.5}, []int{0}},
		{[]float64{0.5}, []int{}},
	} {
		if got := WorseHalf(tc.best); !slices.Equal(got, tc.want) {
			t.Errorf("WorseHalf(%v) = %v, want %v", tc.best, got, tc.want)
		}
	}
}
