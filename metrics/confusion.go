package metrics

import "math"

// Confusion accumulates the confusion matrix of k-class decisions: entry
// (t, p) is the number of rows of true class t decided as class p (their
// weights' sum with AddWeighted). From it come accuracy, precision,
// recall and F1 per class and balanced accuracy, with the definitions of
// scikit-learn's metrics module (precision_recall_fscore_support,
// balanced_accuracy_score), except that an undefined value is NaN rather
// than 0.
//
// It keeps k² compensated sums and allocates nothing after NewConfusion.
type Confusion struct {
	k int
	n int64
	m []kahan // k × k, row = true class, column = decided class
}

// NewConfusion returns an empty confusion matrix of k ≥ 1 classes.
func NewConfusion(k int) *Confusion {
	if k < 1 {
		panic("metrics: NewConfusion with fewer than one class")
	}
	return &Confusion{k: k, m: make([]kahan, k*k)}
}

// Classes reports k.
func (c *Confusion) Classes() int { return c.k }

// Add adds one row of true class truth decided as class pred (both in
// [0, k)).
func (c *Confusion) Add(truth, pred int) { c.AddWeighted(truth, pred, 1) }

// AddWeighted adds one row of weight w. Integer weights count as the row
// repeated; weight 0 adds nothing but the row count.
func (c *Confusion) AddWeighted(truth, pred int, w float64) {
	c.m[truth*c.k+pred].add(w)
	c.n++
}

// Merge adds what o (of the same k) accumulated to c.
func (c *Confusion) Merge(o *Confusion) {
	if o.k != c.k {
		panic("metrics: merging confusion matrices of different sizes")
	}
	for i := range c.m {
		c.m[i].merge(o.m[i])
	}
	c.n += o.n
}

// Reset empties c, keeping its memory.
func (c *Confusion) Reset() {
	clear(c.m)
	c.n = 0
}

// Count reports the rows added.
func (c *Confusion) Count() int64 { return c.n }

// At is entry (truth, pred): the rows (or weight) of class truth decided
// as pred.
func (c *Confusion) At(truth, pred int) float64 { return c.m[truth*c.k+pred].value() }

// Total is the weight of all rows (their number when unweighted).
func (c *Confusion) Total() float64 {
	var s kahan
	for _, v := range c.m {
		s.add(v.value())
	}
	return s.value()
}

// Support is the weight of the rows of true class class (a row sum).
func (c *Confusion) Support(class int) float64 {
	var s kahan
	for p := range c.k {
		s.add(c.At(class, p))
	}
	return s.value()
}

// Decided is the weight of the rows decided as class (a column sum).
func (c *Confusion) Decided(class int) float64 {
	var s kahan
	for t := range c.k {
		s.add(c.At(t, class))
	}
	return s.value()
}

// Accuracy is the weight on the diagonal over the total; NaN for no
// weight.
func (c *Confusion) Accuracy() float64 {
	var d kahan
	for i := range c.k {
		d.add(c.At(i, i))
	}
	return ratio(d.value(), c.Total())
}

// Precision of a class is TP / (TP + FP): of the rows decided as the
// class, the fraction truly of it. NaN when no row is decided as it.
func (c *Confusion) Precision(class int) float64 {
	return ratio(c.At(class, class), c.Decided(class))
}

// Recall of a class is TP / (TP + FN): of the rows of the class, the
// fraction decided as it (its true-positive rate). NaN when the class
// has no rows.
func (c *Confusion) Recall(class int) float64 {
	return ratio(c.At(class, class), c.Support(class))
}

// F1 of a class is the harmonic mean of its precision and recall,
// computed as 2·TP / (2·TP + FP + FN) so that it is 0, not NaN, for a
// class that has rows but is never decided (or is decided but has no
// rows). NaN only when the class is absent from both truths and
// decisions.
func (c *Confusion) F1(class int) float64 {
	tp := c.At(class, class)
	return ratio(2*tp, c.Support(class)+c.Decided(class))
}

// MacroF1 is the mean F1 over the classes whose F1 is defined; NaN when
// none is.
func (c *Confusion) MacroF1() float64 {
	var s float64
	n := 0
	for i := range c.k {
		if f := c.F1(i); !math.IsNaN(f) {
			s += f
			n++
		}
	}
	return ratio(s, float64(n))
}

// BalancedAccuracy is the mean recall over the classes present in the
// truths (Brodersen, Ong, Stephan, Buhmann, "The balanced accuracy and
// its posterior distribution", ICPR 2010; scikit-learn's
// balanced_accuracy_score, which also leaves absent classes out). For
// two classes it is (TPR + TNR) / 2. Predicting every row as one class
// scores 1/k' for the k' classes present, whatever their frequencies.
// NaN for no weight.
func (c *Confusion) BalancedAccuracy() float64 {
	var s float64
	n := 0
	for i := range c.k {
		if r := c.Recall(i); !math.IsNaN(r) {
			s += r
			n++
		}
	}
	return ratio(s, float64(n))
}

// ratio is num/den, NaN when den is not positive.
func ratio(num, den float64) float64 {
	if !(den > 0) {
		return math.NaN()
	}
	return num / den
}
