package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/falkon-ooc/falkon-ooc/internal/cliargs"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	// The runners a user can name with --runner.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	// Stores and temporary directories on object storage.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"

	fbeam "github.com/falkon-ooc/falkon-ooc/beam"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/internal/outguard"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// version is the version of falkon-ooc-beam.
const version = "0.1.0"

type usageError struct{ error }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

const fitUsage = `usage: falkon-ooc-beam fit --out MODEL [flags] STORE

Fit trains FALKON kernel ridge regression (Gaussian kernel) on a chunk
store made by 'falkon-ooc ingest --target COL', like 'falkon-ooc fit',
with every pass over the data — the right-hand side and each
conjugate-gradient iteration — run as an Apache Beam job over --partitions
chunk ranges. The driver (this process) draws the centres, factorises the
preconditioner and runs CG; it writes MODEL, MODEL.json and, after every
iteration, the checkpoint MODEL.ckpt, kept after the fit: --resume
continues an interrupted fit from it, or extends a finished one to a
larger --iters.

STORE is a path every worker can read (a shared filesystem), or a gs:// or
s3:// URL. On a cluster, --temp names a directory (path or URL) that the
workers write and this process reads.

Runners: prism (default; Beam's local runner, in this process), flink,
spark (--endpoint of the job server), dataflow (--job-opts
project=…,region=…,staging_location=gs://…). --job-opts sets any of Beam's
own flags: comma-separated name=value pairs, e.g.
environment_type=DOCKER,environment_config=IMAGE.

flags:
`

const tuneUsage = `usage: falkon-ooc-beam tune --out MODEL [flags] STORE

Tune searches σ × λ like 'falkon-ooc tune', with every pass over the data
run as an Apache Beam job over --partitions chunk ranges: one job for
every σ's right-hand side, then one job per conjugate-gradient iteration
for every live candidate, which also scores the rows held out for
validation (--val-fraction of the store, by --seed). Candidates stop by
patience and σ halving as in falkon-ooc tune. It writes the best
candidate's model to MODEL (and MODEL.json) and prints every candidate;
it does not checkpoint. The runner flags are fit's.

flags:
`

type fitOpts struct {
	out, precision, runner, endpoint, jobOpts, temp string
	sigmas, lambdas                                 string // tune
	loss, classWeight                               string
	newtonSteps                                     int
	valFraction                                     float64
	centers, iters, partitions, workers, attempts   int
	sigma, lambda                                   float64
	seed                                            uint64
	resume, noCheckpoint, jsonOut, quiet, verbose   bool
	force                                           bool
	objectTimeout                                   time.Duration
}

func fitFlags(fs *flag.FlagSet, o *fitOpts) {
	fs.StringVar(&o.out, "out", "", "write the model to this `file` (required)")
	fs.IntVar(&o.centers, "centers", 0, "number of Nyström centres `M` (0: 10√n clamped to [1000, 10000])")
	fs.Float64Var(&o.sigma, "sigma", 0, "Gaussian kernel length scale (0: √d, on standardised features)")
	fs.Float64Var(&o.lambda, "lambda", ooc.DefaultLambda, "ridge regularisation λ > 0")
	fs.IntVar(&o.iters, "iters", ooc.DefaultIterations, "conjugate-gradient iterations (one Beam job each)")
	fs.Uint64Var(&o.seed, "seed", 0, "seed for centre sampling")
	fs.StringVar(&o.precision, "precision", "float64", "arithmetic of the kernel blocks: float64, float32, or bf16 (float32 with the distances' cross term on the AMX unit of CPUs that have AMX-BF16, else float32)")
	fs.StringVar(&o.loss, "loss", "squared", "squared (FALKON), or logistic: classification by Newton steps, each --iters CG iterations (every pass a Beam job)")
	fs.IntVar(&o.newtonSteps, "newton-steps", 0, "with --loss logistic: Newton steps (0: 8)")
	fs.StringVar(&o.classWeight, "class-weight", "none", "none, or balanced: classification rows of class c weigh n/(C·n_c)")
	fs.IntVar(&o.partitions, "partitions", fbeam.DefaultPartitions, "chunk ranges per pass (the result is deterministic for a given number)")
	fs.IntVar(&o.workers, "workers", 0, "goroutines per range on a worker (0: one per CPU)")
	fs.BoolVar(&o.resume, "resume", false, "continue an interrupted fit from MODEL.ckpt")
	fs.BoolVar(&o.noCheckpoint, "no-checkpoint", false, "do not write MODEL.ckpt after each iteration")
	fs.BoolVar(&o.force, "force", false, "replace an existing MODEL, MODEL.json or MODEL.ckpt that is not falkon-ooc's")
	runnerFlags(fs, o)
}

