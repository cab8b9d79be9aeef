package ooc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// ParseHandoffRule parses a hand-off rule ("" is DefaultHandoff).
func ParseHandoffRule(s string) (HandoffRule, error) {
	switch r := HandoffRule(s); r {
	case "":
		return DefaultHandoff, nil
	case HandoffKeep, HandoffSqrt, HandoffLinear, HandoffSlope:
		return r, nil
	}
	return "", fmt.Errorf("unknown hand-off rule %q (want keep, sqrt, linear or slope)", s)
}

// HandoffSlopeResult is what the slope rule measured (Handoff.Slope): how
// the largest λ that the validation rows tolerate moves between a quarter
// of the search's rows and all of them.
type HandoffSlopeResult struct {
	// Rows and Centers are the probe's: a λ-only search, σ as chosen, on a
	// uniform quarter of the search's rows, scored on the search's
	// validation rows. Rows is 0 when nothing was measured (a probe of
	// fewer than slopeMinProbeRows rows, or one λ): Exponent is then 1.
	Rows    int64 `json:"rows"`
	Centers int   `json:"centers"`
	// Tolerated is the largest λ whose validation metric lies within one
	// standard error of the lowest, among the search's candidates with the
	// chosen σ, interpolated on log λ between the grid's values (the
	// grid's largest λ when none is worse); ProbeTolerated is the same on
	// the probe's rows.
	Tolerated      float64 `json:"tolerated"`
	ProbeTolerated float64 `json:"probe_tolerated"`
	// Exponent is α = log(ProbeTolerated/Tolerated) / log(4), within
	// [0, 1]: the fit's λ is the search's λ·(n_s/n)^α (0 is keep, 1 is
	// linear).
	Exponent float64 `json:"exponent"`
	// Passes and Seconds are the probe's passes over its rows and its
	// time.
	Passes  int     `json:"passes"`
	Seconds float64 `json:"seconds"`
}

// slopeProbeDivisor is the ratio of the search's rows to the probe's.
const slopeProbeDivisor = 4

// slopeMinProbeRows is the fewest rows the slope rule measures on. On
// fewer the tolerated λ moves with the sample more than with n (on
// elevators, a search of 1680 rows and a probe of 420 measured α = 0.24
// and lost 1.2 % of test RMSE against linear: bench/PAPER.md,
// "Hand-off"), and a search that small does not see the function, so the
// rule scales λ as linear does. A variable so that tests can lower it.
var slopeMinProbeRows int64 = 10_000

// handoffSlope measures the slope rule's exponent for a fit of n rows at
// M centres: it draws a quarter of the search's rows st (draw, as
// FitTuned draws its subsamples), runs a λ-only search there with the
// chosen kernel and the search's λ grid on the validation rows sv, and
// compares the largest tolerated λ there with the search's (res). The
// probe steps back from the search as the fit steps forward: its centres
// are the search's divided by 4^β, where M/M_s = (n/n_s)^β (β within
// [0, 1]), so that the probe, the search and the fit lie on one path.
func handoffSlope(ctx context.Context, st, sv stream.Source, search TuneConfig, res *TuneResult, best TuneCandidate,
	n int64, m int, draw func(stream.Source, int64, uint64, string) (stream.Source, error), opts RunOptions) (*HandoffSlopeResult, error) {
	start := time.Now()
	ns := stream.Rows(st)
	q := ns / slopeProbeDivisor
	lams, tol := toleratedLambda(res.Candidates, best.Kernel)
	if q < max(slopeMinProbeRows, 2) || len(lams) < 2 {
		// Nothing to measure: one λ, or too few rows for a probe. The
		// search's λ carries linearly (Exponent 1): the smaller λ is the
		// safer side for a fit stopped by its validation rows.
		return &HandoffSlopeResult{Tolerated: tol, Exponent: 1}, nil
	}
	sq, err := draw(st, q, 0x736c6f7065, "slope probe") // "slope"
	if err != nil {
		return nil, err
	}
	probe := search
	probe.Base.Kernel = best.Kernel
	beta := math.Log(float64(m)/float64(res.M)) / math.Log(float64(n)/float64(ns))
	if math.IsNaN(beta) {
		beta = 0
	}
	beta = min(max(beta, 0), 1)
	probe.Base.Centers = max(1, min(int(q), int(math.Round(float64(res.M)/math.Pow(slopeProbeDivisor, beta)))))
	probe.Sigmas, probe.Lambdas, probe.ARD = nil, lams, nil
	probe.Extend, probe.Halving, probe.SigmaHalving, probe.SigmaSteps = 0, 0, -1, nil
	pr, err := Tune(ctx, sq, probe, RunOptions{Workers: opts.Workers, Validation: sv, MaxMemory: opts.MaxMemory,
		SearchProgress: opts.SearchProgress})
	if err != nil {
		return nil, fmt.Errorf("slope probe: %w", err)
	}
	_, ptol := toleratedLambda(pr.Candidates, best.Kernel)
	alpha := math.Log(ptol/tol) / math.Log(float64(ns)/float64(q))
	if math.IsNaN(alpha) {
		alpha = 1
	}
	return &HandoffSlopeResult{Rows: q, Centers: pr.M, Tolerated: tol, ProbeTolerated: ptol, Exponent: min(max(alpha, 0), 1),
		Passes: pr.Passes, Seconds: time.Since(start).Seconds()}, nil
}

// toleratedLambda returns the distinct λ of the candidates with kernel k
// that have a finite validation metric, ascending, and the largest λ
// whose metric lies within one standard error (BestSE; the relative
// DefaultMinImprovement when unmeasured) of their lowest: the first λ
// above the lowest's whose metric exceeds that bound gives, with the λ
// below it, the crossing interpolated linearly in log λ; the largest λ
// when none exceeds it. With fewer than two λ the tolerated λ is the one
// there is (0 with none).
func toleratedLambda(cands []TuneCandidate, k kernel.Kernel) (lams []float64, tol float64) {
	type pt struct{ lam, m, se float64 }
	var pts []pt
	for _, c := range cands {
		if c.Stop == StopFailed || math.IsInf(c.BestMetric, 0) || math.IsNaN(c.BestMetric) || !reflect.DeepEqual(c.Kernel, k) {
			continue
		}
		pts = append(pts, pt{c.Lambda, c.BestMetric, c.BestSE})
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmp.Compare(a.lam, b.lam) })
	pts = slices.CompactFunc(pts, func(a, b pt) bool { return a.lam == b.lam })
	for _, p := range pts {
		lams = append(lams, p.lam)
	}
	if len(pts) == 0 {
		return lams, 0
	}
	lo := 0
	for i, p := range pts {
		if p.m < pts[lo].m {
			lo = i
		}
	}
	se := pts[lo].se
	if se <= 0 {
		se = pts[lo].m * DefaultMinImprovement
	}
	bound := pts[lo].m + se
	for j := lo + 1; j < len(pts); j++ {
		if a, b := pts[j-1], pts[j]; b.m > bound {
			t := (bound - a.m) / (b.m - a.m)
			return lams, math.Exp(math.Log(a.lam) + t*(math.Log(b.lam)-math.Log(a.lam)))
		}
	}
	return lams, pts[len(pts)-1].lam
}
