package ooc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// angleClasses returns n points of the plane, standard normal, labelled
// 0 … classes−1 by their angle: classes separable without noise, whose
// logistic objective keeps falling as λ → 0 (its Newton steps then
// overshoot).
func angleClasses(n, classes int, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	x, y = make([]float64, 2*n), make([]float64, n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x[2*i], x[2*i+1] = a, b
		y[i] = float64(min(int((math.Atan2(b, a)+math.Pi)/(2*math.Pi)*float64(classes)), classes-1))
	}
	return x, y
}

// checkDescent fails unless the Newton steps' objective never rises: each
// step's After is at most its Objective, and the next step's Objective
// (at a λ no larger) at most its After. The two are equal after a whole
// step at the same λ; after a shorter one the next Objective comes from
// scores computed afresh, K_nM(α + sΔ) instead of K_nM α + s K_nM Δ,
// which differ by their rounding: at λ = 1e-10, |α| is 10⁸ times the
// scores, and the objectives differ by up to 1e-8 relative (tolerance
// 1e-7).
func checkDescent(t *testing.T, who string, steps []ooc.NewtonStep) {
	t.Helper()
	for i, s := range steps {
		if !(s.After <= s.Objective) || s.Step < 0 || s.Step > 1 {
			t.Errorf("%s: step %d: objective %.10g → %.10g (length %v)", who, i+1, s.Objective, s.After, s.Step)
		}
		if i+1 < len(steps) && steps[i+1].Objective > s.After*(1+1e-7) {
			t.Errorf("%s: step %d ends at %.10g, step %d starts at %.10g", who, i+1, s.After, i+2, steps[i+1].Objective)
		}
	}
}

// trainMetrics returns the model's metrics on its training rows.
func trainMetrics(t *testing.T, m *ooc.Model, x, y []float64) *ooc.Metrics {
	t.Helper()
	n := len(y)
	scores := make([]float64, n*m.K())
	m.PredictTo(scores, x, n)
	ev := m.NewEvaluator()
	if err := ev.AddWeighted(scores, y, nil, n); err != nil {
		t.Fatal(err)
	}
	return ev.Metrics()
}

// TestFitLogisticSmallLambda: at a λ far below the data's scale the
// Newton steps are damped by their line search: the objective never rises
// (it rose from 0.32 to 1.9 over the last steps without it, with a
// training accuracy of 0.64), and the model is about as accurate as at
// λ = 1e-6. Binary at λ = 1e-10 with 20 steps keeps falling too (its
// objective reached 2·10⁸ and AUC 0.5 without it).
func TestFitLogisticSmallLambda(t *testing.T) {
	base := ooc.Config{Centers: 100, Iterations: 4, Seed: 1, Loss: ooc.LossLogistic,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt2}}
	x, y := angleClasses(2000, 3, 1)
	src := stream.NewMemSource(x, 2, y, 1, 500)
	acc := map[float64]float64{}
	for _, lambda := range []float64{1e-6, 1e-8} {
		cfg := base
		cfg.Lambda = lambda
		m, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		tr := m.Training()
		checkDescent(t, fmt.Sprintf("λ = %g", lambda), tr.NewtonSteps)
		if len(tr.NewtonSteps) != ooc.DefaultNewtonSteps || tr.Status != ooc.StatusIterationLimit {
			t.Errorf("λ = %g: %d steps, status %s", lambda, len(tr.NewtonSteps), tr.Status)
		}
		acc[lambda] = *trainMetrics(t, m, x, y).Accuracy
	}
	t.Logf("training accuracy %v", acc)
	if acc[1e-8] < acc[1e-6]-0.02 {
		t.Errorf("training accuracy %.3f at λ = 1e-8, %.3f at 1e-6", acc[1e-8], acc[1e-6])
	}

	x, y = angleClasses(2000, 2, 1)
	cfg := base
	cfg.Lambda, cfg.NewtonSteps = 1e-10, 20
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 2, y, 1, 500), cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	steps := m.Training().NewtonSteps
	checkDescent(t, "binary λ = 1e-10", steps)
	shorter := 0
	for _, s := range steps {
		if s.Step < 1 {
			shorter++
		}
	}
	if auc := *trainMetrics(t, m, x, y).AUC; auc < 0.95 || shorter == 0 {
		t.Errorf("binary λ = 1e-10: training AUC %.3f, %d of %d steps shortened", auc, shorter, len(steps))
	}
}

