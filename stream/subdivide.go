package stream

import (
	"context"
	"sync"
)

// Subdivide returns a Source that presents each chunk of src as parts
// consecutive row ranges of nearly equal size (chunks with fewer rows than
// parts get one range per row), so that a source of few, large chunks
// still keeps every worker busy. Reading a range decodes its whole parent
// chunk, so use it only where the per-chunk computation dwarfs decoding —
// as FALKON's kernel products do. parts ≤ 1 returns src itself.
func Subdivide(src Source, parts int) Source {
	if parts <= 1 {
		return src
	}
	s := &subdivided{src: src}
	for c := range src.NumChunks() {
		rows := src.ChunkRows(c)
		p := min(parts, rows)
		lo := 0
		for q := range p {
			hi := rows * (q + 1) / p
			s.ranges = append(s.ranges, subRange{parent: c, lo: lo, hi: hi})
			lo = hi
		}
	}
	return s
}

type subRange struct{ parent, lo, hi int }

type subdivided struct {
	src    Source
	ranges []subRange
	pool   sync.Pool // *[]float64 parent-chunk scratch
}

func (s *subdivided) NumChunks() int      { return len(s.ranges) }
func (s *subdivided) Dim() int            { return s.src.Dim() }
func (s *subdivided) NumTargets() int     { return s.src.NumTargets() }
func (s *subdivided) ChunkRows(i int) int { r := s.ranges[i]; return r.hi - r.lo }

func (s *subdivided) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	r := s.ranges[i]
	rows := s.src.ChunkRows(r.parent)
	d, k := s.src.Dim(), s.src.NumTargets()
	bp, _ := s.pool.Get().(*[]float64)
	if bp == nil {
		bp = new([]float64)
	}
	defer s.pool.Put(bp)
	need := rows * d
	if y != nil {
		need += rows * k
	}
	if cap(*bp) < need {
		*bp = make([]float64, need)
	}
	buf := (*bp)[:need]
	px := buf[:rows*d]
	var py []float64
	if y != nil {
		py = buf[rows*d:]
	}
	if err := s.src.ReadChunk(ctx, r.parent, px, py); err != nil {
		return err
	}
	copy(x, px[r.lo*d:r.hi*d])
	if y != nil {
		copy(y, py[r.lo*k:r.hi*k])
	}
	return nil
}
