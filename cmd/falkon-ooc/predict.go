package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

func init() {
	register(&command{
		Name:  "predict",
		Short: "apply a model to a store, Parquet or CSV files",
		Usage: "--model MODEL [--out FILE.parquet|FILE.csv|-] [flags] INPUT…",
		Long: `
Predict applies a model made by 'falkon-ooc fit' to INPUT: one chunk
store, or Parquet and CSV/TSV files (files, directories or globs), or '-'
for standard input (CSV, or Parquet recognised by its magic bytes and
spooled to a temporary file). Files are read once, batch by batch, and the
predictions written as they go: memory is bounded by a batch. Feature
columns are matched by name, not position; key=value folders (Hive
partitions) are columns, read from the folder names as ingest reads them,
so a model fitted on such a folder predicts it (--keep copies a key as
text). When the input has the model's target column(s), the metrics are
reported (weighted when the input has the store's weight column): RMSE,
MAE, R², MSE and relative error (1 − R²) for regression; error rate,
accuracy, balanced accuracy (the mean recall over the classes), AUC
(one-vs-rest macro average for multiclass), PR-AUC (average precision,
binary), log-loss and expected calibration error (ECE, 15 equal-width bins
of the top-class probability) for classification, with precision, recall
and F1 per class and the confusion matrix (one line per class up to 10
classes; all in --json). Rows whose target is NULL are predicted but not
scored.

A classifier's label is the decision its probabilities imply: for
multiclass the class of the largest probability; for binary the second
class when its probability is at least the model's threshold (0.5, or
what fit --threshold chose and stored), so no label disagrees with the
probability printed beside it.

--out writes one row per input row, in input order: the --keep columns
(ids, keys: any type, copied unchanged), the prediction (named after the
target with a _pred suffix; the class name for a string target) and, for
classification, the raw scores (score, or score_CLASS per class).
'--out -' writes CSV to stdout (JSON Lines with --json) and the summary
to stderr. Without --out only the summary is printed.

--proba writes class probabilities instead of the scores: one column per
class, p_CLASS, each row summing to 1. They are calibrated on the
validation rows of the fit (fit --val-fraction or --val): for binary
models by Platt scaling, P = 1/(1 + exp(−(A·score + B))); for multiclass
models by a softmax temperature, P = softmax(scores / T), which keeps the
predicted class; A, B or T minimise the log-loss on those rows. A model
fitted without validation rows has no calibration, and --proba refuses
it (refit with --val-fraction). 'inspect MODEL' shows the calibration.

A NULL, NaN or ±Inf in a feature stops the prediction with the file,
column and row. --nulls mean reads it as the feature's training mean,
which the model keeps (0 after standardisation, as ingest --nulls mean
fills the training data); --nulls drop leaves such rows out of the
output (and counts them); --nulls zero reads the value as 0 in the
feature's own units.`,
		Flags: predictFlags,
	})
}

type predictOpts struct {
	model, out, tmpDir   string
	keep, nulls, columns string
	workers, maxLine     int
	jsonOut, quiet       bool
	noHeader             bool
	proba                bool
	std                  bool
	interval             float64
	intervalMethod       string
}

func predictFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &predictOpts{}
	fs.StringVar(&o.model, "model", "", "the model `file` (required)")
	fs.StringVar(&o.out, "out", "", "write predictions to this .parquet or .csv `file` ('-': stdout)")
	fs.StringVar(&o.keep, "keep", "", "input `column`s copied beside the predictions, comma-separated (ids, keys; any type)")
	fs.StringVar(&o.nulls, "nulls", "", "what a NULL, NaN or ±Inf in a feature does: error, drop (the row), mean (read as the feature's training mean) or zero (read as 0); default: mean for a model fitted on data ingested with --nulls mean, else error")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (0: one per CPU)")
	fs.BoolVar(&o.proba, "proba", false, "write calibrated class probabilities (p_CLASS columns) instead of the scores")
	fs.BoolVar(&o.std, "std", false, "write each prediction's predictive standard deviation (TARGET_std columns; models fitted with fit --uncertainty)")
	fs.Float64Var(&o.interval, "interval", 0, "write a central `level` interval, e.g. 0.9 (TARGET_lower, TARGET_upper columns; models fitted with fit --uncertainty)")
	fs.StringVar(&o.intervalMethod, "interval-method", "", "how --interval's bounds are set: conformal (the model's calibration on its validation residuals) or gaussian (± z·std of a normal); default: conformal when the model has it for the level, else gaussian")
	fs.BoolVar(&o.jsonOut, "json", false, "print the summary as one JSON object (JSON Lines predictions with --out -)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.noHeader, "no-header", false, "CSV inputs have no header row (columns c0, c1, …)")
	fs.StringVar(&o.columns, "columns", "", "names for the columns of headerless CSV inputs, comma-separated (implies --no-header)")
	maxLineFlag(fs, &o.maxLine)
	fs.StringVar(&o.tmpDir, "tmp-dir", "", "`directory` for spooling Parquet read from standard input (default: the system's)")
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
	Keep    []string `json:"keep,omitempty"`
	Nulls   string   `json:"nulls"`
	Task    ooc.Task `json:"task"`
	// Classes names the classes of a classification model.
	Classes []string `json:"classes,omitempty"`
	// Proba says that the output holds calibrated probabilities.
	Proba bool  `json:"proba,omitempty"`
	Rows  int64 `json:"rows"`
	// Dropped counts input rows left out for a NULL, NaN or ±Inf feature
	// (--nulls drop).
	Dropped int64 `json:"dropped"`
	// Unscored counts predicted rows whose target is NULL, NaN or ±Inf.
	Unscored int64 `json:"unscored,omitempty"`
	// Std and Interval say that the output holds standard deviations
	// and interval bounds; Uncertainty is how they did on the targets.
	Std      bool    `json:"std,omitempty"`
	Interval float64 `json:"interval,omitempty"`
	// IntervalMethod and IntervalZ are how the bounds were set:
	// score ± IntervalZ·std; IntervalZOutputs holds each output's
	// multiplier instead when they differ (a model calibrated output by
	// output).
	IntervalMethod   ooc.IntervalMethod     `json:"interval_method,omitempty"`
	IntervalZ        float64                `json:"interval_z,omitempty"`
	IntervalZOutputs []float64              `json:"interval_z_outputs,omitempty"`
	Uncertainty      *predictfile.StdReport `json:"uncertainty,omitempty"`
	// Decision is how a binary model labels the rows (model.Decision).
	Decision *model.Decision `json:"decision,omitempty"`
	// Unseen counts, per categorical column, the values whose level the
	// model does not know (they count as the column's "(other)").
	Unseen []featenc.Unseen `json:"unseen,omitempty"`
	*ooc.Metrics
	Seconds float64 `json:"seconds"`
}

// predictRun is the state of one prediction: predictfile's Predictor,
// the summary and the progress.
type predictRun struct {
	*predictfile.Predictor
	m   *ooc.Model
	res predictResult
	pr  *progress
}

