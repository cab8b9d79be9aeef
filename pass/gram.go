package pass

import (
	"math"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// gramState is a Worker's scratch for Gram: a tile of the kernel block
// and the chunk's training rows (with their rows in the chunk) when it
// holds rows out.
type gramState struct {
	blk    []float64 // GramTile × M
	held   []int32
	xt, wt []float64
	row    []int32 // the chunk row of each training row
}

// addGram is AddRows for Gram: K_bᵀ W K_b over the chunk's training
// rows, tile by tile, added to dst (M × M).
func (w *Worker) addGram(dst []float64, first int64, x, rw []float64, rows int) error {
	j := w.job
	if err := w.checkShape(dst, x, nil, rows, false); err != nil {
		return err
	}
	if w.gram == nil {
		w.gram = &gramState{blk: make([]float64, GramTile*j.M)}
	}
	gs, d, m := w.gram, j.D, j.M
	gs.row = gs.row[:0]
	if h := j.Holdout; h != nil {
		gs.held = stream.HeldOutRows(gs.held[:0], first, rows, h.Fraction, h.Seed)
		if len(gs.held) > 0 {
			gs.xt, gs.wt = gs.xt[:0], gs.wt[:0]
			hi := 0
			for r := range rows {
				if hi < len(gs.held) && int(gs.held[hi]) == r {
					hi++
					continue
				}
				gs.xt = append(gs.xt, x[r*d:(r+1)*d]...)
				gs.row = append(gs.row, int32(r))
				if rw != nil {
					gs.wt = append(gs.wt, rw[r])
				}
			}
			x, rows = gs.xt, len(gs.row)
			if rw != nil {
				rw = gs.wt
			}
		}
	}
	for r0 := 0; r0 < rows; r0 += GramTile {
		n := min(GramTile, rows-r0)
		w.c.BlockTo(w.ws, gs.blk, x[r0*d:(r0+n)*d], n)
		if r := w.ws.NonFinite(); r >= 0 {
			at := r0 + r
			err := stream.CheckFinite(x[at*d:(at+1)*d], w.features).(*stream.ValueError)
			if len(gs.row) > 0 {
				at = int(gs.row[at])
			}
			return err.At(at)
		}
		if rw != nil { // row i of K_b times √wᵢ: K_bᵀ W K_b
			for i, wi := range rw[r0 : r0+n] {
				sw := math.Sqrt(wi)
				for c := range gs.blk[i*m : (i+1)*m] {
					gs.blk[i*m+c] *= sw
				}
			}
		}
		dense.Gemm(true, false, m, m, n, 1, gs.blk, m, gs.blk, m, dst, m, 1)
	}
	return nil
}
