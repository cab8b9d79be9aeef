package chunkstore

import (
	"math"
	"slices"
)

// colStats accumulates one column's statistics. Within a chunk it uses two
// passes (mean, then squared deviations, with the Chan–Golub–LeVeque
// correction); chunks are merged in chunk order with Chan et al.'s pairwise
// update, so the result does not depend on the number of workers. Values are
// shifted by the column's first value before any of this (the "shifted
// data" method), so a column like 1e9 + U(0, 1) keeps its digits.
//
// The shifted values are also scaled by a power of two, 2^-exp, chosen per
// chunk from the largest magnitude (exact, since only the exponent
// changes), so that neither their squares nor their sums overflow or
// underflow: a column of values near 1e300 or 1e-300 keeps its spread.
// Chunks with different exponents are merged at the larger one.
type colStats struct {
	n        int64
	mean, m2 float64 // of the shifted values times 2^-exp
	exp      int     // scale exponent, in [-maxScaleExp, maxScaleExp]
	min, max float64
	integral bool
	overflow bool                // more than MaxDistinct distinct values
	distinct map[uint64]struct{} // float64 bits, -0 folded into 0
}

func newColStats() colStats {
	return colStats{integral: true, min: math.Inf(1), max: math.Inf(-1), distinct: make(map[uint64]struct{})}
}

// reset prepares s for a new chunk, keeping its map.
func (s *colStats) reset() {
	m := s.distinct
	clear(m)
	*s = colStats{integral: true, min: math.Inf(1), max: math.Inf(-1), distinct: m}
}

// chunk computes the statistics of v (finite values), with mean and m2 of
// v - shift. skipDistinct says the store-wide distinct set has already
// overflowed.
func (s *colStats) chunk(v []float64, shift float64, skipDistinct bool) {
	s.reset()
	if len(v) == 0 {
		return
	}
	mn, mx := v[0], v[0]
	integral := true
	for _, x := range v {
		mn = min(mn, x)
		mx = max(mx, x)
		if integral && x != math.Trunc(x) {
			integral = false
		}
	}
	exp := scaleExp(max(math.Abs(mn), math.Abs(mx), math.Abs(shift)))
	inv := math.Ldexp(1, -exp) // a normal power of two: x*inv is exact
	sh := shift * inv
	var sum float64
	for _, x := range v {
		sum += x*inv - sh
	}
	mean := sum / float64(len(v))
	var m2, comp float64
	for _, x := range v {
		d := (x*inv - sh) - mean
		m2 += d * d
		comp += d
	}
	// Corrected two-pass algorithm (Chan, Golub & LeVeque 1983).
	m2 -= comp * comp / float64(len(v))
	s.n, s.mean, s.m2, s.exp = int64(len(v)), mean, max(m2, 0), exp
	s.min, s.max, s.integral = mn, mx, integral
	if skipDistinct {
		s.overflow = true
		return
	}
	last := math.NaN()
	for _, x := range v {
		if x == last {
			continue
		}
		last = x
		if x == 0 {
			x = 0 // fold -0
		}
		s.distinct[math.Float64bits(x)] = struct{}{}
		if len(s.distinct) > MaxDistinct {
			s.overflow = true
			clear(s.distinct)
			return
		}
	}
}

// merge folds o (the next chunk) into s.
func (s *colStats) merge(o *colStats) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		s.n, s.mean, s.m2, s.exp = o.n, o.mean, o.m2, o.exp
	} else {
		om, om2 := o.mean, o.m2
		switch {
		case o.exp > s.exp:
			f := math.Ldexp(1, s.exp-o.exp)
			s.mean, s.m2, s.exp = s.mean*f, s.m2*f*f, o.exp
		case o.exp < s.exp:
			f := math.Ldexp(1, o.exp-s.exp)
			om, om2 = om*f, om2*f*f
		}
		n := s.n + o.n
		d := om - s.mean
		s.mean += d * float64(o.n) / float64(n)
		s.m2 += om2 + d*d*float64(s.n)*float64(o.n)/float64(n)
		s.n = n
	}
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
	s.integral = s.integral && o.integral
	if s.overflow {
		return
	}
	if o.overflow {
		s.overflow = true
		clear(s.distinct)
		return
	}
	for k := range o.distinct {
		s.distinct[k] = struct{}{}
	}
	if len(s.distinct) > MaxDistinct {
		s.overflow = true
		clear(s.distinct)
	}
}

// maxScaleExp bounds the scale exponent so that 2^-exp is a normal
// float64 (exact to multiply by): values beyond 2^1000 or below 2^-1000
// are then scaled to at most 2^24, or at least 2^-74, which neither
// overflows nor underflows when squared and summed.
const maxScaleExp = 1000

// scaleExp returns e such that a < 2^e, clamped to ±maxScaleExp.
func scaleExp(a float64) int {
	if a == 0 || math.IsNaN(a) || math.IsInf(a, 0) {
		return 0
	}
	_, e := math.Frexp(a)
	return min(max(e, -maxScaleExp), maxScaleExp)
}

// column fills c's statistics from s, whose values were shifted by shift.
func (s *colStats) column(c *Column, shift float64) {
	c.Count = s.n
	c.Integral = s.integral
	c.Distinct = nil
	if s.n == 0 {
		c.Mean, c.Std, c.Min, c.Max = 0, 0, 0, 0
		return
	}
	c.Mean = math.Ldexp(shift*math.Ldexp(1, -s.exp)+s.mean, s.exp)
	c.Std = math.Ldexp(math.Sqrt(s.m2/float64(s.n)), s.exp)
	c.Min, c.Max = s.min, s.max
	c.Mean = min(max(c.Mean, c.Min), c.Max) // rounding near the limits
	// The scaling keeps both finite; the manifest must stay finite JSON
	// whatever happens, so guard anyway.
	if math.IsNaN(c.Mean) || math.IsInf(c.Mean, 0) {
		c.Mean = c.Min/2 + c.Max/2
	}
	if math.IsNaN(c.Std) || math.IsInf(c.Std, 0) {
		c.Std = math.MaxFloat64
	}
	if !s.overflow {
		d := make([]float64, 0, len(s.distinct))
		for k := range s.distinct {
			d = append(d, math.Float64frombits(k))
		}
		slices.Sort(d)
		c.Distinct = d
	}
}