func runPredict(ctx context.Context, e *env, o *predictOpts, args []string) (rerr error) {
	if o.model == "" {
		return usagef("--model MODEL is required")
	}
	if len(args) == 0 {
		return usagef("no INPUT given")
	}
	if o.workers < 0 {
		return usagef("--workers must be ≥ 0, got %d", o.workers)
	}
	switch o.nulls {
	case "", "error", "drop", "zero", "mean":
	default:
		return usagef("--nulls must be error, drop, mean or zero, not %q", o.nulls)
	}
	format := tabular.CSV
	switch {
	case o.out == "":
	case o.out == "-":
		if o.jsonOut {
			format = tabular.JSONLines
		}
	default:
		f, ok := tabular.FormatOf(o.out)
		if !ok {
			return usagef("--out %s: the name must end in .parquet or .csv (or be -)", o.out)
		}
		format = f
	}
	for _, a := range args {
		if a == "-" && len(args) > 1 {
			return usagef("standard input (-) must be the only INPUT")
		}
	}
	if err := prepareOut(e, "--out", o.out, false, inputPaths(append([]string{o.model}, args...)...)...); err != nil {
		return err
	}
	start := time.Now()
	m, err := loadModel(o.model)
	if err != nil {
		return err
	}
	if err := checkProba(o, m); err != nil {
		return err
	}
	if o.nulls == "" { // the training's policy travels with the model
		if o.nulls = predictfile.DefaultNulls(m.Model); o.nulls == "mean" {
			fmt.Fprintf(e.stderr, "predict: model %s was fitted on data whose NULL features were filled with their means (--nulls mean): NULL, NaN and ±Inf features read as their training means; --nulls error refuses them\n", o.model)
		}
	}
	if err := checkStd(o, m); err != nil {
		return err
	}
	popt := predictfile.Options{Workers: o.workers, Proba: o.proba, Std: o.std || o.interval > 0, ShowStd: o.std,
		Interval: o.interval, IntervalMethod: ooc.IntervalMethod(o.intervalMethod)}
	p := &predictRun{m: m, pr: newProgress(e.stderr, o.quiet)}
	popt.Progress = func(rows int64) { p.pr.update("predict", fmt.Sprintf("%s rows", humanCount(rows)), false) }
	p.res = predictResult{Version: version, Model: o.model, Inputs: args, Task: m.Task(), Keep: cliflags.SplitList(o.keep), Nulls: o.nulls,
		Classes: m.ClassNames(), Proba: o.proba, Std: o.std, Interval: o.interval}
	popt.Keep = p.res.Keep
	if p.Predictor, err = predictfile.New(m.Model, popt); err != nil {
		return err
	}
	if o.interval > 0 {
		p.res.IntervalMethod = p.IntervalMethod
		p.res.IntervalZ, p.res.IntervalZOutputs = predictfile.SplitZ(p.Z())
	}
	summary := e.stdout
	if o.out == "-" {
		summary = e.stderr
	}

	// write runs the prediction into w (nil: no output).
	var write func(w io.Writer) error
	if len(args) == 1 && isStore(args[0]) {
		if o.keep != "" {
			return usagef("--keep copies columns of Parquet or CSV input; %s is a chunk store, whose rows are in input order (join by position)", args[0])
		}
		write = func(w io.Writer) error { return p.fromStore(ctx, args[0], w, format, o.workers) }
	} else {
		files := args
		if args[0] != "-" {
			var skipped []string
			if files, skipped, err = ingest.List(args); err != nil {
				return err
			}
			noteSkipped(e.stderr, skipped)
		} else {
			stdin, cleanup, err := spoolStdin(e.stdin, o.tmpDir)
			if err != nil {
				return fmt.Errorf("standard input: %w", err)
			}
			defer cleanup()
			if stdin.path != "" {
				files = []string{stdin.path}
				defer func() { rerr = renamePath(rerr, stdin.path, "standard input (Parquet)") }()
			} else {
				e.stdin = stdin.r
			}
		}
		topt, err := predictfile.TableOptions(m.Model, o.model, predictfile.Input{Keep: p.res.Keep, Nulls: o.nulls,
			NoHeader: o.noHeader || o.columns != "", Names: cliflags.SplitList(o.columns), MaxLine: o.maxLine})
		if err != nil {
			return err
		}
		topt.Stdin = e.stdin
		r, err := tabular.Open(files, topt)
		if err != nil {
			return predictfile.ExplainMissing(err, m.Features(), p.res.Keep)
		}
		defer r.Close()
		write = func(w io.Writer) error {
			if err := p.Files(ctx, r, w, format); err != nil {
				return err
			}
			p.pr.update("predict", fmt.Sprintf("%s rows", humanCount(p.Rows)), true)
			return nil
		}
	}

	switch o.out {
	case "":
		err = write(nil)
	case "-":
		bw := bufio.NewWriter(e.stdout)
		err = write(bw)
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	default:
		err = fileutil.WriteFile(o.out, 0o644, write)
	}
	if err != nil {
		var ve *tabular.ValueError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w (--nulls mean reads such values as the feature's training mean, --nulls drop skips such rows, --nulls zero reads them as 0)", err)
		}
		return err
	}
	res := &p.res
	res.Rows, res.Dropped, res.Unscored = p.Rows, p.Dropped, p.Unscored
	res.Unseen = p.Unseen()
	for _, u := range res.Unseen {
		to := "with all its one-hot features 0"
		if u.To != "" {
			to = "as " + u.To
		}
		fmt.Fprintf(e.stderr, "predict: %s of column %q not among the model's levels, read %s\n", plural(int(u.Count), "value"), u.Column, to)
	}
	res.Seconds = time.Since(start).Seconds()
	if o.out != "-" {
		res.Out = o.out
	}
	if d, ok := p.m.Decision(); ok {
		res.Decision = &d
	}
	if p.WithTargets {
		res.Metrics = p.Ev.Metrics()
		if p.Std != nil {
			res.Uncertainty = p.Std.Report(o.interval)
		}
	}
	if o.jsonOut && o.out != "-" {
		return writeJSON(summary, res)
	}
	if o.jsonOut { // --out - --json: the summary on stderr, as JSON too
		return writeJSON(summary, res)
	}
	fmt.Fprintf(summary, "rows       %d\n", res.Rows)
	if res.Dropped > 0 {
		fmt.Fprintf(summary, "dropped    %d rows with a NULL, NaN or ±Inf feature\n", res.Dropped)
	}
	if res.Out != "" {
		fmt.Fprintf(summary, "output     %s\n", res.Out)
	}
	if res.Interval > 0 {
		fmt.Fprintf(summary, "interval   %s\n", predictfile.IntervalLine(res.Interval, res.IntervalMethod, p.Z(), p.m.Targets()))
	}
	switch {
	case p.WithTargets:
		fmt.Fprintf(summary, "metrics    %s\n", metricsLine(res.Metrics))
		if l := decisionLine(p.m); l != "" {
			fmt.Fprintf(summary, "decision   %s\n", l)
		}
		writeClassReport(summary, res.Metrics)
		if res.Uncertainty != nil {
			fmt.Fprintf(summary, "intervals  %s\n", res.Uncertainty.Line())
		}
		if res.Unscored > 0 {
			fmt.Fprintf(summary, "unscored   %d rows with a NULL, NaN or ±Inf target\n", res.Unscored)
		}
	default:
		fmt.Fprintf(summary, "metrics    none: the input has no target column %q\n", m.Targets())
	}
	return nil
}

