package beam

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
)

// The task kinds of a distributed ingest.
const (
	kindIngestRead  = "ingest-read"
	kindIngestWrite = "ingest-write"
)

// writeJob is the description of the ingest's second job.
type writeJob struct {
	Plan   *ingest.Plan   `json:"plan"`
	Layout *ingest.Layout `json:"layout"`
	Parts  int            `json:"parts"`
}

func init() {
	taskKinds[kindIngestRead] = func(_ context.Context, job []byte) (func(context.Context, int) ([]byte, error), error) {
		p := new(ingest.Plan)
		if err := json.Unmarshal(job, p); err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) ([]byte, error) {
			s, err := p.ReadFile(ctx, i)
			if err != nil {
				return nil, err
			}
			return json.Marshal(s)
		}, nil
	}
	taskKinds[kindIngestWrite] = func(_ context.Context, job []byte) (func(context.Context, int) ([]byte, error), error) {
		var j writeJob
		if err := json.Unmarshal(job, &j); err != nil {
			return nil, err
		}
		if j.Plan == nil || j.Layout == nil {
			return nil, fmt.Errorf("no plan or layout")
		}
		return func(ctx context.Context, k int) ([]byte, error) {
			part, err := j.Plan.WritePart(ctx, j.Layout, k, j.Parts)
			if err != nil {
				return nil, err
			}
			return json.Marshal(part)
		}, nil
	}
}

// Ingest turns the inputs (Parquet or delimited text files, directories,
// glob patterns) into a store at cfg.Out, as ingest.Run does, with the
// reading and the writing run as two Beam jobs: one task per input file,
// which reads it with ingest's readers into a temporary piece beside
// cfg.Out, and one task per range of the store's chunks
// (opts.Partitions of them, at most one per chunk), which writes the
// range as one segment file. The driver (this process) lists and inspects
// the inputs, merges the files' summaries in file order, and writes the
// manifest last: the store appears at cfg.Out only when it is whole.
//
// The store holds the same chunks, bit for bit, and the same statistics
// and column report as ingest.Run's of the same inputs; its segments (one
// per chunk range), and so the store ID and the blocks' offsets, and its
// creation time differ. Errors in the data are Run's, with Run's
// messages. cfg.Out and the inputs must be paths every worker reaches by
// the same name (a shared filesystem); standard input and --nulls mean
// are refused (ingest.NewPlan). opts.Store is not used.
func Ingest(ctx context.Context, inputs []string, cfg ingest.Config, opts Options) (*ingest.Result, error) {
	opts, done, err := taskOptions(opts)
	if err != nil {
		return nil, err
	}
	defer done()
	p, err := ingest.NewPlan(ctx, inputs, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	job, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	res, err := runTasks(ctx, opts, kindIngestRead, job, len(p.Files))
	if err != nil {
		return nil, err
	}
	sums := make([]*ingest.FileSummary, len(res))
	for i, b := range res {
		sums[i] = new(ingest.FileSummary)
		if err := json.Unmarshal(b, sums[i]); err != nil {
			return nil, fmt.Errorf("beam: the summary of %s: %w", p.Files[i].Path, err)
		}
	}
	lay, err := p.Layout(ctx, sums)
	if err != nil {
		return nil, err
	}
	parts := lay.Parts(opts.Partitions)
	if job, err = json.Marshal(writeJob{Plan: p, Layout: lay, Parts: parts}); err != nil {
		return nil, err
	}
	if res, err = runTasks(ctx, opts, kindIngestWrite, job, parts); err != nil {
		return nil, err
	}
	ps := make([]*chunkstore.Part, len(res))
	for k, b := range res {
		ps[k] = new(chunkstore.Part)
		if err := json.Unmarshal(b, ps[k]); err != nil {
			return nil, fmt.Errorf("beam: part %d: %w", k, err)
		}
	}
	return p.Finish(ctx, lay, ps)
}

func mkdirTemp() (string, error) { return os.MkdirTemp("", "falkon-ooc-beam-") }
func removeAll(dir string)       { os.RemoveAll(dir) }
