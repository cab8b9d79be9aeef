package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/falkon-ooc/falkon-ooc/internal/cliargs"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/internal/outguard"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// version is the version of falkon-ooc-beam.
const version = "0.1.0"

// usageError marks an error as a mistake on the command line (exit 2):
// the shared flags' own (cliflags) and the commands'.
type usageError = cliflags.UsageError

func usagef(format string, a ...any) error { return cliflags.Usagef(format, a...) }

const fitUsage = `usage: falkon-ooc-beam fit --out MODEL [flags] STORE

Fit trains a FALKON model on a chunk store made by 'falkon-ooc ingest
--target COL' or 'falkon-ooc-beam ingest', like 'falkon-ooc fit' and with
its flags, with every pass over the data — the right-hand side and each
conjugate-gradient iteration — run as an Apache Beam job over --partitions
chunk ranges. The driver (this process) draws the centres, factorises the
preconditioner and runs CG; it writes MODEL, MODEL.json and, after every
iteration, the checkpoint MODEL.ckpt, kept after the fit: --resume
continues an interrupted fit from it, or extends a finished one to a
larger --iters.

The validation rows that --patience, --uncertainty, a --threshold rule
and --tune need are held out of the store by --val-fraction (by --seed;
0.1 by default for --uncertainty, a --threshold rule and --tune): every
job reads the whole store and holds the same rows out, the centres are
drawn from the other rows, and the conjugate-gradient passes score the
held-out ones, and a classifier's calibration scores them in a job.
--val STORE gives them from a store this process reads instead. --tune
draws its search's row subsample with a job and searches it in this
process, then fits on Beam. Flags of falkon-ooc fit that a Beam fit
cannot honour are refused by name: --plot, and those of Parquet/CSV inputs
(--target, --features, --exclude, --weight, --nulls, --cache,
--categorical, --max-levels, --time-features).

STORE is a path every worker can read (a shared filesystem), or a gs:// or
s3:// URL. On a cluster, --temp names a directory (path or URL) that the
workers write and this process reads.

Runners: prism (default; Beam's local runner, in this process), flink,
spark (--endpoint of the job server), dataflow (--job-opts
project=…,region=…,staging_location=gs://…). --job-opts sets any of Beam's
own flags: comma-separated name=value pairs, e.g.
environment_type=DOCKER,environment_config=IMAGE.
`

const tuneUsage = `usage: falkon-ooc-beam tune --out MODEL [--sigma LIST] [--lambda LIST|RANGE] [flags] STORE

Tune searches σ × λ like 'falkon-ooc tune' and with its flags, with every
pass over the data run as an Apache Beam job over --partitions chunk
ranges: one job for every σ's right-hand side, then one job per
conjugate-gradient iteration for every live candidate, which also scores
the rows held out for validation (--val-fraction of the store, by --seed;
or --val STORE, read by this process). LIST is comma-separated
(0.5,1,2); RANGE is LO:HI:COUNT, COUNT values spaced evenly in log scale
from LO to HI (1e-8:1e-3:6). Defaults: σ = √d × {1/4, 1/2, 1, 2, 4}, λ =
1e-8:1e-3:6. Candidates stop by patience and halving as in falkon-ooc
tune. It writes the best candidate's model to MODEL (and MODEL.json) and
prints every candidate; it does not checkpoint. A classifier's pick is
calibrated, and given its --threshold, on the validation rows, as by
falkon-ooc tune (held-out rows are scored by a job). Flags of falkon-ooc
tune that Beam cannot honour are refused by name: --plot, and those of
Parquet/CSV inputs. The runner flags are fit's.
`

// fitOpts are the flags of fit and tune: those both programs share
// (cliflags), and the runner's. ingest and predict use the runner's.
type fitOpts struct {
	cliflags.Flags
	runner, endpoint, jobOpts, temp string
	partitions, attempts            int
	verbose                         bool
	objectTimeout                   time.Duration
}

