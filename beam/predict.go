package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/internal/outguard"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// kindPredict is the task kind of Predict.
const kindPredict = "predict"

// PredictConfig says what Predict reads and writes. Its fields are
// falkon-ooc predict's flags of the same names.
type PredictConfig struct {
	// Model is the model file (falkon-ooc fit's), at a path every worker
	// reaches.
	Model string `json:"model"`
	// Inputs are Parquet or CSV files, directories or glob patterns,
	// expanded as falkon-ooc ingest and predict expand them.
	Inputs []string `json:"inputs"`
	// Keep names input columns copied beside the predictions.
	Keep []string `json:"keep,omitempty"`
	// Nulls: error, drop, mean or zero; "" is the model's policy
	// (predictfile.DefaultNulls: mean for a model fitted on data whose
	// NULL features were filled with their means, else error).
	Nulls    string   `json:"nulls"`
	NoHeader bool     `json:"no_header,omitempty"`
	Columns  []string `json:"columns,omitempty"`
	MaxLine  int      `json:"max_line,omitempty"`
	// Proba writes calibrated probabilities; Std the standard deviations;
	// Interval a central interval of that level.
	Proba    bool    `json:"proba,omitempty"`
	Std      bool    `json:"std,omitempty"`
	Interval float64 `json:"interval,omitempty"`
	// IntervalMethod sets the interval's multipliers: "conformal",
	// "gaussian", or "" for the model's conformal calibration when it
	// reaches the level, else gaussian (model.IntervalMethod).
	IntervalMethod string `json:"interval_method,omitempty"`
	// Out is where the predictions go: a directory, under which each
	// input's predictions take the input's path relative to the argument
	// that named it (a folder's subfolders, Hive's key=value ones
	// included, are mirrored), or a file whose name ends in .parquet for
	// a single input; a path or a URL. "" with Beside: beside each input.
	Out string `json:"out,omitempty"`
	// Beside writes each input's predictions beside it (OutputName); it
	// excludes Out, and one of them is required.
	Beside bool `json:"beside,omitempty"`
	// Suffix replaces each input's extension(s) in its output's name;
	// "": DefaultPredictSuffix.
	Suffix string `json:"suffix,omitempty"`
	// Force replaces existing outputs that are not falkon-ooc's
	// predictions (an input, the model or a store never).
	Force bool `json:"force,omitempty"`
	// Outputs is each input's output, set by Predict for its tasks.
	Outputs []string `json:"outputs,omitempty"`
	// Workers is the number of goroutines per task; 0: one per CPU.
	Workers int `json:"workers,omitempty"`
}

// DefaultPredictSuffix names an input's predictions: part-0.csv gives
// part-0.pred.parquet beside it.
const DefaultPredictSuffix = ".pred.parquet"

// PredictFile is one input's predictions.
type PredictFile struct {
	Input    string `json:"input"`
	Output   string `json:"output"`
	Rows     int64  `json:"rows"`
	Dropped  int64  `json:"dropped"`
	Unscored int64  `json:"unscored,omitempty"`
	// Unseen counts, per categorical column, the values whose level the
	// model's encoding does not hold (read as its "(other)" feature, or
	// with all its features 0), as falkon-ooc predict counts them.
	Unseen []featenc.Unseen `json:"unseen,omitempty"`
	// Err is the error that stopped the file's prediction, as falkon-ooc
	// predict words it; ValueErr holds it when it is a NULL, NaN or ±Inf.
	Err      string              `json:"err,omitempty"`
	ValueErr *tabular.ValueError `json:"value_error,omitempty"`
	// Eval, when the input has the model's target columns, is what its
	// rows' metrics accumulated (ooc.Evaluator.MarshalBinary); the driver
	// merges them and clears it.
	Eval []byte `json:"eval,omitempty"`
}

