package stream

import "context"

// Holdout splits src by rows into two Sources: each row goes to held
// (with probability fraction) or to rest, decided by a hash of seed and
// the row's position, so the split is reproducible and independent of the
// chunking. Chunk boundaries are kept (a chunk with no rows on one side
// is left out of that side). Both sides report src's column names,
// statistics and target values (those of all its rows). Reading a chunk of either side decodes the
// whole parent chunk. It panics unless 0 < fraction < 1.
func Holdout(src Source, fraction float64, seed uint64) (rest, held Source) {
	if !(fraction > 0 && fraction < 1) {
		panic("stream: Holdout fraction must be in (0, 1)")
	}
	threshold := holdoutThreshold(fraction)
	sp := &split{fraction: fraction, seed: seed}
	r := &filtered{forward: forward{src}, src: src, split: sp}
	h := &filtered{forward: forward{src}, src: src, split: sp, held: true}
	var row uint64
	for c := range src.NumChunks() {
		n := src.ChunkRows(c)
		var keepR, keepH []int32
		for i := range n {
			if isHeld(seed, row, threshold) {
				keepH = append(keepH, int32(i))
			} else {
				keepR = append(keepR, int32(i))
			}
			row++
		}
		if len(keepR) > 0 {
			r.chunks = append(r.chunks, filteredChunk{parent: c, rows: keepR})
		}
		if len(keepH) > 0 {
			h.chunks = append(h.chunks, filteredChunk{parent: c, rows: keepH})
		}
	}
	return r, h
}

// split is what one call of Holdout made: both its sides point to it.
type split struct {
	fraction float64
	seed     uint64
}

// HoldoutPair reports whether rest and held are the two sides of one
// call Holdout(src, fraction, seed), and returns its src, fraction and
// seed: a pass over src that holds out the rows HeldOutRows names then
// reads the rows of both sides at once.
func HoldoutPair(rest, held Source) (src Source, fraction float64, seed uint64, ok bool) {
	r, ok1 := rest.(*filtered)
	h, ok2 := held.(*filtered)
	if !ok1 || !ok2 || r.split == nil || r.split != h.split || r.held || !h.held {
		return nil, 0, 0, false
	}
	return r.src, r.split.fraction, r.split.seed, true
}

// HoldoutOf reports whether src is a side of a call Holdout(parent,
// fraction, seed), or a Subdivide of one (the same rows in the same
// order), and returns parent, fraction, seed and which side src is
// (held: the rows held out): a pass over parent that holds out the rows
// HeldOutRows names reads the rows of the side held false as its
// training rows, in order.
func HoldoutOf(src Source) (parent Source, fraction float64, seed uint64, held, ok bool) {
	for {
		s, sub := src.(*subdivided)
		if !sub {
			break
		}
		src = s.src
	}
	f, ok := src.(*filtered)
	if !ok || f.split == nil {
		return nil, 0, 0, false, false
	}
	return f.src, f.split.fraction, f.split.seed, f.held, true
}

// HeldOutRows appends to dst the rows i in [0, n) of a chunk whose first
// row is row first of its source (counting from 0 over every chunk, in
// order) that Holdout(src, fraction, seed) puts in held, and returns dst:
// the split of one chunk, computed without the others, so that a worker
// that sees only some chunks splits them as Holdout does. It panics
// unless 0 < fraction < 1.
func HeldOutRows(dst []int32, first int64, n int, fraction float64, seed uint64) []int32 {
	if !(fraction > 0 && fraction < 1) {
		panic("stream: HeldOutRows fraction must be in (0, 1)")
	}
	threshold := holdoutThreshold(fraction)
	for i := range n {
		if isHeld(seed, uint64(first)+uint64(i), threshold) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

func holdoutThreshold(fraction float64) uint64 { return uint64(fraction * (1 << 53)) }

// isHeld reports whether row row goes to the held side.
func isHeld(seed, row, threshold uint64) bool { return splitmix(seed^row)>>11 < threshold }

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

type filteredChunk struct {
	parent int
	rows   []int32 // rows of the parent chunk kept, ascending
}

type filtered struct {
	forward
	src    Source
	chunks []filteredChunk
	parent parentReader
	split  *split // the Holdout that made it
	held   bool   // the held side of split
}

func (f *filtered) NumChunks() int      { return len(f.chunks) }
func (f *filtered) Dim() int            { return f.src.Dim() }
func (f *filtered) NumTargets() int     { return f.src.NumTargets() }
func (f *filtered) ChunkRows(i int) int { return len(f.chunks[i].rows) }

func (f *filtered) origin(i, row int) (int, int) {
	c := f.chunks[i]
	return c.parent, int(c.rows[row])
}

// ScratchBytes implements ScratchSizer: a parent chunk, and the parent's own.
func (f *filtered) ScratchBytes() int64 { return parentScratch(f.src, 1) }

func (f *filtered) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	c := f.chunks[i]
	return f.parent.read(ctx, f.src, c.parent, 1, y != nil, nil, func(px, py []float64) {
		d, k := f.src.Dim(), f.src.NumTargets()
		for j, r := range c.rows {
			copy(x[j*d:(j+1)*d], px[int(r)*d:int(r+1)*d])
			if y != nil {
				copy(y[j*k:(j+1)*k], py[int(r)*k:int(r+1)*k])
			}
		}
	})
}
