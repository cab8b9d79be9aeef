package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	fbeam "github.com/falkon-ooc/falkon-ooc/beam"
	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
)

const ingestUsage = `usage: falkon-ooc-beam ingest --out STORE [flags] INPUT…

Ingest turns Parquet and delimited text files (directories of them, glob
patterns) into a chunk store like 'falkon-ooc ingest', as two Apache Beam
jobs: one task per input file, which reads it with falkon-ooc ingest's own
readers into a temporary piece beside STORE, and one task per range of the
store's chunks (--partitions of them), which writes the range as one
segment file. This process lists and inspects the inputs, chooses the
columns, merges the files' summaries in input order (constant and
identifier columns, class labels, the levels of categorical columns, each
file's counted by its task) and writes the manifest last: the store
appears at --out only when whole. Categorical and time columns
(--categorical, --max-levels, --time-features) are encoded as
'falkon-ooc ingest' encodes them: the same levels and features.

The store holds the same chunks, statistics and column report as
'falkon-ooc ingest' of the same inputs in the same order; only its
segments (so its store ID) and its creation time differ. The inputs and
--out must be paths every worker reaches by the same name (a shared
filesystem), or s3:// or gs:// URLs: an input URL names an object, a
pattern of them, or a prefix whose data objects are read, sorted, like a
directory's files. A store at a URL is written as objects, the pieces
under STORE.work-… (removed at the end); object storage has no rename, so
the manifest object (meta.json) is written last, after every segment's
size is checked, and 'falkon-ooc-beam fit' and 'tune' refuse a STORE
without one. A URL that holds objects is refused unless --force, which
removes the old store's manifest first. The AWS SDK's environment
(AWS_REGION, AWS_ENDPOINT_URL, credentials) configures s3://. Standard
input and --nulls mean are not supported. The runner flags are fit's.

flags:
`

type ingestOpts struct {
	fitOpts
	target, features, exclude, nulls, codec, columns, weight string
	chunkRows, maxLine                                       int
	noHeader, force                                          bool
	tables                                                   cliflags.Tables
}

func ingestFlags(fs *flag.FlagSet, o *ingestOpts) {
	fs.StringVar(&o.Out, "out", "", "create the store in this `directory` (required; must not exist)")
	fs.StringVar(&o.target, "target", "", "target `column`s, comma-separated (none: a store without targets)")
	fs.StringVar(&o.features, "features", "", "feature `column`s, comma-separated (default: every numeric, bool or string column but the targets)")
	fs.StringVar(&o.exclude, "exclude", "", "`column`s that are not features, comma-separated")
	fs.StringVar(&o.weight, "weight", "", "a numeric `column` of row weights (finite, ≥ 0)")
	o.tables.Add(fs, "")
	fs.StringVar(&o.nulls, "nulls", "error", "what a NULL, NaN or ±Inf in a chosen column does: error, or drop (the row)")
	fs.IntVar(&o.chunkRows, "chunk-rows", 0, fmt.Sprintf("rows per stored chunk (0: %d, fewer for wide inputs)", chunkstore.DefaultChunkRows))
	fs.StringVar(&o.codec, "codec", chunkstore.DefaultCodec, "chunk codec, as falkon-ooc ingest's")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines per task on a worker (0: one per CPU)")
	fs.IntVar(&o.partitions, "partitions", fbeam.DefaultPartitions, "chunk ranges written in parallel, one segment file each (at most one per chunk)")
	fs.BoolVar(&o.noHeader, "no-header", false, "text files have no header row; their columns are c0, c1, …")
	fs.StringVar(&o.columns, "columns", "", "names for the columns of headerless text files, comma-separated (implies --no-header)")
	fs.IntVar(&o.maxLine, "max-line", ingest.DefaultMaxLine, "longest text record in `bytes`")
	fs.BoolVar(&o.force, "force", false, "replace a store that exists at --out")
	runnerFlags(fs, &o.fitOpts, true)
}

