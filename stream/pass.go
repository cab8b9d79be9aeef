package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Options configures a streaming pass. The zero value is ready to use.
type Options struct {
	// Workers is the number of goroutines that decode chunks and compute
	// their contributions. 0 means runtime.GOMAXPROCS(0).
	Workers int
	// InFlight bounds the chunks whose partial results exist at once
	// (being computed or waiting to be reduced in order). 0 means
	// 2 × Workers; values below Workers are raised to Workers.
	InFlight int
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (o Options) inFlight() int {
	w := o.workers()
	if o.InFlight <= 0 {
		return 2 * w
	}
	return max(o.InFlight, w)
}

// Chunk is one decoded chunk as a worker sees it. X and Y belong to the
// worker and stay valid until its function returns; the worker may modify
// them in place (for example to standardise features).
type Chunk struct {
	Index int       // chunk number in the source
	Rows  int       // rows in the chunk
	X     []float64 // Rows × Dim features, row-major
	Y     []float64 // Rows × NumTargets targets, row-major; nil unless requested
	W     []float64 // Rows row weights (Weighter); nil unless requested
}

// Job describes one streaming pass: which chunks to read, what each worker
// computes, and how partial results are combined. P is the type of a
// per-chunk partial result (for FALKON an M × k vector).
type Job[P any] struct {
	// Chunks lists the chunks to visit, in the order they are reduced.
	// nil means every chunk of the source in order.
	Chunks []int
	// Targets asks for the targets to be decoded as well.
	Targets bool
	// Weights asks for the row weights (Weighter) to be decoded as well;
	// the source must carry them (WeightColumn not "").
	Weights bool
	// NewPartial allocates a partial result. At most Options.InFlight
	// partials are allocated per pass and they are reused across chunks.
	NewPartial func() P
	// NewWorker is called once per worker goroutine and returns the
	// function that computes one chunk's partial into p. The returned
	// function owns any scratch it closes over (no sharing between
	// workers), so the steady state allocates nothing. p holds the
	// previous chunk's result: the function must overwrite all of it.
	NewWorker func() func(ctx context.Context, c Chunk, p P) error
	// Reduce receives partials strictly in the order of Chunks, on the
	// goroutine that called Run. It must not retain p.
	Reduce func(chunk int, p P) error
}

type result[P any] struct {
	seq int // position in the chunk list
	p   P
}

// Run performs one pass of job over src: workers decode chunks into their
// own buffers and compute partials concurrently, and Reduce sees them in
// chunk order, so the result does not depend on the number of workers.
// At most opt.InFlight partials and opt.Workers chunk buffers exist at
// once, whatever the size of the source. Run returns the first error,
// after every goroutine it started has finished; a cancelled ctx stops
// the pass before the next chunk.
func Run[P any](ctx context.Context, src Source, opt Options, job Job[P]) error {
	chunks := job.Chunks
	if chunks == nil {
		chunks = make([]int, src.NumChunks())
		for i := range chunks {
			chunks[i] = i
		}
	}
	if len(chunks) == 0 {
		return ctx.Err()
	}
	for _, c := range chunks {
		if c < 0 || c >= src.NumChunks() {
			panic(fmt.Sprintf("stream: chunk %d out of range [0, %d)", c, src.NumChunks()))
		}
	}
	if job.Weights && WeightColumn(src) == "" {
		return fmt.Errorf("stream: the pass reads row weights, and the source carries none")
	}
	workers := min(opt.workers(), len(chunks))
	inFlight := min(opt.inFlight(), len(chunks))
	inFlight = max(inFlight, workers)

	maxRows := 0
	for _, c := range chunks {
		maxRows = max(maxRows, src.ChunkRows(c))
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)

	// free holds partials not in use. A worker takes a partial before it
	// takes the next chunk number, so the lowest outstanding chunk always
	// owns a partial and is being computed: the in-order reduction can
	// always make progress.
	free := make(chan P, inFlight)
	for range inFlight {
		free <- job.NewPartial()
	}
	next := make(chan int) // positions in chunks, handed out in order
	done := make(chan result[P], inFlight)

	g.Go(func() error {
		defer close(next)
		for seq := range chunks {
			select {
			case next <- seq:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			return work(gctx, src, job, chunks, maxRows, free, next, done)
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	// Reduce in order on this goroutine. After an error the loop keeps
	// draining done until the workers have stopped.
	pending := make(map[int]P, inFlight)
	want := 0
	var rerr error
	for r := range done {
		if rerr != nil {
			continue
		}
		pending[r.seq] = r.p
		for {
			p, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			if err := parent.Err(); err != nil {
				rerr = err
				break
			}
			if err := job.Reduce(chunks[want], p); err != nil {
				rerr = fmt.Errorf("chunk %d: %w", chunks[want], err)
				cancel()
				break
			}
			want++
			free <- p
		}
	}
	err := g.Wait()
	switch {
	case rerr != nil:
		return rerr
	case err != nil:
		return err
	case parent.Err() != nil:
		return parent.Err()
	}
	if want != len(chunks) {
		return fmt.Errorf("stream: pass ended after %d of %d chunks", want, len(chunks))
	}
	return nil
}

// work is one worker goroutine of Run.
func work[P any](ctx context.Context, src Source, job Job[P], chunks []int, maxRows int,
	free chan P, next <-chan int, done chan<- result[P]) error {
	fn := job.NewWorker()
	d, k := src.Dim(), src.NumTargets()
	x := make([]float64, maxRows*d)
	var y, w []float64
	if job.Targets {
		y = make([]float64, maxRows*k)
	}
	if job.Weights {
		w = make([]float64, maxRows)
	}
	for {
		var p P
		select {
		case p = <-free:
		case <-ctx.Done():
			return nil
		}
		var seq int
		var ok bool
		select {
		case seq, ok = <-next:
		case <-ctx.Done():
			return nil
		}
		if !ok || ctx.Err() != nil {
			return nil
		}
		ci := chunks[seq]
		rows := src.ChunkRows(ci)
		c := Chunk{Index: ci, Rows: rows, X: x[:rows*d]}
		if job.Targets {
			c.Y = y[:rows*k]
		}
		if err := src.ReadChunk(ctx, ci, c.X, c.Y); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read chunk %d: %w", ci, err)
		}
		if job.Weights {
			c.W = w[:rows]
			if err := src.(Weighter).ReadWeights(ctx, ci, c.W); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("read the weights of chunk %d: %w", ci, err)
			}
		}
		if err := fn(ctx, c, p); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if ve := (*ValueError)(nil); errors.As(err, &ve) {
				// The error names the chunk itself, in the numbering of
				// the underlying source. (A wrapper's text was formatted
				// before the location was known: return the bare error.)
				loc := *ve
				loc.Chunk, loc.Row = locate(src, ci, ve.Row)
				return &loc
			}
			return fmt.Errorf("chunk %d: %w", ci, err)
		}
		select {
		case done <- result[P]{seq: seq, p: p}:
		case <-ctx.Done():
			return nil
		}
	}
}
