package ooc

import (
	"cmp"
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
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
	applyPick(res, PickOneSE, 0)
	if res.Best != 1 || res.Lowest != 1 || res.OneSE != 1 || res.Tol != 1 || res.Pick != PickOneSE {
		t.Errorf("no finite metric: Best %d, Lowest %d, OneSE %d, Tol %d, Pick %q; want 1, 1, 1, 1, 1se", res.Best, res.Lowest, res.OneSE, res.Tol, res.Pick)
	}
	if _, err := ParsePickRule("lowest"); err == nil || err.Error() != `unknown pick rule "lowest" (want tol, best or 1se)` {
		t.Errorf("ParsePickRule(lowest): %v", err)
	}
}

// TestPickTolerance checks PickTol on constructed candidate lists: the
// largest λ within the relative
// tolerance of it (the limit itself counts), then the lower metric;
// failed, NaN and infinite candidates never count; other σ never count;
// 1 − AUC at the kept iterate when every candidate has one, else the
// BestMetric of all; no standard error is needed.
func TestPickTolerance(t *testing.T) {
	c := func(sigma, lambda, metric float64) TuneCandidate {
		return TuneCandidate{Sigma: sigma, Lambda: lambda, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma},
			BestMetric: metric, BestIteration: 5, Stop: StopPatience}
	}
	auc := func(cd TuneCandidate, a float64) TuneCandidate {
		cd.Validation = []ValPoint{{Iteration: 4, Metrics: Metrics{AUC: ptr(0.5)}}, {Iteration: 5, Metrics: Metrics{AUC: ptr(a)}}}
		return cd
	}
	failed := c(1, 1, 0.01)
	failed.Stop = StopFailed
	none := c(1, 1, 0.01)
	none.BestIteration = 0
	ard := c(0, 1e-2, 1.0003)
	ard.Kernel.Sigmas = []float64{1, 2}
	for _, tc := range []struct {
		name   string
		cands  []TuneCandidate
		tol    float64
		pick   int
		metric string
	}{
		{"larger λ within the tolerance", []TuneCandidate{c(1, 1e-8, 1.0), c(1, 1e-7, 1.0008), c(1, 1e-6, 1.0012)}, 1e-3, 1, "rmse"},
		{"the limit counts", []TuneCandidate{c(1, 1e-8, 1.0), c(1, 1e-6, 1.25), c(1, 1e-4, 1.2500001)}, 0.25, 1, "rmse"},
		{"outside: the lowest", []TuneCandidate{c(1, 1e-8, 1.0), c(1, 1e-7, 1.002)}, 1e-3, 0, "rmse"},
		{"a smaller λ does not count", []TuneCandidate{c(1, 1e-9, 1.0001), c(1, 1e-8, 1.0)}, 1e-3, 1, "rmse"},
		{"σ moves too", []TuneCandidate{c(1, 1e-8, 1.0), c(2, 1e-4, 1.0001), c(1, 1e-6, 1.0009)}, 1e-3, 1, "rmse"},
		{"ARD counts as any kernel", []TuneCandidate{c(1, 1e-8, 1.0), ard, c(2, 1e-4, 1.0002)}, 1e-3, 1, "rmse"},
		{"equal λ across σ: the lower metric", []TuneCandidate{c(1, 1e-8, 1.0), c(2, 1e-6, 1.0009), c(4, 1e-6, 1.0003), c(8, 1e-6, 1.0003)}, 1e-3, 2, "rmse"},
		{"ties: the lower metric", []TuneCandidate{c(1, 1e-8, 1.0), c(1, 1e-6, 1.0009), c(1, 1e-6, 1.0005)}, 1e-3, 2, "rmse"},
		{"failed, unfitted, NaN and infinite skipped", []TuneCandidate{failed, none, c(1, 1e-2, math.NaN()), c(1, 1e-3, math.Inf(1)), c(1, 1e-6, 1.0)}, 1e-3, 4, "rmse"},
		{"a zero metric: equal zeros only", []TuneCandidate{c(1, 1e-8, 0), c(1, 1e-6, 0), c(1, 1e-4, 1e-12)}, 1e-3, 1, "rmse"},
		{"1 − AUC when every candidate has one", []TuneCandidate{auc(c(1, 1e-8, 0.20), 0.860), auc(c(1, 1e-6, 0.21), 0.862), auc(c(1, 1e-5, 0.22), 0.8619)}, 1e-3, 2, "1-auc"},
		{"one without an AUC: BestMetric for all", []TuneCandidate{auc(c(1, 1e-8, 0.20), 0.860), auc(c(1, 1e-6, 0.21), 0.862), c(1, 1e-5, 0.22)}, 1e-3, 0, "rmse"},
		{"a NaN AUC: BestMetric for all", []TuneCandidate{auc(c(1, 1e-8, 0.20), 0.860), auc(c(1, 1e-6, 0.21), math.NaN())}, 1e-3, 0, "rmse"},
	} {
		m, name := tolMetric(tc.cands, "rmse")
		pick, _ := pickTolerance(tc.cands, m, tc.tol)
		if pick != tc.pick || name != tc.metric {
			t.Errorf("%s: pick %d by %s; want %d by %s", tc.name, pick, name, tc.pick, tc.metric)
		}
	}
	if pick, ref := pickTolerance([]TuneCandidate{failed, c(1, 1, math.Inf(1))}, func(i int) float64 { return math.Inf(1) }, 1e-3); pick != -1 || ref != -1 {
		t.Errorf("no finite metric: pick %d, ref %d; want -1, -1", pick, ref)
	}
	// applyPick: "" is PickTol with Base.MinImprovement's default, and
	// the tolerance is the fit's MinImprovement when set; the standard
	// error plays no part (the 1-SE rule without one is the lowest).
	cands := []TuneCandidate{c(1, 1e-8, 1.0), c(1, 1e-7, 1.0008), c(1, 1e-6, 1.004)}
	for _, tc := range []struct {
		rule   PickRule
		minImp float64
		best   int
	}{{"", 0, 1}, {PickTol, 0.005, 2}, {PickBest, 0.005, 0}, {PickOneSE, 0.005, 0}} {
		res := &TuneResult{Metric: "rmse", Candidates: cands}
		applyPick(res, tc.rule, tc.minImp)
		wantTol := cmp.Or(tc.minImp, DefaultMinImprovement)
		if res.Best != tc.best || res.Pick != cmp.Or(tc.rule, DefaultPick) || res.Lowest != 0 || res.OneSE != 0 ||
			res.Tolerance != wantTol || res.TolMetric != "rmse" {
			t.Errorf("applyPick(%q, %g): Best %d, Pick %q, Lowest %d, OneSE %d, Tol %d, Tolerance %g, TolMetric %q; want Best %d, tolerance %g",
				tc.rule, tc.minImp, res.Best, res.Pick, res.Lowest, res.OneSE, res.Tol, res.Tolerance, res.TolMetric, tc.best, wantTol)
		}
	}
}

func ptr(x float64) *float64 { return &x }