// PredictResult sums up Predict.
type PredictResult struct {
	Files []PredictFile `json:"files"`
	// Skipped are the files of predictions written by falkon-ooc that the
	// input folders held, which were not read (ingest.SkippedNote).
	Skipped  []string `json:"skipped_predictions,omitempty"`
	Rows     int64    `json:"rows"`
	Dropped  int64    `json:"dropped"`
	Unscored int64    `json:"unscored,omitempty"`
	// Unseen sums the files' Unseen per column, in order of first
	// appearance in input order.
	Unseen []featenc.Unseen `json:"unseen,omitempty"`
	// IntervalMethod and IntervalZ are how the intervals' bounds were
	// set (Interval): score ± IntervalZ·std; IntervalZOutputs holds each
	// output's multiplier instead when they differ (a model calibrated
	// output by output).
	IntervalMethod   model.IntervalMethod `json:"interval_method,omitempty"`
	IntervalZ        float64              `json:"interval_z,omitempty"`
	IntervalZOutputs []float64            `json:"interval_z_outputs,omitempty"`
	// Targets are the model's target names, which name the outputs.
	Targets []string `json:"-"`
	// Model is the model the driver loaded from PredictConfig.Model (to
	// check the flags against it), for the caller's summary: its decision
	// and classes. Not encoded.
	Model *ooc.Model `json:"-"`
	// Metrics are those of every input's rows against their targets, when
	// every input has the model's target columns (falkon-ooc predict's,
	// from the same code: each task's ooc.Evaluator, merged in input
	// order): classification's exactly, regression's but for the
	// rounding of the merged sums.
	Metrics *ooc.Metrics `json:"metrics,omitempty"`
	// Nulls is the NULL policy applied: PredictConfig.Nulls, or the
	// model's when that was "".
	Nulls string `json:"nulls"`
}

// predictOutputs expands cfg.Inputs (paths, folders, globs, URLs) into
// the input files, leaving out files of predictions written by
// falkon-ooc found in folders or by globs (returned as skipped), and
// names each file's output: beside it (Beside), the file cfg.Out (a
// single input), or under the directory cfg.Out at the file's path
// relative to the argument that named it.
func predictOutputs(ctx context.Context, cfg *PredictConfig) (inputs, outputs, skipped []string, err error) {
	switch {
	case cfg.Out == "" && !cfg.Beside:
		return nil, nil, nil, errors.New("give --out DIR (or --out FILE.parquet for a single input) for the predictions, or --beside to write each beside its input")
	case cfg.Out != "" && cfg.Beside:
		return nil, nil, nil, errors.New("--out and --beside exclude each other")
	}
	fileOut := cfg.Out != "" && strings.HasSuffix(strings.ToLower(cfg.Out), ".parquet")
	if st, err := os.Stat(cfg.Out); err == nil && !hasScheme(cfg.Out) {
		if fileOut && st.IsDir() {
			fileOut = false
		} else if !fileOut && !st.IsDir() {
			return nil, nil, nil, fmt.Errorf("--out %s exists and is not a directory: name a directory, or a .parquet file for a single input", cfg.Out)
		}
	}
	for _, arg := range cfg.Inputs {
		urls, skipURLs, err := expandURLs(ctx, []string{arg})
		if err != nil {
			return nil, nil, nil, err
		}
		skipped = append(skipped, skipURLs...)
		files, skip, err := ingest.List(urls)
		if err != nil {
			return nil, nil, nil, err
		}
		skipped = append(skipped, skip...)
		root := inputRoot(ctx, arg)
		for _, f := range files {
			inputs = append(inputs, f)
			switch {
			case cfg.Beside:
				outputs = append(outputs, OutputName(f, cfg.Suffix))
			case fileOut:
				outputs = append(outputs, cfg.Out)
			case hasScheme(cfg.Out):
				rel := strings.TrimPrefix(filepath.ToSlash(relTo(root, f)), "/")
				outputs = append(outputs, strings.TrimSuffix(cfg.Out, "/")+"/"+OutputName(rel, cfg.Suffix))
			default:
				outputs = append(outputs, filepath.Join(cfg.Out, OutputName(filepath.FromSlash(relTo(root, f)), cfg.Suffix)))
			}
		}
	}
	if fileOut && len(inputs) != 1 {
		return nil, nil, nil, fmt.Errorf("--out %s names one file, but the inputs are %d files; give a directory", cfg.Out, len(inputs))
	}
	return inputs, outputs, skipped, nil
}

// inputRoot is the part of an input argument that its files' outputs
// under --out DIR leave out: a folder (or URL prefix) itself, a file's
// folder, or a glob's leading elements without magic.
func inputRoot(ctx context.Context, arg string) string {
	if hasScheme(arg) {
		rest := arg[strings.Index(arg, "://")+3:]
		if i := strings.IndexAny(rest, "*?["); i >= 0 {
			head := arg[:len(arg)-len(rest)+i]
			return head[:strings.LastIndexByte(head, '/')]
		}
		if fs, err := openFS(ctx, arg); err == nil {
			if _, err := fs.Size(ctx, arg); err == nil {
				return arg[:strings.LastIndexByte(arg, '/')]
			}
		}
		return strings.TrimSuffix(arg, "/")
	}
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			return arg
		}
		return filepath.Dir(arg)
	}
	elems := strings.Split(filepath.ToSlash(arg), "/")
	k := 0
	for k < len(elems)-1 && !strings.ContainsAny(elems[k], "*?[") {
		k++
	}
	if k == 0 {
		return "."
	}
	return filepath.FromSlash(strings.Join(elems[:k], "/"))
}

