package ooc_test

import (
	"context"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// Search σ × λ on a caller's data source: every candidate rides on the
// same passes over the data, the worse σ leave the passes early (σ
// halving), and the best model comes back ready to use.
func ExampleTune() {
	src := waveSource{chunks: 10}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{
		Base:    ooc.Config{Centers: 100, Iterations: 10, Seed: 1},
		Sigmas:  []float64{0.05, 0.5, 5},
		Lambdas: []float64{1e-2, 1e-8},
	}, ooc.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Candidates {
		fmt.Printf("σ = %-4g λ = %-5g validation %s %.0e, stopped after %d iterations (%s)\n", c.Sigma, c.Lambda,
			res.Metric, c.BestMetric, c.Iterations, c.Stop)
	}
	best := res.Candidates[res.Best]
	fmt.Printf("best: σ = %g, λ = %g\n", best.Sigma, best.Lambda)
	// Output:
	// σ = 0.05 λ = 0.01  validation rmse 2e-01, stopped after 2 iterations (sigma-halving)
	// σ = 0.05 λ = 1e-08 validation rmse 7e-01, stopped after 2 iterations (sigma-halving)
	// σ = 0.5  λ = 0.01  validation rmse 4e-02, stopped after 6 iterations (patience)
	// σ = 0.5  λ = 1e-08 validation rmse 2e-05, stopped after 15 iterations (patience)
	// σ = 5    λ = 0.01  validation rmse 4e-01, stopped after 4 iterations (patience)
	// σ = 5    λ = 1e-08 validation rmse 6e-02, stopped after 4 iterations (sigma-halving)
	// best: σ = 0.5, λ = 1e-08
}
