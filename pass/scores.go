package pass

import (
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// scoresState is a Worker's scratch for Scores: the coefficients laid out
// for the kernel, the chunk's scored rows when it holds rows out (with
// their rows in the chunk), and their scores.
type scoresState struct {
	alpha      *kernel.Weights
	held       []int32
	xs, ys, ws []float64
	out        []float64
}

// addScores is AddRows for Scores: it appends, for each row the job
// scores, K_b(x, C)·Alpha, the row's targets and its weight to placed.
// A non-finite feature of a scored row is an error naming its row in the
// chunk; the rows it does not score are not read.
func (w *Worker) addScores(dst []float64, first int64, x, y, rw []float64, rows int, placed []float64) ([]float64, error) {
	j := w.job
	if err := w.checkShape(dst, x, y, rows, true); err != nil {
		return placed, err
	}
	if w.scores == nil {
		w.scores = &scoresState{alpha: w.c.NewWeights(j.Alpha, j.K)}
	}
	ss, d, k, kt := w.scores, j.D, j.K, j.targetCols()
	xs, ys, ws, n := x, y, rw, rows
	if h := j.Holdout; h != nil {
		ss.held = stream.HeldOutRows(ss.held[:0], first, rows, h.Fraction, h.Seed)
		ss.xs, ss.ys, ss.ws = ss.xs[:0], ss.ys[:0], ss.ws[:0]
		for _, r := range ss.held {
			ss.xs = append(ss.xs, x[int(r)*d:(int(r)+1)*d]...)
			ss.ys = append(ss.ys, y[int(r)*kt:(int(r)+1)*kt]...)
			if rw != nil {
				ss.ws = append(ss.ws, rw[r])
			}
		}
		xs, ys, n = ss.xs, ss.ys, len(ss.held)
		if rw != nil {
			ws = ss.ws
		}
	}
	if n == 0 {
		return placed, nil
	}
	ss.out = slices.Grow(ss.out[:0], n*k)[:n*k]
	w.c.KvWeightsTo(w.ws, ss.out, xs, n, ss.alpha)
	if r := w.ws.NonFinite(); r >= 0 {
		err := stream.CheckFinite(xs[r*d:(r+1)*d], w.features).(*stream.ValueError)
		if j.Holdout != nil {
			r = int(ss.held[r])
		}
		return placed, err.At(r)
	}
	rowLen := j.RowLen()
	at := len(placed)
	placed = slices.Grow(placed, n*rowLen)[:at+n*rowLen]
	for r, row := 0, placed[at:]; r < n; r, row = r+1, row[rowLen:] {
		copy(row[:k], ss.out[r*k:(r+1)*k])
		copy(row[k:k+kt], ys[r*kt:(r+1)*kt])
		if ws != nil {
			row[rowLen-1] = ws[r]
		}
	}
	return placed, nil
}
