package main

import (
	"errors"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestFlagText: ooc's messages name its Config fields; the command shows
// the flags that set them, longest name first (TuneConfig.Lambdas is not
// Config.Lambda), and leaves names it does not know.
func TestFlagText(t *testing.T) {
	for in, want := range map[string]string{
		"raise λ (Config.Lambda) or the jitter (Config.Jitter)":                  "raise λ (--lambda) or the jitter (--jitter)",
		"over the limit (RunOptions.MaxMemory): Config.PrecondPrecision float32": "over the limit (--max-memory): --precond-precision float32",
		"TuneConfig.Lambdas, FitTunedConfig.Search.ValFraction, FitTuned":        "--lambda, --val-fraction, fit --tune",
		"Config.Unknown and MyConfig.Lambda stay":                                "Config.Unknown and MyConfig.Lambda stay",
		"a binary model's probabilities (Model.ProbaTo)":                         "a binary model's probabilities (predict --proba)",
	} {
		if got := flagText(in); got != want {
			t.Errorf("flagText(%q) = %q, want %q", in, got, want)
		}
	}
	// A ConfigError of a flag's field is a usage error naming the flag;
	// the text of any other error names flags, and unwraps.
	err := flagErr(&ooc.ConfigError{Field: "Config.Lambda", Msg: "lambda must be > 0 (Config.Lambda), got -1"})
	if err.Error() != "--lambda: lambda must be > 0 (--lambda), got -1" {
		t.Errorf("flagErr: %v", err)
	}
	mem := errors.Join(ooc.ErrMemory, errors.New("lower Config.PrecondRank"))
	if err := flagErr(mem); !errors.Is(err, ooc.ErrMemory) || err.Error() != "not enough memory\nlower --precond-rank" {
		t.Errorf("flagErr(memory error) = %q", err)
	}
}
