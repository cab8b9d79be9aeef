package precond_test

import (
	"testing"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

func TestFloat32Suffices(t *testing.T) {
	for _, c := range []struct {
		lambda, jitter float64
		want           bool
	}{
		{1e-3, 0, true},
		{1.01e-4, 0, true}, // just past λ = 10ε
		{9.9e-5, 0, false},
		{1.23e-5, 0, false}, // susy's tuned λ: the float32 fit lost 0.4 % of AUC
		{6e-6, 0, false},    // msd's tuned λ: the float32 fit's MSE was 1 % worse
		{2.4e-8, 0, false},
		{1.01e-5, 1e-6, true}, // an explicit jitter moves the boundary
		{9e-6, 1e-6, false},
	} {
		if got := precond.Float32Suffices(c.lambda, c.jitter); got != c.want {
			t.Errorf("Float32Suffices(%g, %g) = %v, want %v", c.lambda, c.jitter, got, c.want)
		}
	}
}
