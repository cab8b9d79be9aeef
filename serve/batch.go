package serve

import (
	"runtime"
	"slices"
	"time"
)

// worker runs kernel blocks: it takes a request from the queue, gathers
// the requests waiting behind it (up to Options.MaxBatch rows, waiting
// up to Options.MaxDelay for more) that use the same model and ask the
// same, predicts their rows as one block and hands each its own
// predictions. A request of MaxBatch rows or more runs alone.
func (h *Handler) worker() {
	defer h.workers.Done()
	maxBatch, delay := h.opt.MaxBatch, h.opt.MaxDelay
	var (
		carry *item // taken from the queue but not fitting the last block
		batch []*item
		x     []float64
		res   Result
		timer *time.Timer
	)
	if delay > 0 {
		timer = time.NewTimer(time.Hour)
		timer.Stop()
	}
	for {
		first := carry
		carry = nil
		if first == nil {
			var ok bool
			if first, ok = <-h.queue; !ok {
				return
			}
		}
		batch = append(batch[:0], first)
		rows := first.rows
		// add puts it in the block, or keeps it for the next one.
		add := func(it *item) bool {
			if it.st != first.st || it.std != first.std || rows+it.rows > maxBatch {
				carry = it
				return false
			}
			batch = append(batch, it)
			rows += it.rows
			return true
		}
		waiting := false
		if rows < maxBatch {
			// Let the goroutines that are ready run first: handlers
			// decoding requests queue them now, and the block gathers
			// them. Without it, on one CPU, each send wakes this worker
			// at once and every block holds one request.
			runtime.Gosched()
		}
	gather:
		for rows < maxBatch {
			select {
			case it, ok := <-h.queue:
				if !ok || !add(it) {
					break gather
				}
				continue
			default:
			}
			if delay <= 0 {
				break
			}
			if !waiting {
				timer.Reset(delay)
				waiting = true
			}
			select {
			case it, ok := <-h.queue:
				if !ok || !add(it) {
					break gather
				}
			case <-timer.C:
				waiting = false
				break gather
			}
		}
		if waiting && !timer.Stop() {
			<-timer.C
		}
		x = h.run(batch, rows, x, &res)
	}
}

// run predicts the block of requests batch (rows rows in all) and wakes
// each; x and res are the worker's scratch for a block of several.
func (h *Handler) run(batch []*item, rows int, x []float64, res *Result) []float64 {
	st := batch[0].st
	sc := st.getScorer()
	h.met.batchRows.Observe(float64(rows))
	h.met.batchReqs.Observe(float64(len(batch)))
	if len(batch) == 1 {
		it := batch[0]
		it.err = sc.Score(&it.res, it.x, it.rows, it.std)
		st.putScorer(sc)
		it.done <- struct{}{}
		return x
	}
	d, k, c := len(st.info.Features), st.info.K, len(st.info.ClassNames)
	x = slices.Grow(x[:0], rows*d)
	for _, it := range batch {
		x = append(x, it.x...)
	}
	err := sc.Score(res, x, rows, batch[0].std)
	st.putScorer(sc)
	lo := 0
	for _, it := range batch {
		hi := lo + it.rows
		it.err = err
		if err == nil {
			it.res.Scores = append(it.res.Scores[:0], res.Scores[lo*k:hi*k]...)
			it.res.Class = it.res.Class[:0]
			if len(res.Class) > 0 {
				it.res.Class = append(it.res.Class, res.Class[lo:hi]...)
			}
			it.res.Proba = it.res.Proba[:0]
			if len(res.Proba) > 0 {
				it.res.Proba = append(it.res.Proba, res.Proba[lo*c:hi*c]...)
			}
			it.res.Std = it.res.Std[:0]
			if len(res.Std) > 0 {
				it.res.Std = append(it.res.Std, res.Std[lo*k:hi*k]...)
			}
		}
		lo = hi
		it.done <- struct{}{}
	}
	return x
}
