package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// isData reports whether inspect's argument is Parquet/CSV data rather
// than a store or a model: a data file by its first bytes, a directory
// that is not a store (a folder of data files, Hive partitions), or a
// glob pattern or data file name that names no file (ingest's error then
// says so).
func isData(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		name := strings.TrimSuffix(strings.ToLower(path), ".gz")
		for _, ext := range []string{".parquet", ".parq", ".pq", ".csv", ".tsv"} {
			if strings.HasSuffix(name, ext) {
				return true
			}
		}
		return strings.ContainsAny(path, "*?[")
	}
	if st.IsDir() {
		return !isStore(path)
	}
	switch fileKind(path) {
	case "a CSV file", "a TSV file", "a Parquet file", "a gzip-compressed file", "a text file":
		return true
	}
	return false
}

// inspectDataJSON is the --json document of inspect INPUT…: ingest's
// document without the store.
type inspectDataJSON struct {
	Version string `json:"version"`
	*ingest.Result
	Config ingestConfig `json:"config"`
}

// inspectData reads the inputs as ingest would, without writing a store
// (ingest.DryRun), and prints what ingest would store and its column
// report.
func inspectData(ctx context.Context, e *env, o *inspectOpts, args []string) error {
	d := &o.data
	if d.nulls != "error" && d.nulls != "drop" && d.nulls != "mean" {
		return usagef("--nulls must be error, drop or mean, not %q", d.nulls)
	}
	for _, a := range args {
		if a == "-" {
			return usagef("inspect reads files, not standard input (-): ingest - reads it")
		}
	}
	cfg := ingest.Config{
		Targets:  cliflags.SplitList(d.target),
		Features: cliflags.SplitList(d.features),
		Exclude:  cliflags.SplitList(d.exclude),
		Weight:   strings.TrimSpace(d.weight),
		Nulls:    d.nulls,
		NoHeader: d.noHeader || d.columns != "",
		Columns:  cliflags.SplitList(d.columns),
		MaxLine:  d.maxLine,
	}
	if err := d.tables.Apply(&cfg); err != nil {
		return err
	}
	pr := newProgress(e.stderr, o.quiet)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	ingestMemoryLimit(ingest.InspectMemory(cfg.MaxLine))
	cfg.Progress = func(p ingest.Progress) {
		if p.Memory != nil {
			ingestMemoryLimit(max(p.Memory.Total, ingest.InspectMemory(cfg.MaxLine)))
			return
		}
		pr.update("inspect", progressLine(p), false)
	}
	res, err := ingest.DryRun(ctx, args, cfg)
	if err != nil {
		return nullsHint(err)
	}
	pr.update("inspect", fmt.Sprintf("%d rows, %s in %.1fs", res.Rows, mb(res.BytesIn), res.Seconds), true)
	noteSkipped(e.stderr, res.Skipped)
	if o.jsonOut {
		return writeJSON(e.stdout, inspectDataJSON{Version: version, Result: res, Config: ingestConfig{Config: cfg, Inputs: args}})
	}
	printInspectData(e.stdout, res)
	return nil
}

func printInspectData(w io.Writer, r *ingest.Result) {
	fmt.Fprintf(w, "inputs    %s, %s: %s\n", plural(len(r.Files), "file"), mb(r.BytesIn), shortList(r.Files, 3))
	fmt.Fprintf(w, "rows      %d", r.Rows)
	if r.Dropped > 0 {
		fmt.Fprintf(w, " (%d rows with NULL, NaN or ±Inf would be dropped)", r.Dropped)
	}
	fmt.Fprintln(w, nullsNote(r))
	fmt.Fprintf(w, "features  %d: %s\n", len(r.Features), featureList(r.Features, r.Columns))
	if len(r.Targets) > 0 {
		fmt.Fprintf(w, "targets   %d: %s\n", len(r.Targets), strings.Join(r.Targets, ", "))
	} else {
		fmt.Fprintf(w, "targets   none (--target COL names them)\n")
	}
	if r.Weight != "" {
		fmt.Fprintf(w, "weight    %s\n", r.Weight)
	}
	fmt.Fprintf(w, "store     ingest would write %s of up to %d rows and need ≈ %s of memory\n", plural(r.Chunks, "chunk"), r.ChunkRows, ooc.FormatBytes(r.Memory.Total))
	fmt.Fprintln(w)
	printColumnReport(w, r.Columns, false)
}

// shortList joins up to n names, with how many more.
func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d more)", strings.Join(names[:n], ", "), len(names)-n)
}
