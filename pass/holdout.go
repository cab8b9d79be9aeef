package pass

import (
	"errors"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// holdState is a Worker's scratch for a TargetProduct, KernelProduct or
// logistic pass with a Holdout: the chunk's training rows and the row of
// each in the chunk.
type holdState struct {
	held     []int32
	row      []int32
	x, y, rw []float64
}

// addTraining is AddRows for TargetProduct, KernelProduct and the
// logistic passes with a Holdout: it adds the chunk's training rows, in
// order, as the pass over the training side of stream.Holdout adds that
// side's chunk. An error names the row within the chunk.
func (w *Worker) addTraining(dst []float64, first int64, x, y, rw []float64, rows int) error {
	j := w.job
	if err := w.checkShape(dst, x, y, rows, true); err != nil {
		return err
	}
	if w.hold == nil {
		w.hold = &holdState{}
	}
	hs, d, kt := w.hold, j.D, j.targetCols()
	hs.held = stream.HeldOutRows(hs.held[:0], first, rows, j.Holdout.Fraction, j.Holdout.Seed)
	if !j.readsTargets() {
		y = nil
	}
	if len(hs.held) == 0 {
		return w.add(dst, x, y, rw, rows)
	}
	hs.x, hs.y, hs.rw, hs.row = hs.x[:0], hs.y[:0], hs.rw[:0], hs.row[:0]
	hi := 0
	for r := range rows {
		if hi < len(hs.held) && int(hs.held[hi]) == r {
			hi++
			continue
		}
		hs.row = append(hs.row, int32(r))
		hs.x = append(hs.x, x[r*d:(r+1)*d]...)
		if y != nil {
			hs.y = append(hs.y, y[r*kt:(r+1)*kt]...)
		}
		if rw != nil {
			hs.rw = append(hs.rw, rw[r])
		}
	}
	if len(hs.row) == 0 {
		return nil
	}
	ty, trw := []float64(nil), []float64(nil)
	if y != nil {
		ty = hs.y
	}
	if rw != nil {
		trw = hs.rw
	}
	return hs.inChunk(w.add(dst, hs.x, ty, trw, len(hs.row)))
}

// inChunk moves the row an error of a pass over the training rows names
// to its row in the chunk.
func (hs *holdState) inChunk(err error) error {
	var ve *stream.ValueError
	var ce *classError
	switch {
	case errors.As(err, &ve) && ve.Row >= 0 && ve.Row < len(hs.row):
		ve.Row = int(hs.row[ve.Row])
	case errors.As(err, &ce) && ce.row >= 0 && ce.row < len(hs.row):
		ce.row = int(hs.row[ce.row])
	}
	return err
}

// classError is a target value that is not one of the classes, in row
// row of the chunk.
type classError struct {
	target  string
	value   float64
	row     int
	classes []float64
}

func (e *classError) Error() string {
	return fmt.Sprintf("target %q: value %v in row %d of the chunk is not one of the classes %v", e.target, e.value, e.row, e.classes)
}