// runnerFlags adds the flags of the runner and of the output, which every
// command has.
func runnerFlags(fs *flag.FlagSet, o *fitOpts) {
	fs.IntVar(&o.attempts, "attempts", fbeam.DefaultAttempts, "runs of a failed job before giving up")
	fs.StringVar(&o.runner, "runner", "prism", "Beam runner: prism, flink, spark, dataflow or universal")
	fs.StringVar(&o.endpoint, "endpoint", "", "job service `host:port` (flink, spark, universal; prism: an external Prism on this machine, the work running in this process)")
	fs.StringVar(&o.jobOpts, "job-opts", "", "Beam pipeline flags passed through, `name=value,…`")
	fs.DurationVar(&o.objectTimeout, "object-timeout", fbeam.DefaultObjectTimeout, "longest wait on object storage (s3://, gs://) for a request's answer or a read's next bytes before failing with the URL (0: no bound)")
	fs.StringVar(&o.temp, "temp", "", "`dir` or URL for job results, shared by workers and this process (default: a local temporary directory, prism only)")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object with the result on stdout")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.verbose, "verbose", false, "Beam's and Prism's own logs on stderr from level INFO (default: warnings only)")
}

// tuneFlags adds tune's own flags to fit's.
func tuneFlags(fs *flag.FlagSet, o *fitOpts) {
	fitFlags(fs, o)
	fs.StringVar(&o.sigmas, "sigmas", "", "the σ to try, comma-separated (default: --sigma alone)")
	fs.StringVar(&o.lambdas, "lambdas", "", "the λ to try, comma-separated (default: --lambda alone)")
	fs.Float64Var(&o.valFraction, "val-fraction", ooc.DefaultValFraction, "fraction of the store's rows held out for validation, scored in the same jobs")
}

// progName is the program's name in its messages: falkon-ooc-beam, or
// the name it was run by (main sets it from os.Args[0] by programName).
var progName = "falkon-ooc-beam"

// programName is the base name of arg0 (os.Args[0]) without ".exe", or
// "falkon-ooc-beam" when it has none.
func programName(arg0 string) string {
	name := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if name == "" || name == "." || name == string(filepath.Separator) {
		return "falkon-ooc-beam"
	}
	return name
}

// beamCommands lists the commands with the line 'falkon-ooc-beam help'
// prints for each.
var beamCommands = []struct{ name, short string }{
	{"ingest", "turn Parquet and CSV/TSV files into a chunk store, as two Beam jobs"},
	{"fit", "train a FALKON model on a chunk store, every pass over the data a Beam job"},
	{"tune", "search σ × λ, every pass a Beam job that also scores the held-out rows"},
	{"predict", "apply a model to Parquet and CSV files, one Beam task per file"},
	{"version", "print the version"},
}

func printCommands(w io.Writer) {
	fmt.Fprint(w, "usage: falkon-ooc-beam COMMAND [flags] INPUT…\n\n"+
		"falkon-ooc-beam runs falkon-ooc's ingest, fit, tune and predict with every\n"+
		"pass over the data an Apache Beam job: on Prism (in this process), Flink,\n"+
		"Spark or Dataflow.\n\ncommands:\n")
	for _, c := range beamCommands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.short)
	}
	fmt.Fprint(w, "\nrun 'falkon-ooc-beam COMMAND --help' for a command's flags\n")
}

// commandFlags declares cmd's flags on a new flag set and returns it with
// the command's usage text and the options the flags fill.
func commandFlags(cmd string) (fs *flag.FlagSet, usage string, o *fitOpts, iopts *ingestOpts, popts *predictOpts) {
	fs = flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, iopts, popts = &fitOpts{}, &ingestOpts{}, &predictOpts{}
	usage = fitUsage
	switch cmd {
	case "predict":
		predictFlags(fs, popts)
		usage = predictUsage
	case "tune":
		tuneFlags(fs, o)
		usage = tuneUsage
	case "ingest":
		ingestFlags(fs, iopts)
		usage = ingestUsage
	default:
		fitFlags(fs, o)
	}
	return fs, usage, o, iopts, popts
}

