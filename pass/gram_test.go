package pass_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestGram checks a Gram pass with row weights and a hold-out against a
// direct sum of wᵢ k(xᵢ, cₐ) k(xᵢ, c_b) over the rows not held out.
func TestGram(t *testing.T) {
	const n, d, m = 900, 2, 7
	x, y := synth(n, d, 5)
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.25 + float64(i%5)
	}
	src := stream.NewMemSource(x, d, y, 1, 128).WithWeights(w, "w")
	centres := slices.Clone(x[:m*d])
	kn := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.7}
	hold := &pass.Holdout{Fraction: 0.3, Seed: 9}
	job := &pass.Job{Kind: pass.Gram, Kernel: kn, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: centres,
		Weight: "w", Holdout: hold}
	got, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), src, job)
	if err != nil {
		t.Fatal(err)
	}
	held := map[int]bool{}
	for _, r := range stream.HeldOutRows(nil, 0, n, hold.Fraction, hold.Seed) {
		held[int(r)] = true
	}
	if len(held) == 0 || len(got) != m*m {
		t.Fatalf("%d rows held out, %d values", len(held), len(got))
	}
	for a := range m {
		for b := range m {
			want := 0.0
			for i := range n {
				if !held[i] {
					want += w[i] * kn.Eval(x[i*d:(i+1)*d], centres[a*d:(a+1)*d]) * kn.Eval(x[i*d:(i+1)*d], centres[b*d:(b+1)*d])
				}
			}
			if g := got[a*m+b]; math.Abs(g-want) > 1e-12*want {
				t.Fatalf("G[%d,%d] = %v, want %v", a, b, g, want)
			}
		}
	}
	// A non-finite feature in a training row is an error naming it.
	x[5*d+1] = math.NaN()
	if held[5] {
		t.Fatal("row 5 is held out: pick another")
	}
	_, err = pass.LocalExecutor{Workers: 1}.Pass(context.Background(), stream.NewMemSource(x, d, y, 1, 128).WithWeights(w, "w"), job)
	if err == nil || !strings.Contains(err.Error(), `row 5, column "x1": value NaN`) {
		t.Errorf("err = %v", err)
	}
}
