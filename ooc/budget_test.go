package ooc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestTuneBudget checks the cap of the search: with patience, a
// candidate still improving at Base.Iterations continues by the patience
// rule up to the budget of passes, and one the budget stops says so with
// its last improvement; the search never makes more passes than the
// budget; without patience each candidate runs Base.Iterations, as
// before.
func TestTuneBudget(t *testing.T) {
	x, y := synth(3000, 3, 41)
	src := stream.NewMemSource(x, 3, y, 1, 250)
	base := ooc.Config{Centers: 150, Iterations: 4, Seed: 2}
	tc := ooc.TuneConfig{Base: base, Sigmas: []float64{1, 3}, Lambdas: []float64{1e-3, 1e-9}, ValFraction: 0.2, SigmaHalving: -1}
	run := ooc.RunOptions{Workers: 2}

	// The default budget: 3 + 2·4 passes; the λ = 1e-9 candidates still
	// improve at iteration 4 and run on.
	res, err := ooc.Tune(context.Background(), src, tc, run)
	if err != nil {
		t.Fatal(err)
	}
	if want := ooc.DefaultMaxPasses(4, ooc.DefaultPatience, true); want != 11 || res.Passes > want {
		t.Fatalf("%d passes, budget %d (want 11)", res.Passes, want)
	}
	beyond := 0
	for i, c := range res.Candidates {
		if c.Iterations > 4 {
			beyond++
		}
		if c.Stop == ooc.StopIterations {
			t.Errorf("candidate %d stopped at Base.Iterations with patience on", i)
		}
		if (c.Stop == ooc.StopBudget) != (c.LastImprovement != nil) {
			t.Errorf("candidate %d (stop %s): last improvement %+v", i, c.Stop, c.LastImprovement)
		}
	}
	if beyond == 0 {
		t.Fatalf("no candidate ran past Base.Iterations: the test shows nothing (%+v)", res.Candidates)
	}

	// An explicit budget of 8 passes: 5 iterations; the candidates still
	// live then stop by the budget, with their last improvement.
	tc.MaxPasses = 8
	if res, err = ooc.Tune(context.Background(), src, tc, run); err != nil {
		t.Fatal(err)
	}
	if res.Passes != 8 {
		t.Fatalf("%d passes with a budget of 8", res.Passes)
	}
	budget := 0
	for i, c := range res.Candidates {
		if c.Stop != ooc.StopBudget {
			continue
		}
		budget++
		li := c.LastImprovement
		if c.Iterations != 5 || li == nil || li.Iteration != c.BestIteration || !(li.To < li.From) || li.To != c.BestMetric ||
			li.Still != (c.BestIteration == 5) {
			t.Errorf("candidate %d: %d iterations, best %d (%g), last improvement %+v", i, c.Iterations, c.BestIteration, c.BestMetric, li)
		}
	}
	if budget == 0 {
		t.Fatal("no candidate stopped by the budget of 8 passes")
	}

	// Without patience: Base.Iterations each, 3 + 4 passes.
	tc.MaxPasses, tc.Patience = 0, -1
	if res, err = ooc.Tune(context.Background(), src, tc, run); err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Candidates {
		if c.Iterations != 4 || c.Stop != ooc.StopIterations || c.LastImprovement == nil {
			t.Errorf("no patience: candidate %d ran %d iterations (%s), last improvement %+v", i, c.Iterations, c.Stop, c.LastImprovement)
		}
	}
	if res.Passes != 7 {
		t.Errorf("no patience: %d passes, want 7", res.Passes)
	}

	tc.MaxPasses = 3
	_, err = ooc.Tune(context.Background(), src, tc, run)
	var ce *ooc.ConfigError
	if !errors.As(err, &ce) || ce.Field != "TuneConfig.MaxPasses" {
		t.Fatalf("MaxPasses 3: %v", err)
	}
}
