package ooc_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// A fit killed after iteration 3 and resumed from its checkpoint file
// ends with the same model, bit for bit, as an uninterrupted fit.
func TestResumeMatchesUninterrupted(t *testing.T) {
	x, y := synth(2500, 4, 11)
	src := stream.NewMemSource(x, 4, y, 1, 300)
	cfg := ooc.Config{Centers: 120, Iterations: 9, Seed: 5}
	full, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fit.ckpt")
	killed := errors.New("killed")
	c := cfg
	var run ooc.RunOptions
	run.Checkpoint = func(cp *ooc.Checkpoint) error {
		if err := cp.WriteFile(path); err != nil {
			return err
		}
		if cp.Iteration == 3 {
			return killed
		}
		return nil
	}
	if _, err := ooc.Fit(context.Background(), src, c, run); !errors.Is(err, killed) {
		t.Fatalf("interrupted fit: err = %v", err)
	}
	cp, err := ooc.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Iteration != 3 {
		t.Fatalf("checkpoint at iteration %d, want 3", cp.Iteration)
	}
	resumed, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Resume: cp, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Training().Iterations != 9 {
		t.Fatalf("resumed fit ran to %d iterations", resumed.Training().Iterations)
	}
	for i := range full.Alpha() {
		if math.Float64bits(full.Alpha()[i]) != math.Float64bits(resumed.Alpha()[i]) {
			t.Fatalf("α[%d]: resumed %v, uninterrupted %v", i, resumed.Alpha()[i], full.Alpha()[i])
		}
	}

	// Another configuration or other data: refused.
	for name, alt := range map[string]func(*ooc.Config) stream.Source{
		"lambda": func(c *ooc.Config) stream.Source { c.Lambda = 1e-3; return src },
		"seed":   func(c *ooc.Config) stream.Source { c.Seed = 6; return src },
		"data": func(c *ooc.Config) stream.Source {
			x2, y2 := synth(2500, 4, 12)
			return stream.NewMemSource(x2, 4, y2, 1, 300)
		},
	} {
		c := cfg
		s := alt(&c)
		_, err := ooc.Fit(context.Background(), s, c, ooc.RunOptions{Resume: cp})
		if !errors.Is(err, ooc.ErrCheckpointMismatch) || !strings.Contains(err.Error(), "resume with the same data and Config, or start afresh without RunOptions.Resume") {
			t.Errorf("%s: err = %v, want a checkpoint mismatch", name, err)
		}
	}
}