// ingestResult is ingest's --json document: falkon-ooc ingest's fields,
// and the Beam run's.
type ingestResult struct {
	Version string `json:"version"`
	Store   string `json:"store"`
	*ingest.Result
	Beam beamResult `json:"beam"`
}

func runIngest(ctx context.Context, o *ingestOpts, args []string, stdout, stderr io.Writer) error {
	switch {
	case o.Out == "":
		return usagef("--out STORE is required")
	case len(args) == 0:
		return usagef("no input files")
	case o.nulls != "error" && o.nulls != "drop":
		return usagef("--nulls must be error or drop, not %q (--nulls mean needs falkon-ooc ingest)", o.nulls)
	case o.chunkRows < 0:
		return usagef("--chunk-rows must not be negative")
	}
	if err := chunkstore.CheckCodec(o.codec); err != nil {
		return usagef("unknown --codec %q", o.codec)
	}
	var tc ingest.Config
	if err := o.tables.Apply(&tc); err != nil {
		return err
	}
	if err := o.checkRunner(); err != nil {
		return err
	}
	say, done, err := o.startRunner(stderr)
	if err != nil {
		return err
	}
	defer done()
	cfg := ingest.Config{
		Out: o.Out, Targets: cliflags.SplitList(o.target), Features: cliflags.SplitList(o.features), Exclude: cliflags.SplitList(o.exclude),
		Weight: strings.TrimSpace(o.weight), Nulls: o.nulls, ChunkRows: o.chunkRows, Codec: o.codec, Workers: o.Workers,
		NoHeader: o.noHeader || o.columns != "", Columns: cliflags.SplitList(o.columns), Force: o.force, MaxLine: o.maxLine,
		Categorical: tc.Categorical, MaxLevels: tc.MaxLevels, AboveMaxLevels: tc.AboveMaxLevels, TimeFeatures: tc.TimeFeatures,
	}
	var br beamResult
	opts := o.beamOptions("", &br, say)
	say("ingest: %d input(s) into %s, runner %s", len(args), o.Out, o.runner)
	res, err := fbeam.Ingest(ctx, args, cfg, opts)
	if err != nil {
		var ve *ingest.ValueError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w (--nulls drop skips such rows)", err)
		}
		return err
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(stderr, "falkon-ooc-beam: %s\n", ingest.SkippedNote(len(res.Skipped)))
	}
	for _, c := range res.Columns {
		if c.Reason == chunkstore.SkipIdentifier {
			fmt.Fprintf(stderr, "%s ingest: warning: column %q is not a feature: it %s\n", progName, c.Name, c.Note)
		}
	}
	if o.JSON {
		b, err := json.MarshalIndent(ingestResult{Version: version, Store: o.Out, Result: res, Beam: br}, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(stdout, "ingested %d rows from %d file(s) into %s", res.Rows, len(res.Files), o.Out)
	if res.Dropped > 0 {
		fmt.Fprintf(stdout, " (%d rows with NULL, NaN or ±Inf dropped)", res.Dropped)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "features  %d: %s\n", len(res.Features), strings.Join(res.Features, ", "))
	fmt.Fprintf(stdout, "targets   %d: %s\n", len(res.Targets), strings.Join(res.Targets, ", "))
	fmt.Fprintf(stdout, "chunks    %d of up to %d rows\n", res.Chunks, res.ChunkRows)
	for _, c := range res.Columns {
		if c.Role == chunkstore.RoleSkipped {
			fmt.Fprintf(stdout, "skipped   %s (%s): %s\n", c.Name, c.Reason, c.Note)
		}
	}
	fmt.Fprintf(stdout, "beam      %s, %d partitions, %d jobs (%d failed), %.2f s in jobs\n", br.Runner, br.Partitions, br.Jobs, br.Failed, br.JobSeconds)
	return nil
}
