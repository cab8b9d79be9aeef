package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

func init() {
	register(&command{
		Name:  "predict",
		Short: "apply a model to a store, Parquet or CSV files",
		Usage: "--model MODEL [--out FILE.parquet|FILE.csv|-] [flags] INPUT…",
		Long: `
Predict applies a model made by 'falkon-ooc fit' to INPUT: one chunk store,
or Parquet and CSV/TSV files (files, directories or globs; they are read
once into a temporary store). Feature columns are matched by name, not
position. When the input has the model's target column(s), the metrics are
reported: MSE, RMSE and relative error for regression, classification error
and AUC for binary classification, error for multiclass.

--out writes one row per input row, in input order: the prediction (named
after the target with a _pred suffix) and, for classification, the scores.
'--out -' writes CSV to stdout (JSON Lines with --json) and the summary to
stderr. Without --out only the summary is printed.`,
		Flags: predictFlags,
	})
}

type predictOpts struct {
	model, out, tmpDir string
	workers            int
	jsonOut, quiet     bool
	noHeader           bool
}

func predictFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &predictOpts{}
	fs.StringVar(&o.model, "model", "", "the model `file` (required)")
	fs.StringVar(&o.out, "out", "", "write predictions to this .parquet or .csv `file` ('-': stdout)")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (0: one per CPU)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the summary as one JSON object (JSON Lines predictions with --out -)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.noHeader, "no-header", false, "CSV inputs have no header row (columns c0, c1, …)")
	fs.StringVar(&o.tmpDir, "tmp-dir", "", "`directory` for the temporary store of Parquet/CSV inputs (default: the system's)")
	return func(ctx context.Context, e *env, args []string) error {
		return runPredict(ctx, e, o, args)
	}
}

// predictResult is the summary of predict (--json).
type predictResult struct {
	Version string   `json:"version"`
	Model   string   `json:"model"`
	Inputs  []string `json:"inputs"`
	Out     string   `json:"out,omitempty"`
	Task    ooc.Task `json:"task"`
	Rows    int64    `json:"rows"`
	*ooc.Metrics
	Seconds float64 `json:"seconds"`
}

func runPredict(ctx context.Context, e *env, o *predictOpts, args []string) error {
	if o.model == "" {
		return usagef("--model MODEL is required")
	}
	if len(args) == 0 {
		return usagef("no INPUT given")
	}
	if o.workers < 0 {
		return usagef("--workers must be ≥ 0, got %d", o.workers)
	}
	var format string
	switch {
	case o.out == "" || o.out == "-":
	case strings.HasSuffix(strings.ToLower(o.out), ".parquet"):
		format = "parquet"
	case strings.HasSuffix(strings.ToLower(o.out), ".csv"):
		format = "csv"
	default:
		return usagef("--out %s: the name must end in .parquet or .csv (or be -)", o.out)
	}
	if err := prepareOut(e, "--out", o.out, false, append([]string{o.model}, args...)...); err != nil {
		return err
	}
	start := time.Now()
	m, err := ooc.Load(o.model)
	if err != nil {
		return err
	}
	pr := newProgress(e.stderr, o.quiet)
	summary := e.stdout
	if o.out == "-" {
		summary = e.stderr
	}

	storePath, cleanup, err := openInput(ctx, inputOpts{tmpDir: o.tmpDir, noHeader: o.noHeader, workers: o.workers}, m.Features, m.Targets, args, pr)
	if err != nil {
		return err
	}
	defer cleanup()
	r, err := chunkstore.Open(storePath)
	if err != nil {
		return err
	}
	defer r.Close()
	src, withTargets, err := selectColumns(r, strings.Join(args, " "), m.Features, m.Targets)
	if err != nil {
		return err
	}
	ev := m.NewEvaluator()
	var rows int64
	popts := ooc.PredictOptions{Workers: o.workers, Progress: func(done, total int) {
		pr.update("predict", fmt.Sprintf("%s %d/%d chunks", bar(float64(done)/float64(total)), done, total), done == total)
	}}
	predictAll := func(sink predSink) error {
		return m.Predict(ctx, src, popts, withTargets, func(b ooc.Batch) error {
			rows += int64(b.Rows)
			if withTargets {
				if err := ev.Add(b.Scores, b.Targets, b.Rows); err != nil {
					return err
				}
			}
			if sink != nil {
				return sink.write(m, b)
			}
			return nil
		})
	}
	switch {
	case o.out == "":
		err = predictAll(nil)
	case o.out == "-":
		var sink predSink
		bw := bufio.NewWriter(e.stdout)
		if o.jsonOut {
			sink = &jsonlSink{w: bw}
		} else {
			sink = newCSVSink(bw, m)
		}
		err = predictAll(sink)
		if err == nil {
			err = sink.close()
		}
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	default:
		err = fileutil.WriteFile(o.out, 0o644, func(w io.Writer) error {
			var sink predSink
			if format == "csv" {
				sink = newCSVSink(w, m)
			} else {
				pw, err := ingest.NewParquetWriter(w, outputColumns(m))
				if err != nil {
					return err
				}
				sink = &parquetSink{pw: pw}
			}
			if err := predictAll(sink); err != nil {
				return err
			}
			return sink.close()
		})
	}
	if err != nil {
		return err
	}
	res := predictResult{Version: version, Model: o.model, Inputs: args, Task: m.Task, Rows: rows, Seconds: time.Since(start).Seconds()}
	if o.out != "-" {
		res.Out = o.out
	}
	if withTargets {
		res.Metrics = ev.Metrics()
	}
	if o.jsonOut && o.out != "-" {
		return writeJSON(summary, res)
	}
	fmt.Fprintf(summary, "rows       %d\n", rows)
	if res.Out != "" {
		fmt.Fprintf(summary, "output     %s\n", res.Out)
	}
	if withTargets {
		fmt.Fprintf(summary, "metrics    %s\n", metricsLine(res.Metrics))
	} else {
		fmt.Fprintf(summary, "metrics    none: the input has no target column %q\n", m.Targets)
	}
	return nil
}

