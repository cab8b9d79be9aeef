package pass_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// A fit's right-hand side K_nMᵀ[y 1] over four rows in two chunks, with
// the job shipped through its encoding as a remote executor would.
func Example() {
	x := []float64{0, 1, 2, 3}  // one feature
	y := []float64{1, 1, -1, 2} // one target
	src := stream.NewMemSource(x, 1, y, 1, 2)
	job := &pass.Job{
		Kind: pass.TargetProduct, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1},
		Precision: kernel.Float64, M: 2, D: 1, K: 1, Centers: []float64{0, 3},
		Task: model.TaskRegression,
	}
	b, err := json.Marshal(job)
	if err != nil {
		panic(err)
	}
	var remote pass.Job
	if err := json.Unmarshal(b, &remote); err != nil {
		panic(err)
	}
	out, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), src, &remote)
	if err != nil {
		panic(err)
	}
	// M × (K+1) values, row-major: per centre Σ k(x, c)·y and Σ k(x, c)
	// (k(x, c) = exp(−(x − c)²/2): 1, 0.6065, 0.1353, 0.0111 from the
	// nearest row); then the target sum.
	fmt.Printf("%d values\n", len(out))
	for i := range 2 {
		fmt.Printf("centre %d: %.4f %.4f\n", i, out[2*i], out[2*i+1])
	}
	fmt.Printf("Σy = %g\n", out[4])
	// Output:
	// 5 values
	// centre 0: 1.4934 1.7530
	// centre 1: 1.5399 1.7530
	// Σy = 3
}
