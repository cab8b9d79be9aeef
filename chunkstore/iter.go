package chunkstore

import (
	"context"

	"github.com/falkon-ooc/falkon-ooc/internal/directio"
)

// Block is one chunk decoded by an Iter.
type Block struct {
	Chunk int       // chunk number
	Row   int64     // store row of the chunk's first row
	Rows  int       // rows in the chunk
	X     []float64 // features, row-major, Rows × Dim
	Y     []float64 // targets, row-major, Rows × NumTargets; nil if not requested
}

// Iter reads a store's chunks in order into one reused Block:
//
//	it := r.Iter(true)
//	for it.Next(ctx) {
//		b := it.At()
//		…
//	}
//	if err := it.Err(); err != nil { … }
//
// An Iter is not safe for concurrent use; several Iters over one Reader are.
type Iter struct {
	r       *Reader
	targets bool
	next    int
	row     int64
	blk     Block
	err     error
}

// Iter returns an iterator over all chunks; targets says whether to decode
// the targets too.
func (r *Reader) Iter(targets bool) *Iter {
	return &Iter{r: r, targets: targets}
}

// Next decodes the next chunk. It returns false at the end or on error;
// check Err after the loop.
func (it *Iter) Next(ctx context.Context) bool {
	if it.err != nil || it.next >= it.r.NumChunks() {
		return false
	}
	i := it.next
	n := it.r.ChunkRows(i)
	b := &it.blk
	b.X = grow(b.X, n*it.r.dim)
	if it.targets {
		b.Y = grow(b.Y, n*it.r.nt)
	}
	if err := it.r.ReadChunk(ctx, i, b.X, b.Y); err != nil {
		it.err = err
		return false
	}
	b.Chunk, b.Row, b.Rows = i, it.row, n
	it.row += int64(n)
	it.next++
	return true
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// At returns the current chunk. It stays valid until the next call to Next.
func (it *Iter) At() *Block { return &it.blk }

// Err returns the first error met, if any.
func (it *Iter) Err() error { return it.err }

// Close releases the iterator's buffers. It does not close the Reader.
func (it *Iter) Close() error {
	it.blk = Block{}
	it.next = it.r.NumChunks()
	return nil
}

// ScratchBytes reports the most memory each goroutine reading concurrently
// holds in scratch buffers (grown on first use, kept until Close), for
// predicting peak memory. It implements stream.ScratchSizer.
func (r *Reader) ScratchBytes() int64 {
	if r.direct != nil {
		// Read with O_DIRECT: decoded tiles, an unshuffle buffer, a
		// buffer for a whole chunk (used when the read-ahead ring has no
		// slot free) and the ring itself, which the whole Reader shares:
		// counted for each goroutine, it overestimates when several read,
		// but a fit's soft memory limit set below the Reader's real
		// buffers would have the collector run all through the pass.
		span := int64(r.direct.span) + directio.Align
		return int64(tileCols+1)*int64(r.maxRaw) + span + int64(r.direct.ahead)*span
	}
	for _, s := range r.segs {
		if s.data == nil {
			// Read with pread: a read buffer, and tiles that may hold an
			// uncompressed block with its trailer.
			return int64(tileCols)*int64(max(r.maxRaw, r.maxRead)) + int64(r.maxRaw) + int64(r.maxRead)
		}
	}
	return int64(tileCols+1) * int64(r.maxRaw)
}