// inputOpts are the options of reading Parquet/CSV input for predict or
// validation.
type inputOpts struct {
	tmpDir   string
	noHeader bool
	workers  int
}

// openInput returns a chunk store holding INPUT: the input itself when it
// is one store, else a temporary store ingested from the files, with the
// given features (checked first, naming any that are missing) and the
// targets when the files have them all. cleanup removes the temporary
// store.
func openInput(ctx context.Context, o inputOpts, features, targets []string, args []string, pr *progress) (path string, cleanup func(), err error) {
	if len(args) == 1 {
		if _, err := os.Stat(filepath.Join(args[0], chunkstore.ManifestName)); err == nil {
			return args[0], func() {}, nil
		}
	}
	icfg := ingest.Config{NoHeader: o.noHeader, Workers: o.workers}
	names, err := ingest.ColumnNames(args, icfg)
	if err != nil {
		return "", nil, err
	}
	var missing []string
	for _, f := range features {
		if !slices.Contains(names, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return "", nil, fmt.Errorf("%s: the model's feature column(s) %q are missing; its columns are %q", args[0], missing, names)
	}
	icfg.Features = features
	hasTargets := true
	for _, t := range targets {
		hasTargets = hasTargets && slices.Contains(names, t)
	}
	if hasTargets {
		icfg.Targets = targets
	}
	dir, err := os.MkdirTemp(o.tmpDir, "falkon-ooc-input-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	icfg.Out = filepath.Join(dir, "store")
	icfg.Progress = func(p ingest.Progress) {
		pr.update("read input", fmt.Sprintf("%d rows", p.Rows), false)
	}
	if _, err := ingest.Run(ctx, args, icfg); err != nil {
		cleanup()
		return "", nil, err
	}
	return icfg.Out, cleanup, nil
}

// outputColumns names the prediction columns.
func outputColumns(m *ooc.Model) []string {
	switch m.Task {
	case ooc.TaskBinary:
		return []string{m.Targets[0] + "_pred", "score"}
	case ooc.TaskMulticlass:
		cols := []string{m.Targets[0] + "_pred"}
		for _, c := range m.Classes {
			cols = append(cols, "score_"+strconv.FormatFloat(c, 'g', -1, 64))
		}
		return cols
	}
	cols := make([]string, len(m.Targets))
	for j, t := range m.Targets {
		cols[j] = t + "_pred"
	}
	return cols
}

// outputRow returns one row of output values for scores (length K).
func outputRow(m *ooc.Model, scores []float64, dst []float64) []float64 {
	dst = dst[:0]
	switch m.Task {
	case ooc.TaskRegression:
		return append(dst, scores...)
	default:
		return append(append(dst, m.Label(scores)), scores...)
	}
}

type predSink interface {
	write(m *ooc.Model, b ooc.Batch) error
	close() error
}

type csvSink struct {
	w   *csv.Writer
	row []float64
	rec []string
}

func newCSVSink(w io.Writer, m *ooc.Model) *csvSink {
	s := &csvSink{w: csv.NewWriter(w)}
	s.w.Write(outputColumns(m))
	return s
}

func (s *csvSink) write(m *ooc.Model, b ooc.Batch) error {
	for r := range b.Rows {
		s.row = outputRow(m, b.Scores[r*m.K:(r+1)*m.K], s.row)
		s.rec = s.rec[:0]
		for _, v := range s.row {
			s.rec = append(s.rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := s.w.Write(s.rec); err != nil {
			return err
		}
	}
	return s.w.Error()
}

func (s *csvSink) close() error {
	s.w.Flush()
	return s.w.Error()
}

type jsonlSink struct {
	w    io.Writer
	cols []string
	row  []float64
}

func (s *jsonlSink) write(m *ooc.Model, b ooc.Batch) error {
	if s.cols == nil {
		s.cols = outputColumns(m)
	}
	for r := range b.Rows {
		s.row = outputRow(m, b.Scores[r*m.K:(r+1)*m.K], s.row)
		obj := make(map[string]float64, len(s.cols))
		for j, c := range s.cols {
			obj[c] = s.row[j]
		}
		line, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		if _, err := s.w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func (s *jsonlSink) close() error { return nil }

type parquetSink struct {
	pw   *ingest.ParquetWriter
	cols [][]float64
	row  []float64
}

func (s *parquetSink) write(m *ooc.Model, b ooc.Batch) error {
	if b.Rows == 0 {
		return nil
	}
	for r := range b.Rows {
		s.row = outputRow(m, b.Scores[r*m.K:(r+1)*m.K], s.row)
		if s.cols == nil {
			s.cols = make([][]float64, len(s.row))
		}
		for j, v := range s.row {
			s.cols[j] = append(s.cols[j], v)
		}
	}
	err := s.pw.Write(s.cols)
	for j := range s.cols {
		s.cols[j] = s.cols[j][:0]
	}
	return err
}

func (s *parquetSink) close() error {
	return s.pw.Close()
}