// relTo returns file's path below root, with slashes.
func relTo(root, file string) string {
	if hasScheme(file) {
		return strings.TrimPrefix(file, root+"/")
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.Base(file)
	}
	return filepath.ToSlash(rel)
}

// checkPredictOutputs refuses, before any task, outputs that two inputs
// share, and through the output guard falkon-ooc's commands use
// (internal/outguard) an output that is an input or the model, a --out
// inside an input folder or a store, and (unless Force) an existing file
// that is not falkon-ooc's predictions; an existing object output without
// Force. args are the input arguments as given.
func checkPredictOutputs(ctx context.Context, cfg *PredictConfig, args []string) error {
	seen := map[string]string{}
	for i, in := range cfg.Inputs {
		out := cfg.Outputs[i]
		if prev, ok := seen[out]; ok {
			fix := "give --suffix"
			if cfg.Out != "" {
				fix = "give them as one folder, or predict them apart"
			}
			return fmt.Errorf("%s and %s would both write their predictions to %s; %s", prev, in, out, fix)
		}
		seen[out] = in
		if hasScheme(out) {
			ofs, err := openFS(ctx, out)
			if err != nil {
				return fmt.Errorf("%s: %w", out, err)
			}
			if _, err := ofs.Size(ctx, out); err == nil && !cfg.Force {
				return fmt.Errorf("%s already exists; remove it or give --force", out)
			}
		}
	}
	var outs []outguard.Output
	if cfg.Out != "" {
		dir := !strings.HasSuffix(strings.ToLower(cfg.Out), ".parquet") || len(cfg.Inputs) != 1
		if dir {
			outs = append(outs, outguard.Output{Path: cfg.Out, Flag: "--out", Dir: true})
		}
	}
	for i, out := range cfg.Outputs {
		o := outguard.Output{Path: out, Flag: "--out", Kind: outguard.Predictions}
		switch {
		case cfg.Beside:
			o.Flag, o.Value, o.What = "--suffix", cfg.Suffix, "predictions of "+cfg.Inputs[i]
		case out != cfg.Out:
			o.Value, o.What = cfg.Out, "predictions of "+cfg.Inputs[i]
		}
		outs = append(outs, o)
	}
	return outguard.Check(outs, outguard.Inputs(append([]string{cfg.Model}, args...)...), cfg.Force)
}

// OutputName returns the name of input's predictions: beside it, its
// extensions (.csv, .csv.gz, .parquet, …) replaced by suffix.
func OutputName(input, suffix string) string {
	if hasScheme(input) { // an object: beside it under its prefix
		i := strings.LastIndexByte(input, '/')
		return input[:i+1] + outputBase(input[i+1:], suffix)
	}
	dir, base := filepath.Split(input)
	return filepath.Join(dir, outputBase(base, suffix))
}

func outputBase(base, suffix string) string {
	for _, ext := range []string{".gz", ".csv", ".tsv", ".txt", ".parquet", ".pq"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base + suffix
}

func init() {
	taskKinds[kindPredict] = func(_ context.Context, job []byte) (func(context.Context, int) ([]byte, error), error) {
		var cfg PredictConfig
		if err := json.Unmarshal(job, &cfg); err != nil {
			return nil, err
		}
		m, err := ooc.Load(cfg.Model)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) ([]byte, error) {
			if i < 0 || i >= len(cfg.Inputs) || len(cfg.Outputs) != len(cfg.Inputs) {
				return nil, fmt.Errorf("input %d of %d (%d outputs)", i, len(cfg.Inputs), len(cfg.Outputs))
			}
			pf := predictTask(ctx, m, &cfg, cfg.Inputs[i], cfg.Outputs[i])
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return json.Marshal(pf)
		}, nil
	}
}

