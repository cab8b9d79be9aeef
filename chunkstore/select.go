package chunkstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Column metadata through the stream.Source optional interfaces
// (stream.Columner, stream.Statser, stream.TargetValuer,
// stream.ScratchSizer), from the manifest. chunkstore does not import
// stream: the method sets match by name.

// Columns returns the feature and target names in order (implements
// stream.Columner). The caller must not modify them.
func (r *Reader) Columns() (features, targets []string) { return r.features, r.targets }

// FeatureStats returns the manifest's mean and population standard
// deviation of each feature (implements stream.Statser), except that a
// feature of a one-hot encoded column (Manifest.Encoding) has its
// encoding's scale (featenc.Scale) as its deviation: a fit divides it by
// that. The caller must not modify them.
func (r *Reader) FeatureStats() (mean, std []float64) { return r.mean, r.std }

// TargetDistinct returns each target's sorted distinct values, nil for a
// target with more than MaxDistinct (implements stream.TargetValuer). The
// caller must not modify them.
func (r *Reader) TargetDistinct() [][]float64 { return r.distinct }

// initColumns fills the column metadata served above from the manifest.
func (r *Reader) initColumns() {
	scale := encodedScale(r.m.Encoding)
	for _, c := range r.m.Features {
		r.features = append(r.features, c.Name)
		r.mean = append(r.mean, c.Mean)
		if s, ok := scale[c.Name]; ok {
			r.std = append(r.std, s)
		} else {
			r.std = append(r.std, c.Std)
		}
	}
	for _, c := range r.m.Targets {
		r.targets = append(r.targets, c.Name)
		r.distinct = append(r.distinct, c.Distinct)
	}
	r.colNames = append(append([]string(nil), r.features...), r.targets...)
	if w := r.m.Weight; w != nil {
		r.colNames = append(r.colNames, w.Name)
	}
}

// MissingColumnsError is returned by Select for names the store lacks.
type MissingColumnsError struct {
	Missing []string // the names asked for that the store lacks
	Have    []string // the store's columns, features then targets
}

func (e *MissingColumnsError) Error() string {
	return fmt.Sprintf("chunkstore: column(s) %q are missing; the store's columns are %q", e.Missing, e.Have)
}

// Select returns a view of r whose features are the named columns and
// whose targets are the named columns, each in the order given (nil
// targets: a view without targets). Any column of the store, feature or
// target, may be named on either side. A name the store lacks gives a
// *MissingColumnsError listing every missing name. The view is a
// stream.Source with the same chunks as r, reports the selected names,
// their manifest statistics and distinct values, is safe for concurrent
// use, and is valid until r is closed.
func (r *Reader) Select(features, targets []string) (*View, error) {
	v := &View{r: r, features: slices.Clone(features), targets: slices.Clone(targets)}
	var missing []string
	index := func(name string) int {
		i := slices.Index(r.colNames, name)
		if i < 0 {
			missing = append(missing, name)
		}
		return i
	}
	for _, f := range features {
		v.cols = append(v.cols, index(f))
	}
	for _, t := range targets {
		v.cols = append(v.cols, index(t))
	}
	if len(missing) > 0 {
		return nil, &MissingColumnsError{Missing: missing, Have: slices.Clone(r.colNames)}
	}
	if len(features) == 0 {
		return nil, fmt.Errorf("chunkstore: select: no feature columns named")
	}
	d := len(features)
	v.identity = slices.Equal(features, r.features) && (len(targets) == 0 || slices.Equal(targets, r.targets))
	col := func(i int) *Column {
		switch {
		case i < len(r.m.Features):
			return &r.m.Features[i]
		case i < len(r.m.Features)+len(r.m.Targets):
			return &r.m.Targets[i-len(r.m.Features)]
		}
		return r.m.Weight
	}
	for _, i := range v.cols[:d] {
		v.mean = append(v.mean, col(i).Mean)
		if i < len(r.std) {
			v.std = append(v.std, r.std[i]) // a feature: with its encoding's scale
		} else {
			v.std = append(v.std, col(i).Std)
		}
	}
	for _, i := range v.cols[d:] {
		v.distinct = append(v.distinct, col(i).Distinct)
		v.labels = append(v.labels, col(i).Labels)
	}
	return v, nil
}

