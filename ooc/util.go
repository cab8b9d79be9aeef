package ooc

import (
	"math"
	"math/rand/v2"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

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
// (stream.Spread).
func spread(src stream.Source) stream.Source { return stream.Spread(src) }
