package kernel_test

import (
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/kernel"
)

func Example() {
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	const d = 2
	if err := k.Validate(d); err != nil {
		panic(err)
	}
	centres := []float64{0, 0, 1, 0} // M = 2 centres
	c := kernel.NewCenters(k, centres, 2, d, kernel.Float64)
	ws := c.NewWorkspace()

	// K_MM, exactly symmetric with a unit diagonal.
	kmm := make([]float64, 4)
	c.BlockTo(ws, kmm, centres, 2)
	fmt.Printf("K_MM = [%.4f %.4f; %.4f %.4f]\n", kmm[0], kmm[1], kmm[2], kmm[3])

	// One streamed block of 3 rows: w += Kᵀ (K u).
	x := []float64{0, 0, 1, 1, 2, 0}
	u := []float64{1, -1}
	w := make([]float64, 2)
	c.KtKvAdd(ws, w, x, 3, u, nil, 1)
	fmt.Printf("w = [%.4f %.4f]\n", w[0], w[1])
	// Output:
	// K_MM = [1.0000 0.6065; 0.6065 1.0000]
	// w = [0.2419 -0.1919]
}
