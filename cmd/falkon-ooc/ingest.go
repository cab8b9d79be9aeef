package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

func init() {
	register(&command{
		Name:  "ingest",
		Short: "turn Parquet and CSV/TSV files into a chunk store",
		Usage: "--out STORE [flags] INPUT…",
		Long: `
Ingest reads Parquet and delimited text files (CSV, TSV, optionally
gzip-compressed), directories of such files (their data files and those of
their subdirectories, sorted by path), glob patterns ('**' matches any
number of directories) and standard input ('-', CSV or Parquet), and
writes the chosen columns, in input order, to
a new chunk store: compressed, checksummed float64 chunks with per-column
statistics, which fit and predict read out of core.

Features are by default every numeric, bool or string column of the
first input except the targets and --exclude; every input must have them
with compatible types. A string column (and an integer column named in
--categorical) is categorical: with at most --max-levels levels, one
feature of 0 and 1 per level, named column=level, NULL a level of its
own, column=(null); a fit weighs a change of level as one standard
deviation of a numeric feature. A column of more levels becomes one
feature, column:target_mean: the mean target of the row's level, shrunk
towards the overall mean by 20 rows; in the store each row's is computed
from the other four of five folds (store row mod 5), so that it does not
hold its own target, and predict uses the means over every row. This
needs one target, numeric or of two classes (the share of the second);
else, or with --above-max-levels onehot, the --max-levels most frequent
levels get one-hot features and the others share column=(other).
Date and timestamp columns are stored only when named (or with
--time-features), as days since 1970-01-01 UTC (fractional for
timestamps); --time-features hour,dow,doy adds the sine and cosine of the
time of day, the day of the week and the day of the year. Nested columns
cannot be stored. Text files need a header row unless
--no-header (columns c0, c1, …) or --columns names them; the delimiter is
a tab for .tsv and sniffed otherwise; column types come from the first
1000 rows.

Path elements key=value (Hive partitions, as in year=2024/part-0.parquet)
become columns, numeric when every value is a number, else skipped; the
report marks them "from folder names". Among the default features, a
constant column is dropped and one that looks like a row identifier
(integer, all values distinct, and increasing, decreasing or named like id
or *_id; or a string column with a distinct level in 90 % of its rows) is
left out with a warning; name it in --features to keep it. A text column
of numbers in which a few of the first 1000 rows hold something else
would be read as strings: ingest refuses it, naming the file, row and
value, unless it is named in --categorical. The
output lists what happened to every column. A string --target holds class
labels: stored as codes 0, 1, … in sorted order of at most 100 labels,
whose names the store keeps.

A NULL, NaN or ±Inf in a chosen column stops the ingest with the file,
column and row (1-based within the file); --nulls drop skips such rows
and counts them; --nulls mean stores in a feature the mean of its other
values (the report counts them; a row whose target is bad is dropped).
The store appears at --out only when complete.`,
		Flags: ingestFlags,
	})
}

type ingestOpts struct {
	out, target, features, exclude, nulls, codec, columns string
	weight                                                string
	chunkRows, workers, maxLine                           int
	noHeader, jsonOut, quiet, force                       bool
	tables                                                cliflags.Tables
}

func ingestFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &ingestOpts{}
	fs.StringVar(&o.out, "out", "", "create the store in this `directory` (required; must not exist)")
	fs.StringVar(&o.target, "target", "", "target `column`s, comma-separated (none: a store without targets)")
	fs.StringVar(&o.features, "features", "", "feature `column`s, comma-separated (default: every numeric, bool or string column but the targets)")
	fs.StringVar(&o.exclude, "exclude", "", "`column`s that are not features, comma-separated")
	o.tables.Add(fs, "")
	fs.StringVar(&o.weight, "weight", "", "a numeric `column` of row weights (finite, ≥ 0): fit, tune and validation weigh each row by it")
	fs.StringVar(&o.nulls, "nulls", "error", "what a NULL, NaN or ±Inf in a chosen column does: error, drop (the row) or mean (a feature's mean over its other values; a row with a bad target is dropped)")
	fs.IntVar(&o.chunkRows, "chunk-rows", 0, fmt.Sprintf("rows per stored chunk (0: %d, fewer for inputs of more than %d columns, so that a chunk holds at most %d MiB of float64)", chunkstore.DefaultChunkRows, ingest.MaxChunkBytes/8/chunkstore.DefaultChunkRows, ingest.MaxChunkBytes>>20))
	fs.StringVar(&o.codec, "codec", chunkstore.DefaultCodec, "chunk codec: "+strings.Join(baseCodecs(), ", ")+"; +shuffle after a name byte-shuffles each block first")
	fs.IntVar(&o.workers, "workers", 0, "goroutines that decode input and compress chunks (0: one per CPU)")
	fs.BoolVar(&o.noHeader, "no-header", false, "text files have no header row; their columns are c0, c1, …")
	fs.StringVar(&o.columns, "columns", "", "names for the columns of headerless text files, comma-separated (implies --no-header)")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object with the result on stdout")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.force, "force", false, "replace a store that exists at --out")
	maxLineFlag(fs, &o.maxLine)
	return func(ctx context.Context, e *env, args []string) error {
		return runIngest(ctx, e, o, args)
	}
}