// notOnBeam are falkon-ooc's flags of fit and tune that falkon-ooc-beam
// declares, so that its command lines parse as falkon-ooc's do, and
// refuses by name, with the reason.
var notOnBeam = []struct {
	reason string
	names  []string
	cmd    cliflags.Command
	only   bool // cmd's only
}{
	{"falkon-ooc-beam draws no plots", []string{"plot"}, 0, false},
	{"falkon-ooc-beam reads a chunk store: make one from Parquet/CSV files with falkon-ooc-beam ingest", []string{"target", "features", "exclude", "weight", "nulls", "cache", "categorical", "max-levels", "time-features"}, 0, false},
}

// fitFlags declares fit's flags (tune's with cmd cliflags.Tune).
func fitFlags(fs *flag.FlagSet, o *fitOpts, cmd cliflags.Command) {
	o.Add(fs, cmd)
	fs.IntVar(&o.partitions, "partitions", fbeam.DefaultPartitions, "chunk ranges per pass (the result is deterministic for a given number)")
	runnerFlags(fs, o, false)
	for _, r := range notOnBeam {
		if !r.only || cmd == r.cmd {
			cliflags.Refuse(fs, r.reason, r.names...)
		}
	}
}

// runnerFlags adds the flags of the runner, which every command has, and
// with output those of the output (fit and tune have them from cliflags).
func runnerFlags(fs *flag.FlagSet, o *fitOpts, output bool) {
	fs.IntVar(&o.attempts, "attempts", fbeam.DefaultAttempts, "runs of a failed job before giving up")
	fs.StringVar(&o.runner, "runner", "prism", "Beam runner: prism, flink, spark, dataflow or universal")
	fs.StringVar(&o.endpoint, "endpoint", "", "job service `host:port` (flink, spark, universal; prism: an external Prism on this machine, the work running in this process)")
	fs.StringVar(&o.jobOpts, "job-opts", "", "Beam pipeline flags passed through, `name=value,…`")
	fs.DurationVar(&o.objectTimeout, "object-timeout", fbeam.DefaultObjectTimeout, "longest wait on object storage (s3://, gs://) for a request's answer or a read's next bytes before failing with the URL (0: no bound)")
	fs.StringVar(&o.temp, "temp", "", "`dir` or URL for job results, shared by workers and this process (default: a local temporary directory, prism only)")
	fs.BoolVar(&o.verbose, "verbose", false, "Beam's and Prism's own logs on stderr from level INFO (default: warnings only)")
	if output {
		fs.BoolVar(&o.JSON, "json", false, "print one JSON object with the result on stdout")
		fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
	}
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
		fitFlags(fs, o, cliflags.Tune)
		usage = tuneUsage
	case "ingest":
		ingestFlags(fs, iopts)
		usage = ingestUsage
	default:
		fitFlags(fs, o, cliflags.Fit)
	}
	cliflags.AddAliases(fs)
	return fs, usage, o, iopts, popts
}

