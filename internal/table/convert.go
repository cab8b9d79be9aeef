package table

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Numeric reports whether Convert converts columns of type dt: numbers,
// decimals, bool, dates and timestamps, and dictionaries of them.
func Numeric(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT64, arrow.FLOAT32, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	case arrow.DICTIONARY:
		return Numeric(dt.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// NonFinite names a value that is not finite: "NaN", "+Inf" or "-Inf".
func NonFinite(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case v > 0:
		return "+Inf"
	default:
		return "-Inf"
	}
}

// Convert writes the values of arr as float64 into dst (len(dst) ==
// arr.Len()), as a store holds them: bool as 0 and 1, dates and
// timestamps as days since 1970-01-01 UTC, decimals at their scale. It
// calls bad, in row order, for each row that holds a NULL (dst is 0
// there), a NaN or an infinity, naming it "NULL", "NaN", "+Inf" or
// "-Inf". A type Numeric does not admit is an error.
func Convert(arr arrow.Array, dst []float64, bad func(i int, what string)) error {
	if len(dst) != arr.Len() {
		return fmt.Errorf("internal error: %d values for a buffer of %d", arr.Len(), len(dst))
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return convertDict(d, dst, bad)
	}
	if err := convertValues(arr, dst); err != nil {
		return err
	}
	nulls := arr.NullN() > 0
	for i, v := range dst {
		if nulls && arr.IsNull(i) {
			dst[i] = 0
			bad(i, "NULL")
			continue
		}
		if v-v != 0 {
			bad(i, NonFinite(v))
		}
	}
	return nil
}

// convertDict converts a dictionary-encoded array: the dictionary once,
// then a lookup per row.
func convertDict(a *array.Dictionary, dst []float64, bad func(int, string)) error {
	dict := a.Dictionary()
	vals := make([]float64, dict.Len())
	what := map[int]string{} // dictionary entries that are NULL, NaN or ±Inf
	if err := Convert(dict, vals, func(i int, w string) { what[i] = w }); err != nil {
		return err
	}
	for i := range dst {
		if a.IsNull(i) {
			dst[i] = 0
			bad(i, "NULL")
			continue
		}
		k := a.GetValueIndex(i)
		if k < 0 || k >= len(vals) {
			return fmt.Errorf("dictionary index %d out of range [0, %d)", k, len(vals))
		}
		dst[i] = vals[k]
		if w, ok := what[k]; ok {
			bad(i, w)
		}
	}
	return nil
}

// convertValues converts the values of arr, NULLs included (whatever the
// array holds under them).
func convertValues(arr arrow.Array, dst []float64) error {
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
	case *array.Decimal32:
		scale := a.DataType().(*arrow.Decimal32Type).Scale
		for i := range dst {
			dst[i] = a.Value(i).ToFloat64(scale)
		}
	case *array.Decimal64:
		scale := a.DataType().(*arrow.Decimal64Type).Scale
		for i := range dst {
			dst[i] = a.Value(i).ToFloat64(scale)
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
		return fmt.Errorf("cannot convert %s to float64", arr.DataType())
	}
	return nil
}

func each[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | arrow.Date32](src []T, dst []float64) {
	for i, v := range src {
		dst[i] = float64(v)
	}
}
