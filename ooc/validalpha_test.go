package ooc_test

import (
	"context"
	"math"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Fit's validations score α carried along the CG steps (ooc/validalpha.go)
// instead of α = Bβ solved afresh: each validation metric must be the
// metric of the model Fit returns when stopped at that iteration, scored
// on the same rows, to rounding. Covered: one and two targets, validation
// every iteration and every third, the Cholesky and the Nyström
// preconditioner (rank below M), float64 and float32 factors.
func TestFitValidationCarriesAlpha(t *testing.T) {
	const n, d = 1200, 3
	x, y1 := synth(n, d, 61)
	y2 := make([]float64, 2*n) // a second target: a different function of x
	for i := range n {
		y2[2*i], y2[2*i+1] = y1[i], math.Cos(x[i*d]/2)+0.5*x[i*d+1]
	}
	cases := []struct {
		name  string
		k     int
		every int
		cfg   func(*ooc.Config)
	}{
		{"cholesky", 1, 1, func(*ooc.Config) {}},
		{"two targets, every 3rd", 2, 3, func(*ooc.Config) {}},
		{"nystrom rank 80", 1, 1, func(c *ooc.Config) { c.Preconditioner, c.PrecondRank = precond.MethodNystrom, 80 }},
		{"float32 factors", 2, 2, func(c *ooc.Config) { c.PrecondPrecision = precond.Float32 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			y := y1
			if tc.k == 2 {
				y = y2
			}
			src := stream.NewMemSource(x, d, y, tc.k, 150)
			train, held := stream.Holdout(src, 0.25, 5)
			// Patience −1: every iteration validated, none stopped.
			cfg := ooc.Config{Centers: 150, Iterations: 9, Lambda: 1e-7, Seed: 2, Kernel: kernelSigma(0.8), Patience: -1}
			tc.cfg(&cfg)
			ctx := context.Background()
			m, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Validation: held, ValEvery: tc.every, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			vals := m.Training().Validation
			if want := (cfg.Iterations + tc.every - 1) / tc.every; len(vals) != want {
				t.Fatalf("%d validations, want %d", len(vals), want)
			}
			prev := math.Inf(1)
			for _, vp := range vals {
				stop := cfg
				stop.Iterations = vp.Iteration
				ref, err := ooc.Fit(ctx, train, stop, ooc.RunOptions{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				met, err := ref.Evaluate(ctx, held, ooc.PredictOptions{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				got, want := *vp.RMSE, *met.RMSE
				if rel := math.Abs(got-want) / want; rel > 1e-9 {
					t.Errorf("iteration %d: validation RMSE %.12g, the model stopped there scores %.12g (%.2g relative)",
						vp.Iteration, got, want, rel)
				}
				if got == prev {
					t.Errorf("iteration %d: validation RMSE %.12g unchanged from the last validation", vp.Iteration, got)
				}
				prev = got
			}
		})
	}
}

// The carried α must not leak into the model Fit returns: a fit with
// validation rows gives the model of the same fit without them, bit for
// bit (validation only scores).
func TestFitValidationLeavesModel(t *testing.T) {
	const n, d = 900, 2
	x, y := synth(n, d, 62)
	src := stream.NewMemSource(x, d, y, 1, 100)
	train, held := stream.Holdout(src, 0.2, 9)
	cfg := ooc.Config{Centers: 120, Iterations: 7, Lambda: 1e-6, Seed: 4, Kernel: kernelSigma(1), Patience: -1}
	ctx := context.Background()
	with, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Validation: held, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	without, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := synth(50, d, 63)
	pw, po := make([]float64, 50), make([]float64, 50)
	with.PredictTo(pw, tx, 50)
	without.PredictTo(po, tx, 50)
	for i := range pw {
		if pw[i] != po[i] {
			t.Fatalf("row %d: %v with validation rows, %v without", i, pw[i], po[i])
		}
	}
}
