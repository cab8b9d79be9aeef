package metrics

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// kahan is a Neumaier compensated sum.
type kahan struct{ sum, c float64 }

func (k *kahan) add(v float64) {
	t := k.sum + v
	if math.Abs(k.sum) >= math.Abs(v) {
		k.c += (k.sum - t) + v
	} else {
		k.c += (v - t) + k.sum
	}
	k.sum = t
}

func (k *kahan) value() float64 { return k.sum + k.c }

// Regression accumulates regression metrics over k outputs (averaged over
// outputs and rows; with AddWeighted, weighted by the rows' weights).
type Regression struct {
	n           int64
	se, sy, sy2 kahan
	ae          kahan // absolute errors (weighted with AddWeighted)
	sw          kahan // the weights' sum over values (AddWeighted)
	weighted    bool
}

// AddWeighted adds rows of predictions and truths (row-major rows × k)
// with one weight per row: every metric becomes the weighted one, Σ wᵢ
// (ŷᵢ − yᵢ)² / Σ wᵢ and so on. A Regression takes Add or AddWeighted,
// not both.
func (r *Regression) AddWeighted(pred, truth, w []float64, k int) {
	r.weighted = true
	for i, p := range pred {
		wi := w[i/k]
		d := p - truth[i]
		r.se.add(wi * d * d)
		r.ae.add(wi * math.Abs(d))
		r.sy.add(wi * truth[i])
		r.sy2.add(wi * truth[i] * truth[i])
		r.sw.add(wi)
	}
	r.n += int64(len(pred))
}

// total is the number of values, or their weights' sum when weighted.
func (r *Regression) total() float64 {
	if r.weighted {
		return r.sw.value()
	}
	return float64(r.n)
}

// Add adds rows of predictions and truths (equal length; row-major n × k
// for k outputs, flattened).
func (r *Regression) Add(pred, truth []float64) {
	for i, p := range pred {
		d := p - truth[i]
		r.se.add(d * d)
		r.ae.add(math.Abs(d))
		r.sy.add(truth[i])
		r.sy2.add(truth[i] * truth[i])
	}
	r.n += int64(len(pred))
}

// Count reports the values added.
func (r *Regression) Count() int64 { return r.n }

// MSE is the mean squared error.
func (r *Regression) MSE() float64 {
	if r.n == 0 {
		return math.NaN()
	}
	return r.se.value() / r.total()
}

// RMSE is the root mean squared error.
func (r *Regression) RMSE() float64 { return math.Sqrt(r.MSE()) }

// MAE is the mean absolute error Σ|ŷ−y| / n (Σ wᵢ|ŷᵢ−yᵢ| / Σ wᵢ when
// weighted).
func (r *Regression) MAE() float64 {
	if r.n == 0 {
		return math.NaN()
	}
	return r.ae.value() / r.total()
}

// R2 is the coefficient of determination 1 − Σ(ŷ−y)² / Σ(y−ȳ)², which is
// 1 − RelErr: 1 is perfect, 0 is predicting the mean, and it is negative
// for predictions worse than the mean (as scikit-learn's r2_score; with
// k outputs, the sums and ȳ run over all k·n values). NaN for constant
// truths.
func (r *Regression) R2() float64 { return 1 - r.RelErr() }

// RelErr is the squared error relative to the variance of the truth:
// Σ(ŷ−y)² / Σ(y−ȳ)². It is NaN for constant truths.
func (r *Regression) RelErr() float64 {
	n := r.total()
	mean := r.sy.value() / n
	ss := r.sy2.value() - n*mean*mean
	if !(ss > 0) {
		return math.NaN()
	}
	return r.se.value() / ss
}

// Binary accumulates binary classification metrics from scores: a row is
// predicted positive when its score is > 0.
type Binary struct {
	n, wrong int64
	scores   []float64
	pos      []bool
}

// Add adds scores and truths (true = positive class).
func (b *Binary) Add(scores []float64, positive []bool) {
	for i, s := range scores {
		if (s > 0) != positive[i] {
			b.wrong++
		}
	}
	b.n += int64(len(scores))
	b.scores = append(b.scores, scores...)
	b.pos = append(b.pos, positive...)
}

// Count reports the rows added.
func (b *Binary) Count() int64 { return b.n }

// ErrorRate is the fraction of misclassified rows.
func (b *Binary) ErrorRate() float64 {
	if b.n == 0 {
		return math.NaN()
	}
	return float64(b.wrong) / float64(b.n)
}

// AUC is the area under the ROC curve (ties count one half), NaN when only
// one class is present.
func (b *Binary) AUC() float64 { return AUC(b.scores, b.pos) }

