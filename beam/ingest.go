package beam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
)

// The task kinds of a distributed ingest.
const (
	kindIngestRead  = "ingest-read"
	kindIngestWrite = "ingest-write"
)

// readJob is the description of the ingest's first job.
type readJob struct {
	Plan *ingest.Plan `json:"plan"`
	// Work, for a store at a URL, is the prefix under which the pieces
	// are kept (Plan.Work is then "").
	Work string `json:"work,omitempty"`
}

// writeJob is the description of the ingest's second job.
type writeJob struct {
	Plan   *ingest.Plan   `json:"plan"`
	Layout *ingest.Layout `json:"layout"`
	Parts  int            `json:"parts"`
	Work   string         `json:"work,omitempty"`
}

// pieceURL is the prefix of input i's piece under work.
func pieceURL(work string, i int) string { return fmt.Sprintf("%s/pieces/piece-%06d", work, i) }

func init() {
	taskKinds[kindIngestRead] = func(_ context.Context, job []byte) (func(context.Context, int) ([]byte, error), error) {
		var j readJob
		if err := json.Unmarshal(job, &j); err != nil {
			return nil, err
		}
		if j.Plan == nil {
			return nil, fmt.Errorf("no plan")
		}
		return func(ctx context.Context, i int) ([]byte, error) {
			p := *j.Plan // this task's: its Remote reads with ctx
			p.Config.Remote = objects{ctx}
			if j.Work == "" {
				s, err := p.ReadFile(ctx, i)
				if err != nil {
					return nil, err
				}
				return json.Marshal(s)
			}
			tmp, err := os.MkdirTemp("", "falkon-ooc-beam-piece-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(tmp)
			s, err := p.ReadFileTo(ctx, i, filepath.Join(tmp, "piece"))
			if err != nil {
				return nil, err
			}
			if s.Err == "" {
				fs, err := openFS(ctx, j.Work)
				if err != nil {
					return nil, err
				}
				if err := putStore(ctx, fs, filepath.Join(tmp, "piece"), pieceURL(j.Work, i)); err != nil {
					return nil, err
				}
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
			p := *j.Plan
			p.Config.Remote = objects{ctx}
			if j.Work == "" {
				part, err := p.WritePart(ctx, j.Layout, k, j.Parts)
				if err != nil {
					return nil, err
				}
				return json.Marshal(part)
			}
			tmp, err := os.MkdirTemp("", "falkon-ooc-beam-part-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(tmp)
			part, err := p.WritePartFrom(ctx, j.Layout, k, j.Parts, tmp, func(ctx context.Context, i int) (*chunkstore.Reader, error) {
				return openStore(ctx, pieceURL(j.Work, i))
			})
			if err != nil {
				return nil, err
			}
			if part.Segment.Chunks > 0 {
				out := p.Config.Out
				fs, err := openFS(ctx, out)
				if err != nil {
					return nil, err
				}
				if err := putFile(ctx, fs, filepath.Join(tmp, part.Segment.Name), joinURL(out, part.Segment.Name)); err != nil {
					return nil, err
				}
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
// the same name (a shared filesystem), or URLs (see below); standard
// input and --nulls mean are refused (ingest.NewPlan). opts.Store is not
// used.
//
// # Object storage
//
// Inputs and cfg.Out may be URLs of a Beam filesystem (s3://, gs://;
// memfs:// in tests). An input URL names an object, a pattern of them
// (*, ?, [), or a prefix, below which the data objects are read, sorted,
// as a directory's files are. The inputs are read with range requests
// (Parquet footers and column chunks, text in order); the pieces are
// kept under cfg.Out + ".work-…" and removed at the end. Object storage
// has no rename, so the store's promise — it appears only when whole —
// is kept by order: every segment object is written and its size
// checked, then the manifest (meta.json) is written last, and every
// reader (NewExecutor, falkon-ooc-beam fit, tune) refuses a prefix
// without one. A prefix that holds objects is refused unless cfg.Force;
// with cfg.Force the old store's manifest is removed first, then its
// segments, so a reader never sees the old manifest over new segments.
// There is no lock: two ingests to the same URL at once are not detected
// (every block's checksum is checked when read).
func Ingest(ctx context.Context, inputs []string, cfg ingest.Config, opts Options) (*ingest.Result, error) {
	opts, done, err := taskOptions(opts)
	if err != nil {
		return nil, err
	}
	defer done()
	var skipped []string
	if inputs, skipped, err = expandURLs(ctx, inputs); err != nil {
		return nil, err
	}
	remoteOut := hasScheme(cfg.Out)
	if remoteOut || slices.ContainsFunc(inputs, hasScheme) {
		cfg.Remote = objects{ctx}
	}
	var out filesystem.Interface
	if remoteOut {
		if out, err = openFS(ctx, cfg.Out); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Out, err)
		}
		if err := checkOutURL(ctx, out, cfg); err != nil {
			return nil, err
		}
	}
	p, err := ingest.NewPlan(ctx, inputs, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	p.Skipped = append(skipped, p.Skipped...)
	rj := readJob{Plan: p}
	if remoteOut {
		if cfg.Force {
			if err := removeStoreURL(ctx, out, cfg.Out); err != nil {
				return nil, fmt.Errorf("%s: remove the old store: %w", cfg.Out, err)
			}
		}
		rj.Work = fmt.Sprintf("%s.work-%s", strings.TrimSuffix(cfg.Out, "/"), randomHex())
		keep := context.WithoutCancel(ctx)
		defer removeObjects(keep, out, rj.Work+"/pieces/*/*")
		ok := false
		defer func() {
			if !ok {
				removeObjects(keep, out, joinURL(cfg.Out, "segment-*.dat"))
			}
		}()
		res, err := ingestJobs(ctx, p, rj, opts, out)
		ok = err == nil
		return res, err
	}
	return ingestJobs(ctx, p, rj, opts, nil)
}

// ingestJobs runs the two jobs of Ingest and puts the store together
// (out: the store's filesystem when cfg.Out is a URL, else nil).
func ingestJobs(ctx context.Context, p *ingest.Plan, rj readJob, opts Options, out filesystem.Interface) (*ingest.Result, error) {
	job, err := json.Marshal(rj)
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
	if job, err = json.Marshal(writeJob{Plan: p, Layout: lay, Parts: parts, Work: rj.Work}); err != nil {
		return nil, err
	}
	wopts := opts
	if on := opts.OnJob; on != nil {
		wopts.OnJob = func(st JobStats) {
			if st.Err == nil {
				st.Rows = lay.Rows
			}
			on(st)
		}
	}
	if res, err = runTasks(ctx, wopts, kindIngestWrite, job, parts); err != nil {
		return nil, err
	}
	ps := make([]*chunkstore.Part, len(res))
	for k, b := range res {
		ps[k] = new(chunkstore.Part)
		if err := json.Unmarshal(b, ps[k]); err != nil {
			return nil, fmt.Errorf("beam: part %d: %w", k, err)
		}
	}
	if out == nil {
		return p.Finish(ctx, lay, ps)
	}
	return p.FinishTo(ctx, lay, ps, func(ctx context.Context, manifest []byte) error {
		for _, pt := range ps {
			if pt.Segment.Chunks == 0 {
				continue
			}
			name := joinURL(p.Config.Out, pt.Segment.Name)
			if size, err := out.Size(ctx, name); err != nil || size != pt.Segment.Bytes {
				return fmt.Errorf("%s: the segment object is missing or not of %d bytes (%v)", name, pt.Segment.Bytes, err)
			}
		}
		return writeFile(ctx, joinURL(p.Config.Out, chunkstore.ManifestName), manifest)
	})
}

// checkOutURL refuses a store URL that holds objects, unless cfg.Force,
// as ingest refuses an existing --out.
func checkOutURL(ctx context.Context, fs filesystem.Interface, cfg ingest.Config) error {
	if cfg.Force {
		return nil
	}
	got, err := fs.List(ctx, strings.TrimSuffix(cfg.Out, "/")+"/*")
	if err != nil {
		return fmt.Errorf("list %s: %w", cfg.Out, err)
	}
	if len(got) > 0 {
		return fmt.Errorf("%s already exists; remove it or choose another --out", cfg.Out)
	}
	return nil
}

// removeStoreURL removes the store at loc: its manifest first (readers
// then refuse it), then its segments.
func removeStoreURL(ctx context.Context, fs filesystem.Interface, loc string) error {
	meta := joinURL(loc, chunkstore.ManifestName)
	if _, err := fs.Size(ctx, meta); err == nil {
		if err := removeObjects(ctx, fs, meta); err != nil {
			return err
		}
	}
	return removeObjects(ctx, fs, joinURL(loc, "segment-*.dat"))
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func mkdirTemp() (string, error) { return os.MkdirTemp("", "falkon-ooc-beam-") }
func removeAll(dir string)       { os.RemoveAll(dir) }