// predictTask writes the predictions of input (a path or a URL) to out (a
// path or a URL). An object input is copied to a local file of the same
// name first, and an object output written locally, then copied to its
// object; messages name the input and output as given.
func predictTask(ctx context.Context, m *ooc.Model, cfg *PredictConfig, input, out string) PredictFile {
	pf := PredictFile{Input: input, Output: out}
	fail := func(err error) PredictFile {
		pf.Err = err.Error()
		return pf
	}
	local, localOut := input, out
	if hasScheme(input) || hasScheme(out) {
		tmp, err := os.MkdirTemp("", "falkon-ooc-beam-predict-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(tmp)
		if hasScheme(input) {
			fs, err := openFS(ctx, input)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", input, err))
			}
			local = filepath.Join(tmp, input[strings.LastIndexByte(input, '/')+1:])
			if err := getFile(ctx, fs, input, local); err != nil {
				return fail(err)
			}
		}
		if hasScheme(out) {
			localOut = filepath.Join(tmp, "predictions.parquet")
		}
	}
	if !hasScheme(out) {
		if err := os.MkdirAll(filepath.Dir(out), 0o777); err != nil {
			return fail(err)
		}
	}
	got := predictOne(ctx, m, cfg, local, localOut)
	got.Input, got.Output = input, out
	if got.Err != "" {
		for from, to := range map[string]string{local: input, localOut: out} {
			if from != to {
				got.Err = strings.ReplaceAll(got.Err, from, to)
				if got.ValueErr != nil && got.ValueErr.File == from {
					got.ValueErr.File = to
				}
			}
		}
		return got
	}
	if hasScheme(out) {
		fs, err := openFS(ctx, out)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", out, err))
		}
		if err := putFile(ctx, fs, localOut, out); err != nil {
			return fail(err)
		}
	}
	return got
}

// predictOne writes the predictions of the local file input to the local
// file out (a task).
func predictOne(ctx context.Context, m *ooc.Model, cfg *PredictConfig, input, out string) PredictFile {
	pf := PredictFile{Input: input, Output: out}
	fail := func(err error) PredictFile {
		pf.Err = err.Error()
		_ = errors.As(err, &pf.ValueErr)
		return pf
	}
	topt, err := predictfile.TableOptions(m.Model, cfg.Model, predictfile.Input{Keep: cfg.Keep, Nulls: cfg.Nulls,
		NoHeader: cfg.NoHeader, Names: cfg.Columns, MaxLine: cfg.MaxLine})
	if err != nil {
		return fail(err)
	}
	r, err := tabular.Open([]string{input}, topt)
	if err != nil {
		return fail(predictfile.ExplainMissing(err, m.Features(), cfg.Keep))
	}
	defer r.Close()
	p, err := predictfile.New(m.Model, predictOptions(cfg))
	if err != nil {
		return fail(err)
	}
	if err := fileutil.WriteFile(out, 0o644, func(w io.Writer) error {
		return p.Files(ctx, r, w, tabular.Parquet)
	}); err != nil {
		return fail(err)
	}
	pf.Rows, pf.Dropped, pf.Unscored = p.Rows, p.Dropped, p.Unscored
	pf.Unseen = p.Unseen()
	if p.WithTargets {
		if pf.Eval, err = p.Ev.MarshalBinary(); err != nil {
			return fail(err)
		}
	}
	return pf
}

// predictOptions returns predictfile's options for cfg.
func predictOptions(cfg *PredictConfig) predictfile.Options {
	popt := predictfile.Options{Workers: cfg.Workers, Proba: cfg.Proba, Std: cfg.Std || cfg.Interval > 0, ShowStd: cfg.Std, Keep: cfg.Keep}
	popt.Interval = cfg.Interval // the model's calibrated multiplier when it has one
	popt.IntervalMethod = model.IntervalMethod(cfg.IntervalMethod)
	return popt
}

