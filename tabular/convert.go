package tabular

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// numericType reports whether toFloat converts columns of type dt
// (table.Numeric, as chunkstore/ingest).
func numericType(dt arrow.DataType) bool { return table.Numeric(dt) }

// toFloat writes the values of a as float64 into dst (len(dst) == a.Len())
// as chunkstore/ingest stores them (table.Convert: bool as 0 and 1, dates
// and timestamps as days since 1970-01-01 UTC), and records NULLs, NaNs
// and infinities in b at offset off.
func toFloat(a arrow.Array, dst []float64, b *bad, off int) error {
	return table.Convert(a, dst, func(i int, what string) { b.add(off+i, what) })
}

// nonFinite names a value that is not finite (table.NonFinite).
func nonFinite(v float64) string { return table.NonFinite(v) }

// concat joins the chunks of a column batch into one array.
func concat(chunks []arrow.Array) (arrow.Array, error) {
	if len(chunks) == 1 {
		chunks[0].Retain()
		return chunks[0], nil
	}
	return array.Concatenate(chunks, memory.DefaultAllocator)
}

// LabelError reports a string in a label column (Options.Labels) that is
// not one of the labels.
type LabelError struct {
	Label  string
	Labels []string
}

func (e *LabelError) Error() string {
	return fmt.Sprintf("label %q is not one of the model's classes %q", e.Label, e.Labels)
}

// stringType reports whether toCode reads columns of type dt.
func stringType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return true
	case arrow.DICTIONARY:
		return stringType(dt.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// toCode writes the index in labels (idx) of each string of a into dst,
// records NULLs in b at offset off, and returns the row and a
// *LabelError for a string not in labels.
func toCode(a arrow.Array, dst []float64, idx map[string]int, labels []string, b *bad, off int) (int, error) {
	var value func(i int) string
	switch s := a.(type) {
	case *array.String:
		value = s.Value
	case *array.LargeString:
		value = s.Value
	case *array.Dictionary:
		dict := s.Dictionary()
		var dv func(int) string
		switch d := dict.(type) {
		case *array.String:
			dv = d.Value
		case *array.LargeString:
			dv = d.Value
		default:
			return 0, fmt.Errorf("dictionary of %s is not a label column", dict.DataType())
		}
		value = func(i int) string { return dv(s.GetValueIndex(i)) }
	default:
		return 0, fmt.Errorf("type %s is not a label column", a.DataType())
	}
	for i := range dst {
		if a.IsNull(i) {
			dst[i] = 0
			b.add(off+i, "NULL")
			continue
		}
		v := value(i)
		k, ok := idx[v]
		if !ok {
			return i, &LabelError{Label: v, Labels: labels}
		}
		dst[i] = float64(k)
	}
	return 0, nil
}
