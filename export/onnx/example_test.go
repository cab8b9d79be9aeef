package onnx_test

import (
	"context"
	"fmt"
	"math"

	"github.com/falkon-ooc/falkon-ooc/export/onnx"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Export a fitted model as an ONNX graph in float32; onnx.WriteFile
// writes the same bytes to a file.
func Example() {
	x, y := make([]float64, 2000), make([]float64, 2000)
	for i := range x {
		x[i] = 2 * math.Pi * float64(i) / 2000
		y[i] = math.Sin(x[i])
	}
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 1, y, 1, 500), ooc.Config{
		Centers: 50, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5}, Lambda: 1e-6, Seed: 1,
	}, ooc.RunOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	f32 := kernel.Float32
	data, info, err := onnx.Marshal(m.Model, onnx.Options{Precision: &f32, Version: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("opset %d, %s, input %q, outputs %q\n", info.Opset, info.Precision, info.Input, info.Outputs)
	fmt.Println("bytes:", len(data) > 50*4)
	// Output:
	// opset 13, float32, input "features", outputs ["value"]
	// bytes: true
}
