package ooc

import (
	"cmp"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// logisticState is a PassWorker's state for the logistic passes: the
// chunk's targets as ±1 per output (rows × K: the class for binary, one
// against the rest for multiclass) and weights, the sums, and the tile
// hooks (made once per worker, so that a chunk allocates nothing).
type logisticState struct {
	k      int
	ys, rw []float64
	sh     []float64 // K: the Hessian weights' sums
	sw, sl float64
	tmp    []float64 // M × 2K: KtFKvAdd's output of a Hessian pass
	grad   func(s []float64, r0, n int)
	hess   func(s []float64, r0, n int)
}

// addLogistic is Add for PassLogisticGrad and PassLogisticHess.
func (w *PassWorker) addLogistic(dst, x, y, rw []float64, rows int) error {
	j := w.job
	k := j.K
	if w.lg == nil {
		w.lg = &logisticState{k: k, sh: make([]float64, k)}
		w.lg.grad, w.lg.hess = w.lg.gradTile, w.lg.hessTile
	}
	lg := w.lg
	w.v = slices.Grow(w.v[:0], rows*k)[:rows*k]
	err := stream.CheckFinite(y, w.targets)
	if err == nil {
		err = encodeTargets(j.Task, j.Classes, w.targets, y, rows, 1, k, w.v, k)
	}
	if err != nil {
		return cmp.Or(stream.CheckFinite(x, w.features), err)
	}
	if j.Task == TaskMulticlass {
		for i, v := range w.v {
			w.v[i] = 2*v - 1 // one against the rest: +1 for the row's class
		}
	}
	lg.ys, lg.rw = w.v, rw
	mk := j.M * k
	if j.Kind == PassLogisticGrad {
		clear(lg.sh)
		lg.sw, lg.sl = 0, 0
		w.c.KtFKvAdd(w.ws, dst[:mk], x, rows, j.U, k, lg.grad)
		addTo(dst[mk:mk+k], lg.sh)
		dst[mk+k] += lg.sw
		dst[mk+k+1] += lg.sl
		return w.nonFinite(x)
	}
	lg.tmp = slices.Grow(lg.tmp[:0], 2*mk)[:2*mk]
	clear(lg.tmp)
	w.c.KtFKvAdd(w.ws, lg.tmp, x, rows, j.U, 2*k, lg.hess)
	for i := range j.M {
		addTo(dst[i*k:(i+1)*k], lg.tmp[2*i*k:2*i*k+k])
	}
	return w.nonFinite(x)
}

// weight is row r's weight (1 without row weights).
func (lg *logisticState) weight(r int) float64 {
	if lg.rw == nil {
		return 1
	}
	return lg.rw[r]
}

// gradTile turns a tile's f = K α (n × K) into the gradient weights g,
// and sums the Hessian weights, the weights and the loss.
func (lg *logisticState) gradTile(s []float64, r0, n int) {
	k := lg.k
	for i := range n {
		wi := lg.weight(r0 + i)
		lg.sw += wi
		for c := range k {
			f, y := s[i*k+c], lg.ys[(r0+i)*k+c]
			p := sigmoid(-y * f) // σ(−y f); σ(f)σ(−f) = p(1 − p)
			s[i*k+c] = -wi * y * p
			lg.sh[c] += wi * p * (1 - p)
			lg.sl += wi * softplus(-y*f)
		}
	}
}

// hessTile turns a tile's [K u | K α] (n × 2K) into [H K u | 0].
func (lg *logisticState) hessTile(s []float64, r0, n int) {
	k := lg.k
	for i := range n {
		row := s[i*2*k : (i+1)*2*k]
		wi := lg.weight(r0 + i)
		for c := range k {
			p := sigmoid(row[k+c])
			row[c] *= wi * p * (1 - p)
			row[k+c] = 0
		}
	}
}
