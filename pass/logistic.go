package pass

import (
	"cmp"
	"math"
	"slices"

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

// weight is row r's weight (1 without row weights).
func (lg *logisticState) weight(r int) float64 {
	if lg.rw == nil {
		return 1
	}
	return lg.rw[r]
}

// gradTile turns a tile's f = K U (n × Cols) into the gradient weights
// g, and sums the Hessian weights and the loss per column.
func (lg *logisticState) gradTile(s []float64, r0, n int) {
	k, nc := lg.k, lg.cols
	for i := range n {
		wi := lg.weight(r0 + i)
		ys := lg.ys[(r0+i)*k : (r0+i+1)*k]
		row := s[i*nc : (i+1)*nc]
		for c, f := range row {
			y := ys[c%k]
			p := sigmoid(-y * f) // σ(−y f); σ(f)σ(−f) = p(1 − p)
			row[c] = -wi * y * p
			lg.sh[c] += wi * p * (1 - p)
			lg.sl[c] += wi * softplus(-y*f)
		}
	}
}

// lineTile is gradTile at α + Δ for a tile's [K α | K Δ] (n × 2·Cols),
// which it turns into [G | 0], and it also sums the loss per column at
// α + tΔ for each length t of line: the scores are linear in t.
func (lg *logisticState) lineTile(s []float64, r0, n int) {
	k, nc := lg.k, lg.cols
	for i := range n {
		wi := lg.weight(r0 + i)
		ys := lg.ys[(r0+i)*k : (r0+i+1)*k]
		row := s[i*2*nc : (i+1)*2*nc]
		for c := range nc {
			y := ys[c%k]
			f0, d := row[c], row[nc+c]
			f := f0 + d
			p := sigmoid(-y * f)
			row[c], row[nc+c] = -wi*y*p, 0
			lg.sh[c] += wi * p * (1 - p)
			lg.sl[c] += wi * softplus(-y*f)
			for l, t := range lg.line {
				lg.sline[l*nc+c] += wi * softplus(-y*(f0+t*d))
			}
		}
	}
}

// hessTile turns a tile's [K u | K α] (n × 2·Cols) into [H K u | 0].
func (lg *logisticState) hessTile(s []float64, r0, n int) {
	nc := lg.cols
	for i := range n {
		row := s[i*2*nc : (i+1)*2*nc]
		wi := lg.weight(r0 + i)
		for c := range nc {
			p := sigmoid(row[nc+c])
			row[c] *= wi * p * (1 - p)
			row[nc+c] = 0
		}
	}
}

// sigmoid is 1/(1 + e^(−x)), without overflow.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softplus is log(1 + e^z), without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}
