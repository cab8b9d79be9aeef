package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
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
	// Nulls: error (default), drop, mean or zero.
	Nulls    string   `json:"nulls"`
	NoHeader bool     `json:"no_header,omitempty"`
	Columns  []string `json:"columns,omitempty"`
	MaxLine  int      `json:"max_line,omitempty"`
	// Proba writes calibrated probabilities; Std the standard deviations;
	// Interval a central interval of that level.
	Proba    bool    `json:"proba,omitempty"`
	Std      bool    `json:"std,omitempty"`
	Interval float64 `json:"interval,omitempty"`
	// Suffix replaces each input's extension(s) in its output's name;
	// "": DefaultPredictSuffix.
	Suffix string `json:"suffix,omitempty"`
	// Force replaces existing outputs.
	Force bool `json:"force,omitempty"`
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
	Files    []PredictFile `json:"files"`
	Rows     int64         `json:"rows"`
	Dropped  int64         `json:"dropped"`
	Unscored int64         `json:"unscored,omitempty"`
	// Metrics are those of every input's rows against their targets, when
	// every input has the model's target columns (falkon-ooc predict's,
	// from the same code: each task's ooc.Evaluator, merged in input
	// order): classification's exactly, regression's but for the
	// rounding of the merged sums.
	Metrics *ooc.Metrics `json:"metrics,omitempty"`
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
			if i < 0 || i >= len(cfg.Inputs) {
				return nil, fmt.Errorf("input %d of %d", i, len(cfg.Inputs))
			}
			var pf PredictFile
			if hasScheme(cfg.Inputs[i]) {
				pf = predictObject(ctx, m, &cfg, cfg.Inputs[i])
			} else {
				pf = predictOne(ctx, m, &cfg, cfg.Inputs[i], "", "")
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return json.Marshal(pf)
		}, nil
	}
}

// predictObject writes the predictions of the object input (a URL): it
// is copied to a local file of the same name, predicted by predictOne,
// and the predictions copied to the object beside it; messages name the
// object.
func predictObject(ctx context.Context, m *ooc.Model, cfg *PredictConfig, input string) PredictFile {
	pf := PredictFile{Input: input, Output: OutputName(input, cfg.Suffix)}
	fail := func(err error) PredictFile {
		pf.Err = err.Error()
		return pf
	}
	fs, err := openFS(ctx, input)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", input, err))
	}
	tmp, err := os.MkdirTemp("", "falkon-ooc-beam-predict-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	local := filepath.Join(tmp, input[strings.LastIndexByte(input, '/')+1:])
	if err := getFile(ctx, fs, input, local); err != nil {
		return fail(err)
	}
	got := predictOne(ctx, m, cfg, local, input, pf.Output)
	if got.Err != "" {
		return got
	}
	if err := putFile(ctx, fs, OutputName(local, cfg.Suffix), pf.Output); err != nil {
		return fail(err)
	}
	return got
}

// predictOne writes the predictions of one input file (a task). When
// name is not "", input is a local copy of the object name, whose
// predictions are written beside input and reported as out's: name
// replaces input in the messages.
func predictOne(ctx context.Context, m *ooc.Model, cfg *PredictConfig, input, name, out string) PredictFile {
	pf := PredictFile{Input: input, Output: OutputName(input, cfg.Suffix)}
	if name != "" {
		pf.Input = name
	}
	fail := func(err error) PredictFile {
		pf.Err = err.Error()
		_ = errors.As(err, &pf.ValueErr)
		if name != "" {
			pf.Output = out
			pf.Err = strings.ReplaceAll(pf.Err, input, name)
			if pf.ValueErr != nil && pf.ValueErr.File == input {
				pf.ValueErr.File = name
			}
		}
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
	if err := fileutil.WriteFile(pf.Output, 0o644, func(w io.Writer) error {
		return p.Files(ctx, r, w, tabular.Parquet)
	}); err != nil {
		return fail(err)
	}
	pf.Rows, pf.Dropped, pf.Unscored = p.Rows, p.Dropped, p.Unscored
	if p.WithTargets {
		if pf.Eval, err = p.Ev.MarshalBinary(); err != nil {
			return fail(err)
		}
	}
	if name != "" {
		pf.Output = out
	}
	return pf
}

// predictOptions returns predictfile's options for cfg.
func predictOptions(cfg *PredictConfig) predictfile.Options {
	popt := predictfile.Options{Workers: cfg.Workers, Proba: cfg.Proba, Std: cfg.Std || cfg.Interval > 0, ShowStd: cfg.Std, Keep: cfg.Keep}
	if cfg.Interval > 0 {
		popt.Z = ooc.IntervalZ(cfg.Interval)
	}
	return popt
}

// Predict applies a model to Parquet and CSV files with one Beam task per
// input file, which reads it with falkon-ooc predict's own code
// (model/predictfile) and writes its predictions as Parquet beside it
// (OutputName): the --keep columns, the prediction and the scores (or
// probabilities, standard deviations, intervals), one row per input row
// in input order, under a temporary name renamed when whole. The driver
// reads only the model (to check the flags against it) and the tasks'
// results; the first input, in input order, whose prediction fails gives
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
	case "":
		cfg.Nulls = "error"
	case "error", "drop", "mean", "zero":
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
	if _, err := predictfile.TableOptions(m.Model, cfg.Model, predictfile.Input{Nulls: cfg.Nulls}); err != nil {
		return nil, err
	}
	if cfg.Proba && !m.HasProba() {
		return nil, fmt.Errorf("--proba: model %s has no calibrated probabilities (a regression model, or fitted without validation rows)", cfg.Model)
	}
	if (cfg.Std || cfg.Interval > 0) && m.Uncertainty() == nil {
		return nil, fmt.Errorf("--std, --interval: model %s has no predictive standard deviations: it was fitted without --uncertainty", cfg.Model)
	}
	if _, err := predictfile.New(m.Model, predictOptions(&cfg)); err != nil { // --keep against the output columns
		return nil, err
	}
	if cfg.Inputs, err = expandURLs(ctx, cfg.Inputs); err != nil {
		return nil, err
	}
	if cfg.Inputs, err = ingest.Files(cfg.Inputs); err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, in := range cfg.Inputs {
		out := OutputName(in, cfg.Suffix)
		if prev, ok := seen[out]; ok {
			return nil, fmt.Errorf("%s and %s would both write their predictions to %s; give --suffix", prev, in, out)
		}
		seen[out] = in
		if hasScheme(out) {
			ofs, err := openFS(ctx, out)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", out, err)
			}
			if _, err := ofs.Size(ctx, out); err == nil && !cfg.Force {
				return nil, fmt.Errorf("%s already exists; remove it or give --force", out)
			}
		} else if _, err := os.Lstat(out); err == nil && !cfg.Force {
			return nil, fmt.Errorf("%s already exists; remove it or give --force", out)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	for _, in := range cfg.Inputs {
		if _, ok := seen[in]; ok {
			return nil, fmt.Errorf("%s is an input and another input's output; give --suffix", in)
		}
	}
	job, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	res, err := runTasks(ctx, opts, kindPredict, job, len(cfg.Inputs))
	if err != nil {
		return nil, err
	}
	out := &PredictResult{}
	for i, b := range res {
		var pf PredictFile
		if err := json.Unmarshal(b, &pf); err != nil {
			return nil, fmt.Errorf("beam: the result of %s: %w", cfg.Inputs[i], err)
		}
		out.Files = append(out.Files, pf)
		out.Rows += pf.Rows
		out.Dropped += pf.Dropped
		out.Unscored += pf.Unscored
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
