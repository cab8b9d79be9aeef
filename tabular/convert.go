package tabular

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// numericType reports whether toFloat converts columns of type dt.
func numericType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT64, arrow.FLOAT32, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL,
		arrow.DECIMAL128, arrow.DECIMAL256, arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	case arrow.DICTIONARY:
		return numericType(dt.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// toFloat writes the values of a as float64 into dst (len(dst) == a.Len())
// as chunkstore/ingest stores them (bool as 0 and 1, dates and timestamps
// as days since 1970-01-01 UTC), and records NULLs, NaNs and infinities in
// b at offset off.
func toFloat(a arrow.Array, dst []float64, b *bad, off int) error {
	if d, ok := a.(*array.Dictionary); ok {
		vals := make([]float64, d.Dictionary().Len())
		var db bad
		if err := toFloat(d.Dictionary(), vals, &db, 0); err != nil {
			return err
		}
		what := map[int]string{}
		for _, r := range db.rows {
			what[r] = nonFinite(vals[r])
			if d.Dictionary().IsNull(r) {
				what[r] = "NULL"
			}
		}
		for i := range dst {
			if d.IsNull(i) {
				dst[i] = 0
				b.add(off+i, "NULL")
				continue
			}
			k := d.GetValueIndex(i)
			if k < 0 || k >= len(vals) {
				return fmt.Errorf("dictionary index %d out of range [0, %d)", k, len(vals))
			}
			dst[i] = vals[k]
			if w, bad := what[k]; bad {
				b.add(off+i, w)
			}
		}
		return nil
	}
	conv(a, dst)
	for i, v := range dst {
		switch {
		case a.IsNull(i):
			dst[i] = 0
			b.add(off+i, "NULL")
		case v-v != 0:
			b.add(off+i, nonFinite(v))
		}
	}
	return nil
}

func conv(arr arrow.Array, dst []float64) {
	switch a := arr.(type) {
	case *array.Float64:
		copy(dst, a.Float64Values())
	case *array.Float32:
		each(a.Float32Values(), dst)
	case *array.Int8:
		each(a.Int8Values(), dst)
	case *array.Int16:
		each(a.Int16Values(), dst)
	case *array.Int32:
		each(a.Int32Values(), dst)
	case *array.Int64:
		each(a.Int64Values(), dst)
	case *array.Uint8:
		each(a.Uint8Values(), dst)
	case *array.Uint16:
		each(a.Uint16Values(), dst)
	case *array.Uint32:
		each(a.Uint32Values(), dst)
	case *array.Uint64:
		each(a.Uint64Values(), dst)
	case *array.Date32:
		each(a.Date32Values(), dst)
	case *array.Boolean:
		for i := range dst {
			dst[i] = 0
			if a.Value(i) {
				dst[i] = 1
			}
		}
	case *array.Date64:
		for i, v := range a.Date64Values() {
			dst[i] = float64(v) / 86400e3
		}
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		perDay := float64(86400 * int64(time.Second/unit.Multiplier()))
		for i, v := range a.TimestampValues() {
			dst[i] = float64(v) / perDay
		}
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		for i := range dst {
			dst[i] = a.Value(i).ToFloat64(scale)
		}
	case *array.Decimal256:
		scale := a.DataType().(*arrow.Decimal256Type).Scale
		for i := range dst {
			dst[i] = a.Value(i).ToFloat64(scale)
		}
	default:
		panic(fmt.Sprintf("tabular: no conversion of %s (numericType admitted it)", arr.DataType()))
	}
}

func each[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | arrow.Date32](src []T, dst []float64) {
	for i, v := range src {
		dst[i] = float64(v)
	}
}

func nonFinite(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case v > 0:
		return "+Inf"
	default:
		return "-Inf"
	}
}

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
