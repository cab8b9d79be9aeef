package main

import (
	"errors"
	"regexp"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// flagOf maps the fields of ooc's configuration (ooc.ConfigError.Field,
// and the field names ooc's errors and notes quote) to the flags of fit
// and tune that set them. ooc validates the values and names its fields;
// the CLI only names the flag.
var flagOf = map[string]string{
	"Config.Lambda":                  "--lambda",
	"Config.Centers":                 "--centers",
	"Config.Iterations":              "--iters",
	"Config.Tolerance":               "--tol",
	"Config.Patience":                "--patience",
	"Config.MinImprovement":          "--min-improvement",
	"Config.Jitter":                  "--jitter",
	"Config.Kernel":                  "--kernel",
	"Config.Preconditioner":          "--precond",
	"Config.PrecondPrecision":        "--precond-precision",
	"Config.PrecondRank":             "--precond-rank",
	"Config.Sampling":                "--centers-sampling",
	"Config.Candidates":              "--candidates",
	"Config.Task":                    "--task",
	"Config.ClassWeight":             "--class-weight",
	"Config.Threshold":               "--threshold",
	"Config.Loss":                    "--loss",
	"Config.NewtonSteps":             "--newton-steps",
	"Config.Precision":               "--precision",
	"Config.Uncertainty":             "--uncertainty",
	"Config.UncertaintyRank":         "--uncertainty-rank",
	"RunOptions.Workers":             "--workers",
	"RunOptions.ValEvery":            "--val-every",
	"RunOptions.Validation":          "--val",
	"RunOptions.MaxMemory":           "--max-memory",
	"TuneConfig.Lambdas":             "--lambda",
	"TuneConfig.Sigmas":              "--sigma",
	"TuneConfig.ValFraction":         "--val-fraction",
	"TuneConfig.Patience":            "--patience",
	"TuneConfig.Halving":             "--halving",
	"TuneConfig.SigmaSteps":          "--sigma-halving",
	"TuneConfig.ARD":                 "--ard",
	"TuneConfig.Extend":              "--extend",
	"TuneConfig.MaxPasses":           "--max-passes",
	"TuneConfig.Pick":                "--pick",
	"TunedConfig.Rows":               "--tune-rows",
	"TunedConfig.Centers":            "--tune-centers",
	"TunedConfig.Handoff":            "--handoff",
	"TunedConfig.Search.ValFraction": "--val-fraction",
	"ValFraction":                    "--val-fraction", // ooc.HoldOut's
}

// nameOf maps the other names of ooc's API that its messages quote to
// what the command line calls them (in text only: an error naming them
// is not a usage error).
var nameOf = map[string]string{
	"RunOptions.Resume": "--resume",
	"Model.ProbaTo":     "predict --proba",
	"FitTuned":          "fit --tune",
}

// fieldName matches the Go path of a field of ooc's configuration in a
// message (Config.Lambda, RunOptions.MaxMemory,
// TunedConfig.Search.ValFraction) and the names of nameOf.
var fieldName = regexp.MustCompile(`\b(?:(?:TunedConfig\.Search\.|TunedConfig\.|TuneConfig\.|Config\.|RunOptions\.|Model\.)[A-Z][A-Za-z]*|FitTuned)\b`)

// flagText replaces the field names of ooc's configuration in s (an
// error's or a note's text) with the flags that set them.
func flagText(s string) string {
	return fieldName.ReplaceAllStringFunc(s, func(f string) string {
		if fl, ok := flagOf[f]; ok {
			return fl
		}
		if n, ok := nameOf[f]; ok {
			return n
		}
		return f
	})
}

// flagError is an error of ooc whose text names flags in place of the
// fields of ooc's configuration; it unwraps to the error.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// flagErr renders an error of ooc for the command line. An
// *ooc.ConfigError about a value a flag sets becomes a usage error (exit 2)
// naming the flag: "--lambda: lambda must be > 0, got -1". In any other
// error (those about the data, or ooc.ErrMemory) the fields its text
// names become the flags that set them.
func flagErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *ooc.ConfigError
	if errors.As(err, &ce) {
		if f, ok := flagOf[ce.Field]; ok {
			return usagef("%s: %s", f, flagText(ce.Msg))
		}
	}
	return flagNames(err)
}

// flagNames returns err with the fields of ooc's configuration that its
// text names replaced by the flags that set them, for an error of a run
// (after the flags were accepted: an error about the data keeps its exit
// status 1).
func flagNames(err error) error {
	if err == nil {
		return nil
	}
	if msg := flagText(err.Error()); msg != err.Error() {
		return &flagError{msg: msg, err: err}
	}
	return err
}
