package stream

import (
	"context"
	"fmt"
)

// MemSource is a Source over row-major slices held in memory, cut into
// chunks of a fixed number of rows. It serves tests, small data and Go
// programs that already hold their data.
type MemSource struct {
	x, y      []float64
	n, d, k   int
	chunkRows int

	features, targets []string  // nil unless set by WithColumns
	w                 []float64 // row weights (WithWeights), or nil
	wname             string
}

// NewMemSource returns a Source over n = len(x)/d rows: x holds the
// features row-major (n × d), y the targets row-major (n × k, or nil with
// k = 0). Chunks hold chunkRows rows (the last may hold fewer). The
// slices are not copied and must not change while the source is in use.
// It panics if the shapes disagree.
func NewMemSource(x []float64, d int, y []float64, k int, chunkRows int) *MemSource {
	if d <= 0 || len(x)%d != 0 {
		panic(fmt.Sprintf("stream: len(x) = %d is not a multiple of d = %d", len(x), d))
	}
	n := len(x) / d
	if len(y) != n*k {
		panic(fmt.Sprintf("stream: len(y) = %d, want n×k = %d×%d", len(y), n, k))
	}
	if chunkRows <= 0 {
		panic("stream: chunkRows must be positive")
	}
	return &MemSource{x: x, y: y, n: n, d: d, k: k, chunkRows: chunkRows}
}

// NumChunks implements Source.
func (m *MemSource) NumChunks() int { return (m.n + m.chunkRows - 1) / m.chunkRows }

// Dim implements Source.
func (m *MemSource) Dim() int { return m.d }

// NumTargets implements Source.
func (m *MemSource) NumTargets() int { return m.k }

// ChunkRows implements Source.
func (m *MemSource) ChunkRows(i int) int {
	return min(m.chunkRows, m.n-i*m.chunkRows)
}

// ReadChunk implements Source.
func (m *MemSource) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if i < 0 || i >= m.NumChunks() {
		return fmt.Errorf("stream: chunk %d out of range [0, %d)", i, m.NumChunks())
	}
	lo := i * m.chunkRows
	rows := m.ChunkRows(i)
	if len(x) != rows*m.d {
		return fmt.Errorf("stream: chunk %d: len(x) = %d, want %d", i, len(x), rows*m.d)
	}
	copy(x, m.x[lo*m.d:(lo+rows)*m.d])
	if y != nil {
		if len(y) != rows*m.k {
			return fmt.Errorf("stream: chunk %d: len(y) = %d, want %d", i, len(y), rows*m.k)
		}
		copy(y, m.y[lo*m.k:(lo+rows)*m.k])
	}
	return nil
}

// WithColumns returns a copy of m (sharing its data) that reports the
// given feature and target names through Columner. It panics unless
// there is one name per column.
func (m *MemSource) WithColumns(features, targets []string) *MemSource {
	if len(features) != m.d || len(targets) != m.k {
		panic(fmt.Sprintf("stream: WithColumns: %d feature and %d target names for %d and %d columns", len(features), len(targets), m.d, m.k))
	}
	c := *m
	c.features, c.targets = append([]string(nil), features...), append([]string(nil), targets...)
	return &c
}

// Columns implements Columner: the names given to WithColumns, or nil.
func (m *MemSource) Columns() (features, targets []string) { return m.features, m.targets }
