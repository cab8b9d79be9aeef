package ooc

import (
	"cmp"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// logisticState is a PassWorker's state for the logistic passes: the
// chunk's encoded targets and weights, the sums, and the tile hooks (made
// once per worker, so that a chunk allocates nothing).
type logisticState struct {
	ys, rw     []float64
	sh, sw, sl float64
	tmp        []float64 // M × 2: KtFKvAdd's output of a Hessian pass
	grad, hess func(s []float64, r0, n int)
}

// addLogistic is Add for PassLogisticGrad and PassLogisticHess.
func (w *PassWorker) addLogistic(dst, x, y, rw []float64, rows int) error {
	j := w.job
	if w.lg == nil {
		w.lg = &logisticState{}
		w.lg.grad, w.lg.hess = w.lg.gradTile, w.lg.hessTile
	}
	lg := w.lg
	w.v = slices.Grow(w.v[:0], rows)[:rows]
	err := stream.CheckFinite(y, w.targets)
	if err == nil {
		err = encodeTargets(j.Task, j.Classes, w.targets, y, rows, 1, 1, w.v, 1)
	}
	if err != nil {
		return cmp.Or(stream.CheckFinite(x, w.features), err)
	}
	lg.ys, lg.rw = w.v, rw
	if j.Kind == PassLogisticGrad {
		lg.sh, lg.sw, lg.sl = 0, 0, 0
		w.c.KtFKvAdd(w.ws, dst[:j.M], x, rows, j.U, 1, lg.grad)
		dst[j.M] += lg.sh
		dst[j.M+1] += lg.sw
		dst[j.M+2] += lg.sl
		return w.nonFinite(x)
	}
	lg.tmp = slices.Grow(lg.tmp[:0], 2*j.M)[:2*j.M]
	clear(lg.tmp)
	w.c.KtFKvAdd(w.ws, lg.tmp, x, rows, j.U, 2, lg.hess)
	for i := range j.M {
		dst[i] += lg.tmp[2*i]
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

// gradTile turns a tile's f = K α into the gradient weights g, and sums
// the Hessian weights, the weights and the loss.
func (lg *logisticState) gradTile(s []float64, r0, n int) {
	for i := range n {
		f, y, wi := s[i], lg.ys[r0+i], lg.weight(r0+i)
		p := sigmoid(-y * f) // σ(−y f); σ(f)σ(−f) = p(1 − p)
		s[i] = -wi * y * p
		lg.sh += wi * p * (1 - p)
		lg.sw += wi
		lg.sl += wi * softplus(-y*f)
	}
}

// hessTile turns a tile's [K u | K α] into [H K u | 0].
func (lg *logisticState) hessTile(s []float64, r0, n int) {
	for i := range n {
		p := sigmoid(s[2*i+1])
		s[2*i] *= lg.weight(r0+i) * p * (1 - p)
		s[2*i+1] = 0
	}
}
