package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/summary"
)

func init() {
	register(&command{
		Name:  "inspect",
		Short: "describe a model, a chunk store, or Parquet/CSV data as ingest would read it",
		Usage: "[--json] [--verify] STORE|MODEL | [--json] [--target COL] [flags] INPUT…",
		Long: `
Inspect describes a model file made by 'falkon-ooc fit', a chunk store
made by 'falkon-ooc ingest', or Parquet and CSV/TSV inputs (files,
directories such as Hive-partitioned folders, globs) as ingest would read
them.

For a MODEL it prints the task, the features and targets (and classes),
the kernel and its length scale, λ, the number of centres M and how they
were drawn, the training rows n and features d, the solver's iterations
and residual, the validation history, and the fit's time and the memory
of its preconditioner. --json prints the model's metadata (all but the
centres and coefficients) as one JSON object.

For a STORE it prints the manifest for people: its columns and their
source types, row and chunk counts, codec, size on disk and compression
ratio, the input files it was made from, and per-column statistics (mean,
standard deviation, min, max, whether every value is an integer, the
number of distinct values up to 256). A target that 'fit --task auto'
would fit as binary or multiclass is described by its classes instead:
each class's name, rows and share (and weights in a store with row
weights), from one read of the target column. --verify also reads every block and
checks its checksum. --json prints the manifest and the sizes as one JSON
object.

For INPUTs it reads every row once, as ingest does, and writes nothing:
it prints the files, the row count, the features and targets ingest
would store and its report on every column (type, role, and why a column
is skipped: dates, constants, row identifiers, partition keys from folder
names; the levels of categorical columns, exact or estimated; NULLs
filled by --nulls mean; without --nulls, each column's NULL, NaN and
±Inf counts and where ingest would stop), taking --target,
--features, --exclude, --weight, --nulls, --no-header, --columns,
--max-line, --categorical and --max-levels as ingest does. --json prints ingest's --json document
without the store.`,
		Flags: inspectFlags,
	})
}

type inspectOpts struct {
	jsonOut, verify, quiet bool
	data                   ingestOpts // INPUTs: the flags ingest reads them with
	set                    []string   // the data flags given
}

func inspectFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &inspectOpts{}
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object on stdout")
	fs.BoolVar(&o.verify, "verify", false, "STORE: read every block and check its checksum")
	fs.BoolVar(&o.quiet, "quiet", false, "INPUTs: no progress on stderr")
	fs.StringVar(&o.data.target, "target", "", "INPUTs: target `column`s, comma-separated, as ingest takes them")
	fs.StringVar(&o.data.features, "features", "", "INPUTs: feature `column`s, comma-separated (default: as ingest chooses them)")
	fs.StringVar(&o.data.exclude, "exclude", "", "INPUTs: `column`s that are not features, comma-separated")
	fs.StringVar(&o.data.weight, "weight", "", "INPUTs: a numeric `column` of row weights, as ingest takes it")
	fs.StringVar(&o.data.nulls, "nulls", "error", "INPUTs: what a NULL, NaN or ±Inf does, as in ingest: error, drop or mean")
	fs.BoolVar(&o.data.noHeader, "no-header", false, "INPUTs: text files have no header row; their columns are c0, c1, …")
	fs.StringVar(&o.data.columns, "columns", "", "INPUTs: names for the columns of headerless text files, comma-separated (implies --no-header)")
	maxLineFlag(fs, &o.data.maxLine)
	o.data.tables.Add(fs, "INPUTs: ")
	return func(ctx context.Context, e *env, args []string) error {
		o.set = o.set[:0]
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "target", "features", "exclude", "weight", "nulls", "no-header", "columns", "max-line", "categorical", "max-levels", "above-max-levels", "time-features":
				o.set = append(o.set, "--"+f.Name)
			}
		})
		return runInspect(ctx, e, o, args)
	}
}

// inspectJSON is the --json document of inspect.
type inspectJSON struct {
	Version  string               `json:"version"`
	Config   inspectConfig        `json:"config"`
	Bytes    int64                `json:"bytes"`     // on disk, all files of the store
	RawBytes int64                `json:"raw_bytes"` // rows × columns × 8
	Ratio    float64              `json:"ratio"`     // raw_bytes / bytes
	Verified *bool                `json:"verified,omitempty"`
	Manifest *chunkstore.Manifest `json:"manifest"`
	// Classes: a classification target's classes and their rows
	// (countClasses); absent for regression.
	Classes *targetClasses `json:"classes,omitempty"`
}

type inspectConfig struct {
	Store  string `json:"store"`
	Verify bool   `json:"verify"`
}

func runInspect(ctx context.Context, e *env, o *inspectOpts, args []string) error {
	if len(args) == 0 {
		return usagef("want a STORE, a MODEL or Parquet/CSV INPUTs")
	}
	if len(args) > 1 || isData(args[0]) {
		if st, err := os.Stat(args[0]); len(args) == 1 && err == nil && st.IsDir() {
			if _, err := ingest.Files(args); err != nil {
				return fmt.Errorf("%s is not a chunk store (it has no %s), and %w", args[0], chunkstore.ManifestName, err)
			}
		}
		if o.verify {
			return usagef("--verify checks a store's blocks; %s is Parquet/CSV data", strings.Join(args, " "))
		}
		return inspectData(ctx, e, o, args)
	}
	if len(o.set) > 0 {
		return usagef("%s applies to Parquet/CSV inputs; %s is a store or a model", o.set[0], args[0])
	}
	dir := args[0]
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		if o.verify {
			return usagef("--verify checks a store's blocks; %s is a file (a model's checksums are checked whenever it is loaded)", dir)
		}
		return inspectModel(e, o, dir, st.Size())
	}
	r, err := chunkstore.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	m := r.Manifest()
	var size int64
	for _, s := range m.Segments {
		size += s.Bytes
	}
	size += manifestSize(dir)
	raw := m.Rows * int64(len(m.Features)+len(m.Targets)) * 8
	doc := inspectJSON{Version: version, Config: inspectConfig{Store: dir, Verify: o.verify},
		Bytes: size, RawBytes: raw, Manifest: m}
	if size > 0 {
		doc.Ratio = float64(raw) / float64(size)
	}
	if doc.Classes, err = countClasses(ctx, r); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if o.verify {
		if err := r.Verify(ctx); err != nil {
			return fmt.Errorf("verify %s: %w", dir, err)
		}
		ok := true
		doc.Verified = &ok
	}
	if o.jsonOut {
		return writeJSON(e.stdout, doc)
	}
	printInspect(e.stdout, dir, &doc)
	return nil
}

