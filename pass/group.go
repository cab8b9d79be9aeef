package pass

import (
	"slices"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// multiWorker is a Worker's state for GroupKernelProduct and GroupTargetProduct:
// per group its prepared centres and workspace, and the scratch of the
// chunk's split into training and scored rows.
type multiWorker struct {
	cs   []*kernel.Centers
	ws   []*kernel.Workspace
	held []int32
	// Training rows (xt, yt) and scored rows (xv, yv) of a chunk that is
	// split, encoded targets (v) and one group's scores (out).
	xt, yt, xv, yv, v, out []float64
	wt, wv                 []float64 // the weights of the training and the scored rows
}

// newMulti prepares a worker's centres (the job's shared ones when Tune
// set them) and workspaces.
func (j *Job) newMulti() *multiWorker {
	mw := &multiWorker{cs: make([]*kernel.Centers, len(j.Groups)), ws: make([]*kernel.Workspace, len(j.Groups))}
	for i, g := range j.Groups {
		c := (*kernel.Centers)(nil)
		if j.PreparedGroups != nil {
			c = j.PreparedGroups[i]
		}
		if c == nil {
			c = kernel.NewCenters(g.Kernel, j.Centers, j.M, j.D, j.Precision).WithInputMap(j.Mean, j.InvStd)
		}
		mw.cs[i], mw.ws[i] = c, c.NewWorkspace()
	}
	return mw
}

// addMulti is AddRows for GroupKernelProduct and GroupTargetProduct.
func (w *Worker) addMulti(dst []float64, first int64, x, y, rw []float64, rows int, placed []float64) ([]float64, error) {
	j, mw := w.job, w.multi
	d, k, kt := j.D, j.K, j.targetCols()
	if err := w.checkShape(dst, x, y, rows, true); err != nil {
		return placed, err
	}
	// The standardisation is the centres' input map: the chunk is read,
	// not rewritten.
	if err := stream.CheckFinite(x, w.features); err != nil {
		return placed, err
	}
	rowLen := j.RowLen()
	train := j.Kind == GroupTargetProduct || j.SumLen() > 0
	// The chunk's training rows (xt, yt: ntr) and scored rows (xv, yv: nv).
	xt, yt, wt, ntr := x, y, rw, rows
	xv, yv, wv, nv := x, y, rw, rows
	if rowLen == 0 {
		nv = 0
	}
	if h := j.Holdout; h != nil {
		mw.held = stream.HeldOutRows(mw.held[:0], first, rows, h.Fraction, h.Seed)
		nv = 0
		if rowLen > 0 {
			nv = len(mw.held)
		}
		if len(mw.held) > 0 {
			mw.xt, mw.yt, mw.xv, mw.yv = mw.xt[:0], mw.yt[:0], mw.xv[:0], mw.yv[:0]
			mw.wt, mw.wv = mw.wt[:0], mw.wv[:0]
			hi := 0
			for r := range rows {
				if hi < len(mw.held) && int(mw.held[hi]) == r {
					hi++
					if nv > 0 {
						mw.xv = append(mw.xv, x[r*d:(r+1)*d]...)
						if y != nil {
							mw.yv = append(mw.yv, y[r*kt:(r+1)*kt]...)
						}
						if rw != nil {
							mw.wv = append(mw.wv, rw[r])
						}
					}
					continue
				}
				if train {
					mw.xt = append(mw.xt, x[r*d:(r+1)*d]...)
					if y != nil {
						mw.yt = append(mw.yt, y[r*kt:(r+1)*kt]...)
					}
					if rw != nil {
						mw.wt = append(mw.wt, rw[r])
					}
				}
			}
			xt, yt, ntr = mw.xt, mw.yt, rows-len(mw.held)
			xv, yv = mw.xv, mw.yv
			if rw != nil {
				wt, wv = mw.wt, mw.wv
			}
		}
	}
	if j.Kind == GroupTargetProduct {
		k1 := k + 1
		mw.v = slices.Grow(mw.v[:0], ntr*k1)[:ntr*k1]
		if err := stream.CheckFinite(yt[:ntr*kt], w.targets); err != nil {
			return placed, err
		}
		if err := EncodeTargets(j.Task, j.Classes, w.targets, yt, ntr, kt, k, mw.v, k1); err != nil {
			return placed, err
		}
		weighRows(mw.v, wt, k1)
		sum := dst[len(j.Groups)*j.M*k1:]
		for r := range ntr {
			for c := range k {
				sum[c] += mw.v[r*k1+c]
			}
		}
		if wt != nil {
			for _, v := range wt {
				sum[k] += v
			}
		}
		for i := range j.Groups {
			mw.cs[i].KtKvAdd(mw.ws[i], dst[i*j.M*k1:(i+1)*j.M*k1], xt, ntr, nil, mw.v, k1)
		}
		return placed, nil
	}
	if j.ClassWeights != nil && ntr > 0 && j.SumLen() > 0 {
		var err error
		if wt, err = w.classWeigh(yt[:ntr*kt], wt, ntr); err != nil {
			return placed, err
		}
	}
	off := 0
	for i, g := range j.Groups {
		if g.U == nil {
			continue
		}
		n := j.M * g.Cols
		mw.cs[i].KtWKvAdd(mw.ws[i], dst[off:off+n], xt, ntr, g.U, wt, nil, g.Cols)
		off += n
	}
	if nv == 0 {
		return placed, nil
	}
	at := len(placed)
	placed = slices.Grow(placed, nv*rowLen)[:at+nv*rowLen]
	rowsOut := placed[at:]
	col := 0
	for i, g := range j.Groups {
		if g.Alpha == nil {
			continue
		}
		mw.out = slices.Grow(mw.out[:0], nv*g.Cols)[:nv*g.Cols]
		mw.cs[i].KvTo(mw.ws[i], mw.out, xv, nv, g.Alpha, g.Cols)
		for r := range nv {
			copy(rowsOut[r*rowLen+col:r*rowLen+col+g.Cols], mw.out[r*g.Cols:(r+1)*g.Cols])
		}
		col += g.Cols
	}
	for r := range nv {
		copy(rowsOut[r*rowLen+col:r*rowLen+col+kt], yv[r*kt:(r+1)*kt])
		if wv != nil {
			rowsOut[(r+1)*rowLen-1] = wv[r]
		}
	}
	return placed, nil
}
