package serve

import (
	"io"
	"math"
	"strconv"
)

// Where an answer column's values come from.
const (
	srcScore = iota // Scores[i*K+idx]
	srcClass        // the predicted class
	srcProba        // Proba[i*C+idx]
	srcStd          // Std[i*K+idx]
	srcLower        // Scores − z·Std of output idx
	srcUpper        // Scores + z·Std of output idx
)

type column struct {
	name string
	src  int
	idx  int
}

// plan is the answer's columns for one kind of request.
type plan []column

// planKey indexes the plans of the combinations of proba, std, interval.
func planKey(a Ask) int {
	k := 0
	if a.Proba {
		k |= 1
	}
	if a.Std {
		k |= 2
	}
	if a.Interval > 0 {
		k |= 4
	}
	return k
}

// makePlans returns the plans of the 8 combinations of proba, std and
// interval, named as Info.columns names them.
func makePlans(info *Info) [8]plan {
	var plans [8]plan
	for key := range 8 {
		ask := Ask{Proba: key&1 != 0, Std: key&2 != 0}
		if key&4 != 0 {
			ask.Interval = 0.5
		}
		names := info.columns(ask)
		p := make(plan, 0, len(names))
		c := 0
		next := func(src, idx int) {
			p = append(p, column{name: names[c], src: src, idx: idx})
			c++
		}
		if info.classifier() {
			next(srcClass, 0)
			if ask.Proba {
				for j := range info.ClassNames {
					next(srcProba, j)
				}
			} else {
				for j := range info.K {
					next(srcScore, j)
				}
			}
		} else {
			for j := range info.K {
				next(srcScore, j)
			}
		}
		if ask.Std {
			for j := range info.K {
				next(srcStd, j)
			}
		}
		if ask.Interval > 0 {
			for j := range info.K {
				next(srcLower, j)
				next(srcUpper, j)
			}
		}
		plans[key] = p
	}
	return plans
}

// value is column col's value at row i; z holds the intervals'
// multipliers, one per output.
func (it *item) value(info *Info, col column, z []float64, i int) float64 {
	k := info.K
	r := &it.res
	switch col.src {
	case srcScore:
		return r.Scores[i*k+col.idx]
	case srcProba:
		return r.Proba[i*len(info.ClassNames)+col.idx]
	case srcStd:
		return r.Std[i*k+col.idx]
	case srcLower:
		return r.Scores[i*k+col.idx] - z[col.idx]*r.Std[i*k+col.idx]
	case srcUpper:
		return r.Scores[i*k+col.idx] + z[col.idx]*r.Std[i*k+col.idx]
	}
	return 0
}

// writeJSON writes the answer
//
//	{"model":"ID","rows":N,"columns":{"y_pred":[…],"score":[…]}}
//
// (with "interval_method" after "rows" when it answers intervals)
// through it.out, flushed to w every 32 KiB.
func (it *item) writeJSON(w io.Writer, st *state, p plan, z []float64, method string) error {
	info := &st.info
	b := append(it.out[:0], `{"model":`...)
	b = appendJSONString(b, st.id)
	b = append(b, `,"rows":`...)
	b = strconv.AppendInt(b, int64(it.rows), 10)
	if method != "" {
		b = append(b, `,"interval_method":`...)
		b = appendJSONString(b, method)
	}
	if len(it.unseen) > 0 {
		b = append(b, `,"unseen":`...)
		b = appendUnseen(b, it.unseen)
	}
	b = append(b, `,"columns":{`...)
	for c, col := range p {
		if c > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, col.name)
		b = append(b, ":["...)
		for i := range it.rows {
			if i > 0 {
				b = append(b, ',')
			}
			if col.src == srcClass {
				name := info.ClassNames[it.res.Class[i]]
				if info.Labeled {
					b = appendJSONString(b, name)
				} else {
					b = append(b, name...)
				}
			} else {
				b = appendNumber(b, it.value(info, col, z, i))
			}
			if len(b) >= 32<<10 {
				if _, err := w.Write(b); err != nil {
					it.out = b[:0]
					return err
				}
				b = b[:0]
			}
		}
		b = append(b, ']')
	}
	b = append(b, "}}\n"...)
	_, err := w.Write(b)
	it.out = b[:0]
	return err
}

// appendNumber appends v in the shortest form that reads back as v; a
// NaN or infinite v, which JSON cannot hold, as null.
func appendNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
