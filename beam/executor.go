package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

func init() {
	jobKinds[kindFalkon] = func(b []byte) (int, bool, bool, func() (adder, error), error) {
		var j pass.Job
		if err := json.Unmarshal(b, &j); err != nil {
			return 0, false, false, nil, err
		}
		if _, err := j.NewWorker(); err != nil { // validates the job once
			return 0, false, false, nil, err
		}
		return j.SumLen(), j.ReadsTargets(), j.ReadsWeights(), func() (adder, error) { return j.NewWorker() }, nil
	}
}

// kindFalkon is the jobKinds key of ooc's passes.
const kindFalkon = "falkon"

// DefaultPartitions is the number of chunk ranges when Options.Partitions
// is 0.
const DefaultPartitions = 16

// DefaultAttempts is the number of times a pass job is run before its
// error is returned, when Options.Attempts is 0.
const DefaultAttempts = 3

// Options says how passes run on Beam. A zero field means its default.
type Options struct {
	// Runner names a registered Beam runner: "prism" (the default; in
	// this process), or "flink", "spark", "dataflow", "universal" when the
	// program imports those runner packages (falkon-ooc-beam does).
	Runner string
	// Store is where the workers find the store: a path they all see, or
	// a URL of a Beam filesystem (gs://, s3://). The driver reads it too.
	Store string
	// Partitions is the number of chunk ranges, P (clamped to the number
	// of chunks); 0 means DefaultPartitions. The result is deterministic
	// for a given P.
	Partitions int
	// Workers is the number of goroutines per range on a worker; 0 means
	// one per CPU of the worker.
	Workers int
	// Temp is a directory (path or URL) that the workers can write and
	// the driver can read, for each pass's result; "" means a new local
	// temporary directory, which only a runner on this machine can use.
	Temp string
	// Attempts is how many times a failed pass job is run in all; 0 means
	// DefaultAttempts.
	Attempts int
	// OnJob, if set, is called after every job (on the calling goroutine).
	OnJob func(JobStats)
}

// JobStats describes one pass job.
type JobStats struct {
	Kind    string  `json:"kind"`    // the pass: a pass.Kind, or rows, ingest-read, ingest-write, predict
	Attempt int     `json:"attempt"` // 1 for the first run
	Seconds float64 `json:"seconds"` // wall time, submission to result read
	// JobBytes is the size of the pass description (JSON): in the
	// pipeline when small, else in a file under Options.Temp that each
	// worker process reads once (JobFile true).
	JobBytes int  `json:"job_bytes"`
	JobFile  bool `json:"job_file"`
	// PartBytes is what the ranges ship to the reduction in all: P parts
	// of 16 + 8·SumLen bytes, and 8 bytes per value of the scored rows.
	PartBytes int `json:"part_bytes"`
	Parts     int `json:"parts"`
	// Rows is the rows the job went through: a pass's rows, or the rows
	// an ingest-write job wrote into the store; 0 for the jobs that read
	// input files (ingest-read, predict) and the centres' rows job.
	Rows int64 `json:"rows"`
	Err  error `json:"-"`
}

// Executor runs ooc's passes as Beam jobs: it implements pass.Executor.
// It is safe for use by one fit at a time.
type Executor struct {
	opts    Options
	r       *chunkstore.Reader
	parts   int
	tempDir string // created here; removed by Close
	mu      sync.Mutex
}

