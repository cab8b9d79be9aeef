package pass

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/internal/loss"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// logisticState is a Worker's state for the logistic passes: the
// chunk's targets as ±1 per output (rows × K: the class for binary, one
// against the rest for multiclass) and weights, the current group's
// columns and sums, and the tile hooks (made once per worker, so that a
// chunk allocates nothing).
type logisticState struct {
	k      int
	ys, rw []float64
	cols   int       // the current group's columns (a multiple of k)
	sh, sl []float64 // the current group's Hessian weights' and losses' sums, per column
	line   []float64 // the job's Line
	sline  []float64 // the current group's losses' sums at each length of line, len(line) × cols
	tmp    []float64 // M × 2·Cols: KtFKvAdd's output of a Hessian pass or a line search
	grad   func(s []float64, r0, n int)
	gline  func(s []float64, r0, n int)
	hess   func(s []float64, r0, n int)
}

// addLogistic is Add for LogisticGradient and LogisticHessianProduct.
func (w *Worker) addLogistic(dst, x, y, rw []float64, rows int) error {
	j, mw := w.job, w.multi
	k := j.K
	if w.lg == nil {
		w.lg = &logisticState{k: k}
		w.lg.grad, w.lg.gline, w.lg.hess = w.lg.gradTile, w.lg.lineTile, w.lg.hessTile
	}
	lg := w.lg
	w.v = slices.Grow(w.v[:0], rows*k)[:rows*k]
	err := stream.CheckFinite(y, w.targets)
	if err == nil {
		err = EncodeTargets(j.Task, j.Classes, w.targets, y, rows, 1, k, w.v, k)
	}
	if err == nil && j.ClassWeights != nil {
		rw, err = w.classWeigh(y, rw, rows)
	}
	if err != nil {
		return cmp.Or(stream.CheckFinite(x, w.features), err)
	}
	if j.Task == model.TaskMulticlass {
		for i, v := range w.v {
			w.v[i] = 2*v - 1 // one against the rest: +1 for the row's class
		}
	}
	lg.ys, lg.rw, lg.line = w.v, rw, j.Line
	nl := len(j.Line)
	off := 0
	for i, g := range j.Groups {
		c, ws := mw.cs[i], mw.ws[i]
		mc := j.M * g.Cols
		lg.cols = g.Cols
		if j.Kind == LogisticGradient && nl == 0 {
			lg.sh, lg.sl = dst[off+mc:off+mc+g.Cols], dst[off+mc+g.Cols:off+mc+2*g.Cols]
			c.KtFKvAdd(ws, dst[off:off+mc], x, rows, g.U, g.Cols, lg.grad)
			off += mc + 2*g.Cols
		} else if j.Kind == LogisticGradient {
			lg.sh, lg.sl = dst[off+mc:off+mc+g.Cols], dst[off+mc+g.Cols:off+mc+2*g.Cols]
			lg.sline = dst[off+mc+2*g.Cols : off+mc+(2+nl)*g.Cols]
			lg.tmp = slices.Grow(lg.tmp[:0], 2*mc)[:2*mc]
			clear(lg.tmp)
			c.KtFKvAdd(ws, lg.tmp, x, rows, g.U, 2*g.Cols, lg.gline)
			for r := range j.M {
				addTo(dst[off+r*g.Cols:off+(r+1)*g.Cols], lg.tmp[2*r*g.Cols:2*r*g.Cols+g.Cols])
			}
			off += mc + (2+nl)*g.Cols
		} else {
			lg.tmp = slices.Grow(lg.tmp[:0], 2*mc)[:2*mc]
			clear(lg.tmp)
			c.KtFKvAdd(ws, lg.tmp, x, rows, g.U, 2*g.Cols, lg.hess)
			for r := range j.M {
				addTo(dst[off+r*g.Cols:off+(r+1)*g.Cols], lg.tmp[2*r*g.Cols:2*r*g.Cols+g.Cols])
			}
			off += mc
		}
		if err := w.nonFiniteIn(ws, x); err != nil {
			return err
		}
	}
	if j.Kind == LogisticGradient {
		if rw == nil {
			dst[off] += float64(rows)
		} else {
			for _, v := range rw {
				dst[off] += v
			}
		}
	}
	return nil
}