// printHelp writes a command's usage and its flags, written as the
// documentation writes them (--name), each with one default.
func printHelp(w io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprint(w, usage)
	fs.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		line += "\n    \t" + strings.ReplaceAll(text, "\n", "\n    \t")
		switch {
		case f.DefValue == "" || f.DefValue == "0" || f.DefValue == "false":
		case strings.Contains(text, "(default "):
		case fmt.Sprintf("%T", f.Value) == "*flag.stringValue":
			line += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			line += fmt.Sprintf(" (default %v)", f.DefValue)
		}
		fmt.Fprintln(w, line)
	})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printCommands(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			printCommands(stdout)
			return exitOK
		}
		switch args[1] {
		case "fit", "tune", "ingest", "predict":
			fs, usage, _, _, _ := commandFlags(args[1])
			printHelp(stdout, usage, fs)
			return exitOK
		}
		fmt.Fprintf(stderr, "%s: unknown command %q (the commands are ingest, fit, tune and predict)\n", progName, args[1])
		return exitUsage
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "falkon-ooc-beam %s\n", version)
		return exitOK
	case "fit", "tune", "ingest", "predict":
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q (the commands are ingest, fit, tune and predict)\n", progName, args[0])
		return exitUsage
	}
	cmd := args[0]
	fs, usage, o, iopts, popts := commandFlags(cmd)
	printUsage := func(w io.Writer) { printHelp(w, usage, fs) }
	rest, err := cliargs.Permute(fs, args[1:])
	if err == nil {
		err = fs.Parse(rest)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "%s %s: %v\nrun '%s %s --help' for usage\n", progName, cmd, err, progName, cmd)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch cmd {
	case "tune":
		err = runTune(ctx, o, set, fs.Args(), stdout, stderr)
	case "ingest":
		err = runIngest(ctx, iopts, fs.Args(), stdout, stderr)
	case "predict":
		err = runPredict(ctx, popts, fs.Args(), stdout, stderr)
	default:
		err = runFit(ctx, o, set, fs.Args(), stdout, stderr)
	}
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s %s: %v\nrun '%s %s --help' for usage\n", progName, cmd, err, progName, cmd)
		return exitUsage
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "%s %s: interrupted\n", progName, cmd)
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "%s %s: %v\n", progName, cmd, err)
		return exitFailure
	}
}

