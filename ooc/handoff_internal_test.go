package ooc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
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

// smoothRows draws n rows of d standard normal features with the target
// Σⱼ sin(j·xⱼ) plus Gaussian noise: a function a few hundred rows show.
func smoothRows(n, d int, noise float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range n {
		s := 0.0
		for j := range d {
			v := rng.NormFloat64()
			x[i*d+j] = v
			s += math.Sin(v * float64(j+1))
		}
		y[i] = s + noise*rng.NormFloat64()
	}
	return x, y
}

// TestFitTunedSlope: on a smooth function that the search's 600 rows
// already show, the linear rule's λ (the search's divided by 36) is too
// small: the final fit validates no better and takes more iterations. The
// slope rule measures that the λ the validation rows tolerate barely
// moves between a quarter of the search's rows and all of them, carries
// λ nearer keep than linear (an exponent below 0.5), and the fit stops
// sooner, at least as well validated. The
// probe is recorded: a quarter of the rows, the centres stepped back
// along the path from the search's (n_s, M_s) to the fit's (n, M).
//
// Below slopeMinProbeRows (lowered here to 100) the rule measures nothing
// and gives linear's λ.
func TestFitTunedSlope(t *testing.T) {
	const d = 2
	x, y := smoothRows(24000, d, 0.3, 5)
	src := stream.NewMemSource(x, d, y, 1, 1000)
	fitWith := func(rule HandoffRule) Training {
		tc := FitTunedConfig{Fit: Config{Centers: 300, Iterations: 60, Seed: 3}, Rows: 600, Centers: 60, Handoff: rule,
			Search: TuneConfig{Sigmas: []float64{0.5, 1, 2}, Lambdas: []float64{1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1},
				MinImprovement: 1e-4}}
		m, err := FitTuned(context.Background(), src, tc, RunOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return m.Training()
	}
	lin := fitWith(HandoffLinear)
	if tr := fitWith(HandoffSlope); tr.Handoff.Slope == nil || tr.Handoff.Slope.Rows != 0 || tr.Handoff.Slope.Exponent != 1 ||
		tr.Handoff.Lambda != lin.Handoff.Lambda {
		t.Errorf("a probe of 150 rows: %+v, λ %g; want no measurement, exponent 1, linear's λ %g", tr.Handoff.Slope,
			tr.Handoff.Lambda, lin.Handoff.Lambda)
	}
	defer func(v int64) { slopeMinProbeRows = v }(slopeMinProbeRows)
	slopeMinProbeRows = 100
	slo := fitWith(HandoffSlope)
	ho, sl := slo.Handoff, slo.Handoff.Slope
	if sl == nil {
		t.Fatal("the slope rule recorded no measurement")
	}
	t.Logf("linear: λ %g, %d iterations (best %d); slope: %+v, λ %g, %d iterations (best %d)", lin.Handoff.Lambda,
		lin.Iterations, lin.BestIteration, *sl, ho.Lambda, slo.Iterations, slo.BestIteration)
	n := slo.N
	beta := math.Log(300.0/60) / math.Log(float64(n)/600)
	if sl.Rows != 150 || sl.Centers != int(math.Round(60/math.Pow(4, beta))) || sl.Passes < 3 {
		t.Errorf("probe: %d rows, M = %d, %d passes; want 150 rows, M = round(60/4^%.3f)", sl.Rows, sl.Centers, sl.Passes, beta)
	}
	want := ho.SearchLambda * math.Pow(600/float64(n), sl.Exponent)
	if sl.Exponent >= 0.5 || math.Abs(ho.Lambda-want) > 1e-12*want {
		t.Errorf("exponent %g (tolerated λ %g on the search's rows, %g on the probe's), λ %g; want an exponent below 0.5 (nearer keep than linear) and λ %g",
			sl.Exponent, sl.Tolerated, sl.ProbeTolerated, ho.Lambda, want)
	}
	if lin.Handoff.Lambda*4 > ho.Lambda {
		t.Errorf("λ %g, not above linear's %g by 4×", ho.Lambda, lin.Handoff.Lambda)
	}
	bestRMSE := func(tr Training) float64 { return *tr.Validation[tr.BestIteration-1].RMSE }
	if slo.Iterations >= lin.Iterations || bestRMSE(slo) > bestRMSE(lin)*1.001 {
		t.Errorf("slope: %d iterations, validation RMSE %.5f; linear: %d, %.5f: want fewer iterations, no worse", slo.Iterations,
			bestRMSE(slo), lin.Iterations, bestRMSE(lin))
	}
}