// renamePath replaces a temporary file's name in err's text by what the
// user knows it as.
func renamePath(err error, path, as string) error {
	if err == nil || !strings.Contains(err.Error(), path) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), path, as))
}

// isStore reports whether path is a chunk store directory.
func isStore(path string) bool {
	_, err := os.Stat(filepath.Join(path, chunkstore.ManifestName))
	return err == nil
}

// stdinInput is standard input made readable: a spooled Parquet file, or
// a text stream.
type stdinInput struct {
	path string
	r    io.Reader
}

// spoolStdin looks at the first bytes of in: Parquet ("PAR1") is copied to
// a temporary file (its footer is at the end), anything else is read as
// delimited text as it arrives.
func spoolStdin(in io.Reader, tmpDir string) (stdinInput, func(), error) {
	if in == nil {
		return stdinInput{}, nil, errors.New("no standard input")
	}
	br := bufio.NewReaderSize(in, 1<<16)
	head, err := br.Peek(4)
	if err != nil && err != io.EOF {
		return stdinInput{}, nil, err
	}
	if string(head) != "PAR1" {
		return stdinInput{r: br}, func() {}, nil
	}
	f, err := os.CreateTemp(tmpDir, "falkon-ooc-stdin-*.parquet")
	if err != nil {
		return stdinInput{}, nil, err
	}
	cleanup := func() { os.Remove(f.Name()) }
	_, err = io.Copy(f, br)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return stdinInput{}, nil, err
	}
	return stdinInput{path: f.Name()}, cleanup, nil
}

// fromStore predicts a chunk store, chunk by chunk.
func (p *predictRun) fromStore(ctx context.Context, path string, w io.Writer, format tabular.Format, workers int) error {
	m := p.m
	r, err := chunkstore.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	src, withTargets, err := selectColumns(r, path, m.Features(), m.Targets())
	if err != nil {
		return err
	}
	p.WithTargets = withTargets
	if withTargets {
		if src, err = m.Relabel(src); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	var tw *tabular.Writer
	if w != nil {
		if tw, err = tabular.NewColumnWriter(w, format, nil, p.Columns()); err != nil {
			return err
		}
		if err := tw.MarkPredictions(); err != nil {
			return err
		}
	}
	popts := ooc.PredictOptions{Workers: workers, Std: p.Std != nil, Progress: func(done, total int) {
		p.pr.update("predict", fmt.Sprintf("%s %d/%d chunks", bar(float64(done)/float64(total)), done, total), done == total)
	}}
	err = m.Predict(ctx, src, popts, withTargets, func(b ooc.Batch) error {
		p.Rows += int64(b.Rows)
		if withTargets {
			if err := p.Ev.Add(b.Scores, b.Targets, b.Rows); err != nil {
				return err
			}
			if p.Std != nil {
				for i, y := range b.Targets {
					p.Std.Add(y-b.Scores[i], b.Std[i])
				}
			}
		}
		if tw == nil {
			return nil
		}
		return tw.Write(nil, p.Output(b.Scores, b.Std, b.Rows))
	})
	if err != nil {
		return err
	}
	if tw != nil {
		return tw.Close()
	}
	return nil
}

// checkProba refuses --proba for a model without calibrated
// probabilities.
func checkProba(o *predictOpts, m *ooc.Model) error {
	switch {
	case !o.proba:
	case m.Task() == ooc.TaskRegression:
		return fmt.Errorf("--proba: %s is a regression model; probabilities need a binary or multiclass model", o.model)
	case !m.HasProba():
		return fmt.Errorf("--proba: model %s has no calibrated probabilities: it was fitted without validation rows; refit with --val-fraction F (or --val INPUT) to calibrate them", o.model)
	}
	return nil
}
