package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	fbeam "github.com/falkon-ooc/falkon-ooc/beam"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/summary"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

const predictUsage = `usage: falkon-ooc-beam predict --model MODEL --out DIR|FILE.parquet|--beside [flags] INPUT…

Predict applies a model made by falkon-ooc fit (or falkon-ooc-beam fit)
to Parquet and CSV/TSV files (files, directories, glob patterns) as an
Apache Beam job of one task per input file. Each task reads its file with
falkon-ooc predict's own code and writes its predictions as Parquet:
under --out DIR at the file's path below the argument that named it
(hive/year=2021/data_0.parquet → DIR/year=2021/data_0.pred.parquet: the
folders, Hive's key=value ones included, are mirrored), to --out
FILE.parquet for a single input, or with --beside next to the input
(part-0.csv → part-0.pred.parquet); --suffix changes the ending. Nothing
is written beside the inputs unless --beside asks. Files of predictions
written by falkon-ooc (recognised by a key in their Parquet footer) that
an input folder or glob holds are not read, and counted. Outputs are
checked before any work as falkon-ooc's are: none may be an input or the
model, nor lie in an input folder (--out), and an existing file that is
not falkon-ooc's predictions is replaced only with --force. Each file
holds the --keep columns, the prediction and the scores (or --proba's
probabilities, --std's standard deviations, --interval's bounds), one row
per input row in input order. Each output is the file 'falkon-ooc predict
--out OUT.parquet' writes for that input alone. MODEL must be a path
every worker reaches (a shared filesystem); the inputs too, or s3:// or
gs:// URLs (an object, a pattern, or a prefix whose data objects are
read), each copied to the worker and its predictions written as an
object beside it. A NULL, NaN or ±Inf
feature stops the job with falkon-ooc predict's message (the first input
in order that has one), and no output is left; --nulls as in falkon-ooc
predict, whose default is the model's: mean for a model fitted on data
ingested with --nulls mean. When every input has the model's target
column(s), the metrics, and for a classifier its decision and each
class's precision, recall, F1 and the confusion matrix, are printed as
falkon-ooc predict prints them (each task's rows scored by its code,
merged in input order). The runner flags are fit's.

flags:
`

type predictOpts struct {
	fitOpts
	model, keep, nulls, columns, suffix string
	predOut                             string
	maxLine                             int
	noHeader, proba, std, beside        bool
	interval                            float64
	intervalMethod                      string
}

func predictFlags(fs *flag.FlagSet, o *predictOpts) {
	fs.StringVar(&o.model, "model", "", "the model `file` (required)")
	fs.StringVar(&o.keep, "keep", "", "input `column`s copied beside the predictions, comma-separated (ids, keys; any type)")
	fs.StringVar(&o.nulls, "nulls", "", "what a NULL, NaN or ±Inf in a feature does: error, drop (the row), mean (read as the feature's training mean) or zero (read as 0); default: mean for a model fitted on data ingested with --nulls mean, else error")
	fs.BoolVar(&o.proba, "proba", false, "write calibrated class probabilities (p_CLASS columns) instead of the scores")
	fs.BoolVar(&o.std, "std", false, "write each prediction's predictive standard deviation (models fitted with fit --uncertainty)")
	fs.Float64Var(&o.interval, "interval", 0, "write a central `level` interval, e.g. 0.9")
	fs.StringVar(&o.intervalMethod, "interval-method", "", "how --interval's bounds are set: conformal (the model's calibration on its validation residuals) or gaussian (± z·std of a normal); default: conformal when the model has it for the level, else gaussian")
	fs.BoolVar(&o.noHeader, "no-header", false, "CSV inputs have no header row (columns c0, c1, …)")
	fs.StringVar(&o.columns, "columns", "", "names for the columns of headerless CSV inputs, comma-separated (implies --no-header)")
	fs.IntVar(&o.maxLine, "max-line", ingest.DefaultMaxLine, "longest text record in `bytes`")
	fs.StringVar(&o.predOut, "out", "", "write the predictions under this `directory` (mirroring the inputs' folders), or to this .parquet file for a single input; a path or URL")
	fs.BoolVar(&o.beside, "beside", false, "write each input's predictions beside it (part-0.csv → part-0.pred.parquet)")
	fs.StringVar(&o.suffix, "suffix", fbeam.DefaultPredictSuffix, "what replaces each input's extension in its output's name")
	fs.BoolVar(&o.Force, "force", false, "replace existing outputs that are not falkon-ooc's predictions (never an input or the model)")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines per task on a worker (0: one per CPU)")
	o.partitions = 1 // not used: one task per input
	runnerFlags(fs, &o.fitOpts, true)
}

// predictResult is predict's --json document.
type predictResult struct {
	Version string `json:"version"`
	Model   string `json:"model"`
	*fbeam.PredictResult
	Beam beamResult `json:"beam"`
}