// config turns the flags into an ooc.Config, with a usage error naming
// the flag for a bad value.
func (o *fitOpts) config(set map[string]bool) (ooc.Config, error) {
	var cfg ooc.Config
	if set["sigma"] && !(o.sigma > 0) {
		return cfg, usagef("--sigma must be > 0, got %g", o.sigma)
	}
	cfg.Kernel = kernel.Kernel{Kind: kernel.Gaussian, Sigma: o.sigma}
	if !(o.lambda > 0) || math.IsInf(o.lambda, 0) {
		return cfg, usagef("--lambda must be > 0, got %g", o.lambda)
	}
	cfg.Lambda = o.lambda
	if set["centers"] && o.centers < 1 {
		return cfg, usagef("--centers must be ≥ 1, got %d", o.centers)
	}
	cfg.Centers = o.centers
	if o.iters < 1 {
		return cfg, usagef("--iters must be ≥ 1, got %d", o.iters)
	}
	cfg.Iterations = o.iters
	p, err := kernel.ParsePrecision(o.precision)
	if err != nil {
		return cfg, usagef("--precision must be float64 or float32, got %q", o.precision)
	}
	cfg.Precision = p
	cfg.Seed = o.seed
	if o.loss != "squared" {
		cfg.Loss = ooc.Loss(o.loss)
	}
	cfg.NewtonSteps = o.newtonSteps
	if o.classWeight != "none" {
		cfg.ClassWeight = ooc.ClassWeight(o.classWeight)
	}
	if err := ooc.Validate(cfg, ooc.RunOptions{}); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// fitResult is the --json document: falkon-ooc fit's fields, and the
// Beam run's.
type fitResult struct {
	Version             string     `json:"version"`
	Store               string     `json:"store"`
	Model               string     `json:"model"`
	N                   int64      `json:"n"`
	D                   int        `json:"d"`
	K                   int        `json:"k"`
	Task                ooc.Task   `json:"task"`
	Centers             int        `json:"centers"`
	Iterations          int        `json:"iterations"`
	Status              ooc.Status `json:"status"`
	Residual            float64    `json:"residual"`
	Seconds             float64    `json:"seconds"`
	SecondsPerIteration float64    `json:"seconds_per_iteration"`
	Config              ooc.Config `json:"config"`
	Precision           string     `json:"precision"`
	Beam                beamResult `json:"beam"`
}

type beamResult struct {
	Runner     string  `json:"runner"`
	Partitions int     `json:"partitions"`
	Jobs       int     `json:"jobs"`
	Failed     int     `json:"failed_jobs"`
	JobSeconds float64 `json:"job_seconds"`
	JobBytes   int64   `json:"job_bytes"`
	PartBytes  int64   `json:"part_bytes"`
}

// jobOpts sets Beam's own flags from "name=value,…".
func setJobOpts(s string) error {
	if s == "" {
		return nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(kv, "=")
		name = strings.TrimLeft(strings.TrimSpace(name), "-")
		if !ok || name == "" {
			return usagef("--job-opts: %q is not name=value", kv)
		}
		if flag.CommandLine.Lookup(name) == nil {
			return usagef("--job-opts: %q is not a Beam flag of this program", name)
		}
		if err := flag.CommandLine.Set(name, value); err != nil {
			return usagef("--job-opts: %s: %v", name, err)
		}
	}
	return nil
}

// prepare checks the flags fit and tune share and their outputs (MODEL,
// MODEL.json and with checkpoint MODEL.ckpt, through the output guard
// falkon-ooc fit uses), sets Beam's own flags and logging, and returns the
// Config, a progress printer and a function to call when done.
func (o *fitOpts) prepare(set map[string]bool, args []string, checkpoint bool, stderr io.Writer) (ooc.Config, func(string, ...any), func(), error) {
	if o.out == "" {
		return ooc.Config{}, nil, nil, usagef("--out MODEL is required")
	}
	if len(args) != 1 {
		return ooc.Config{}, nil, nil, usagef("want exactly one STORE, got %d arguments", len(args))
	}
	if outguard.IsURL(o.out) {
		return ooc.Config{}, nil, nil, usagef("--out %s: this process writes the model, its summary and checkpoint to local files; give a local path (and copy the model to object storage afterwards)", o.out)
	}
	if err := o.checkRunner(); err != nil {
		return ooc.Config{}, nil, nil, err
	}
	cfg, err := o.config(set)
	if err != nil {
		return cfg, nil, nil, err
	}
	inputs := outguard.Inputs(args[0])
	outs := outguard.FitOutputs(o.out, "", checkpoint, false)
	if err := guardErr(outguard.Check(outs, inputs, o.force)); err != nil {
		return cfg, nil, nil, err
	}
	if err := o.prepareOut(outs[0], inputs, stderr); err != nil {
		return cfg, nil, nil, err
	}
	say, done, err := o.startRunner(stderr)
	return cfg, say, done, err
}

// guardErr maps the output guard's refusals to the command's: a usage
// error (exit 2) or a plain one.
func guardErr(err error) error {
	var ge *outguard.Error
	if errors.As(err, &ge) && ge.Usage {
		return &usageError{ge}
	}
	return err
}

// prepareOut checks that out can be written, before any work, and removes
// (and lists) the leftovers of dead runs in its directory.
func (o *fitOpts) prepareOut(out outguard.Output, inputs []string, stderr io.Writer) error {
	removed, warn, err := outguard.Prepare(out, inputs)
	if err != nil {
		return guardErr(err)
	}
	for _, l := range removed {
		fmt.Fprintf(stderr, "falkon-ooc-beam: removed leftover %s\n", l)
	}
	if warn != nil {
		fmt.Fprintf(stderr, "falkon-ooc-beam: warning: %v\n", warn)
	}
	return nil
}

// checkRunner checks the flags of the runner.
func (o *fitOpts) checkRunner() error {
	if o.partitions < 1 {
		return usagef("--partitions must be ≥ 1, got %d", o.partitions)
	}
	if o.workers < 0 {
		return usagef("--workers must be ≥ 0, got %d", o.workers)
	}
	if o.attempts < 1 {
		return usagef("--attempts must be ≥ 1, got %d", o.attempts)
	}
	if o.objectTimeout < 0 {
		return usagef("--object-timeout must be ≥ 0, got %v", o.objectTimeout)
	}
	fbeam.ObjectTimeout = o.objectTimeout
	switch o.runner {
	case "prism", "flink", "spark", "dataflow", "universal":
	default:
		return usagef("--runner must be prism, flink, spark, dataflow or universal, got %q", o.runner)
	}
	if o.runner != "prism" && o.temp == "" {
		return usagef("--runner %s needs --temp: a directory (path or URL) the workers write and this process reads", o.runner)
	}
	return nil
}

// startRunner sets Beam's own flags and logging, and returns a progress
// printer and a function to call when done. With --endpoint, Prism runs
// the work in this process (loopback), as the in-process Prism does,
// unless --job-opts names another environment_type: Beam would otherwise
// try to compile a worker binary from source. The run's temporary files
// (Beam's among them: an empty beamloopbackworker-* file per job) go to a
// private directory under $TMPDIR, removed by done.
func (o *fitOpts) startRunner(stderr io.Writer) (func(string, ...any), func(), error) {
	if err := setJobOpts(o.jobOpts); err != nil {
		return nil, nil, err
	}
	if o.endpoint != "" {
		*jobopts.Endpoint = o.endpoint
		if o.runner == "prism" && *jobopts.EnvironmentType == "" {
			*jobopts.EnvironmentType = "loopback"
		}
	}
	restoreTemp, err := privateTemp()
	if err != nil {
		return nil, nil, err
	}
	// Beam and Prism log through slog and Beam's log package: keep their
	// chatter off stderr unless it is a warning, or --verbose asks for it.
	level := slog.LevelWarn
	switch {
	case o.verbose:
		level = slog.LevelInfo
	case o.quiet:
		level = slog.LevelError
	}
	logTo(stderr, level)
	say := func(format string, a ...any) {
		if !o.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	return say, func() { logTo(nil, level); restoreTemp() }, nil
}

// privateTemp points $TMPDIR (os.TempDir) at a new directory inside it,
// made by fileutil.MkdirTemp (so that 'falkon-ooc clean' removes it if
// this process is killed), and returns the function that removes it and
// restores $TMPDIR.
func privateTemp() (func(), error) {
	old, had := os.LookupEnv("TMPDIR")
	dir, err := fileutil.MkdirTemp(os.TempDir(), "falkon-ooc-beam")
	if err != nil {
		return nil, fmt.Errorf("a temporary directory in %s: %w", os.TempDir(), err)
	}
	os.Setenv("TMPDIR", dir)
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}, nil
}

// beamOptions returns the Beam executor's options for store, counting the
// jobs into br and reporting them with say.
func (o *fitOpts) beamOptions(store string, br *beamResult, say func(string, ...any)) fbeam.Options {
	br.Runner = o.runner
	return fbeam.Options{
		Runner: o.runner, Store: store, Partitions: o.partitions, Workers: o.workers,
		Temp: o.temp, Attempts: o.attempts,
		OnJob: func(st fbeam.JobStats) {
			if st.Kind == "ingest-read" || st.Kind == "predict" { // a task per input file
				br.Jobs++
				br.JobSeconds += st.Seconds
				if st.Err != nil {
					br.Failed++
					say("beam: %s job, attempt %d, failed after %.2f s: %v", st.Kind, st.Attempt, st.Seconds, st.Err)
				} else {
					say("beam: %s job on %s, %d files: %.2f s", st.Kind, o.runner, st.Parts, st.Seconds)
				}
				return
			}
			if st.Parts < o.partitions && br.Partitions == 0 {
				say("beam: --partitions %d cut to %d: a partition is at least one chunk of the store, and these passes have %d", o.partitions, st.Parts, st.Parts)
			}
			br.Partitions = st.Parts
			br.Jobs++
			br.JobSeconds += st.Seconds
			br.JobBytes += int64(st.JobBytes)
			br.PartBytes += int64(st.PartBytes)
			if st.Err != nil {
				br.Failed++
				say("beam: %s job, attempt %d, failed after %.2f s: %v", st.Kind, st.Attempt, st.Seconds, st.Err)
				return
			}
			if st.Kind == "rows" {
				say("beam: rows job (the centres) on %s, %d partitions: %.2f s", o.runner, st.Parts, st.Seconds)
				return
			}
			say("beam: %s job on %s, %d partitions: %.2f s, %d rows", st.Kind, o.runner, st.Parts, st.Seconds, st.Rows)
		},
	}
}

func runFit(ctx context.Context, o *fitOpts, set map[string]bool, args []string, stdout, stderr io.Writer) error {
	cfg, say, done, err := o.prepare(set, args, !o.noCheckpoint, stderr)
	if err != nil {
		return err
	}
	defer done()
	store := args[0]
	var br beamResult
	var run ooc.RunOptions
	ckpt := o.out + ".ckpt"
	if o.resume {
		c, err := ooc.ReadCheckpoint(ckpt)
		switch {
		case errors.Is(err, os.ErrNotExist):
			// A crash before the first iteration leaves no checkpoint.
			fmt.Fprintf(stderr, "fit: --resume: no checkpoint %s; starting from the beginning\n", ckpt)
		case err != nil:
			return fmt.Errorf("--resume: %w", err)
		default:
			run.Resume = c
			say("fit: resuming after iteration %d from %s", c.Iteration, ckpt)
		}
	}
	if !o.noCheckpoint {
		run.Checkpoint = func(c *ooc.Checkpoint) error { return c.WriteFile(ckpt) }
	}
	said := map[ooc.Stage]bool{} // one line per stage
	run.Progress = func(p ooc.Progress) {
		first := !said[p.Stage]
		said[p.Stage] = true
		switch {
		case p.Note != "":
			say("fit: %s", p.Note)
		case p.Stage == ooc.StageKernel && first:
			say("fit: computing K_MM")
		case p.Stage == ooc.StagePrecond && first:
			say("fit: factorising the preconditioner")
		case p.Stage == ooc.StageIterate:
			if p.Iteration > 0 && p.Chunks == 0 {
				say("iteration %d/%d: residual %.3g, %s elapsed", p.Iteration, p.Iterations, p.Residual, p.Elapsed.Round(time.Millisecond))
			}
		}
	}
	opts := o.beamOptions(store, &br, say)
	say("fit: store %s, runner %s, %d partitions", store, o.runner, o.partitions)
	m, err := fbeam.Fit(ctx, cfg, run, opts)
	if errors.Is(err, ooc.ErrCheckpointMismatch) {
		return fmt.Errorf("--resume: %w", err)
	}
	if err != nil {
		return err
	}
	if err := m.Save(o.out); err != nil {
		return err
	}
	if summary, err := m.SummaryJSON(); err == nil {
		if err := writeFileAtomic(o.out+".json", append(summary, '\n')); err != nil {
			return err
		}
	}
	tr := m.Training()
	res := fitResult{
		Version: version, Store: store, Model: o.out, N: tr.N, D: m.D(), K: m.K(), Task: m.Task(),
		Centers: m.M(), Iterations: tr.Iterations, Status: tr.Status, Seconds: tr.Seconds,
		SecondsPerIteration: tr.SecondsPerIteration, Config: m.Config(), Precision: m.Precision().String(), Beam: br,
	}
	if len(tr.Residuals) > 0 {
		res.Residual = tr.Residuals[len(tr.Residuals)-1]
	}
	if o.jsonOut {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(stdout, "model      %s (summary in %s.json)\n", o.out, o.out)
	fmt.Fprintf(stdout, "task       %s, %d output(s)\n", m.Task(), m.K())
	fmt.Fprintf(stdout, "data       n = %d, d = %d\n", tr.N, m.D())
	fmt.Fprintf(stdout, "kernel     %s, M = %d centres, λ = %g, %s\n", m.Kernel(), m.M(), m.Config().Lambda, m.Precision())
	fmt.Fprintf(stdout, "solver     %d iterations (%s), residual %.3g\n", tr.Iterations, tr.Status, res.Residual)
	fmt.Fprintf(stdout, "time       %.2f s, %.3f s per iteration\n", tr.Seconds, tr.SecondsPerIteration)
	fmt.Fprintf(stdout, "beam       %s, %d partitions, %d jobs (%d failed), %.2f s in jobs\n", br.Runner, br.Partitions, br.Jobs, br.Failed, br.JobSeconds)
	return nil
}

// writeFileAtomic replaces path with data: the old file or the new one,
// never a partial file.
func writeFileAtomic(path string, data []byte) error {
	return fileutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// tuneResult is tune's --json document.
type tuneResult struct {
	Version    string              `json:"version"`
	Store      string              `json:"store"`
	Model      string              `json:"model"`
	Metric     string              `json:"metric"`
	Best       int                 `json:"best"`
	Candidates []ooc.TuneCandidate `json:"candidates"`
	N          int64               `json:"n"`
	ValRows    int64               `json:"val_rows"`
	Passes     int                 `json:"passes"`
	Seconds    float64             `json:"seconds"`
	Beam       beamResult          `json:"beam"`
}

// parseList parses a comma-separated list of numbers > 0 for flag name.
func parseList(name, s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, usagef("--%s: %q is not a number > 0", name, f)
		}
		out = append(out, v)
	}
	return out, nil
}

func runTune(ctx context.Context, o *fitOpts, set map[string]bool, args []string, stdout, stderr io.Writer) error {
	for _, f := range []string{"resume", "no-checkpoint"} {
		if set[f] {
			return usagef("--%s: tune does not checkpoint", f)
		}
	}
	sigmas, err := parseList("sigmas", o.sigmas)
	if err != nil {
		return err
	}
	lambdas, err := parseList("lambdas", o.lambdas)
	if err != nil {
		return err
	}
	if !(o.valFraction > 0 && o.valFraction < 1) {
		return usagef("--val-fraction must be in (0, 1), got %g", o.valFraction)
	}
	cfg, say, done, err := o.prepare(set, args, false, stderr)
	if err != nil {
		return err
	}
	defer done()
	store := args[0]
	var br beamResult
	tc := ooc.TuneConfig{Base: cfg, Sigmas: sigmas, Lambdas: lambdas, ValFraction: o.valFraction,
		Progress: func(p ooc.TuneProgress) {
			if p.Note != "" {
				say("tune: %s", p.Note)
			} else if p.Stage == ooc.StageIterate && p.Iteration > 0 && p.Chunks == 0 {
				say("iteration %d/%d: %d candidates live, %s elapsed", p.Iteration, p.Iterations, p.Live, p.Elapsed.Round(time.Millisecond))
			}
		}}
	if err := ooc.ValidateTune(tc, ooc.RunOptions{}); err != nil {
		return usagef("%v", err)
	}
	say("tune: store %s, runner %s, %d partitions", store, o.runner, o.partitions)
	res, err := fbeam.Tune(ctx, tc, ooc.RunOptions{}, o.beamOptions(store, &br, say))
	if err != nil {
		return err
	}
	m := res.Model()
	if m == nil {
		return fmt.Errorf("no candidate could be fitted: %s", res.Candidates[res.Best].Err)
	}
	if err := m.Save(o.out); err != nil {
		return err
	}
	if summary, err := m.SummaryJSON(); err == nil {
		if err := writeFileAtomic(o.out+".json", append(summary, '\n')); err != nil {
			return err
		}
	}
	if o.jsonOut {
		b, err := json.MarshalIndent(tuneResult{Version: version, Store: store, Model: o.out, Metric: res.Metric, Best: res.Best,
			Candidates: res.Candidates, N: res.N, ValRows: res.ValRows, Passes: res.Passes, Seconds: res.Seconds, Beam: br}, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(stdout, "%-4s %-10s %-10s %-12s %-5s %s\n", "", "sigma", "lambda", res.Metric, "iter", "stop")
	for i, c := range res.Candidates {
		mark := ""
		if i == res.Best {
			mark = "*"
		}
		fmt.Fprintf(stdout, "%-4s %-10.4g %-10.4g %-12.6g %-5d %s\n", mark, c.Sigma, c.Lambda, c.BestMetric, c.BestIteration, c.Stop)
	}
	fmt.Fprintf(stdout, "model      %s (the best candidate; summary in %s.json)\n", o.out, o.out)
	fmt.Fprintf(stdout, "passes     %d over n = %d rows (%d held out), %.2f s\n", res.Passes, res.N, res.ValRows, res.Seconds)
	fmt.Fprintf(stdout, "beam       %s, %d partitions, %d jobs (%d failed), %.2f s in jobs\n", br.Runner, br.Partitions, br.Jobs, br.Failed, br.JobSeconds)
	return nil
}
