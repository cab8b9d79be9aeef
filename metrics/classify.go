package metrics

import "math"

// MulticlassAUC is the one-vs-rest macro AUC of k-class scores (rows × k,
// row-major) against true class indices: the mean over classes of the
// AUC of class c's scores for "class c" against "any other class". A
// class absent from truth (or present in every row) has no AUC and is
// left out of the mean; NaN when no class has one.
func MulticlassAUC(scores []float64, k int, truth []int) float64 {
	return MulticlassAUCWeighted(scores, k, truth, nil)
}

// MulticlassAUCWeighted is MulticlassAUC with row weights (nil: 1), each
// class's AUC by AUCWeighted.
func MulticlassAUCWeighted(scores []float64, k int, truth []int, w []float64) float64 {
	n := len(truth)
	col := make([]float64, n)
	pos := make([]bool, n)
	var sum float64
	used := 0
	for c := range k {
		for i, t := range truth {
			col[i] = scores[i*k+c]
			pos[i] = t == c
		}
		if a := AUCWeighted(col, pos, w); !math.IsNaN(a) {
			sum += a
			used++
		}
	}
	if used == 0 {
		return math.NaN()
	}
	return sum / float64(used)
}

// LogLossEps bounds the probabilities that LogLoss takes the logarithm of
// to [LogLossEps, 1], so one confident mistake costs at most
// −log(LogLossEps) ≈ 34.5 (as scikit-learn's log_loss clips).
const LogLossEps = 1e-15

// LogLoss accumulates the mean negative log-likelihood (cross-entropy)
// −(1/n) Σ log p_i of the probabilities p_i given to the true class of
// each row.
type LogLoss struct {
	n        int64
	sum, sw  kahan
	weighted bool
}

// Add adds the probability given to one row's true class.
func (l *LogLoss) Add(pTrue float64) {
	if !(pTrue >= LogLossEps) { // NaN too
		pTrue = LogLossEps
	}
	l.sum.add(-math.Log(min(pTrue, 1)))
	l.n++
}

// AddWeighted adds one row of weight w: the mean becomes −Σ wᵢ log pᵢ /
// Σ wᵢ. A LogLoss takes Add or AddWeighted, not both.
func (l *LogLoss) AddWeighted(pTrue, w float64) {
	if !(pTrue >= LogLossEps) {
		pTrue = LogLossEps
	}
	l.weighted = true
	l.sum.add(-w * math.Log(min(pTrue, 1)))
	l.sw.add(w)
	l.n++
}

// Count reports the rows added.
func (l *LogLoss) Count() int64 { return l.n }

// Value is the mean log-loss, NaN for no rows.
func (l *LogLoss) Value() float64 {
	if l.n == 0 {
		return math.NaN()
	}
	if l.weighted {
		return l.sum.value() / l.sw.value()
	}
	return l.sum.value() / float64(l.n)
}

// DefaultBins is the number of equal-width confidence bins Reliability
// uses when Bins is 0 (as Guo et al. 2017).
const DefaultBins = 15

// Reliability accumulates the expected calibration error (ECE) of
// top-label predictions (Guo, Pleiss, Sun, Weinberger, "On Calibration of
// Modern Neural Networks", ICML 2017): rows are put into Bins equal-width
// bins of their confidence (the probability of the predicted class, in
// [0, 1]; bin b holds (b/B, (b+1)/B], the first also 0), and
//
//	ECE = Σ_b (n_b / n) · |accuracy_b − mean confidence_b|.
//
// It keeps O(Bins) memory.
type Reliability struct {
	// Bins is the number of bins; 0 means DefaultBins. Set it before the
	// first Add.
	Bins int

	n       int64
	count   []int64
	conf    []kahan
	correct []int64
	// With AddWeighted: the weights' sums per bin, of all rows and of the
	// right ones, and over all bins.
	wcount, wcorrect []float64
	wsum             float64
}

// AddWeighted adds one row of weight w: n_b, the rows right in bin b and
// the confidences are weighted sums. A Reliability takes Add or
// AddWeighted, not both.
func (r *Reliability) AddWeighted(confidence float64, correct bool, w float64) {
	r.Add(confidence, correct)
	if r.wcount == nil {
		r.wcount, r.wcorrect = make([]float64, r.Bins), make([]float64, r.Bins)
	}
	b := int(math.Ceil(confidence*float64(r.Bins))) - 1
	b = min(max(b, 0), r.Bins-1)
	r.conf[b].add((w - 1) * confidence) // Add added it once
	r.wcount[b] += w
	if correct {
		r.wcorrect[b] += w
	}
	r.wsum += w
}

// Add adds one row: the probability of its predicted class and whether
// the prediction is right.
func (r *Reliability) Add(confidence float64, correct bool) {
	if r.count == nil {
		if r.Bins <= 0 {
			r.Bins = DefaultBins
		}
		r.count, r.conf, r.correct = make([]int64, r.Bins), make([]kahan, r.Bins), make([]int64, r.Bins)
	}
	b := int(math.Ceil(confidence*float64(r.Bins))) - 1
	b = min(max(b, 0), r.Bins-1) // NaN converts to an arbitrary int: clamped
	r.count[b]++
	r.conf[b].add(confidence)
	if correct {
		r.correct[b]++
	}
	r.n++
}

// Count reports the rows added.
func (r *Reliability) Count() int64 { return r.n }

// ECE is the expected calibration error, NaN for no rows.
func (r *Reliability) ECE() float64 {
	if r.n == 0 {
		return math.NaN()
	}
	var e float64
	if r.wcount != nil {
		for b, c := range r.wcount {
			if c > 0 {
				e += c / r.wsum * math.Abs(r.wcorrect[b]/c-r.conf[b].value()/c)
			}
		}
		return e
	}
	for b, c := range r.count {
		if c == 0 {
			continue
		}
		acc := float64(r.correct[b]) / float64(c)
		conf := r.conf[b].value() / float64(c)
		e += float64(c) / float64(r.n) * math.Abs(acc-conf)
	}
	return e
}