func runPredict(ctx context.Context, o *predictOpts, args []string, stdout, stderr io.Writer) error {
	switch {
	case o.model == "":
		return usagef("--model MODEL is required")
	case len(args) == 0:
		return usagef("no INPUT given")
	case o.nulls != "" && o.nulls != "error" && o.nulls != "drop" && o.nulls != "mean" && o.nulls != "zero":
		return usagef("--nulls must be error, drop, mean or zero, not %q", o.nulls)
	case o.interval != 0 && !(o.interval > 0 && o.interval < 1):
		return usagef("--interval must be a level in (0, 1) such as 0.9, got %g", o.interval)
	case o.intervalMethod != "" && o.intervalMethod != "conformal" && o.intervalMethod != "gaussian":
		return usagef("--interval-method: unknown interval method %q (want gaussian or conformal)", o.intervalMethod)
	case o.intervalMethod != "" && o.interval == 0:
		return usagef("--interval-method %s needs --interval", o.intervalMethod)
	case o.suffix == "":
		return usagef("--suffix must not be empty")
	}
	for _, a := range args {
		if a == "-" {
			return usagef("standard input (-) cannot be predicted on Beam; give files")
		}
	}
	switch {
	case o.predOut == "" && !o.beside:
		return usagef("give --out DIR (or --out FILE.parquet for a single input) for the predictions, or --beside to write each beside its input")
	case o.predOut != "" && o.beside:
		return usagef("--out and --beside exclude each other")
	}
	if err := o.checkRunner(); err != nil {
		return err
	}
	say, done, err := o.startRunner(stderr)
	if err != nil {
		return err
	}
	defer done()
	cfg := fbeam.PredictConfig{Model: o.model, Inputs: args, Keep: cliflags.SplitList(o.keep), Nulls: o.nulls,
		NoHeader: o.noHeader || o.columns != "", Columns: cliflags.SplitList(o.columns), MaxLine: o.maxLine,
		Proba: o.proba, Std: o.std, Interval: o.interval, IntervalMethod: o.intervalMethod, Out: o.predOut, Beside: o.beside, Suffix: o.suffix, Force: o.Force, Workers: o.Workers}
	var br beamResult
	opts := o.beamOptions("", &br, say)
	res, err := fbeam.Predict(ctx, cfg, opts)
	if err != nil {
		var ve *tabular.ValueError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w (--nulls mean reads such values as the feature's training mean, --nulls drop skips such rows, --nulls zero reads them as 0)", err)
		}
		return guardErr(err)
	}
	if o.nulls == "" && res.Nulls == "mean" { // the training's policy travels with the model
		fmt.Fprintf(stderr, "falkon-ooc-beam: model %s was fitted on data whose NULL features were filled with their means (--nulls mean): NULL, NaN and ±Inf features read as their training means; --nulls error refuses them\n", o.model)
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(stderr, "falkon-ooc-beam: %s\n", ingest.SkippedNote(len(res.Skipped)))
	}
	for _, u := range res.Unseen {
		to := "with all its one-hot features 0"
		if u.To != "" {
			to = "as " + u.To
		}
		noun := "values"
		if u.Count == 1 {
			noun = "value"
		}
		fmt.Fprintf(stderr, "falkon-ooc-beam: %d %s of column %q not among the model's levels, read %s\n", u.Count, noun, u.Column, to)
	}
	if o.JSON {
		b, err := json.MarshalIndent(predictResult{Version: version, Model: o.model, PredictResult: res, Beam: br}, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(stdout, "rows       %d\n", res.Rows)
	if res.Dropped > 0 {
		fmt.Fprintf(stdout, "dropped    %d rows with a NULL, NaN or ±Inf feature\n", res.Dropped)
	}
	for _, f := range res.Files {
		fmt.Fprintf(stdout, "output     %s (%d rows)\n", f.Output, f.Rows)
	}
	if o.interval > 0 {
		z := res.IntervalZOutputs
		if z == nil {
			z = []float64{res.IntervalZ}
		}
		fmt.Fprintf(stdout, "interval   %s\n", predictfile.IntervalLine(o.interval, res.IntervalMethod, z, res.Targets))
	}
	if res.Metrics != nil {
		fmt.Fprintf(stdout, "metrics    %s\n", predictfile.MetricsLine(res.Metrics))
		if len(res.Metrics.Classes) > 0 {
			// A classifier: its decision and the classes' lines, as
			// falkon-ooc predict prints them.
			if l := summary.DecisionLine(res.Model); l != "" {
				fmt.Fprintf(stdout, "decision   %s\n", l)
			}
			summary.ClassReport(stdout, res.Metrics)
		}
		if res.Unscored > 0 {
			fmt.Fprintf(stdout, "unscored   %d rows with a NULL, NaN or ±Inf target\n", res.Unscored)
		}
	}
	fmt.Fprintf(stdout, "beam       %s, %d jobs (%d failed), %.2f s in jobs\n", br.Runner, br.Jobs, br.Failed, br.JobSeconds)
	return nil
}
