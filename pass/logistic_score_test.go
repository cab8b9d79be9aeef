package pass_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestLogisticGradientScores: a LogisticGradient with ScoreRows scores the
// held-out rows with K U — [K α | K Δ] on a line search — as a
// GroupKernelProduct with Alpha = U scores them, bit for bit, and its sums
// are the pass's without scoring, bit for bit. A Hessian product scores
// no rows.
func TestLogisticGradientScores(t *testing.T) {
	const n, d, m = 900, 2, 6
	x, y := synth(n, d, 19)
	for i := range y {
		y[i] = float64(int(y[i]*3) % 2)
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.5 + float64(i%3)
	}
	src := stream.NewMemSource(x, d, y, 1, 128).WithWeights(w, "w")
	hold := &pass.Holdout{Fraction: 0.25, Seed: 5}
	_, held := stream.Holdout(src, hold.Fraction, hold.Seed)
	rng := rand.New(rand.NewPCG(4, 4))
	kn := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.1}
	for _, line := range []bool{false, true} {
		cols := 2 // two candidates' columns, K = 1
		uc := cols
		if line {
			uc = 2 * cols
		}
		u := make([]float64, m*uc)
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		job := pass.Job{Kind: pass.LogisticGradient, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: slices.Clone(x[:m*d]),
			Task: model.TaskBinary, Classes: []float64{0, 1}, Weight: "w", WeightExp: 1, Holdout: hold,
			Groups: []pass.Group{{Kernel: kn, Cols: cols, U: u}}}
		if line {
			job.Line = []float64{0.5, 0.25}
		}
		want, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), src, &job)
		if err != nil {
			t.Fatal(err)
		}
		scored := job
		scored.ScoreRows = stream.Rows(held)
		if got := scored.RowLen(); got != uc+2 {
			t.Fatalf("line %v: RowLen %d, want %d", line, got, uc+2)
		}
		got, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), src, &scored)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != scored.OutLen() || !slices.Equal(got[:len(want)], want) {
			t.Fatalf("line %v: %d values, the sums differ from the pass without scoring", line, len(got))
		}
		ref := pass.Job{Kind: pass.GroupKernelProduct, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: job.Centers,
			Task: model.TaskBinary, Classes: []float64{0, 1}, Weight: "w", WeightExp: 1, Holdout: hold, ScoreRows: scored.ScoreRows,
			Groups: []pass.Group{{Kernel: kn, Cols: uc, Alpha: u}}}
		rows, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), src, &ref)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range rows {
			if math.Float64bits(v) != math.Float64bits(got[len(want)+i]) {
				t.Fatalf("line %v: scored value %d is %v, the GroupKernelProduct's %v", line, i, got[len(want)+i], v)
			}
		}
	}
	hess := pass.Job{Kind: pass.LogisticHessianProduct, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: slices.Clone(x[:m*d]),
		Task: model.TaskBinary, Classes: []float64{0, 1}, ScoreRows: 10,
		Groups: []pass.Group{{Kernel: kn, Cols: 1, U: make([]float64, 2*m)}}}
	if _, err := hess.NewWorker(); err == nil || !strings.Contains(err.Error(), "a logistic_hessian_product pass scores no rows") {
		t.Errorf("a Hessian product that scores rows: %v", err)
	}
}