func printInspect(w io.Writer, dir string, d *inspectJSON) {
	m := d.Manifest
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "store\t%s\n", dir)
	fmt.Fprintf(tw, "format\tversion %d, codec %s, id %s\n", m.FormatVersion, m.Codec, m.StoreID)
	fmt.Fprintf(tw, "rows\t%s in %d chunks of up to %s rows\n", group(m.Rows), m.Chunks, group(int64(m.ChunkRows)))
	fmt.Fprintf(tw, "columns\t%d features, %d targets\n", len(m.Features), len(m.Targets))
	fmt.Fprintf(tw, "bytes\t%s on disk, %s as float64 (ratio %.2f)\n", mb(d.Bytes), mb(d.RawBytes), d.Ratio)
	fmt.Fprintf(tw, "created\t%s\n", m.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	for i, s := range m.Sources {
		label := ""
		if i == 0 {
			label = "sources"
		}
		rows := "rows unknown"
		if s.Rows >= 0 {
			rows = group(s.Rows) + " rows"
		}
		fmt.Fprintf(tw, "%s\t%s (%s, %s, modified %s)\n", label, s.Path, mb(s.Size), rows, s.ModTime.UTC().Format("2006-01-02 15:04:05"))
	}
	if d.Verified != nil {
		fmt.Fprintf(tw, "verify\tok: every block's checksum matches\n")
	}
	tw.Flush()
	fmt.Fprintln(w)

	rows := [][]string{{"column", "role", "type", "mean", "std", "min", "max", "integral", "distinct"}}
	add := func(c chunkstore.Column, role string) {
		distinct := ">256"
		if c.Distinct != nil {
			distinct = strconv.Itoa(len(c.Distinct))
		}
		integral := "no"
		if c.Integral {
			integral = "yes"
		}
		stats := []string{num(c.Mean), num(c.Std), num(c.Min), num(c.Max)}
		if role == "target" && d.Classes != nil {
			// class codes: their mean is no statistic; the classes follow
			stats = []string{"-", "-", "-", "-"}
		}
		rows = append(rows, append(append([]string{c.Name, role, c.Type}, stats...), integral, distinct))
	}
	for _, c := range m.Features {
		add(c, "feature")
	}
	for _, c := range m.Targets {
		add(c, "target")
	}
	printTable(w, rows, 3)
	if m.Encoding != nil && len(m.Encoding.Columns) > 0 {
		fmt.Fprintln(w)
		printEncoding(w, m.Encoding, m.InputColumns)
	}
	if d.Classes != nil {
		fmt.Fprintln(w)
		printClasses(w, d.Classes)
	}
	if slices.ContainsFunc(m.InputColumns, func(c chunkstore.InputColumn) bool { return c.Role == chunkstore.RoleSkipped }) {
		fmt.Fprintln(w)
		printColumnReport(w, m.InputColumns, true)
	}
}

// printEncoding prints how each encoded input column became features:
// its encoding, its features and the column report's note, which says
// why.
func printEncoding(w io.Writer, spec *featenc.Spec, report []chunkstore.InputColumn) {
	rows := [][]string{{"input column", "encoding", "features", "note"}}
	for _, c := range spec.Columns {
		var how string
		switch c.Kind {
		case featenc.OneHot:
			how = fmt.Sprintf("one-hot, %s", plural(len(c.Levels), "level"))
			if c.Other {
				how += " + " + featenc.OtherLevel
			}
			if c.Null {
				how += " + " + featenc.NullLevel
			}
		case featenc.Target:
			how = fmt.Sprintf("target: mean of %s over %s (prior %s)", c.Target, plural(len(c.Levels), "level"), num(c.Prior))
			if c.Null {
				how += " + " + featenc.NullLevel
			}
		case featenc.Time:
			how = "time: days since 1970-01-01"
			if len(c.Cyclic) > 0 {
				how += " + " + strings.Join(c.Cyclic, ", ")
			}
		default:
			how = string(c.Kind)
		}
		note := ""
		if i := slices.IndexFunc(report, func(r chunkstore.InputColumn) bool { return r.Name == c.Source }); i >= 0 {
			note = report[i].Note
		}
		rows = append(rows, []string{c.Source, how, strconv.Itoa(len(c.Features)), note})
	}
	printTable(w, rows, 4)
}

// printTable prints rows as aligned columns two spaces apart: the first
// left columns flush left, the others flush right (summary.Table).
func printTable(w io.Writer, rows [][]string, left int) { summary.Table(w, rows, left) }

// num formats a statistic with 6 significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// group formats n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func manifestSize(dir string) int64 {
	st, err := os.Stat(filepath.Join(dir, chunkstore.ManifestName))
	if err != nil {
		return 0
	}
	return st.Size()
}
