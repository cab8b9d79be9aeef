package stream

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// parentReader decodes whole parent chunks for the sources that present
// parts of them (Subdivide, Holdout), and shares each decoded parent
// between the reads of its parts: a parent cut into p parts is decoded
// once per pass, not p times.
//
// A decoded parent stays cached until its parts have been read (reads
// count them down) or until room is needed: cached parents and spare
// buffers together never exceed two per goroutine that has read at once
// (the most seen), so memory stays within two parent buffers per reading
// goroutine (ScratchBytes) however the parts are read. A goroutine that finds its parent being decoded by another one
// decodes the next parent meanwhile (when there is room), so that on
// several cores the decoding of consecutive parents overlaps instead of
// serialising.
type parentReader struct {
	mu      sync.Mutex
	entries []*parentBuf // cached or in use, oldest first
	free    [][]float64  // buffers not in use
	readers int          // goroutines inside read
	peak    int          // most goroutines ever inside read at once
}

// parentBuf is one decoded (or being decoded) parent chunk.
type parentBuf struct {
	parent int
	withY  bool
	buf    []float64     // features, then targets if withY
	ready  chan struct{} // closed once decoded (err set on failure)
	err    error
	users  int // goroutines reading it or decoding it
	left   int // reads of its parts before it is dropped
	gone   bool
}

// read decodes chunk c of src (targets too if withY), or finds it
// decoded, and passes the rows and targets to use, which must not keep
// them. parts is how many reads of c a full pass makes; next, if not
// nil, names the parent to decode ahead and its parts (ok false: none).
func (p *parentReader) read(ctx context.Context, src Source, c, parts int, withY bool,
	next func(c int) (nc, nparts int, ok bool), use func(px, py []float64)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	p.readers++
	p.peak = max(p.peak, p.readers)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.readers--
		p.trim()
		p.mu.Unlock()
	}()
	for {
		e, owner := p.acquire(src, c, parts, withY)
		if owner {
			p.decode(ctx, src, e)
		} else if next != nil {
			select {
			case <-e.ready:
			default:
				// Another goroutine decodes c: decode the next parent
				// meanwhile rather than wait idle.
				if nc, np, ok := next(c); ok {
					if a := p.claimAhead(src, nc, np, withY); a != nil {
						p.decode(ctx, src, a)
						p.release(a, false)
					}
				}
			}
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			p.release(e, false)
			return ctx.Err()
		}
		if e.err != nil {
			p.release(e, false)
			if ctx.Err() == nil && isContextErr(e.err) {
				continue // another reader's context was cancelled: decode again
			}
			return e.err
		}
		d, k := src.Dim(), src.NumTargets()
		rows := src.ChunkRows(c)
		px := e.buf[:rows*d]
		var py []float64
		if withY {
			py = e.buf[rows*d : rows*(d+k)]
		}
		use(px, py)
		p.release(e, true)
		return nil
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// acquire returns the entry of parent c, held (users + 1); owner says the
// caller created it and must decode it.
func (p *parentReader) acquire(src Source, c, parts int, withY bool) (*parentBuf, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.entries {
		if e.parent == c && (e.withY || !withY) && !e.failed() {
			e.users++
			return e, false
		}
	}
	e := p.newEntry(src, c, parts, withY)
	e.users = 1
	return e, true
}

// claimAhead creates a held entry for parent c to decode ahead, or returns
// nil if c is cached or being decoded, or if there is no room.
func (p *parentReader) claimAhead(src Source, c, parts int, withY bool) *parentBuf {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.entries {
		if e.parent == c && (e.withY || !withY) && !e.failed() {
			return nil
		}
	}
	p.trim()
	if len(p.entries) >= p.limit() {
		return nil
	}
	e := p.newEntry(src, c, parts, withY)
	e.users = 1
	return e
}

// failed reports whether e's decoding ended in an error (callers hold mu).
func (e *parentBuf) failed() bool {
	select {
	case <-e.ready:
		return e.err != nil
	default:
		return false
	}
}

// newEntry adds an entry for parent c with a buffer (callers hold mu).
func (p *parentReader) newEntry(src Source, c, parts int, withY bool) *parentBuf {
	rows := src.ChunkRows(c)
	need := rows * src.Dim()
	if withY {
		need += rows * src.NumTargets()
	}
	var buf []float64
	if n := len(p.free); n > 0 {
		buf = p.free[n-1]
		p.free = p.free[:n-1]
	}
	if cap(buf) < need {
		buf = make([]float64, need)
	}
	e := &parentBuf{parent: c, withY: withY, buf: buf[:need], ready: make(chan struct{}), left: max(parts, 1)}
	p.entries = append(p.entries, e)
	p.trim()
	return e
}

// decode reads e's parent into its buffer and marks it ready.
func (p *parentReader) decode(ctx context.Context, src Source, e *parentBuf) {
	rows := src.ChunkRows(e.parent)
	d := src.Dim()
	var y []float64
	if e.withY {
		y = e.buf[rows*d:]
	}
	e.err = src.ReadChunk(ctx, e.parent, e.buf[:rows*d], y)
	close(e.ready)
}

// release lets go of a held entry; read says one of its parts was read.
func (p *parentReader) release(e *parentBuf, read bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.users--
	if read {
		e.left--
	}
	if e.failed() || e.left <= 0 {
		p.drop(e)
	}
	p.trim()
}

// drop removes e from the cache; its buffer becomes spare once no one
// holds it (callers hold mu).
func (p *parentReader) drop(e *parentBuf) {
	if !e.gone {
		e.gone = true
		if i := slices.Index(p.entries, e); i >= 0 {
			p.entries = slices.Delete(p.entries, i, i+1)
		}
	}
	if e.users == 0 && e.buf != nil {
		p.free = append(p.free, e.buf)
		e.buf = nil
	}
}

// limit is the most parent buffers, cached or spare, kept at once: two
// per goroutine at the most that have read at once. It follows that
// high-water mark, not the goroutines inside read at this instant: with
// several workers the count dips between their reads, and trimming to it
// evicted parents whose other parts were still to be read, so they were
// decoded again (up to 2.7 times per pass with 8 workers).
func (p *parentReader) limit() int { return 2 * max(p.peak, 1) }

// trim evicts the oldest idle entries and spare buffers beyond limit
// (callers hold mu).
func (p *parentReader) trim() {
	lim := p.limit()
	for i := 0; i < len(p.entries) && len(p.entries) > lim; {
		if e := p.entries[i]; e.users == 0 {
			p.drop(e)
			continue
		}
		i++
	}
	if n := max(lim-len(p.entries), 0); len(p.free) > n {
		clear(p.free[n:])
		p.free = p.free[:n]
	}
}
