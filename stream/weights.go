package stream

import (
	"context"
	"math"
	"sync"
)

// Weighter is implemented by a Source whose rows carry weights: a column
// that is neither a feature nor a target (a chunk store ingested with a
// weight column, MemSource.WithWeights). A fit minimises the weighted
// loss; a source that is not a Weighter, or whose WeightColumn is "",
// weighs every row 1.
type Weighter interface {
	// WeightColumn returns the name of the weight column, or "" when the
	// rows carry no weights.
	WeightColumn() string
	// ReadWeights decodes chunk i's row weights into w (len
	// ChunkRows(i)). Like ReadChunk it is safe for concurrent use and
	// reads the same values every time.
	ReadWeights(ctx context.Context, i int, w []float64) error
}

// WeightColumn returns the name of src's weight column (Weighter), or ""
// when its rows carry no weights.
func WeightColumn(src Source) string {
	if w, ok := src.(Weighter); ok {
		return w.WeightColumn()
	}
	return ""
}

// WeightStatser is implemented by a Weighter that knows the mean of its
// weights without reading them (a chunk store's manifest; MemSource
// computes it). A fit scales the weights by the power of two nearest
// 1/mean as it reads them, so that any positive scale of the weights, from
// denormal to near the largest float64, gives the same model.
type WeightStatser interface {
	// WeightMean returns the mean of the row weights, or 0 when unknown.
	WeightMean() float64
}

// WeightMean returns the mean of src's row weights (WeightStatser), or 0
// when src does not know it.
func WeightMean(src Source) float64 {
	if w, ok := src.(WeightStatser); ok {
		return w.WeightMean()
	}
	return 0
}

func (f forward) WeightMean() float64 { return WeightMean(f.src) }

// CheckWeights returns a *ValueError for the first weight of w that is
// NaN, infinite or negative, naming the weight column name, or nil.
func CheckWeights(w []float64, name string) error {
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &ValueError{Row: i, Column: name, Value: v}
		}
		if v < 0 {
			return &ValueError{Row: i, Column: name, Value: v, Reason: "is a negative weight"}
		}
	}
	return nil
}

func (f forward) WeightColumn() string { return WeightColumn(f.src) }

// parentWeights reads parent chunk c's weights of src into a pooled
// buffer and calls use with them.
func parentWeights(ctx context.Context, src Source, c int, use func(pw []float64)) error {
	rows := src.ChunkRows(c)
	bp := weightBufs.Get().(*[]float64)
	defer weightBufs.Put(bp)
	if cap(*bp) < rows {
		*bp = make([]float64, rows)
	}
	pw := (*bp)[:rows]
	if err := src.(Weighter).ReadWeights(ctx, c, pw); err != nil {
		return err
	}
	use(pw)
	return nil
}

// weightBufs holds the parent-chunk weight buffers of the wrappers'
// ReadWeights, which cross goroutines.
var weightBufs = sync.Pool{New: func() any { return new([]float64) }}

// ReadWeights implements Weighter: the range's rows of the parent
// chunk's weights.
func (s *subdivided) ReadWeights(ctx context.Context, i int, w []float64) error {
	r := s.ranges[i]
	return parentWeights(ctx, s.src, r.parent, func(pw []float64) { copy(w, pw[r.lo:r.hi]) })
}

// ReadWeights implements Weighter: the kept rows of the parent chunk's
// weights.
func (f *filtered) ReadWeights(ctx context.Context, i int, w []float64) error {
	c := f.chunks[i]
	return parentWeights(ctx, f.src, c.parent, func(pw []float64) {
		for j, r := range c.rows {
			w[j] = pw[r]
		}
	})
}

// WithWeights returns a copy of m (sharing its data) whose rows carry the
// weights w (one per row, not copied) as the column name (Weighter). It
// panics unless there is one weight per row.
func (m *MemSource) WithWeights(w []float64, name string) *MemSource {
	if len(w) != m.n {
		panic("stream: WithWeights: one weight per row is needed")
	}
	c := *m
	c.w, c.wname = w, name
	return &c
}

// WeightColumn implements Weighter.
func (m *MemSource) WeightColumn() string { return m.wname }

// WeightMean implements WeightStatser: the mean of the weights, computed
// in a scale that neither overflows nor loses denormal digits; 0 when a
// weight is negative or not finite (a pass names it).
func (m *MemSource) WeightMean() float64 {
	mx := 0.0
	for _, v := range m.w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return 0
		}
		mx = max(mx, v)
	}
	if mx == 0 || len(m.w) == 0 {
		return 0
	}
	_, e := math.Frexp(mx)
	sum := 0.0
	for _, v := range m.w {
		sum += math.Ldexp(v, -e)
	}
	return math.Ldexp(sum/float64(len(m.w)), e)
}

// ReadWeights implements Weighter.
func (m *MemSource) ReadWeights(ctx context.Context, i int, w []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lo := i * m.chunkRows
	copy(w, m.w[lo:lo+m.ChunkRows(i)])
	return nil
}