// tile is the loss's view of a tile of rows r0, r0+1, …, r0+n−1 of
// the chunk: their scores f (row i's at f[i·stride:], the current
// group's columns), ±1 targets and weights.
func (lg *logisticState) tile(f []float64, r0, n, stride int) loss.Tile {
	t := loss.Tile{F: f, N: n, Cols: lg.cols, Stride: stride, Y: lg.ys[r0*lg.k:], K: lg.k}
	if lg.rw != nil {
		t.W = lg.rw[r0:]
	}
	return t
}

// gradTile turns a tile's f = K U (n × Cols) into the gradient weights
// g, and sums the Hessian weights and the loss per column.
func (lg *logisticState) gradTile(s []float64, r0, n int) {
	loss.Logistic.Grad(lg.tile(s, r0, n, lg.cols), lg.sh, lg.sl)
}

// lineTile is gradTile at α + Δ for a tile's [K α | K Δ] (n × 2·Cols),
// which it turns into [G | 0], and it also sums the loss per column at
// α + tΔ for each length t of line: the scores are linear in t.
func (lg *logisticState) lineTile(s []float64, r0, n int) {
	nc := lg.cols
	t := lg.tile(s, r0, n, 2*nc)
	loss.Logistic.Values(t, s[nc:], lg.line, lg.sline)
	for i := range n {
		row := s[i*2*nc : (i+1)*2*nc]
		for c := range nc {
			row[c], row[nc+c] = row[c]+row[nc+c], 0
		}
	}
	loss.Logistic.Grad(t, lg.sh, lg.sl)
}

// hessTile turns a tile's [K u | K α] (n × 2·Cols) into [H K u | 0].
func (lg *logisticState) hessTile(s []float64, r0, n int) {
	nc := lg.cols
	loss.Logistic.HessMul(lg.tile(s[nc:], r0, n, 2*nc), s)
	for i := range n {
		clear(s[i*2*nc+nc : (i+1)*2*nc])
	}
}

// scoreState is a Worker's scratch for the rows a LogisticGradient
// scores: which rows of the chunk, their features, and one group's
// scores.
type scoreState struct {
	held   []int32
	x, out []float64
}

// scoreLogistic appends the values of the rows a LogisticGradient with
// ScoreRows scores (the chunk's held-out rows with a Holdout, else every
// row) to placed: per row, K_g U_g's columns for every group, the
// target values as read, then the weight.
func (w *Worker) scoreLogistic(first int64, x, y, rw []float64, rows int, placed []float64) ([]float64, error) {
	j, mw := w.job, w.multi
	if rows < 0 || len(x) != rows*j.D || len(y) != rows*j.targetCols() {
		return placed, fmt.Errorf("pass: worker: %d features and %d targets for %d rows", len(x), len(y), rows)
	}
	if err := stream.CheckFinite(x, w.features); err != nil {
		return placed, err
	}
	if w.score == nil {
		w.score = &scoreState{}
	}
	ss, d, kt := w.score, j.D, j.targetCols()
	xv, nv := x, rows
	var idx []int32
	if h := j.Holdout; h != nil {
		ss.held = stream.HeldOutRows(ss.held[:0], first, rows, h.Fraction, h.Seed)
		idx, nv = ss.held, len(ss.held)
		ss.x = ss.x[:0]
		for _, r := range idx {
			ss.x = append(ss.x, x[int(r)*d:(int(r)+1)*d]...)
		}
		xv = ss.x
	}
	if nv == 0 {
		return placed, nil
	}
	row := func(i int) int {
		if idx != nil {
			return int(idx[i])
		}
		return i
	}
	rowLen := j.RowLen()
	at := len(placed)
	placed = slices.Grow(placed, nv*rowLen)[:at+nv*rowLen]
	out := placed[at:]
	col := 0
	for i, g := range j.Groups {
		uc := len(g.U) / j.M
		ss.out = slices.Grow(ss.out[:0], nv*uc)[:nv*uc]
		mw.cs[i].KvTo(mw.ws[i], ss.out, xv, nv, g.U, uc)
		for r := range nv {
			copy(out[r*rowLen+col:r*rowLen+col+uc], ss.out[r*uc:(r+1)*uc])
		}
		col += uc
	}
	for r := range nv {
		src := row(r)
		copy(out[r*rowLen+col:r*rowLen+col+kt], y[src*kt:(src+1)*kt])
		if j.Weight != "" {
			out[(r+1)*rowLen-1] = rw[src]
		}
	}
	return placed, nil
}
