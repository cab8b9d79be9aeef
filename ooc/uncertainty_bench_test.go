package ooc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// BenchmarkPredictStd compares PredictTo with PredictStdTo (rank 64) at
// M = 4000 on d = 9 and d = 90 features, 2048 rows per call, one core.
func BenchmarkPredictStd(b *testing.B) {
	for _, d := range []int{9, 90} {
		x, y := synth(20000, d, 1)
		vx, vy := synth(2000, d, 2)
		m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 2000), ooc.Config{Centers: 4000, Iterations: 2,
			Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 3}, Uncertainty: ooc.UncertaintyPrecond, UncertaintyRank: 64},
			ooc.RunOptions{Validation: stream.NewMemSource(vx, d, vy, 1, 2000)})
		if err != nil {
			b.Fatal(err)
		}
		const rows = 2048
		out, std := make([]float64, rows), make([]float64, rows)
		b.Run(fmt.Sprintf("d=%d/plain", d), func(b *testing.B) {
			for range b.N {
				m.PredictTo(out, x[:rows*d], rows)
			}
		})
		b.Run(fmt.Sprintf("d=%d/std", d), func(b *testing.B) {
			for range b.N {
				m.PredictStdTo(out, std, x[:rows*d], rows)
			}
		})
	}
}
