package ooc

import (
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// TestToleratedLambda: the tolerated λ is where the validation metric,
// above the lowest's λ, first exceeds the lowest plus its standard error,
// interpolated on log λ; candidates of another kernel, failed ones and
// non-finite metrics do not count; a metric that never exceeds the bound
// tolerates the largest λ; without a standard error the bound is the
// relative DefaultMinImprovement.
func TestToleratedLambda(t *testing.T) {
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	other := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 4}
	cand := func(lam, m, se float64) TuneCandidate {
		return TuneCandidate{Lambda: lam, Kernel: k, Sigma: 2, BestMetric: m, BestSE: se}
	}
	// Out of order on purpose; the lowest is 0.49 at 1e-6 with SE 0.01:
	// the bound is 0.50, 1e-5 (0.495) is within it, 1e-4 (0.52) is not:
	// log10 λ = −5 + (0.50 − 0.495)/(0.52 − 0.495) = −4.8.
	cands := []TuneCandidate{
		cand(1e-4, 0.52, 0.01), cand(1e-8, 0.50, 0.01), cand(1e-6, 0.49, 0.01), cand(1e-7, 0.50, 0.01),
		cand(1e-5, 0.495, 0.01), cand(1e-3, 0.60, 0.01),
		{Lambda: 1e-3, Kernel: other, Sigma: 4, BestMetric: 0.1, BestSE: 0.01},
		{Lambda: 1e-2, Kernel: k, Sigma: 2, BestMetric: 0.1, Stop: StopFailed},
		{Lambda: 1e-1, Kernel: k, Sigma: 2, BestMetric: math.Inf(1)},
	}
	lams, tol := toleratedLambda(cands, k)
	if want := []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3}; len(lams) != len(want) {
		t.Fatalf("λ grid %v, want %v", lams, want)
	}
	if want := math.Pow(10, -4.8); math.Abs(tol-want) > 1e-12*want {
		t.Errorf("tolerated λ %g, want 10^-4.8 = %g", tol, want)
	}
	// Flat above the lowest: the largest λ.
	flat := []TuneCandidate{cand(1e-6, 0.30, 0.01), cand(1e-5, 0.305, 0.01), cand(1e-4, 0.309, 0.01)}
	if _, tol := toleratedLambda(flat, k); tol != 1e-4 {
		t.Errorf("flat metric: tolerated λ %g, want the largest, 1e-4", tol)
	}
	// No standard error: the bound is 0.3·(1 + DefaultMinImprovement).
	noSE := []TuneCandidate{cand(1e-6, 0.30, 0), cand(1e-5, 0.3002, 0), cand(1e-4, 0.3008, 0)}
	bound := 0.30 * (1 + DefaultMinImprovement)
	want := math.Exp(math.Log(1e-5) + (bound-0.3002)/(0.3008-0.3002)*math.Log(10))
	if _, tol := toleratedLambda(noSE, k); math.Abs(tol-want) > 1e-9*want {
		t.Errorf("no standard error: tolerated λ %g, want %g", tol, want)
	}
	// The lowest at the largest λ: that λ.
	if _, tol := toleratedLambda([]TuneCandidate{cand(1e-6, 0.5, 0.01), cand(1e-5, 0.4, 0.01)}, k); tol != 1e-5 {
		t.Errorf("lowest at the largest λ: tolerated %g, want 1e-5", tol)
	}
}

// TestHandoffLambda: each rule's λ from the search's, and the slope
// rule's exponent between keep (0) and linear (1).
func TestHandoffLambda(t *testing.T) {
	const lam, ns, n = 1e-6, 1000, 16000
	for _, tc := range []struct {
		rule HandoffRule
		sl   *HandoffSlopeResult
		want float64
	}{
		{HandoffKeep, nil, 1e-6},
		{HandoffLinear, nil, 1e-6 / 16},
		{HandoffSqrt, nil, 1e-6 / 4},
		{HandoffSlope, &HandoffSlopeResult{Exponent: 0}, 1e-6},
		{HandoffSlope, &HandoffSlopeResult{Exponent: 0.5}, 1e-6 / 4},
		{HandoffSlope, &HandoffSlopeResult{Exponent: 1}, 1e-6 / 16},
	} {
		if got := handoffLambda(tc.rule, lam, ns, n, tc.sl); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("%s %+v: λ %g, want %g", tc.rule, tc.sl, got, tc.want)
		}
	}
}
