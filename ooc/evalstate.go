package ooc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// evalMagic starts an Evaluator's binary encoding.
const evalMagic = "FKEV"

// MarshalBinary encodes what e accumulated — regression's compensated
// sums, or classification's rows (scores, classes, weights), 8K + 8
// bytes a row — so that parts of a data set scored apart (package beam's
// predict tasks) are merged (UnmarshalBinary, Merge) into the metrics of
// the whole.
func (e *Evaluator) MarshalBinary() ([]byte, error) {
	reg, err := e.reg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := append([]byte(evalMagic), 1)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(reg)))
	b = append(b, reg...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(e.truth)))
	for _, v := range e.scores {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	for _, c := range e.truth {
		b = binary.LittleEndian.AppendUint32(b, uint32(c))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(e.w)))
	for _, v := range e.w {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

// UnmarshalBinary restores into e, an Evaluator of the model that
// encoded b (NewEvaluator), what MarshalBinary encoded; what e held is
// replaced.
func (e *Evaluator) UnmarshalBinary(b []byte) error {
	bad := errors.New("ooc: not an encoded Evaluator of this model")
	if len(b) < 9 || string(b[:4]) != evalMagic || b[4] != 1 {
		return bad
	}
	nreg := int(binary.LittleEndian.Uint32(b[5:]))
	b = b[9:]
	if nreg > len(b) {
		return bad
	}
	if err := e.reg.UnmarshalBinary(b[:nreg]); err != nil {
		return err
	}
	b = b[nreg:]
	if len(b) < 8 {
		return bad
	}
	n := binary.LittleEndian.Uint64(b)
	b = b[8:]
	k := uint64(e.m.k)
	if n > uint64(len(b))/(8*k+4) {
		return bad
	}
	e.scores = make([]float64, n*k)
	for i := range e.scores {
		e.scores[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	b = b[8*n*k:]
	e.truth = make([]int, n)
	for i := range e.truth {
		c := binary.LittleEndian.Uint32(b[4*i:])
		if int(c) >= max(len(e.m.classes), 1) {
			return fmt.Errorf("ooc: an encoded Evaluator with class %d of %d", c, len(e.m.classes))
		}
		e.truth[i] = int(c)
	}
	b = b[4*n:]
	if len(b) < 8 {
		return bad
	}
	nw := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if (nw != 0 && nw != n) || uint64(len(b)) != 8*nw {
		return bad
	}
	e.w = nil
	for i := range nw {
		e.w = append(e.w, math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
	}
	if e.m.task == TaskRegression && n != 0 {
		return bad
	}
	return nil
}

// Merge adds what o (an Evaluator of the same model) accumulated to e,
// as if o's rows had been added after e's: classification's metrics are
// then exactly one Evaluator's over both sets of rows in that order;
// regression's differ only by the rounding of the merged sums. Both must
// have been fed by Add, or both by AddWeighted.
func (e *Evaluator) Merge(o *Evaluator) error {
	if o.m.task != e.m.task || o.m.k != e.m.k {
		return errors.New("ooc: merging the metrics of two models' predictions")
	}
	if len(e.truth) > 0 && len(o.truth) > 0 && (e.w == nil) != (o.w == nil) {
		return errors.New("ooc: merging weighted and unweighted metrics")
	}
	e.reg.Merge(&o.reg)
	e.scores = append(e.scores, o.scores...)
	e.truth = append(e.truth, o.truth...)
	e.w = append(e.w, o.w...)
	return nil
}
