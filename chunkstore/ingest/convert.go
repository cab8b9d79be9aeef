package ingest

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// class groups column types by what ingest can do with them.
type class int

const (
	classNumeric  class = iota + 1 // integers, floats, decimals: default features
	classBool                      // stored as 0 and 1: default features
	classTemporal                  // dates and timestamps: only when named
	classString                    // strings and binary: never
	classNested                    // lists, structs, maps: never
	classOther                     // anything else (time of day, intervals, …): never
)

// storable reports whether a column of class c can go into the store when
// named explicitly.
func (c class) storable() bool {
	return c == classNumeric || c == classBool || c == classTemporal
}

// colType describes one column of one input file.
type colType struct {
	class class
	spec  string // chunkstore.ColumnSpec.Type for storable columns
	desc  string // the type as users see it in messages, e.g. "int64", "utf8 (string)"
	part  bool   // a Hive partition column, from the file's path
	// labels, for a string target, encodes its values as class codes.
	labels *labelSet
	// integer: the column may be named categorical (integers; a text
	// column of numbers, whose levels are its text).
	integer bool
	// cat, for a categorical feature, encodes this file's values as codes
	// and counts their levels.
	cat *catCoder
	// stray, for a text column of strings, is its first value that is not
	// a number when nearly all its sampled values are (see strayOf).
	stray *strayValue
}

// classify maps an Arrow type to its class.
func classify(dt arrow.DataType) colType {
	switch dt.ID() {
	case arrow.FLOAT64, arrow.FLOAT32, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return colType{classNumeric, dt.Name(), dt.String(), false, nil, dt.ID() != arrow.FLOAT64 && dt.ID() != arrow.FLOAT32, nil, nil}
	case arrow.DECIMAL128, arrow.DECIMAL256, arrow.DECIMAL32, arrow.DECIMAL64:
		return colType{classNumeric, "float64", dt.String(), false, nil, false, nil, nil}
	case arrow.BOOL:
		return colType{classBool, "bool", "bool", false, nil, false, nil, nil}
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return colType{classTemporal, "float64", dt.String(), false, nil, false, nil, nil}
	case arrow.DICTIONARY:
		d := dt.(*arrow.DictionaryType)
		v := classify(d.ValueType)
		v.desc = dt.String()
		return v
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return colType{classString, "", dt.String() + " (string)", false, nil, false, nil, nil}
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return colType{classString, "", dt.String() + " (binary)", false, nil, false, nil, nil}
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW,
		arrow.STRUCT, arrow.MAP, arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return colType{classNested, "", dt.String() + " (nested)", false, nil, false, nil, nil}
	default:
		return colType{classOther, "", dt.String(), false, nil, false, nil, nil}
	}
}

// Text column types, inferred from the first block of a text file. The
// values arrive as strings and are parsed by parseText.
var (
	textNumeric = colType{classNumeric, "float64", "number", false, nil, true, nil, nil}
	textBool    = colType{classBool, "bool", "bool", false, nil, false, nil, nil}
	textDate    = colType{classTemporal, "float64", "date (YYYY-MM-DD)", false, nil, false, nil, nil}
	textString  = colType{classString, "", "string", false, nil, false, nil, nil}
)

// bad records the first value in a column batch that cannot be stored, and
// every row that holds one.
type bad struct {
	rows  []int  // offsets within the batch, ascending
	first string // what the first one is: "NULL", "NaN", "+Inf", "-Inf"
	n     chunkstore.BadCounts
}

func (b *bad) add(i int, what string) {
	if len(b.rows) == 0 {
		b.first = what
	}
	b.rows = append(b.rows, i)
	switch what {
	case "NULL":
		b.n.Null++
	case "NaN":
		b.n.NaN++
	case "+Inf":
		b.n.PosInf++
	default:
		b.n.NegInf++
	}
}

// merge appends the bad rows of c, a part of the batch starting at off.
func (b *bad) merge(off int, c *bad) {
	if len(c.rows) == 0 {
		return
	}
	if len(b.rows) == 0 {
		b.first = c.first
	}
	b.n.Null += c.n.Null
	b.n.NaN += c.n.NaN
	b.n.PosInf += c.n.PosInf
	b.n.NegInf += c.n.NegInf
	for _, r := range c.rows {
		b.rows = append(b.rows, off+r)
	}
}

// nonFinite names a value that is not finite (table.NonFinite).
func nonFinite(v float64) string { return table.NonFinite(v) }

// convertArray writes the values of arr as float64 into dst (len(dst) ==
// arr.Len()) and records NULLs, NaNs and infinities in b, in row order:
// table.Convert, which predict's reader (tabular) uses too.
func convertArray(arr arrow.Array, dst []float64, b *bad) error {
	return table.Convert(arr, dst, b.add)
}

// parseError is a text value that does not parse as its column's type.
type parseError struct {
	row   int // offset within the batch
	value string
	want  string
}

// parseText parses a string column of a text file into dst according to the
// column's inferred type, recording NULLs (the csv reader's null tokens),
// NaNs and infinities in b. The first value that does not parse is returned.
func parseText(arr arrow.Array, typ colType, dst []float64, b *bad) (*parseError, error) {
	a, ok := arr.(*array.String)
	if !ok {
		return nil, fmt.Errorf("internal error: text column arrived as %s", arr.DataType())
	}
	if typ.cat != nil {
		return nil, typ.cat.encode(a, dst, b)
	}
	if typ.class == classString && typ.labels != nil {
		return nil, typ.labels.encode(a, dst, b)
	}
	for i := range a.Len() {
		if a.IsNull(i) {
			dst[i] = 0
			b.add(i, "NULL")
			continue
		}
		switch typ.class {
		case classNumeric, classBool, classTemporal:
			k := map[class]table.Kind{classNumeric: table.Number, classBool: table.Bool, classTemporal: table.Date}[typ.class]
			v, want, err := table.Parse(k, a.Value(i))
			if err != nil {
				return &parseError{i, a.Value(i), want}, nil
			}
			// Out of range: v is ±Inf (flagged below) or ±0 after rounding.
			dst[i] = v
			if v-v != 0 {
				b.add(i, nonFinite(v))
			}
		case classString:
			if typ.labels == nil {
				return nil, fmt.Errorf("internal error: a string column that is not a target")
			}
			// Encoded below, for the whole batch under one lock.
		default:
			return nil, fmt.Errorf("internal error: text column of class %d", typ.class)
		}
	}
	return nil, nil
}