// Predict applies a model to Parquet and CSV files with one Beam task per
// input file, which reads it with falkon-ooc predict's own code
// (model/predictfile) and writes its predictions as Parquet under
// cfg.Out (mirroring the input's path below the argument that named it),
// to cfg.Out for a single input, or beside it with cfg.Beside
// (OutputName): the --keep columns, the prediction and the scores (or
// probabilities, standard deviations, intervals), one row per input row
// in input order, under a temporary name renamed when whole. The driver
// reads only the model (to check the flags against it) and the tasks'
// results. Outputs pass falkon-ooc's output guard before any task
// (internal/outguard): none may be an input or the model. Files of
// predictions written by falkon-ooc found in the input folders are not
// read (PredictResult.Skipped). The first input, in input order, whose
// prediction fails gives
// the error, with falkon-ooc predict's message. When every input has the
// model's target columns, the metrics are computed: each task returns
// its rows' ooc.Evaluator, merged in input order (PredictResult.Metrics).
func Predict(ctx context.Context, cfg PredictConfig, opts Options) (*PredictResult, error) {
	opts, done, err := taskOptions(opts)
	if err != nil {
		return nil, err
	}
	defer done()
	switch cfg.Nulls {
	case "", "error", "drop", "mean", "zero":
	default:
		return nil, fmt.Errorf("--nulls must be error, drop, mean or zero, not %q", cfg.Nulls)
	}
	if cfg.Suffix == "" {
		cfg.Suffix = DefaultPredictSuffix
	}
	m, err := ooc.Load(cfg.Model)
	if err != nil {
		return nil, err
	}
	if cfg.Nulls == "" {
		cfg.Nulls = predictfile.DefaultNulls(m.Model)
	}
	if _, err := predictfile.TableOptions(m.Model, cfg.Model, predictfile.Input{Nulls: cfg.Nulls}); err != nil {
		return nil, err
	}
	if cfg.Proba && !m.HasProba() {
		return nil, fmt.Errorf("--proba: model %s has no calibrated probabilities (a regression model, or fitted without validation rows)", cfg.Model)
	}
	if (cfg.Std || cfg.Interval > 0) && m.Uncertainty() == nil {
		return nil, fmt.Errorf("--std, --interval: model %s has no predictive standard deviations: it was fitted without --uncertainty", cfg.Model)
	}
	method, err := model.ParseIntervalMethod(cfg.IntervalMethod)
	switch {
	case err != nil:
		return nil, fmt.Errorf("--interval-method: %v", err)
	case method != model.IntervalAuto && cfg.Interval == 0:
		return nil, fmt.Errorf("--interval-method %s needs --interval", method)
	case method == model.IntervalConformal:
		if _, _, err := m.IntervalMultipliers(cfg.Interval, method); err != nil {
			return nil, fmt.Errorf("--interval-method conformal: model %s: %v; fit it again with --uncertainty and more validation rows, or use --interval-method gaussian", cfg.Model, err)
		}
	}
	pp, err := predictfile.New(m.Model, predictOptions(&cfg)) // --keep against the output columns
	if err != nil {
		return nil, err
	}
	args := cfg.Inputs
	var skipped []string
	if cfg.Inputs, cfg.Outputs, skipped, err = predictOutputs(ctx, &cfg); err != nil {
		return nil, err
	}
	if err := checkPredictOutputs(ctx, &cfg, args); err != nil {
		return nil, err
	}
	job, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	res, err := runTasks(ctx, opts, kindPredict, job, len(cfg.Inputs))
	if err != nil {
		return nil, err
	}
	out := &PredictResult{Skipped: skipped, Nulls: cfg.Nulls, Targets: m.Targets(), Model: m}
	if cfg.Interval > 0 {
		out.IntervalMethod = pp.IntervalMethod
		out.IntervalZ, out.IntervalZOutputs = predictfile.SplitZ(pp.Z())
	}
	for i, b := range res {
		var pf PredictFile
		if err := json.Unmarshal(b, &pf); err != nil {
			return nil, fmt.Errorf("beam: the result of %s: %w", cfg.Inputs[i], err)
		}
		out.Files = append(out.Files, pf)
		out.Rows += pf.Rows
		out.Dropped += pf.Dropped
		out.Unscored += pf.Unscored
		out.Unseen = addUnseen(out.Unseen, pf.Unseen)
	}
	for _, pf := range out.Files {
		if pf.Err != "" {
			// The inputs after the failed one are predicted: remove them,
			// as falkon-ooc predict writes nothing when it fails.
			for _, q := range out.Files {
				if q.Err == "" {
					removeFile(context.WithoutCancel(ctx), q.Output)
				}
			}
			if pf.ValueErr != nil && pf.ValueErr.Error() == pf.Err {
				return nil, pf.ValueErr
			}
			return nil, errors.New(pf.Err)
		}
	}
	if !slices.ContainsFunc(out.Files, func(pf PredictFile) bool { return pf.Eval == nil }) {
		ev := m.NewEvaluator()
		for i, pf := range out.Files {
			part := m.NewEvaluator()
			if err := part.UnmarshalBinary(pf.Eval); err != nil {
				return nil, fmt.Errorf("beam: the metrics of %s: %w", pf.Input, err)
			}
			if err := ev.Merge(part); err != nil {
				return nil, fmt.Errorf("beam: the metrics of %s: %w", pf.Input, err)
			}
			out.Files[i].Eval = nil
		}
		out.Metrics = ev.Metrics()
	}
	for i := range out.Files {
		out.Files[i].Eval = nil
	}
	return out, nil
}

// addUnseen adds the counts of src to dst, column by column (a column
// new to dst goes last), and returns dst.
func addUnseen(dst, src []featenc.Unseen) []featenc.Unseen {
	for _, u := range src {
		if i := slices.IndexFunc(dst, func(d featenc.Unseen) bool { return d.Column == u.Column }); i >= 0 {
			dst[i].Count += u.Count
			continue
		}
		dst = append(dst, u)
	}
	return dst
}
