package table

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Levels visits the categorical level of each row of arr, in order:
// fn(i, level, false) with the level's bytes (valid only during the call),
// or fn(i, nil, true) for a NULL. The level of a string or binary value
// is its bytes, of an integer its decimal digits; a dictionary's rows have
// the levels of their entries. buf is scratch space for the digits,
// returned grown. Ingest (which counts the levels) and predict (which
// encodes them) read levels with it, so both see the same ones.
func Levels(arr arrow.Array, buf []byte, fn func(i int, level []byte, null bool)) ([]byte, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		dict := d.Dictionary()
		var err error
		for i := range d.Len() {
			if d.IsNull(i) {
				fn(i, nil, true)
				continue
			}
			k := d.GetValueIndex(i)
			if k < 0 || k >= dict.Len() {
				return buf, fmt.Errorf("dictionary index %d out of range [0, %d)", k, dict.Len())
			}
			if dict.IsNull(k) {
				fn(i, nil, true)
				continue
			}
			var l []byte
			if l, buf, err = levelAt(dict, k, buf); err != nil {
				return buf, err
			}
			fn(i, l, false)
		}
		return buf, nil
	}
	var err error
	for i := range arr.Len() {
		if arr.IsNull(i) {
			fn(i, nil, true)
			continue
		}
		var l []byte
		if l, buf, err = levelAt(arr, i, buf); err != nil {
			return buf, err
		}
		fn(i, l, false)
	}
	return buf, nil
}

// levelAt returns the level of the non-NULL row i of arr.
func levelAt(arr arrow.Array, i int, buf []byte) ([]byte, []byte, error) {
	switch a := arr.(type) {
	case *array.String:
		return strBytes(a.Value(i)), buf, nil
	case *array.LargeString:
		return strBytes(a.Value(i)), buf, nil
	case *array.StringView:
		return strBytes(a.Value(i)), buf, nil
	case *array.Binary:
		return a.Value(i), buf, nil
	case *array.LargeBinary:
		return a.Value(i), buf, nil
	case *array.BinaryView:
		return a.Value(i), buf, nil
	case *array.FixedSizeBinary:
		return a.Value(i), buf, nil
	case *array.Int8:
		buf = strconv.AppendInt(buf[:0], int64(a.Value(i)), 10)
	case *array.Int16:
		buf = strconv.AppendInt(buf[:0], int64(a.Value(i)), 10)
	case *array.Int32:
		buf = strconv.AppendInt(buf[:0], int64(a.Value(i)), 10)
	case *array.Int64:
		buf = strconv.AppendInt(buf[:0], a.Value(i), 10)
	case *array.Uint8:
		buf = strconv.AppendUint(buf[:0], uint64(a.Value(i)), 10)
	case *array.Uint16:
		buf = strconv.AppendUint(buf[:0], uint64(a.Value(i)), 10)
	case *array.Uint32:
		buf = strconv.AppendUint(buf[:0], uint64(a.Value(i)), 10)
	case *array.Uint64:
		buf = strconv.AppendUint(buf[:0], a.Value(i), 10)
	default:
		return nil, buf, fmt.Errorf("%s values cannot be categorical levels (strings and integers can)", arr.DataType())
	}
	return buf, buf, nil
}

// strBytes views s as bytes without copying; the bytes must not be
// changed.
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
