package metrics

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
)

// AveragePrecision is the area under the precision–recall curve of
// binary scores, as average precision (scikit-learn's
// average_precision_score; Manning, Raghavan, Schütze, "Introduction to
// Information Retrieval", 2008, §8.4):
//
//	AP = Σₙ (Rₙ − Rₙ₋₁) · Pₙ
//
// over the thresholds n at the distinct scores, from the highest down,
// where Pₙ and Rₙ are the precision and recall of deciding "positive"
// for the rows scoring at least the n-th score. Rows of equal score
// enter together, as one threshold (as AUC counts ties one half, no
// order is invented among them). It equals the mean, over the positive
// rows, of the precision among the rows scoring at least as high. It is
// not interpolated (no trapezoids, which overestimate it: Davis and
// Goadrich, ICML 2006). A random ranking scores the positives' share
// on average; NaN when there is no positive row.
func AveragePrecision(scores []float64, positive []bool) float64 {
	return AveragePrecisionWeighted(scores, positive, nil)
}

// AveragePrecisionWeighted is AveragePrecision with row weights (nil:
// every weight 1): the true and false positives at each threshold are
// weight sums, so integer weights count as repeated rows.
func AveragePrecisionWeighted(scores []float64, positive []bool, w []float64) float64 {
	idx := descending(scores)
	var total kahan
	for i, p := range positive {
		if p {
			total.add(weight(w, i))
		}
	}
	P := total.value()
	if !(P > 0) {
		return math.NaN()
	}
	var tp, fp, ap kahan
	for i, j := range groups(idx, scores) {
		var gpos, gneg float64
		for _, t := range idx[i:j] {
			if positive[t] {
				gpos += weight(w, t)
			} else {
				gneg += weight(w, t)
			}
		}
		tp.add(gpos)
		fp.add(gneg)
		if gpos > 0 {
			ap.add(gpos / P * tp.value() / (tp.value() + fp.value()))
		}
	}
	return ap.value()
}

// A ThresholdRule chooses a binary decision threshold on the positive
// class's probability from rows whose classes are known (ChooseThreshold).
type ThresholdRule struct {
	// Kind is "f1", "balanced" or "cost".
	Kind string
	// FP and FN are the costs of a false positive and a false negative
	// (Kind "cost"), both ≥ 0 and not both 0.
	FP, FN float64
}

// String is the rule as ParseThresholdRule reads it: "f1", "balanced"
// or "cost:FP:FN".
func (r ThresholdRule) String() string {
	if r.Kind == "cost" {
		return "cost:" + strconv.FormatFloat(r.FP, 'g', -1, 64) + ":" + strconv.FormatFloat(r.FN, 'g', -1, 64)
	}
	return r.Kind
}

// ErrThresholdRule is the error of ParseThresholdRule on what is not a
// rule.
var ErrThresholdRule = errors.New(`not a threshold rule: give "f1", "balanced" or "cost:FP:FN" (the costs of a false positive and a false negative, e.g. cost:1:5)`)

// ParseThresholdRule reads "f1", "balanced" or "cost:FP:FN" with FP, FN
// finite, ≥ 0 and not both 0.
func ParseThresholdRule(s string) (ThresholdRule, error) {
	switch s {
	case "f1", "balanced":
		return ThresholdRule{Kind: s}, nil
	}
	rest, ok := strings.CutPrefix(s, "cost:")
	if !ok {
		return ThresholdRule{}, fmt.Errorf("%q: %w", s, ErrThresholdRule)
	}
	a, b, ok := strings.Cut(rest, ":")
	if !ok {
		return ThresholdRule{}, fmt.Errorf("%q: %w", s, ErrThresholdRule)
	}
	fp, err1 := strconv.ParseFloat(a, 64)
	fn, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || !(fp >= 0 && fn >= 0) || math.IsInf(fp, 0) || math.IsInf(fn, 0) || fp+fn == 0 {
		return ThresholdRule{}, fmt.Errorf("%q: the costs must be numbers ≥ 0, not both 0: %w", s, ErrThresholdRule)
	}
	return ThresholdRule{Kind: "cost", FP: fp, FN: fn}, nil
}

// ChooseThreshold returns the threshold t on p (the positive class's
// probability, or any score) whose decisions "positive when p ≥ t" on
// the rows given are best by rule:
//
//   - "f1": the largest F1 of the positive class, 2·TP / (2·TP + FP + FN);
//   - "balanced": equal recall of both classes, the smallest
//     |TPR − TNR| (ties: the larger TPR + TNR);
//   - "cost": the smallest FP·cost_FP + FN·cost_FN.
//
// Counts are weight sums with w (nil: 1). The candidates are one
// threshold between each pair of adjacent distinct values of p (their
// midpoint, so that the decisions on these rows are those counted and a
// new row falling between them goes to the nearer), the smallest value
// (every row positive) and just above the largest (none). Among equally
// good candidates the highest threshold wins. It is NaN when the rows
// do not hold both classes.
func ChooseThreshold(p []float64, positive []bool, w []float64, rule ThresholdRule) float64 {
	idx := descending(p)
	var P, N kahan
	for i, pos := range positive {
		if pos {
			P.add(weight(w, i))
		} else {
			N.add(weight(w, i))
		}
	}
	np, nn := P.value(), N.value()
	if !(np > 0 && nn > 0) || len(idx) == 0 {
		return math.NaN()
	}
	// score of the decisions with tp, fp positives decided: higher wins.
	score := func(tp, fp float64) (float64, float64) {
		fn, tn := np-tp, nn-fp
		switch rule.Kind {
		case "f1":
			return 2 * tp / (2*tp + fp + fn), 0
		case "balanced":
			tpr, tnr := tp/np, tn/nn
			return -math.Abs(tpr - tnr), tpr + tnr
		case "cost":
			return -(fp*rule.FP + fn*rule.FN), 0
		}
		panic("metrics: ChooseThreshold with rule " + strconv.Quote(rule.Kind))
	}
	best := math.Nextafter(p[idx[0]], math.Inf(1)) // none positive
	b1, b2 := score(0, 0)
	var tp, fp kahan
	for i, j := range groups(idx, p) {
		for _, t := range idx[i:j] {
			if positive[t] {
				tp.add(weight(w, t))
			} else {
				fp.add(weight(w, t))
			}
		}
		if s1, s2 := score(tp.value(), fp.value()); s1 > b1 || (s1 == b1 && s2 > b2) {
			b1, b2 = s1, s2
			best = p[idx[i]]
			if j < len(idx) {
				hi, lo := p[idx[i]], p[idx[j]]
				if mid := hi/2 + lo/2; mid > lo && mid <= hi {
					best = mid
				}
			}
		}
	}
	return best
}

// descending returns the indices of scores ordered by decreasing score
// (NaN last).
func descending(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		sa, sb := scores[a], scores[b]
		switch {
		case sa > sb || (sb != sb && sa == sa):
			return -1
		case sa < sb || (sa != sa && sb == sb):
			return 1
		}
		return 0
	})
	return idx
}

// groups yields the bounds [i, j) of the runs of idx (ordered by
// descending) with equal scores.
func groups(idx []int, scores []float64) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(idx); {
			j := i + 1
			for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
				j++
			}
			if !yield(i, j) {
				return
			}
			i = j
		}
	}
}

// weight is w[i], or 1 without weights.
func weight(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}
