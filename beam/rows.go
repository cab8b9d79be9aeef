package beam

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/stream"
)

// kindRows is the task kind of Executor.ReadRows.
const kindRows = "rows"

// rowsJob is ReadRows's job: the rows idx (ascending) of the store, read
// by Parts tasks, task k over range k of the store's chunks. Each row
// gives its features, then with Targets its targets and with Weights its
// weight (ReadRowsWithTargets).
type rowsJob struct {
	Store   string  `json:"store"`
	StoreID string  `json:"store_id"`
	Idx     []int64 `json:"idx"`
	Parts   int     `json:"parts"`
	Targets bool    `json:"targets,omitempty"`
	Weights bool    `json:"weights,omitempty"`
}

func init() {
	taskKinds[kindRows] = func(ctx context.Context, b []byte) (func(context.Context, int) ([]byte, error), error) {
		var j rowsJob
		if err := json.Unmarshal(b, &j); err != nil {
			return nil, err
		}
		r, err := cachedStore(ctx, j.Store, j.StoreID)
		if err != nil {
			return nil, err
		}
		if j.StoreID != "" && r.StoreID() != j.StoreID {
			return nil, fmt.Errorf("store %s has id %s, the driver read %s (a different store at the same location?)", j.Store, r.StoreID(), j.StoreID)
		}
		if !slices.IsSorted(j.Idx) {
			return nil, fmt.Errorf("rows not in ascending order")
		}
		return func(ctx context.Context, k int) ([]byte, error) {
			lo, hi := rangeBounds(k, j.Parts, r.NumChunks())
			var first int64
			for c := range lo {
				first += int64(r.ChunkRows(c))
			}
			d, kt := r.Dim(), r.NumTargets()
			p, _ := slices.BinarySearch(j.Idx, first)
			var out []byte
			var x, y, w []float64
			put := func(v []float64) {
				for _, v := range v {
					out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
				}
			}
			for c := lo; c < hi && p < len(j.Idx); c++ {
				n := r.ChunkRows(c)
				if j.Idx[p] >= first+int64(n) {
					first += int64(n)
					continue
				}
				x, y = slices.Grow(x[:0], n*d)[:n*d], slices.Grow(y[:0], n*kt)[:n*kt]
				if err := r.ReadChunk(ctx, c, x, y); err != nil {
					return nil, err
				}
				if j.Weights {
					w = slices.Grow(w[:0], n)[:n]
					if err := r.ReadWeights(ctx, c, w); err != nil {
						return nil, err
					}
				}
				for ; p < len(j.Idx) && j.Idx[p] < first+int64(n); p++ {
					row := int(j.Idx[p] - first)
					put(x[row*d : (row+1)*d])
					if j.Targets {
						put(y[row*kt : (row+1)*kt])
					}
					if j.Weights {
						put(w[row : row+1])
					}
				}
				first += int64(n)
			}
			return out, nil
		}, nil
	}
}

// ReadRows reads the features of rows idx (ascending) of the store as one
// Beam job of P tasks, task k reading the drawn rows of chunk range k:
// ooc.Fit draws its centres through it (pass.RowReader), so this process
// reads only the store's manifest and index. src must hold every row of
// the store.
func (e *Executor) ReadRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error) {
	x, _, _, err := e.readRows(ctx, src, idx, false)
	return x, err
}

// ReadRowsWithTargets is ReadRows that also returns the rows' targets
// (len(idx) × the store's target columns) and, when the store has a
// weight column, their weights (else nil), read in the same job:
// ooc.FitTuned draws its search's row subsample through it
// (pass.TargetRowReader).
func (e *Executor) ReadRowsWithTargets(ctx context.Context, src stream.Source, idx []int64) (x, y, w []float64, err error) {
	return e.readRows(ctx, src, idx, true)
}

// readRows is ReadRows, and with targets ReadRowsWithTargets.
func (e *Executor) readRows(ctx context.Context, src stream.Source, idx []int64, targets bool) (x, y, w []float64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := stream.Rows(src); n != e.r.Rows() || src.Dim() != e.r.Dim() {
		return nil, nil, nil, fmt.Errorf("beam: the source has %d rows × %d features, the store %s %d × %d: a Beam fit runs over a whole store",
			n, src.Dim(), e.opts.Store, e.r.Rows(), e.r.Dim())
	}
	if !slices.IsSorted(idx) || (len(idx) > 0 && (idx[0] < 0 || idx[len(idx)-1] >= e.r.Rows())) {
		return nil, nil, nil, fmt.Errorf("beam: rows to read out of order or out of range")
	}
	j := rowsJob{Store: e.opts.Store, StoreID: e.r.StoreID(), Idx: idx, Parts: e.parts}
	d, kt, weights := e.r.Dim(), 0, 0
	if targets {
		j.Targets, j.Weights = true, stream.WeightColumn(e.r) != ""
		kt = e.r.NumTargets()
		if j.Weights {
			weights = 1
		}
	}
	job, err := json.Marshal(j)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := runTasks(ctx, e.opts, kindRows, job, e.parts)
	if err != nil {
		return nil, nil, nil, err
	}
	stride := d + kt + weights
	vals := 0
	for _, b := range res {
		if len(b)%(8*stride) != 0 {
			return nil, nil, nil, fmt.Errorf("beam: a rows task returned %d bytes for rows of %d values", len(b), stride)
		}
		vals += len(b) / 8
	}
	if vals != len(idx)*stride {
		return nil, nil, nil, fmt.Errorf("beam: the rows job read %d values for %d rows of %d values", vals, len(idx), stride)
	}
	x = make([]float64, 0, len(idx)*d)
	if targets {
		y = make([]float64, 0, len(idx)*kt)
		if j.Weights {
			w = make([]float64, 0, len(idx))
		}
	}
	for _, b := range res {
		for o := 0; o < len(b); o += 8 * stride {
			for i := range stride {
				v := math.Float64frombits(binary.LittleEndian.Uint64(b[o+8*i:]))
				switch {
				case i < d:
					x = append(x, v)
				case i < d+kt:
					y = append(y, v)
				default:
					w = append(w, v)
				}
			}
		}
	}
	return x, y, w, nil
}
