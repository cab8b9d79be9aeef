package main

import (
	"errors"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// flagOf maps the fields of ooc's configuration (ooc.ConfigError.Field)
// to the flags of fit and tune that set them. ooc validates the values;
// the CLI only names the flag.
var flagOf = map[string]string{
	"Config.Lambda":           "--lambda",
	"Config.Centers":          "--centers",
	"Config.Iterations":       "--iters",
	"Config.Tolerance":        "--tol",
	"Config.Jitter":           "--jitter",
	"Config.Preconditioner":   "--precond",
	"Config.PrecondPrecision": "--precond-precision",
	"Config.PrecondRank":      "--precond-rank",
	"Config.Sampling":         "--centers-sampling",
	"Config.Candidates":       "--candidates",
	"Config.Task":             "--task",
	"Config.ClassWeight":      "--class-weight",
	"Config.Threshold":        "--threshold",
	"Config.Loss":             "--loss",
	"Config.NewtonSteps":      "--newton-steps",
	"Config.Precision":        "--precision",
	"RunOptions.Workers":      "--workers",
	"RunOptions.ValEvery":     "--val-every",
	"TuneConfig.Lambdas":      "--lambda",
	"TuneConfig.Sigmas":       "--sigma",
	"TuneConfig.ValFraction":  "--val-fraction",
	"TuneConfig.Halving":      "--halving",
	"TuneConfig.SigmaSteps":   "--sigma-halving",
	"TuneConfig.ARD":          "--ard",
}

// flagErr renders an *ooc.ConfigError about a value a flag sets as a
// usage error (exit 2) naming the flag: "--lambda: lambda must be > 0,
// got -1". Other errors, those about the data among them, are returned
// as they are.
func flagErr(err error) error {
	var ce *ooc.ConfigError
	if errors.As(err, &ce) {
		if f, ok := flagOf[ce.Field]; ok {
			return usagef("%s: %s", f, ce.Msg)
		}
	}
	return err
}