// printHelp writes a command's usage and its flags, written as the
// documentation writes them (--name), each with one default.
func printHelp(w io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n%s\n", usage, cliflags.FlagsHeading)
	fs.SetOutput(w)
	cliflags.PrintDefaults(fs)
	fs.SetOutput(io.Discard)
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
		fmt.Fprintf(stderr, "%s %s: %s\nrun '%s %s --help' for usage\n", progName, cmd, cliflags.FlagMessage(err, fs), progName, cmd)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	err = cliflags.Refused(fs)
	if err != nil {
		err = usagef("%s (falkon-ooc %s has it)", err, cmd)
	}
	switch {
	case err != nil:
	case cmd == "tune":
		err = runTune(ctx, o, set, fs.Args(), stdout, stderr)
	case cmd == "ingest":
		err = runIngest(ctx, iopts, fs.Args(), stdout, stderr)
	case cmd == "predict":
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
	// Validation, BestIteration and Uncertainty are as in falkon-ooc
	// fit's document: the validation after each iteration, the
	// iteration of the model with --patience, and the predictive
	// standard deviations (--uncertainty).
	Validation    []ooc.ValPoint   `json:"validation,omitempty"`
	BestIteration int              `json:"best_iteration,omitempty"`
	Uncertainty   *ooc.Uncertainty `json:"uncertainty,omitempty"`
	Beam          beamResult       `json:"beam"`
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

// prepare checks the arguments of fit and tune and their outputs (MODEL,
// MODEL.json and with checkpoint MODEL.ckpt, through the output guard
// falkon-ooc fit uses), sets Beam's own flags and logging, and returns a
// progress printer and a function to call when done.
func (o *fitOpts) prepare(args []string, checkpoint bool, stderr io.Writer) (func(string, ...any), func(), error) {
	if o.Out == "" {
		return nil, nil, usagef("--out MODEL is required")
	}
	if len(args) != 1 {
		return nil, nil, usagef("want exactly one STORE, got %d arguments", len(args))
	}
	if outguard.IsURL(o.Out) {
		return nil, nil, usagef("--out %s: this process writes the model, its summary and checkpoint to local files; give a local path (and copy the model to object storage afterwards)", o.Out)
	}
	if err := o.checkRunner(); err != nil {
		return nil, nil, err
	}
	inputs := outguard.Inputs(args[0], o.Val)
	outs := outguard.FitOutputs(o.Out, "", checkpoint, false)
	if err := guardErr(outguard.Check(outs, inputs, o.Force)); err != nil {
		return nil, nil, err
	}
	if err := o.prepareOut(outs[0], inputs, stderr); err != nil {
		return nil, nil, err
	}
	return o.startRunner(stderr)
}

// guardErr maps the output guard's refusals to the command's: a usage
// error (exit 2) or a plain one.
func guardErr(err error) error {
	var ge *outguard.Error
	if errors.As(err, &ge) && ge.Usage {
		return usagef("%s", ge.Error())
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
	if o.Workers < 0 {
		return usagef("--workers must be ≥ 0, got %d", o.Workers)
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
	case o.Quiet:
		level = slog.LevelError
	}
	logTo(stderr, level)
	say := func(format string, a ...any) {
		if !o.Quiet {
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
		Runner: o.runner, Store: store, Partitions: o.partitions, Workers: o.Workers,
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

// fitConfig checks fit's flags and returns the Config, and with --tune
// fit --tune's FitTunedConfig, that they set.
func (o *fitOpts) fitConfig(set map[string]bool) (ooc.Config, *ooc.FitTunedConfig, error) {
	if err := o.Holdout(set); err != nil {
		return ooc.Config{}, nil, err
	}
	cfg, err := o.Config(set)
	if err != nil {
		return cfg, nil, err
	}
	if err := o.CheckFit(set); err != nil {
		return cfg, nil, err
	}
	o.SetPatience(&cfg, set)
	if !o.Tune {
		return cfg, nil, nil
	}
	tc, err := o.FitTunedConfig(cfg, set)
	return cfg, &tc, err
}

// tuneConfig checks tune's flags and returns the search they set.
func (o *fitOpts) tuneConfig(set map[string]bool) (ooc.TuneConfig, error) {
	base, err := o.Config(set)
	if err != nil {
		return ooc.TuneConfig{}, err
	}
	tc, err := o.TuneConfig(base, set)
	if err != nil {
		return tc, err
	}
	return tc, o.ValidateTune(tc)
}

func runFit(ctx context.Context, o *fitOpts, set map[string]bool, args []string, stdout, stderr io.Writer) error {
	cfg, tuned, err := o.fitConfig(set)
	if err != nil {
		return err
	}
	say, done, err := o.prepare(args, !o.NoCheckpoint, stderr)
	if err != nil {
		return err
	}
	defer done()
	store := args[0]
	var br beamResult
	var run ooc.RunOptions
	ckpt := o.Out + ".ckpt"
	if o.Resume {
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
	if !o.NoCheckpoint {
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
	e, err := fbeam.NewExecutor(ctx, o.beamOptions(store, &br, say))
	if err != nil {
		return err
	}
	defer e.Close()
	run.Executor, run.Workers, run.ValEvery, run.MaxMemory = e, o.Workers, o.ValEvery, o.MaxMemoryBytes
	var train stream.Source = e.Source()
	if o.ValFraction > 0 {
		// The jobs read the whole store and hold these rows out of
		// every pass; the centres are drawn from the others.
		rest, held, err := ooc.HoldOut(train, o.ValFraction, o.Seed)
		if err != nil {
			return cliflags.FlagErr(err)
		}
		train, run.Validation = rest, held
		say("fit: %d rows held out for validation (--val-fraction %g)", stream.Rows(held), o.ValFraction)
	}
	if o.Val != "" {
		vs, closeVal, err := openVal(o.Val, e.Source())
		if err != nil {
			return err
		}
		defer closeVal()
		run.Validation = vs
	}
	say("fit: store %s, runner %s, %d partitions", store, o.runner, o.partitions)
	var m *ooc.Model
	if tuned != nil {
		tc := *tuned
		o.SearchValRows(&tc, stream.Rows(train))
		run.SearchProgress = func(p ooc.TuneProgress) {
			if p.Note != "" {
				say("fit --tune: search: %s", p.Note)
			}
		}
		say("fit --tune: searching σ × λ in this process on a row subsample drawn by a Beam job, then fitting all rows on Beam")
		m, err = ooc.FitTuned(ctx, train, tc, run)
	} else {
		m, err = ooc.Fit(ctx, train, cfg, run)
	}
	if errors.Is(err, ooc.ErrCheckpointMismatch) {
		return fmt.Errorf("--resume: %w", err)
	}
	if err != nil {
		return err
	}
	if err := m.Save(o.Out); err != nil {
		return err
	}
	if summary, err := m.SummaryJSON(); err == nil {
		if err := writeFileAtomic(o.Out+".json", append(summary, '\n')); err != nil {
			return err
		}
	}
	tr := m.Training()
	res := fitResult{
		Version: version, Store: store, Model: o.Out, N: tr.N, D: m.D(), K: m.K(), Task: m.Task(),
		Centers: m.M(), Iterations: tr.Iterations, Status: tr.Status, Seconds: tr.Seconds,
		SecondsPerIteration: tr.SecondsPerIteration, Config: m.Config(), Precision: m.Precision().String(), Beam: br,
		Validation: tr.Validation, BestIteration: tr.BestIteration, Uncertainty: m.Uncertainty(),
	}
	if len(tr.Residuals) > 0 {
		res.Residual = tr.Residuals[len(tr.Residuals)-1]
	}
	if o.JSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(stdout, "model      %s (summary in %s.json)\n", o.Out, o.Out)
	fmt.Fprintf(stdout, "task       %s, %d output(s)\n", m.Task(), m.K())
	fmt.Fprintf(stdout, "data       n = %d, d = %d\n", tr.N, m.D())
	fmt.Fprintf(stdout, "kernel     %s, M = %d centres, λ = %g, %s\n", m.Kernel(), m.M(), m.Config().Lambda, m.Precision())
	fmt.Fprintf(stdout, "solver     %d iterations (%s), residual %.3g\n", tr.Iterations, tr.Status, res.Residual)
	if tr.Status == ooc.StatusPatience {
		fmt.Fprintf(stdout, "patience   the model is iteration %d's, the best on the validation rows\n", tr.BestIteration)
	}
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

func runTune(ctx context.Context, o *fitOpts, set map[string]bool, args []string, stdout, stderr io.Writer) error {
	tc, err := o.tuneConfig(set)
	if err != nil {
		return err
	}
	say, done, err := o.prepare(args, false, stderr)
	if err != nil {
		return err
	}
	defer done()
	store := args[0]
	var br beamResult
	e, err := fbeam.NewExecutor(ctx, o.beamOptions(store, &br, say))
	if err != nil {
		return err
	}
	defer e.Close()
	run := ooc.RunOptions{Executor: e, Workers: o.Workers, MaxMemory: o.MaxMemoryBytes}
	run.SearchProgress = func(p ooc.TuneProgress) {
		if p.Note != "" {
			say("tune: %s", p.Note)
		} else if p.Stage == ooc.StageIterate && p.Iteration > 0 && p.Chunks == 0 {
			say("iteration %d/%d: %d candidates live, %s elapsed", p.Iteration, p.Iterations, p.Live, p.Elapsed.Round(time.Millisecond))
		}
	}
	if o.Val != "" {
		vs, closeVal, err := openVal(o.Val, e.Source())
		if err != nil {
			return err
		}
		defer closeVal()
		run.Validation = vs
	}
	say("tune: store %s, runner %s, %d partitions", store, o.runner, o.partitions)
	res, err := ooc.Tune(ctx, e.Source(), tc, run)
	if err != nil {
		return cliflags.FlagErr(err)
	}
	m := res.Model()
	if m == nil {
		return fmt.Errorf("no candidate could be fitted: %s", res.Candidates[res.Best].Err)
	}
	if m.Task() != ooc.TaskRegression {
		// Calibrate the pick (and choose its --threshold by a rule) on the
		// validation rows, as falkon-ooc tune does: --val, or the rows the
		// search held out, scored by a job.
		val := run.Validation
		if val == nil {
			frac := cmp.Or(tc.ValFraction, ooc.DefaultValFraction)
			if _, val, err = ooc.HoldOut(e.Source(), frac, tc.Base.Seed); err != nil {
				return cliflags.FlagErr(err)
			}
		}
		if m, err = ooc.CalibrateWith(ctx, m, ooc.RunOptions{Validation: val, Executor: e, Workers: o.Workers}); err != nil {
			return cliflags.FlagErr(err)
		}
		if c := m.Calibration(); c != nil {
			say("tune: probabilities calibrated on %d validation rows (%s): log-loss %.4g → %.4g", c.Rows, c.Method, c.LogLossBefore, c.LogLossAfter)
		}
		if d, ok := m.Decision(); ok && d.Rule != "" {
			say("tune: decision threshold %.4g by --threshold %s on %d validation rows", d.Threshold, d.Rule, d.Rows)
		}
	}
	if err := m.Save(o.Out); err != nil {
		return err
	}
	if summary, err := m.SummaryJSON(); err == nil {
		if err := writeFileAtomic(o.Out+".json", append(summary, '\n')); err != nil {
			return err
		}
	}
	if o.JSON {
		b, err := json.MarshalIndent(tuneResult{Version: version, Store: store, Model: o.Out, Metric: res.Metric, Best: res.Best,
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
	fmt.Fprintf(stdout, "model      %s (the best candidate; summary in %s.json)\n", o.Out, o.Out)
	fmt.Fprintf(stdout, "passes     %d over n = %d rows (%d held out), %.2f s\n", res.Passes, res.N, res.ValRows, res.Seconds)
	fmt.Fprintf(stdout, "beam       %s, %d partitions, %d jobs (%d failed), %.2f s in jobs\n", br.Runner, br.Partitions, br.Jobs, br.Failed, br.JobSeconds)
	return nil
}

// openVal opens --val, a chunk store this process reads, with the columns
// of the training store train (by name); it must carry the targets.
func openVal(path string, train *chunkstore.Reader) (stream.Source, func(), error) {
	if outguard.IsURL(path) {
		return nil, nil, usagef("--val %s: give a store on a local path: this process reads the validation rows", path)
	}
	if _, err := os.Stat(filepath.Join(path, chunkstore.ManifestName)); err != nil {
		return nil, nil, usagef("--val %s: not a chunk store (make one from Parquet/CSV files with falkon-ooc-beam ingest)", path)
	}
	r, err := chunkstore.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--val: %w", err)
	}
	v, err := r.Select(train.FeatureNames(), train.TargetNames())
	if mc := (*chunkstore.MissingColumnsError)(nil); errors.As(err, &mc) {
		r.Close()
		return nil, nil, fmt.Errorf("--val %s: it lacks the training store's column(s) %q; its columns are %q", path, mc.Missing, mc.Have)
	}
	if err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("--val: %w", err)
	}
	return v, func() { r.Close() }, nil
}
