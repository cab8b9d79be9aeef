package table

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestConvert: values as a store holds them, and the bad rows reported in
// row order with NULLs read as 0, for plain, decimal and dictionary
// arrays; a type Numeric refuses is an error.
func TestConvert(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	convert := func(a arrow.Array) ([]float64, string) {
		t.Helper()
		defer a.Release()
		if !Numeric(a.DataType()) {
			t.Fatalf("Numeric(%s) = false", a.DataType())
		}
		dst := make([]float64, a.Len())
		for i := range dst {
			dst[i] = 99 // NULLs must be overwritten
		}
		bad := ""
		if err := Convert(a, dst, func(i int, w string) { bad += fmt.Sprintf("%d:%s ", i, w) }); err != nil {
			t.Fatal(err)
		}
		return dst, bad
	}
	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{1.5, math.NaN(), 0, math.Inf(-1)}, []bool{true, true, false, true})
	got, bad := convert(fb.NewArray())
	fb.Release()
	if fmt.Sprint(got[0], got[2]) != "1.5 0" || bad != "1:NaN 2:NULL 3:-Inf " {
		t.Errorf("float64: %v, bad %q", got, bad)
	}

	db := array.NewDecimal32Builder(mem, &arrow.Decimal32Type{Precision: 9, Scale: 2})
	db.Append(decimal.Decimal32(1234))
	db.AppendNull()
	got, bad = convert(db.NewArray())
	db.Release()
	if got[0] != 12.34 || got[1] != 0 || bad != "1:NULL " {
		t.Errorf("decimal32: %v, bad %q", got, bad)
	}

	dict := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float64}).(*array.Float64DictionaryBuilder)
	for _, v := range []float64{2, math.Inf(1), 2} {
		dict.Append(v)
	}
	dict.AppendNull()
	got, bad = convert(dict.NewArray())
	dict.Release()
	if fmt.Sprint(got) != "[2 +Inf 2 0]" || bad != "1:+Inf 3:NULL " {
		t.Errorf("dictionary: %v, bad %q", got, bad)
	}

	sb := array.NewStringBuilder(mem)
	sb.Append("x")
	s := sb.NewArray()
	sb.Release()
	defer s.Release()
	if Numeric(s.DataType()) || Convert(s, make([]float64, 1), func(int, string) {}) == nil {
		t.Error("a string array converted")
	}
}
