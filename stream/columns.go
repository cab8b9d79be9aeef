package stream

import (
	"fmt"
	"math"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// Optional capabilities of a Source, checked with a type assertion (as
// io.WriterTo or fs.StatFS are). A method that returns nil means "not
// known", so that wrappers (Subdivide, Holdout) can implement every
// interface and forward whatever their parent knows.

// Columner is implemented by a Source that knows its column names.
type Columner interface {
	// Columns returns the feature names (len Dim()) and the target
	// names (len NumTargets()), or nil, nil. The caller must not
	// modify them.
	Columns() (features, targets []string)
}

// Statser is implemented by a Source that knows its per-feature
// statistics over all of its rows.
type Statser interface {
	// FeatureStats returns the mean and the population standard
	// deviation of every feature (len Dim() each), or nil, nil. The
	// caller must not modify them.
	FeatureStats() (mean, std []float64)
}

// TargetValuer is implemented by a Source that knows the distinct values
// of its target columns.
type TargetValuer interface {
	// TargetDistinct returns, for each target column, its sorted
	// distinct values when it has at most MaxDistinct of them, and nil
	// for a column with more; or nil altogether when unknown. The
	// caller must not modify it.
	TargetDistinct() [][]float64
}

// Labeler is implemented by a Source whose target columns may hold codes
// of string labels (the value k stands for label k), such as a chunk
// store with a string target.
type Labeler interface {
	// TargetLabels returns, for each target column, its label names (nil
	// for a numeric column), or nil altogether when unknown. The caller
	// must not modify them.
	TargetLabels() [][]string
}

// Encoded is implemented by a Source whose features were made, in part,
// from categorical and time input columns (a chunk store's encoding).
type Encoded interface {
	// Encoding returns how, or nil. The caller must not modify it.
	Encoding() *featenc.Spec
}

// NullPolicer is implemented by a Source that knows the NULL policy its
// rows were ingested with.
type NullPolicer interface {
	// NullPolicy returns "drop" or "mean" (NULL, NaN and ±Inf feature
	// values were filled with the column's mean), or "" when unknown or
	// "error".
	NullPolicy() string
}

// EncodingOf returns src's Encoding, or nil.
func EncodingOf(src Source) *featenc.Spec {
	if e, ok := src.(Encoded); ok {
		return e.Encoding()
	}
	return nil
}

// NullPolicyOf returns src's NullPolicy, or "".
func NullPolicyOf(src Source) string {
	if n, ok := src.(NullPolicer); ok {
		return n.NullPolicy()
	}
	return ""
}

// ScratchSizer is implemented by a Source that holds buffers of its own
// while chunks are read (decode scratch, a parent chunk), so that memory
// can be planned before a pass.
type ScratchSizer interface {
	// ScratchBytes returns the most scratch memory, in bytes, that the
	// source holds for each goroutine reading chunks concurrently.
	ScratchBytes() int64
}

// MaxDistinct is the most distinct values of a column that a
// TargetValuer reports; a column with more cannot be a class label.
const MaxDistinct = 256

// ColumnsOf returns src's feature and target names, or x0, x1, … and
// y0, y1, … when src does not know them.
func ColumnsOf(src Source) (features, targets []string) {
	if c, ok := src.(Columner); ok {
		features, targets = c.Columns()
	}
	if len(features) != src.Dim() {
		features = make([]string, src.Dim())
		for j := range features {
			features[j] = fmt.Sprintf("x%d", j)
		}
	}
	if len(targets) != src.NumTargets() {
		targets = make([]string, src.NumTargets())
		for j := range targets {
			targets[j] = fmt.Sprintf("y%d", j)
		}
	}
	return features, targets
}

// ValueError reports a value that a pass cannot use (NaN or ±Inf) at a
// position in a source. A worker of Run returns it with Row relative to
// the chunk it was given and Chunk unset; Run fills in Chunk and, for
// the sources of Subdivide and Holdout, maps Chunk and Row to the
// numbering of the underlying source.
type ValueError struct {
	Chunk  int     // chunk of the source
	Row    int     // row within the chunk, from 0
	Column string  // column name
	Value  float64 // the offending value
	// Reason says what is wrong with the value; "" means "is not a
	// finite number".
	Reason string
}

func (e *ValueError) Error() string {
	why := e.Reason
	if why == "" {
		why = "is not a finite number"
	}
	return fmt.Sprintf("chunk %d, row %d, column %q: value %v %s", e.Chunk, e.Row, e.Column, e.Value, why)
}

// At returns e with Row moved down by row rows (for an error found in a
// slice that starts at that row).
func (e *ValueError) At(row int) *ValueError {
	e.Row += row
	return e
}

// CheckFinite returns a *ValueError for the first value of x (rows ×
// len(names), row-major) that is NaN or infinite, naming its column by
// names, or nil.
func CheckFinite(x []float64, names []string) error {
	d := len(names)
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &ValueError{Row: i / d, Column: names[i%d], Value: v}
		}
	}
	return nil
}