// baseCodecs lists chunkstore's codecs without their +shuffle variants.
func baseCodecs() []string {
	var out []string
	for _, c := range chunkstore.Codecs {
		if !strings.Contains(c, "+") {
			out = append(out, c)
		}
	}
	return out
}

// ingestJSON is the --json document of ingest.
type ingestJSON struct {
	Version string `json:"version"`
	Store   string `json:"store"`
	*ingest.Result
	Config ingestConfig `json:"config"`
}

type ingestConfig struct {
	ingest.Config
	Inputs []string `json:"inputs"`
}

func runIngest(ctx context.Context, e *env, o *ingestOpts, args []string) error {
	switch {
	case o.out == "":
		return usagef("--out STORE is required")
	case len(args) == 0:
		return usagef("no input files")
	case o.nulls != "error" && o.nulls != "drop" && o.nulls != "mean":
		return usagef("--nulls must be error, drop or mean, not %q", o.nulls)
	case o.chunkRows < 0:
		return usagef("--chunk-rows must not be negative")
	case o.workers < 0:
		return usagef("--workers must not be negative")
	}
	if err := chunkstore.CheckCodec(o.codec); err != nil {
		return usagef("unknown --codec %q (known: %s, each optionally +shuffle)", o.codec, strings.Join(baseCodecs(), ", "))
	}
	cfg := ingest.Config{
		Out:       o.out,
		Targets:   cliflags.SplitList(o.target),
		Features:  cliflags.SplitList(o.features),
		Exclude:   cliflags.SplitList(o.exclude),
		Weight:    strings.TrimSpace(o.weight),
		Nulls:     o.nulls,
		ChunkRows: o.chunkRows,
		Codec:     o.codec,
		Workers:   o.workers,
		NoHeader:  o.noHeader || o.columns != "",
		Columns:   cliflags.SplitList(o.columns),
		Force:     o.force,
		MaxLine:   o.maxLine,
	}
	if err := o.tables.Apply(&cfg); err != nil {
		return err
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if err := prepareOut(e, "--out", o.out, true, inputPaths(args...)...); err != nil {
		return err
	}
	pr := newProgress(e.stderr, o.quiet)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // the limit before, after Run
	ingestMemoryLimit(ingest.InspectMemory(cfg.MaxLine))
	cfg.Progress = func(p ingest.Progress) {
		if p.Memory != nil {
			levels := ""
			if p.Memory.Levels > 0 {
				levels = ", categorical levels " + ooc.FormatBytes(p.Memory.Levels)
			}
			pr.printf("ingest: memory needed ≈ %s (readers %s, batches %s, chunks %s%s)", ooc.FormatBytes(p.Memory.Total),
				ooc.FormatBytes(p.Memory.Readers), ooc.FormatBytes(p.Memory.Batches), ooc.FormatBytes(p.Memory.Chunks), levels)
			ingestMemoryLimit(max(p.Memory.Total, ingest.InspectMemory(cfg.MaxLine)))
			return
		}
		pr.update("ingest", progressLine(p), false)
	}
	res, err := ingest.Run(ctx, args, cfg)
	if err != nil {
		return nullsHint(err)
	}
	pr.update("ingest", fmt.Sprintf("%d rows, %s in %.1fs", res.Rows, mb(res.BytesIn), res.Seconds), true)
	noteSkipped(e.stderr, res.Skipped)
	for _, c := range res.Columns {
		if c.Reason == chunkstore.SkipIdentifier {
			fmt.Fprintf(e.stderr, "%s ingest: warning: column %q is not a feature: it %s\n", progName, c.Name, c.Note)
		}
	}
	if o.jsonOut {
		return writeJSON(e.stdout, ingestJSON{Version: version, Store: o.out, Result: res, Config: ingestConfig{Config: cfg, Inputs: args}})
	}
	printIngest(e.stdout, o.out, &cfg, res)
	return nil
}

func progressLine(p ingest.Progress) string {
	secs := p.Elapsed.Seconds()
	rate := ""
	if secs > 0 {
		rate = fmt.Sprintf(", %.1f MB/s", float64(p.BytesIn)/1e6/secs)
	}
	frac := 0.0
	if p.BytesTotal > 0 {
		frac = float64(p.BytesIn) / float64(p.BytesTotal)
	}
	file := ""
	if p.Files > 1 && p.FileIndex < p.Files {
		file = fmt.Sprintf(", file %d/%d", p.FileIndex+1, p.Files)
	}
	return fmt.Sprintf("%s %3.0f%% %s rows%s%s%s", bar(frac), 100*frac, humanCount(p.Rows), rate, file,
		eta(float64(p.BytesIn), float64(p.BytesTotal), p.Elapsed))
}

func printIngest(w io.Writer, out string, cfg *ingest.Config, r *ingest.Result) {
	files := "files"
	if len(r.Files) == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "ingested %d rows from %d %s into %s", r.Rows, len(r.Files), files, out)
	if r.Dropped > 0 {
		fmt.Fprintf(w, " (%d rows with NULL, NaN or ±Inf dropped)", r.Dropped)
	}
	fmt.Fprintln(w, nullsNote(r))
	fmt.Fprintf(w, "features  %d: %s\n", len(r.Features), featureList(r.Features, r.Columns))
	if len(r.Targets) > 0 {
		fmt.Fprintf(w, "targets   %d: %s\n", len(r.Targets), strings.Join(r.Targets, ", "))
	} else {
		fmt.Fprintf(w, "targets   none\n")
	}
	fmt.Fprintf(w, "chunks    %d of up to %d rows, codec %s\n", r.Chunks, r.ChunkRows, cfg.Codec)
	fmt.Fprintf(w, "bytes     %s read, %s written%s\n", mb(r.BytesIn), mb(r.BytesOut), compression(r))
	if r.Seconds > 0 {
		fmt.Fprintf(w, "time      %.2fs: %.1f MB/s in, %s rows/s\n", r.Seconds, float64(r.BytesIn)/1e6/r.Seconds, humanCount(int64(float64(r.Rows)/r.Seconds)))
	}
	if len(r.Columns) > 0 {
		fmt.Fprintln(w)
		printColumnReport(w, r.Columns, false)
	}
}

