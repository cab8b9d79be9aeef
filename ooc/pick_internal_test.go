package ooc

import (
	"math"
	"testing"
)

// TestRowSE checks the standard errors against their definitions: the
// weighted mean and √(Σw²(x − x̄)²)/Σw computed directly, the RMSE's by
// the delta method, and the error rate's binomial form.
func TestRowSE(t *testing.T) {
	x := []float64{0.5, 2, 0.1, 3, 1.2, 0.7}
	w := []float64{1, 2, 0.5, 1, 3, 1.5}
	var a rowSE
	sw, swx := 0.0, 0.0
	for i := range x {
		a.add(x[i], w[i])
		sw += w[i]
		swx += w[i] * x[i]
	}
	mean := swx / sw
	v := 0.0
	for i := range x {
		v += w[i] * w[i] * (x[i] - mean) * (x[i] - mean)
	}
	gm, gse := a.meanSE()
	if math.Abs(gm-mean) > 1e-12 || math.Abs(gse-math.Sqrt(v)/sw) > 1e-12 {
		t.Fatalf("meanSE = %g, %g; want %g, %g", gm, gse, mean, math.Sqrt(v)/sw)
	}
	if got, want := regressionSE(&a), math.Sqrt(v)/sw/(2*math.Sqrt(mean)); math.Abs(got-want) > 1e-12 {
		t.Fatalf("regressionSE = %g, want %g", got, want)
	}
	// Unit weights: the binomial √(p(1−p)/n).
	var u rowSE
	for range 400 {
		u.add(0, 1)
	}
	if got, want := errorRateSE(0.1, &u), math.Sqrt(0.1*0.9/400); math.Abs(got-want) > 1e-15 {
		t.Fatalf("errorRateSE = %g, want %g", got, want)
	}
	if got := regressionSE(&rowSE{}); got != 0 {
		t.Fatalf("regressionSE without rows = %g, want 0", got)
	}
	if got := candidateSE(TaskBinary, math.Inf(1), &u); got != 0 {
		t.Fatalf("candidateSE of an infinite metric = %g, want 0", got)
	}
}

// TestPickCandidates checks the 1-SE rule's order: within one standard
// error of the lowest, the largest λ, then the largest σ (a kernel
// without one σ counts as the smallest), then the lowest metric; failed
// candidates and candidates without a finite metric never count.
func TestPickCandidates(t *testing.T) {
	c := func(sigma, lambda, metric, se float64) TuneCandidate {
		return TuneCandidate{Sigma: sigma, Lambda: lambda, BestMetric: metric, BestSE: se, BestIteration: 5, Stop: StopPatience}
	}
	failed := c(1, 1, 0.01, 0)
	failed.Stop = StopFailed
	for _, tc := range []struct {
		name          string
		cands         []TuneCandidate
		lowest, oneSE int
	}{
		{"larger λ within one SE", []TuneCandidate{c(1, 1e-8, 0.50, 0.02), c(1, 1e-4, 0.515, 0.02), c(1, 1e-2, 0.53, 0.02)}, 0, 1},
		{"at the limit counts", []TuneCandidate{c(1, 1e-8, 0.5, 0.25), c(1, 1e-4, 0.75, 0.1)}, 0, 1},
		{"then the larger σ", []TuneCandidate{c(1, 1e-6, 0.50, 0.02), c(2, 1e-4, 0.51, 0.02), c(4, 1e-4, 0.519, 0.02), c(8, 1e-4, 0.6, 0.02)}, 0, 2},
		{"ARD (σ 0) last at equal λ", []TuneCandidate{c(0, 1e-4, 0.50, 0.02), c(2, 1e-4, 0.51, 0.02)}, 0, 1},
		{"then the lower metric", []TuneCandidate{c(2, 1e-4, 0.52, 0.02), c(2, 1e-4, 0.51, 0.02), c(1, 1e-6, 0.50, 0.02)}, 2, 1},
		{"no standard error: the lowest", []TuneCandidate{c(1, 1e-8, 0.50, 0), c(1, 1e-4, 0.5000001, 0)}, 0, 0},
		{"failed and infinite skipped", []TuneCandidate{failed, c(1, 1e-2, math.Inf(1), 0), c(1, 1e-6, 0.5, 0.1)}, 2, 2},
		{"first of equal lowest", []TuneCandidate{c(1, 1e-6, 0.5, 0), c(2, 1e-6, 0.5, 0)}, 0, 1},
	} {
		lo, one := pickCandidates(tc.cands)
		if lo != tc.lowest || one != tc.oneSE {
			t.Errorf("%s: lowest %d, 1-SE %d; want %d, %d", tc.name, lo, one, tc.lowest, tc.oneSE)
		}
	}
	res := &TuneResult{Candidates: []TuneCandidate{failed, c(1, 1e-2, math.Inf(1), 0)}}
	applyPick(res, PickOneSE)
	if res.Best != 1 || res.Lowest != 1 || res.OneSE != 1 || res.Pick != PickOneSE {
		t.Errorf("no finite metric: Best %d, Lowest %d, OneSE %d, Pick %q; want 1, 1, 1, 1se", res.Best, res.Lowest, res.OneSE, res.Pick)
	}
	if _, err := ParsePickRule("lowest"); err == nil || err.Error() != `unknown pick rule "lowest" (want best or 1se)` {
		t.Errorf("ParsePickRule(lowest): %v", err)
	}
}
