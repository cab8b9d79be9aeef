package ooc

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

func workersOf(o stream.Options) int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// colStats holds per-column count, mean and sum of squared deviations,
// merged across chunks by Chan et al.'s parallel formula, so the result
// is numerically stable and independent of how rows are chunked up to
// rounding (and identical for any worker count, since merges happen in
// chunk order).
type colStats struct {
	n        float64
	mean, m2 []float64
}

func (s *colStats) init(d int) {
	s.mean = make([]float64, d)
	s.m2 = make([]float64, d)
}

func (s *colStats) reset() {
	s.n = 0
	clear(s.mean)
	clear(s.m2)
}

// addRows sets s to the statistics of rows (two passes over the chunk:
// mean, then squared deviations). s must be reset.
func (s *colStats) addRows(x []float64, rows int) {
	d := len(s.mean)
	if rows == 0 {
		return
	}
	for r := range rows {
		for j, v := range x[r*d : r*d+d] {
			s.mean[j] += v
		}
	}
	for j := range s.mean {
		s.mean[j] /= float64(rows)
	}
	for r := range rows {
		for j, v := range x[r*d : r*d+d] {
			dv := v - s.mean[j]
			s.m2[j] += dv * dv
		}
	}
	s.n = float64(rows)
}

func (s *colStats) merge(o *colStats) {
	if o.n == 0 {
		return
	}
	n := s.n + o.n
	for j := range s.mean {
		delta := o.mean[j] - s.mean[j]
		s.mean[j] += delta * o.n / n
		s.m2[j] += o.m2[j] + delta*delta*s.n*o.n/n
	}
	s.n = n
}

// meanStd returns the means and population standard deviations.
func (s *colStats) meanStd() (mean, std []float64) {
	mean = slices.Clone(s.mean)
	std = make([]float64, len(s.m2))
	for j, v := range s.m2 {
		if s.n > 0 {
			std[j] = math.Sqrt(v / s.n)
		}
	}
	return mean, std
}

// maxDistinct is the most distinct values a target may have to be
// treated as class labels.
const maxDistinct = 256

// valueSet collects up to maxDistinct distinct values, then gives up.
type valueSet struct {
	vals     map[float64]struct{}
	overflow bool
}

func (v *valueSet) reset() {
	clear(v.vals)
	v.overflow = false
}

func (v *valueSet) add(x float64) {
	if v.overflow {
		return
	}
	if v.vals == nil {
		v.vals = make(map[float64]struct{})
	}
	v.vals[x] = struct{}{}
	if len(v.vals) > maxDistinct {
		v.overflow = true
		clear(v.vals)
	}
}

func (v *valueSet) merge(o *valueSet) {
	if o.overflow {
		v.overflow = true
		clear(v.vals)
		return
	}
	for x := range o.vals {
		v.add(x)
	}
}

// sorted returns the values, or nil after an overflow.
func (v *valueSet) sorted() []float64 {
	if v.overflow {
		return nil
	}
	out := make([]float64, 0, len(v.vals))
	for x := range v.vals {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}

// dedupRows removes rows (of length d) equal bit for bit to an earlier
// row, keeping the first. Duplicated centres make K_MM singular and add
// nothing to the model.
func dedupRows(x []float64, d int) ([]float64, int) {
	type key string
	seen := make(map[key]struct{}, len(x)/d)
	out := x[:0]
	dropped := 0
	buf := make([]byte, 8*d)
	for i := 0; i < len(x); i += d {
		row := x[i : i+d]
		for j, v := range row {
			b := math.Float64bits(v)
			for l := range 8 {
				buf[8*j+l] = byte(b >> (8 * l))
			}
		}
		if _, dup := seen[key(buf)]; dup {
			dropped++
			continue
		}
		seen[key(buf)] = struct{}{}
		out = append(out, row...)
	}
	return out, dropped
}

// spread subdivides a source of few chunks so that every worker has work
// (stream.Subdivide): up to 32 chunks in all, of at least 1024 rows. The
// split depends only on the source, never on the worker count, so results
// stay identical for any number of workers.
func spread(src stream.Source) stream.Source {
	const want, minRows = 32, 1024
	nc := src.NumChunks()
	if nc == 0 || nc >= want {
		return src
	}
	maxRows := 0
	for i := range nc {
		maxRows = max(maxRows, src.ChunkRows(i))
	}
	parts := min((want+nc-1)/nc, maxRows/minRows)
	return stream.Subdivide(src, parts)
}
