package ooc_test

import (
	"errors"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestConfigError checks that each check says which field it rejects,
// before the data (Validate, ValidateTune) and in Plan, and that the
// error matches ErrConfig.
func TestConfigError(t *testing.T) {
	x, y := synth(100, 2, 6)
	src := stream.NewMemSource(x, 2, y, 1, 50)
	for _, c := range []struct {
		name, field, msg string
		err              func() error
	}{
		{"lambda", "Config.Lambda", "lambda must be > 0, got -1",
			func() error { return ooc.Validate(ooc.Config{Lambda: -1}, ooc.RunOptions{}) }},
		{"precond", "Config.Preconditioner", `unknown preconditioner "lu" (want cholesky, eigen, pivoted or nystrom)`,
			func() error { return ooc.Validate(ooc.Config{Preconditioner: "lu"}, ooc.RunOptions{}) }},
		{"workers", "RunOptions.Workers", "workers must be ≥ 0, got -2",
			func() error { return ooc.Validate(ooc.Config{}, ooc.RunOptions{Workers: -2}) }},
		{"val every", "RunOptions.ValEvery", "validation interval must be ≥ 1, got -1",
			func() error { return ooc.Validate(ooc.Config{}, ooc.RunOptions{ValEvery: -1}) }},
		{"centers > n", "Config.Centers", "centers (M = 101) must not exceed the number of training rows (n = 100)",
			func() error { _, err := ooc.Plan(src, ooc.Config{Centers: 101}, ooc.RunOptions{}); return err }},
		{"tune base", "Config.Jitter", "jitter must be ≥ 0, got -1",
			func() error { return ooc.ValidateTune(ooc.TuneConfig{Base: ooc.Config{Jitter: -1}}, ooc.RunOptions{}) }},
		{"halving", "TuneConfig.Halving", "halving must be ≥ 0, got -3",
			func() error { return ooc.ValidateTune(ooc.TuneConfig{Halving: -3}, ooc.RunOptions{}) }},
		{"ard sigmas", "TuneConfig.ARD", "ARD learns the per-feature length scales: give no Base.Kernel.Sigmas",
			func() error {
				return ooc.ValidateTune(ooc.TuneConfig{Base: ooc.Config{Kernel: kernel.Kernel{Sigmas: []float64{1}}}, ARD: &ooc.ARDConfig{}}, ooc.RunOptions{})
			}},
		{"min improvement", "Config.MinImprovement", "minimum improvement must be in [0, 1), got 2",
			func() error { return ooc.Validate(ooc.Config{MinImprovement: 2}, ooc.RunOptions{}) }},
		{"tune min improvement", "TuneConfig.MinImprovement", "minimum improvement must be in [0, 1), got 1",
			func() error { return ooc.ValidateTune(ooc.TuneConfig{MinImprovement: 1}, ooc.RunOptions{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			var ce *ooc.ConfigError
			if !errors.As(err, &ce) || ce.Field != c.field || ce.Msg != c.msg || !errors.Is(err, ooc.ErrConfig) ||
				err.Error() != "invalid configuration: "+c.msg {
				t.Fatalf("err = %#v, want field %s, message %q", err, c.field, c.msg)
			}
		})
	}
	if err := ooc.Validate(ooc.Config{}, ooc.RunOptions{}); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	// A negative Patience never stops on patience, as TuneConfig's.
	if err := ooc.Validate(ooc.Config{Patience: -1}, ooc.RunOptions{}); err != nil {
		t.Fatalf("Patience -1: %v", err)
	}
}
