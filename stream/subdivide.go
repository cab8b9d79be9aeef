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
	s := &subdivided{forward: forward{src}, src: src}
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
	forward
	src    Source
	ranges []subRange
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

// ScratchBytes implements ScratchSizer: a parent chunk, and the parent's own.
func (s *subdivided) ScratchBytes() int64 { return parentScratch(s.src) }

func (s *subdivided) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	r := s.ranges[i]
	return s.parent.read(ctx, s.src, r.parent, y != nil, func(px, py []float64) {
		d, k := s.src.Dim(), s.src.NumTargets()
		copy(x, px[r.lo*d:r.hi*d])
		if y != nil {
			copy(y, py[r.lo*k:r.hi*k])
		}
	})
}

// parentReader reads whole parent chunks into pooled scratch for sources
// that present parts of them (Subdivide, Holdout).
type parentReader struct {
	pool sync.Pool // *[]float64
}

// read decodes chunk c of src (targets too if withY) into scratch and
// passes the rows and targets to use, which must not keep them.
func (p *parentReader) read(ctx context.Context, src Source, c int, withY bool, use func(px, py []float64)) error {
	rows := src.ChunkRows(c)
	d, k := src.Dim(), src.NumTargets()
	bp, _ := p.pool.Get().(*[]float64)
	if bp == nil {
		bp = new([]float64)
	}
	defer p.pool.Put(bp)
	need := rows * d
	if withY {
		need += rows * k
	}
	if cap(*bp) < need {
		*bp = make([]float64, need)
	}
	buf := (*bp)[:need]
	px := buf[:rows*d]
	var py []float64
	if withY {
		py = buf[rows*d:]
	}
	if err := src.ReadChunk(ctx, c, px, py); err != nil {
		return err
	}
	use(px, py)
	return nil
}