// View is a selection of a Reader's columns (Select). It is safe for
// concurrent use.
type View struct {
	r                 *Reader
	features, targets []string
	cols              []int // store column of each feature, then each target
	identity          bool  // the store's own feature order: read directly
	mean, std         []float64
	distinct          [][]float64
	labels            [][]string
	pool              sync.Pool // *[][]float64 column scratch
}

// NumChunks implements stream.Source.
func (v *View) NumChunks() int { return v.r.NumChunks() }

// WeightColumn implements stream.Weighter: the store's weight column
// (whatever columns are selected), or "".
func (v *View) WeightColumn() string { return v.r.WeightColumn() }

// ReadWeights implements stream.Weighter.
func (v *View) ReadWeights(ctx context.Context, i int, w []float64) error {
	return v.r.ReadWeights(ctx, i, w)
}

// Dim implements stream.Source.
func (v *View) Dim() int { return len(v.features) }

// NumTargets implements stream.Source.
func (v *View) NumTargets() int { return len(v.targets) }

// ChunkRows implements stream.Source.
func (v *View) ChunkRows(i int) int { return v.r.ChunkRows(i) }

// Columns implements stream.Columner.
func (v *View) Columns() (features, targets []string) { return v.features, v.targets }

// FeatureStats implements stream.Statser.
func (v *View) FeatureStats() (mean, std []float64) { return v.mean, v.std }

// TargetDistinct implements stream.TargetValuer.
func (v *View) TargetDistinct() [][]float64 { return v.distinct }

// TargetLabels returns each selected target's label names, nil for a
// numeric target (implements stream.Labeler).
func (v *View) TargetLabels() [][]string { return v.labels }

// ScratchBytes implements stream.ScratchSizer: the reader's buffers plus
// one column per selected column, per reading goroutine.
func (v *View) ScratchBytes() int64 {
	b := v.r.ScratchBytes()
	if !v.identity {
		b += int64(len(v.cols)) * int64(v.r.maxRaw)
	}
	return b
}

// String names the view's columns.
func (v *View) String() string {
	return fmt.Sprintf("columns [%s] → [%s]", strings.Join(v.features, " "), strings.Join(v.targets, " "))
}

// ReadChunk implements stream.Source: like Reader.ReadChunk over the
// selected columns.
func (v *View) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	if v.identity && (y == nil || v.targets != nil && slices.Equal(v.targets, v.r.targets)) {
		return v.r.ReadChunk(ctx, i, x, y)
	}
	rows := v.r.ChunkRows(i)
	d, k := len(v.features), len(v.targets)
	if len(x) != rows*d {
		return fmt.Errorf("chunkstore: read chunk %d: len(x) = %d, want %d rows × %d features", i, len(x), rows, d)
	}
	if y != nil && len(y) != rows*k {
		return fmt.Errorf("chunkstore: read chunk %d: len(y) = %d, want %d rows × %d targets", i, len(y), rows, k)
	}
	cols := v.cols[:d]
	if y != nil {
		cols = v.cols
	}
	p, _ := v.pool.Get().(*[][]float64)
	if p == nil {
		p = new([][]float64)
	}
	defer v.pool.Put(p)
	buf := *p
	for len(buf) < len(cols) {
		buf = append(buf, nil)
	}
	for j := range cols {
		buf[j] = slices.Grow(buf[j][:0], rows)[:rows]
	}
	*p = buf
	if err := v.r.ReadColumns(ctx, i, cols, buf[:len(cols)]); err != nil {
		return err
	}
	for j := range d {
		for r, val := range buf[j] {
			x[r*d+j] = val
		}
	}
	if y != nil {
		for j := range k {
			for r, val := range buf[d+j] {
				y[r*k+j] = val
			}
		}
	}
	return nil
}