// NewExecutor opens the store at opts.Store (as the driver sees it) and
// returns an executor for fits over it. Close releases it.
func NewExecutor(ctx context.Context, opts Options) (*Executor, error) {
	if opts.Store == "" {
		return nil, errors.New("beam: Options.Store is empty")
	}
	if opts.Runner == "" {
		opts.Runner = "prism"
	}
	if opts.Partitions < 0 {
		return nil, fmt.Errorf("beam: %d partitions: %w", opts.Partitions, errNoParts)
	}
	if opts.Partitions == 0 {
		opts.Partitions = DefaultPartitions
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	r, err := openStore(ctx, opts.Store)
	if err != nil {
		return nil, err
	}
	e := &Executor{opts: opts, r: r}
	e.parts, _ = partitions(opts.Partitions, r.NumChunks())
	if opts.Temp == "" {
		if opts.Runner != "prism" {
			r.Close()
			return nil, fmt.Errorf("beam: runner %s needs Options.Temp (--temp): a directory the workers write and this process reads", opts.Runner)
		}
		if e.tempDir, err = os.MkdirTemp("", "falkon-ooc-beam-"); err != nil {
			r.Close()
			return nil, err
		}
		e.opts.Temp = e.tempDir
	}
	return e, nil
}

// Source returns the store as the driver opened it: its manifest and
// index. ooc.Fit draws the centres through ReadRows, as a job, and reads
// no chunk of it.
func (e *Executor) Source() *chunkstore.Reader { return e.r }

// Partitions reports P, the number of chunk ranges of every pass.
func (e *Executor) Partitions() int { return e.parts }

// Close closes the store and removes the temporary directory it made.
func (e *Executor) Close() error {
	err := e.r.Close()
	if e.tempDir != "" {
		err = errors.Join(err, os.RemoveAll(e.tempDir))
	}
	return err
}

// Pass runs one pass of job over the store as a Beam job and returns its
// result. src must hold every row of the store, or be the training side
// of stream.Holdout of it (as ooc.HoldOut makes): the workers read the
// store itself, so such a pass runs over the store with the job's
// Holdout, which gives the pass over the training rows (pass.Holdout).
func (e *Executor) Pass(ctx context.Context, src stream.Source, job *pass.Job) ([]float64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if parent, frac, seed, held, ok := stream.HoldoutOf(src); ok {
		switch {
		case held:
			return nil, fmt.Errorf("beam: a %s pass over the rows held out of the store %s: a Beam pass reads the training rows, and scores held-out rows only in a pass over the whole store", job.Kind, e.opts.Store)
		case job.Holdout != nil:
			return nil, fmt.Errorf("beam: a %s pass that holds out rows of rows already held out of the store %s", job.Kind, e.opts.Store)
		}
		j := *job
		j.Holdout = &pass.Holdout{Fraction: frac, Seed: seed}
		src, job = parent, &j
	}
	n := stream.Rows(src)
	if n != e.r.Rows() || src.Dim() != e.r.Dim() {
		return nil, fmt.Errorf("beam: the pass's source has %d rows × %d features, the store %s %d × %d: a Beam fit runs over a whole store",
			n, src.Dim(), e.opts.Store, e.r.Rows(), e.r.Dim())
	}
	b, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("beam: encode the pass: %w", err)
	}
	ps := passSpec{
		Runner: e.opts.Runner, Store: e.opts.Store, StoreID: e.r.StoreID(), Kind: kindFalkon, Job: b,
		OutLen: job.OutLen(), SumLen: job.SumLen(), Parts: e.parts, Workers: e.opts.Workers,
	}
	if len(b) > maxInlineJob {
		ps.JobFile = uniqueName(e.opts.Temp, "job")
		if err := writeFile(ctx, ps.JobFile, b); err != nil {
			return nil, fmt.Errorf("beam: the pass description: %w", err)
		}
		defer removeFile(context.WithoutCancel(ctx), ps.JobFile)
	}
	var errs []error
	for attempt := 1; attempt <= e.opts.Attempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ps.Out = uniqueName(e.opts.Temp, "pass")
		start := time.Now()
		rows, v, err := runPass(ctx, ps)
		st := JobStats{Kind: string(job.Kind), Attempt: attempt, Seconds: time.Since(start).Seconds(),
			JobBytes: len(b), JobFile: ps.JobFile != "", PartBytes: e.parts*(16+8*ps.SumLen) + 8*(ps.OutLen-ps.SumLen), Parts: e.parts, Rows: rows, Err: err}
		if err == nil && rows != n {
			err = fmt.Errorf("the job read %d rows, the store holds %d", rows, n)
			st.Err = err
		}
		if e.opts.OnJob != nil {
			e.opts.OnJob(st)
		}
		if err == nil {
			return v, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("beam: %s pass failed: %w", job.Kind, errors.Join(errs...))
}

// Fit fits FALKON over the store at opts.Store with every pass over the
// data run as a Beam job: ooc.Fit with this package's Executor. run's
// Executor is replaced; its checkpoint and resume options work as with
// ooc.Fit. The feature statistics and classes come from the store's
// manifest, and the centres are drawn by a job that returns the drawn
// rows (Executor.ReadRows): this process reads no chunk of the store.
func Fit(ctx context.Context, cfg ooc.Config, run ooc.RunOptions, opts Options) (*ooc.Model, error) {
	e, err := NewExecutor(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	run.Executor = e
	return ooc.Fit(ctx, e.r, cfg, run)
}

// Tune searches σ × λ over the store at opts.Store with every pass over
// the data run as a Beam job: ooc.Tune with this package's Executor
// (the right-hand sides of every σ in one job, then one job per CG
// iteration for every live candidate, which also scores the held-out
// rows). run's Executor is replaced; run.Validation, when set, is read
// locally (the workers read only the store).
func Tune(ctx context.Context, tc ooc.TuneConfig, run ooc.RunOptions, opts Options) (*ooc.TuneResult, error) {
	e, err := NewExecutor(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	run.Executor = e
	return ooc.Tune(ctx, e.r, tc, run)
}
