package stream

import "context"

// Source is a data set of rows cut into chunks: the public interface over
// chunk readers. *chunkstore.Reader satisfies it; MemSource serves small
// in-memory data; a Go program can implement it over its own data.
//
// Chunks are numbered 0 … NumChunks()-1 and their order is the row order.
// Implementations must allow concurrent calls to ReadChunk with distinct
// destination slices, and a chunk must read the same values every time:
// fits read the data once per iteration and validation reads some rows
// apart from the others, so a chunk that reads differently from one call
// to the next (a shuffle, a fresh random draw) gives a wrong model
// silently. In particular the features must be the same whether or not
// the targets are read (y nil). streamtest.Check verifies all of this on
// a Source of your own.
type Source interface {
	// NumChunks reports how many chunks the source holds.
	NumChunks() int
	// Dim reports the number of feature columns, d.
	Dim() int
	// NumTargets reports the number of target columns, k (0 if none).
	NumTargets() int
	// ChunkRows reports how many rows chunk i holds, without reading it.
	ChunkRows(i int) int
	// ReadChunk decodes chunk i: its features into x, row-major
	// (len(x) == ChunkRows(i)*Dim()), and its targets into y, row-major
	// (len(y) == ChunkRows(i)*NumTargets(); y may be nil to skip targets).
	// It must return promptly with ctx.Err() once ctx is done.
	ReadChunk(ctx context.Context, i int, x, y []float64) error
}

// Rows returns the number of rows of src: the sum of its ChunkRows.
func Rows(src Source) int64 {
	var n int64
	for i := range src.NumChunks() {
		n += int64(src.ChunkRows(i))
	}
	return n
}