// AUC computes the area under the ROC curve of scores against labels by
// the rank-sum (Mann–Whitney) statistic, with ties given the average rank.
func AUC(scores []float64, positive []bool) float64 { return AUCWeighted(scores, positive, nil) }

// AUCWeighted is AUC with row weights (nil: every weight 1): the weighted
// Mann–Whitney statistic Σ_{p,q} w_p w_q ([s_p > s_q] + ½[s_p = s_q]) /
// (W₊ W₋) over positive rows p and negative rows q, which is AUC when the
// weights are 1 and AUC of the rows repeated w times for integer weights.
func AUCWeighted(scores []float64, positive []bool, w []float64) float64 {
	if w != nil {
		return aucWeighted(scores, positive, w)
	}
	n := len(scores)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	var npos, nneg float64
	var rankSum kahan
	for i := 0; i < n; {
		j := i
		for j < n && scores[idx[j]] == scores[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1 … j
		for _, t := range idx[i:j] {
			if positive[t] {
				rankSum.add(avg)
				npos++
			} else {
				nneg++
			}
		}
		i = j
	}
	if npos == 0 || nneg == 0 {
		return math.NaN()
	}
	return (rankSum.value() - npos*(npos+1)/2) / (npos * nneg)
}

func aucWeighted(scores []float64, positive []bool, w []float64) float64 {
	n := len(scores)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	var below, wpos, wneg, num kahan // below: negative weight under the current scores
	for i := 0; i < n; {
		j := i
		var gpos, gneg float64
		for j < n && scores[idx[j]] == scores[idx[i]] {
			if t := idx[j]; positive[t] {
				gpos += w[t]
			} else {
				gneg += w[t]
			}
			j++
		}
		num.add(gpos * (below.value() + gneg/2))
		below.add(gneg)
		wpos.add(gpos)
		wneg.add(gneg)
		i = j
	}
	if !(wpos.value() > 0 && wneg.value() > 0) {
		return math.NaN()
	}
	return num.value() / (wpos.value() * wneg.value())
}

// Multiclass accumulates the error rate of class predictions.
type Multiclass struct{ n, wrong int64 }

// Add adds predicted and true class indices.
func (m *Multiclass) Add(pred, truth []int) {
	for i, p := range pred {
		if p != truth[i] {
			m.wrong++
		}
	}
	m.n += int64(len(pred))
}

// Count reports the rows added.
func (m *Multiclass) Count() int64 { return m.n }

// ErrorRate is the fraction of misclassified rows.
func (m *Multiclass) ErrorRate() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	return float64(m.wrong) / float64(m.n)
}

// merge adds o's compensated sum to k's.
func (k *kahan) merge(o kahan) {
	k.add(o.sum)
	k.c += o.c
}

// Merge adds what o accumulated to r, as if o's values had been added
// to r after r's own (both by Add, or both by AddWeighted): the metrics
// of both sets of values, equal to one accumulator's but for the rounding
// of the compensated sums. It lets the parts of a data set be scored
// apart (on several machines) and their metrics merged.
func (r *Regression) Merge(o *Regression) {
	r.n += o.n
	r.se.merge(o.se)
	r.ae.merge(o.ae)
	r.sy.merge(o.sy)
	r.sy2.merge(o.sy2)
	r.sw.merge(o.sw)
	r.weighted = r.weighted || o.weighted
}

// regressionBytes is the size of a Regression's binary encoding.
const regressionBytes = 8 + 5*16 + 1

// MarshalBinary encodes what r accumulated, for UnmarshalBinary in
// another process.
func (r *Regression) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, regressionBytes)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.n))
	for _, k := range []kahan{r.se, r.sy, r.sy2, r.sw, r.ae} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k.sum))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k.c))
	}
	w := byte(0)
	if r.weighted {
		w = 1
	}
	return append(b, w), nil
}

// UnmarshalBinary restores r from MarshalBinary's bytes.
func (r *Regression) UnmarshalBinary(b []byte) error {
	if len(b) != regressionBytes || b[regressionBytes-1] > 1 || int64(binary.LittleEndian.Uint64(b)) < 0 {
		return errors.New("metrics: not an encoded Regression")
	}
	r.n = int64(binary.LittleEndian.Uint64(b))
	for i, k := range []*kahan{&r.se, &r.sy, &r.sy2, &r.sw, &r.ae} {
		k.sum = math.Float64frombits(binary.LittleEndian.Uint64(b[8+16*i:]))
		k.c = math.Float64frombits(binary.LittleEndian.Uint64(b[16+16*i:]))
	}
	r.weighted = b[regressionBytes-1] == 1
	return nil
}
