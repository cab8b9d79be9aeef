package ingest

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// labelSet encodes the string values of a target column (class labels) as
// integer codes. Files are read in parallel, so codes are first given in
// the order values are met; finish sorts the labels and the store is
// copied with the codes remapped when that order was not already sorted.
type labelSet struct {
	column string
	mu     sync.Mutex
	codes  map[string]int
	names  []string // by code
}

func newLabelSet(column string) *labelSet {
	return &labelSet{column: column, codes: map[string]int{}}
}

// stringValues is what the Arrow string arrays have in common.
type stringValues interface {
	Len() int
	IsNull(int) bool
	Value(int) string
}

// encode writes the codes of arr's values into dst, recording NULLs in b.
func (l *labelSet) encode(arr arrow.Array, dst []float64, b *bad) error {
	if d, ok := arr.(*array.Dictionary); ok {
		dict, ok := d.Dictionary().(stringValues)
		if !ok {
			return fmt.Errorf("column %q: a dictionary of %s is not a string label", clip(l.column), d.Dictionary().DataType())
		}
		codes := make([]float64, dict.Len())
		var db bad
		if err := l.encode(d.Dictionary(), codes, &db); err != nil {
			return err
		}
		for i := range dst {
			if d.IsNull(i) || dict.IsNull(d.GetValueIndex(i)) {
				dst[i] = 0
				b.add(i, "NULL")
				continue
			}
			dst[i] = codes[d.GetValueIndex(i)]
		}
		return nil
	}
	a, ok := arr.(stringValues)
	if !ok {
		return fmt.Errorf("column %q: %s values cannot be class labels", clip(l.column), arr.DataType())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range a.Len() {
		if a.IsNull(i) {
			dst[i] = 0
			b.add(i, "NULL")
			continue
		}
		c, err := l.code(a.Value(i))
		if err != nil {
			return err
		}
		dst[i] = float64(c)
	}
	return nil
}

// code returns the code of label v, giving it the next one if it is new.
// The caller holds l.mu.
func (l *labelSet) code(v string) (int, error) {
	c, ok := l.codes[v]
	if !ok {
		if len(l.names) == chunkstore.MaxLabels {
			return 0, l.tooMany(v)
		}
		v = strings.Clone(v) // Arrow's buffer is reused
		c = len(l.names)
		l.codes[v] = c
		l.names = append(l.names, v)
	}
	return c, nil
}

func (l *labelSet) tooMany(next string) error {
	shown := slices.Clone(l.names[:5])
	return fmt.Errorf("column %q (a string target, read as class labels) has more than %d distinct values (%q, %q, %q, %q, %q, … and %q); a class target has at most %d: use a numeric column for regression",
		clip(l.column), chunkstore.MaxLabels, clip(shown[0]), clip(shown[1]), clip(shown[2]), clip(shown[3]), clip(shown[4]), clip(next), chunkstore.MaxLabels)
}

// finish returns the sorted labels and, for each code given during the
// pass, its code in that order; remap is nil when they coincide.
func (l *labelSet) finish() (labels []string, remap []float64) {
	labels = slices.Clone(l.names)
	slices.Sort(labels)
	if slices.Equal(labels, l.names) {
		return labels, nil
	}
	remap = make([]float64, len(l.names))
	for c, n := range l.names {
		k, _ := slices.BinarySearch(labels, n)
		remap[c] = float64(k)
	}
	return labels, remap
}