// compression says how much smaller the store is than its values as
// float64, when it is at least 5 % smaller; nothing otherwise (values
// that do not compress take a little more room in the store, with its
// checksums and index).
func compression(r *ingest.Result) string {
	raw := float64(r.Rows) * float64(len(r.Features)+len(r.Targets)+min(len(r.Weight), 1)) * 8
	if r.BytesOut <= 0 || raw < 1.05*float64(r.BytesOut) {
		return ""
	}
	return fmt.Sprintf(", %.1f× smaller than the values as float64", raw/float64(r.BytesOut))
}

// printColumnReport prints what ingest did with each input column, as a
// table; skippedOnly leaves out the features and targets.
func printColumnReport(w io.Writer, cols []chunkstore.InputColumn, skippedOnly bool) {
	rows := [][]string{{"input column", "type", "role", "why", "note"}}
	for _, c := range cols {
		if skippedOnly && c.Role != chunkstore.RoleSkipped {
			continue
		}
		role := c.Role
		if c.FromPath {
			role += " (" + fromFolders + ")"
		}
		rows = append(rows, []string{c.Name, c.Type, role, c.Reason, c.Note})
	}
	if len(rows) > 1 {
		printTable(w, rows, 5)
	}
}

// nullsHint adds to a NULL, NaN or ±Inf error of ingest (and of fit and
// tune on Parquet/CSV) the --nulls choices.
func nullsHint(err error) error {
	var ve *ingest.ValueError
	if errors.As(err, &ve) {
		return fmt.Errorf("%w (--nulls drop skips such rows; --nulls mean fills a feature with the mean of its other values and skips a row whose target is bad)", err)
	}
	return err
}

// nullsNote says how many feature values ingest filled with their
// column's mean (--nulls mean), or nothing.
func nullsNote(r *ingest.Result) string {
	switch r.Filled {
	case 0:
		return ""
	case 1:
		return "; 1 NULL, NaN or ±Inf feature value filled with its column's mean"
	}
	return fmt.Sprintf("; %d NULL, NaN or ±Inf feature values filled with their column's mean", r.Filled)
}

// fromFolders marks a column whose values come from directory names (a
// Hive partition key) in the column reports.
const fromFolders = "from folder names"

// featureList joins the feature names, marking those whose values come
// from directory names (cols: the input column report).
func featureList(features []string, cols []chunkstore.InputColumn) string {
	q := make([]string, len(features))
	for i, f := range features {
		q[i] = f
		for _, c := range cols {
			if c.Name == f && c.FromPath {
				q[i] = f + " (" + fromFolders + ")"
			}
		}
	}
	return strings.Join(q, ", ")
}

// mb formats a byte count in B, kB, MB or GB (powers of 10).
func mb(n int64) string { return fileutil.FormatBytes(n) }

// humanCount formats a count with k, M and G suffixes.
func humanCount(n int64) string {
	switch {
	case n < 1e4:
		return fmt.Sprint(n)
	case n < 1e6:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2fG", float64(n)/1e9)
	}
}

// maxLineFlag defines --max-line, the same in every command that reads
// CSV or TSV.
func maxLineFlag(fs *flag.FlagSet, p *int) {
	fs.IntVar(p, "max-line", ingest.DefaultMaxLine, "longest text record in `bytes` (a line, or lines joined by a quoted field); a longer one is an error")
}

// ingestMemoryLimit holds the Go heap near ingest's estimate (a soft
// limit, GOMEMLIMIT wins): without it the collector lets the heap grow to
// twice what is live, and a wide Parquet file's column readers alone are
// hundreds of megabytes (bench/RESULTS.md, "Ingest memory").
func ingestMemoryLimit(total int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(total + total/4)
	}
}