// TestLogisticLinePass: a gradient pass with Line gives, in one pass, the
// plain gradient pass's values at α + Δ and each length t's loss at
// α + tΔ as a plain pass at that point computes it; the job's JSON
// carries Line, and a bad Line is refused.
func TestLogisticLinePass(t *testing.T) {
	const n, d, m = 300, 2, 12
	x, y := angleClasses(n, 3, 3)
	rng := rand.New(rand.NewPCG(4, 4))
	centres := slices.Clone(x[:m*d])
	base := pass.Job{Kind: pass.LogisticGradient, Precision: kernel.Float64, M: m, D: d, K: 3, Centers: centres,
		Task: ooc.TaskMulticlass, Classes: []float64{0, 1, 2}}
	kn := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	alpha, dir := make([]float64, m*3), make([]float64, m*3)
	for i := range alpha {
		alpha[i], dir[i] = rng.NormFloat64(), 3*rng.NormFloat64()
	}
	run := func(j *pass.Job) []float64 {
		t.Helper()
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		var remote pass.Job
		if err := json.Unmarshal(b, &remote); err != nil {
			t.Fatal(err)
		}
		w, err := remote.NewWorker()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, remote.SumLen())
		if err := w.Add(out, x, y, n); err != nil {
			t.Fatal(err)
		}
		return out
	}
	at := func(s float64) []float64 {
		j := base
		u := make([]float64, m*3)
		for i := range u {
			u[i] = alpha[i] + s*dir[i]
		}
		j.Groups = []pass.Group{{Kernel: kn, Cols: 3, U: u}}
		return run(&j)
	}
	line := []float64{0.5, 0.125}
	j := base
	j.Line = line
	u := make([]float64, m*6)
	for i := range m {
		copy(u[6*i:6*i+3], alpha[3*i:3*i+3])
		copy(u[6*i+3:6*i+6], dir[3*i:3*i+3])
	}
	j.Groups = []pass.Group{{Kernel: kn, Cols: 3, U: u}}
	got := run(&j)
	if len(got) != m*3+(2+len(line))*3+1 {
		t.Fatalf("%d values", len(got))
	}
	whole := at(1)
	want := append(slices.Clone(whole[:m*3+6]), make([]float64, 3*len(line))...)
	for l, s := range line {
		copy(want[m*3+6+3*l:], at(s)[m*3+3:m*3+6])
	}
	want = append(want, whole[len(whole)-1])
	if err := relClose(got, want, 1e-12); err != nil {
		t.Fatalf("line pass against plain passes: %v", err)
	}
	for _, bad := range [][]float64{{1}, {0}, {-0.5}, {math.NaN()}, make([]float64, 65)} {
		j.Line = bad
		if _, err := j.NewWorker(); err == nil || !strings.Contains(err.Error(), "line search") {
			t.Errorf("Line %v: %v", bad[:min(len(bad), 2)], err)
		}
	}
	j.Line, j.Kind = line, pass.LogisticHessianProduct
	if _, err := j.NewWorker(); err == nil || !strings.Contains(err.Error(), "line search") {
		t.Errorf("Line in a Hessian pass: %v", err)
	}
}

// TestTuneLogisticDefaultGrid: tune's default grid (σ = √d × {¼, ½, 1,
// 2, 4}, λ = 1e-8 … 1e-3) with the logistic loss on a 3-class set whose
// objective rose without the line search: no candidate's objective
// rises, none fails. With -v it prints the objective per Newton step of
// every candidate.
func TestTuneLogisticDefaultGrid(t *testing.T) {
	x, y := angleClasses(1500, 3, 2)
	src := stream.NewMemSource(x, 2, y, 1, 500)
	var sigmas []float64
	for _, f := range []float64{0.25, 0.5, 1, 2, 4} {
		sigmas = append(sigmas, math.Sqrt2*f)
	}
	lambdas := []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3}
	base := ooc.Config{Centers: 100, Iterations: 4, Seed: 1, Loss: ooc.LossLogistic}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: sigmas, Lambdas: lambdas}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		who := fmt.Sprintf("σ = %.3g, λ = %g", c.Sigma, c.Lambda)
		if c.Stop == ooc.StopFailed {
			t.Errorf("%s failed: %s", who, c.Err)
			continue
		}
		steps := c.Model().Training().NewtonSteps
		checkDescent(t, who, steps)
		var line strings.Builder
		for _, s := range steps {
			fmt.Fprintf(&line, " %.4g", s.Objective)
		}
		t.Logf("| %.3g | %g |%s → %.4g | error %.3f |", c.Sigma, c.Lambda, line.String(), steps[len(steps)-1].After, c.BestMetric)
	}
}
