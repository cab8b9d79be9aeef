package ooc_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The checkpoint fixtures in testdata were written by the fits below
// before the squared and the logistic loss shared one checkpoint writer:
// checkpoint_v1_patience.fkcp after iteration 26 of a patience fit (its
// best iteration and β, the validations since), checkpoint_v1_logistic.fkcp
// after Newton step 3 of a class-balanced logistic fit.

func ckptPatienceSetup() (train, held stream.Source, cfg ooc.Config) {
	const d = 3
	x, y := synth(1500, d, 41)
	src := stream.NewMemSource(x, d, y, 1, 200)
	train, held = stream.Holdout(src, 0.3, 3)
	return train, held, ooc.Config{Centers: 300, Iterations: 60, Lambda: 1e-12, Seed: 3, Kernel: kernelSigma(0.4), Patience: 2}
}

func ckptLogisticSetup() (stream.Source, ooc.Config) {
	const n, d = 500, 2
	x, y := synth(n, d, 95)
	cls := make([]float64, n)
	for i, v := range y {
		if v > 5 {
			cls[i] = 1
		}
	}
	src := stream.NewMemSource(x, d, cls, 1, 100)
	return src, ooc.Config{Centers: 25, Lambda: 1e-3, Iterations: 6, Seed: 3, Loss: ooc.LossLogistic, NewtonSteps: 6,
		ClassWeight: ooc.ClassWeightBalanced}
}

// TestCheckpointFixtures: an old checkpoint still resumes to the
// uninterrupted fit's model, bit for bit, and today's fit, stopped at the
// same step, writes the same bytes. Where this build's kernels round
// differently from those that wrote the fixtures (fixtureKernels false),
// it resumes today's checkpoint instead and checks that alone.
func TestCheckpointFixtures(t *testing.T) {
	train, held, pcfg := ckptPatienceSetup()
	lsrc, lcfg := ckptLogisticSetup()
	for _, tc := range []struct {
		file       string
		src, val   stream.Source
		cfg        ooc.Config
		at         int
		best       int    // the checkpoint's best iteration
		status     string // the resumed fit's
		iterations int
	}{
		{"checkpoint_v1_patience.fkcp", train, held, pcfg, 26, 25, "patience", 27},
		{"checkpoint_v1_logistic.fkcp", lsrc, nil, lcfg, 3, 0, "", 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			killed := errors.New("killed")
			out := filepath.Join(t.TempDir(), tc.file)
			_, err := ooc.Fit(context.Background(), tc.src, tc.cfg, ooc.RunOptions{Validation: tc.val, Checkpoint: func(c *ooc.Checkpoint) error {
				if c.Iteration < tc.at {
					return nil
				}
				if err := c.WriteFile(out); err != nil {
					return err
				}
				return killed
			}})
			if !errors.Is(err, killed) {
				t.Fatalf("the interrupted fit: %v", err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.file)
			if !fixtureKernels {
				path = out
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := ooc.ReadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Iteration != tc.at || fixtureKernels && cp.BestIteration != tc.best {
				t.Fatalf("fixture at iteration %d, best %d; want %d, %d", cp.Iteration, cp.BestIteration, tc.at, tc.best)
			}
			full, err := ooc.Fit(context.Background(), tc.src, tc.cfg, ooc.RunOptions{Validation: tc.val})
			if err != nil {
				t.Fatal(err)
			}
			resumed, err := ooc.Fit(context.Background(), tc.src, tc.cfg, ooc.RunOptions{Validation: tc.val, Resume: cp})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(resumed.Alpha(), full.Alpha()) {
				t.Errorf("resumed α differs from the uninterrupted fit's by %.3g relative", maxRelDiff(resumed.Alpha(), full.Alpha()))
			}
			ft, rt := full.Training(), resumed.Training()
			if rt.Iterations != ft.Iterations || rt.BestIteration != ft.BestIteration || rt.Status != ft.Status {
				t.Errorf("resumed: %d iterations, best %d, %s; uninterrupted %d, best %d, %s",
					rt.Iterations, rt.BestIteration, rt.Status, ft.Iterations, ft.BestIteration, ft.Status)
			}
			if fixtureKernels && tc.status != "" && (string(ft.Status) != tc.status || ft.Iterations != tc.iterations) {
				t.Errorf("the fit: %s after %d iterations, want %s after %d", ft.Status, ft.Iterations, tc.status, tc.iterations)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("today's checkpoint after step %d differs from the fixture (%d bytes, fixture %d)", tc.at, len(got), len(want))
			}
		})
	}
}