// origin is implemented by this package's wrappers: it maps a row of
// chunk i to the parent source's chunk and row.
type origin interface {
	origin(i, row int) (chunk, prow int)
}

// locate maps chunk i, row of src back through any chain of wrappers.
func locate(src Source, i, row int) (int, int) {
	for {
		o, ok := src.(origin)
		if !ok {
			return i, row
		}
		i, row = o.origin(i, row)
		switch w := src.(type) {
		case *subdivided:
			src = w.src
		case *filtered:
			src = w.src
		default:
			return i, row
		}
	}
}

// forward implements the optional interfaces for a wrapper of src.
type forward struct{ src Source }

func (f forward) Columns() (features, targets []string) {
	if c, ok := f.src.(Columner); ok {
		return c.Columns()
	}
	return nil, nil
}

func (f forward) FeatureStats() (mean, std []float64) {
	if s, ok := f.src.(Statser); ok {
		return s.FeatureStats()
	}
	return nil, nil
}

func (f forward) TargetDistinct() [][]float64 {
	if t, ok := f.src.(TargetValuer); ok {
		return t.TargetDistinct()
	}
	return nil
}

func (f forward) Encoding() *featenc.Spec { return EncodingOf(f.src) }

func (f forward) NullPolicy() string { return NullPolicyOf(f.src) }

func (f forward) TargetLabels() [][]string {
	if l, ok := f.src.(Labeler); ok {
		return l.TargetLabels()
	}
	return nil
}

// ScratchOf returns src's scratch per reading goroutine (ScratchSizer),
// or 0 if src does not say.
func ScratchOf(src Source) int64 {
	if s, ok := src.(ScratchSizer); ok {
		return s.ScratchBytes()
	}
	return 0
}

// parentScratch is the per-reader scratch of a wrapper that reads whole
// parent chunks: n parent chunks (features and targets), plus the
// parent's own.
func parentScratch(src Source, n int) int64 {
	maxRows := 0
	for i := range src.NumChunks() {
		maxRows = max(maxRows, src.ChunkRows(i))
	}
	return int64(n)*8*int64(maxRows)*int64(src.Dim()+src.NumTargets()) + ScratchOf(src)
}

// RootRows maps rows idx of src (ascending, numbered from 0 over src's
// chunks in order) through the wrappers of this package (Subdivide,
// Holdout) to the source they wrap, root, and to its rows, numbered the
// same way; they stay ascending. A source that wraps nothing is its own
// root.
func RootRows(src Source, idx []int64) (root Source, rows []int64) {
	root = src
	wrapped := false // not root == src: a source may be of an uncomparable type
	for {
		switch w := root.(type) {
		case *subdivided:
			root, wrapped = w.src, true
			continue
		case *filtered:
			root, wrapped = w.src, true
			continue
		}
		break
	}
	if !wrapped {
		return src, idx
	}
	first := make([]int64, root.NumChunks()+1) // each root chunk's first row
	for c := range root.NumChunks() {
		first[c+1] = first[c] + int64(root.ChunkRows(c))
	}
	rows = make([]int64, 0, len(idx))
	var lo int64
	p := 0
	for c := 0; c < src.NumChunks() && p < len(idx); c++ {
		hi := lo + int64(src.ChunkRows(c))
		for ; p < len(idx) && idx[p] < hi; p++ {
			pc, prow := locate(src, c, int(idx[p]-lo))
			rows = append(rows, first[pc]+int64(prow))
		}
		lo = hi
	}
	return root, rows
}
