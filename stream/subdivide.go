package stream

import "context"

// Spread subdivides a source of few chunks so that every worker has work
// (Subdivide): up to 32 chunks in all, of at least 1024 rows. The split
// depends only on the source, never on the worker count, so results stay
// identical for any number of workers.
func Spread(src Source) Source {
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
	return Subdivide(src, parts)
}

// Subdivide returns a Source that presents each chunk of src as parts
// consecutive row ranges of nearly equal size (chunks with fewer rows than
// parts get one range per row), so that a source of few, large chunks
// still keeps every worker busy. The ranges of a chunk share one decoding
// of it: the first read of a range decodes the whole parent chunk, which
// stays cached (with at most two parents per reading goroutine) until
// its other ranges have been read; a goroutine that finds the parent
// being decoded by another decodes the next parent meanwhile. Reading
// the ranges in order, as Run does, decodes every parent once per pass.
// parts ≤ 1 returns src itself.
func Subdivide(src Source, parts int) Source {
	if parts <= 1 {
		return src
	}
	s := &subdivided{forward: forward{src}, src: src, parts: make([]int, src.NumChunks())}
	for c := range src.NumChunks() {
		rows := src.ChunkRows(c)
		p := min(parts, rows)
		s.parts[c] = p
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
	forward
	src    Source
	ranges []subRange
	parts  []int // ranges per parent chunk
	parent parentReader
}

func (s *subdivided) NumChunks() int      { return len(s.ranges) }
func (s *subdivided) Dim() int            { return s.src.Dim() }
func (s *subdivided) NumTargets() int     { return s.src.NumTargets() }
func (s *subdivided) ChunkRows(i int) int { r := s.ranges[i]; return r.hi - r.lo }

func (s *subdivided) origin(i, row int) (int, int) {
	r := s.ranges[i]
	return r.parent, r.lo + row
}

// ScratchBytes implements ScratchSizer: two parent chunks (the one being
// read and the next, decoded ahead), and the parent's own.
func (s *subdivided) ScratchBytes() int64 { return parentScratch(s.src, 2) }

// next names the parent chunk after c, to decode ahead, and its parts.
func (s *subdivided) next(c int) (int, int, bool) {
	if c+1 >= len(s.parts) {
		return 0, 0, false
	}
	return c + 1, s.parts[c+1], true
}

func (s *subdivided) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	r := s.ranges[i]
	return s.parent.read(ctx, s.src, r.parent, s.parts[r.parent], y != nil, s.next, func(px, py []float64) {
		d, k := s.src.Dim(), s.src.NumTargets()
		copy(x, px[r.lo*d:r.hi*d])
		if y != nil {
			copy(y, py[r.lo*k:r.hi*k])
		}
	})
}
