package ooc_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// logisticObjective is J(α) = (1/n) Σ wᵢ log(1 + e^(−yᵢ fᵢ)) + (λ/2) αᵀK̃α,
// f = K_nM α, K̃ = K_MM + εMI, n = Σ w, on the model's own centres and
// standardisation; y are ±1.
type logisticProblem struct {
	knm, kt *mat.Dense
	y, w    []float64
	lambda  float64
}

func newLogisticProblem(m *ooc.Model, x, y, w []float64, lambda, eps float64) *logisticProblem {
	n, d, M := len(y), m.D(), m.M()
	z := standardized(m, x)
	c := m.Centers()
	p := &logisticProblem{knm: mat.NewDense(n, M, nil), kt: mat.NewDense(M, M, nil), y: y, w: w, lambda: lambda}
	for i := range n {
		for j := range M {
			p.knm.Set(i, j, m.Kernel().Eval(z[i*d:(i+1)*d], c[j*d:(j+1)*d]))
		}
	}
	for i := range M {
		for j := range M {
			p.kt.Set(i, j, m.Kernel().Eval(c[i*d:(i+1)*d], c[j*d:(j+1)*d]))
		}
		p.kt.Set(i, i, p.kt.At(i, i)+eps*float64(M))
	}
	return p
}

func (p *logisticProblem) objective(alpha []float64) float64 {
	var f, ka mat.VecDense
	a := mat.NewVecDense(len(alpha), alpha)
	f.MulVec(p.knm, a)
	ka.MulVec(p.kt, a)
	loss, n := 0.0, 0.0
	for i, yi := range p.y {
		z := -yi * f.AtVec(i)
		l := math.Log1p(math.Exp(z))
		if z > 0 {
			l = z + math.Log1p(math.Exp(-z))
		}
		loss += p.w[i] * l
		n += p.w[i]
	}
	return loss/n + p.lambda/2*mat.Dot(a, &ka)
}

// newton minimises the objective by dense Newton steps to a gradient of
// 1e-13.
func (p *logisticProblem) newton(t *testing.T) []float64 {
	t.Helper()
	n, M := len(p.y), p.kt.RawMatrix().Cols
	alpha := make([]float64, M)
	nw := 0.0
	for _, v := range p.w {
		nw += v
	}
	for it := 0; it < 100; it++ {
		a := mat.NewVecDense(M, alpha)
		var f mat.VecDense
		f.MulVec(p.knm, a)
		g := mat.NewVecDense(n, nil)
		wk := mat.NewDense(n, M, nil)
		for i := range n {
			fi, yi := f.AtVec(i), p.y[i]
			s := 1 / (1 + math.Exp(yi*fi)) // σ(−y f)
			g.SetVec(i, -p.w[i]*yi*s/nw)
			h := p.w[i] * s * (1 - s) / nw
			for j := range M {
				wk.Set(i, j, h*p.knm.At(i, j))
			}
		}
		var grad, ka mat.VecDense
		grad.MulVec(p.knm.T(), g)
		ka.MulVec(p.kt, a)
		grad.AddScaledVec(&grad, p.lambda, &ka)
		if mat.Norm(&grad, 2) < 1e-13 {
			return alpha
		}
		var hess mat.Dense
		hess.Mul(p.knm.T(), wk)
		var reg mat.Dense
		reg.Scale(p.lambda, p.kt)
		hess.Add(&hess, &reg)
		var step mat.VecDense
		if err := step.SolveVec(&hess, &grad); err != nil {
			t.Fatal(err)
		}
		for j := range alpha {
			alpha[j] -= step.AtVec(j)
		}
	}
	t.Fatal("the reference Newton solver did not converge")
	return nil
}

// TestFitLogistic: Config.Loss = logistic converges to the minimiser of
// the regularised logistic objective on its own centres: the objective
// within 1e-6 relative of a dense reference Newton solver's, with and
// without row weights; its probabilities are σ(f) of the scores.
func TestFitLogistic(t *testing.T) {
	const n, d, M = 800, 2, 40
	const lambda, eps = 1e-3, 1e-12
	x, y := synth(n, d, 81)
	rng := rand.New(rand.NewPCG(82, 1))
	cls := make([]float64, n)
	pm := make([]float64, n)
	for i, v := range y {
		if v+0.3*rng.NormFloat64() > 5.2 { // noisy labels: no separation
			cls[i], pm[i] = 1, 1
		} else {
			pm[i] = -1
		}
	}
	for _, weighted := range []bool{false, true} {
		w := make([]float64, n)
		for i := range w {
			w[i] = 1
			if weighted {
				w[i] = float64(rng.IntN(4)) / 2
			}
		}
		src := stream.NewMemSource(x, d, cls, 1, 100)
		if weighted {
			src = src.WithWeights(w, "w")
		}
		cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Lambda: lambda, Jitter: eps,
			Iterations: 30, Tolerance: 1e-12, Seed: 5, Loss: ooc.LossLogistic, NewtonSteps: 10}
		m, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		p := newLogisticProblem(m, x, pm, w, lambda, eps)
		ref := p.newton(t)
		got, want := p.objective(m.Alpha()), p.objective(ref)
		t.Logf("weighted %v: objective %.12g, reference %.12g; steps %+v", weighted, got, want, m.Training().NewtonSteps)
		if math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Errorf("weighted %v: objective %.10g, the reference's %.10g", weighted, got, want)
		}
		scores, proba := make([]float64, 5), make([]float64, 10)
		m.PredictTo(scores, x[:5*d], 5)
		m.ProbaTo(proba, scores, 5)
		for r := range 5 {
			if q := 1 / (1 + math.Exp(-scores[r])); math.Abs(proba[2*r+1]-q) > 1e-15 {
				t.Fatalf("row %d: probability %v, σ(f) = %v", r, proba[2*r+1], q)
			}
		}
		if !m.HasProba() {
			t.Fatal("a logistic model says it has no probabilities")
		}
	}
}

// The logistic loss refuses what it does not do.
func TestFitLogisticErrors(t *testing.T) {
	x, y := synth(200, 2, 83)
	src := stream.NewMemSource(x, 2, y, 1, 100)
	for _, tc := range []struct {
		cfg  ooc.Config
		opts ooc.RunOptions
		want string
	}{
		{ooc.Config{Loss: "hinge"}, ooc.RunOptions{}, `invalid configuration: unknown loss "hinge" (want squared or logistic)`},
		{ooc.Config{Loss: ooc.LossLogistic}, ooc.RunOptions{}, `invalid configuration: the logistic loss is for classification; target "y0" is regression (set Config.Task binary or multiclass)`},
		{ooc.Config{NewtonSteps: 3}, ooc.RunOptions{}, "invalid configuration: Newton steps are for the logistic loss"},
		// Bounded before anything is allocated (2³¹ steps took 16 GB).
		{ooc.Config{Loss: ooc.LossLogistic, Task: ooc.TaskBinary, NewtonSteps: 1 << 31}, ooc.RunOptions{},
			"invalid configuration: Newton steps must be in [1, 1000] (0: 8; each step is 1 + Iterations passes over the data), got 2147483648"},
	} {
		tc.cfg.Centers, tc.cfg.Iterations = 10, 2
		if _, err := ooc.Fit(context.Background(), src, tc.cfg, tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v\nwant %s", err, tc.want)
		}
	}
}

// TestFitLogisticMulticlass: with three classes the logistic loss fits
// one output per class against the rest, sharing every pass: each
// output's objective within 1e-6 relative of the dense reference Newton
// solver's for that class; the probabilities are the outputs' σ(f_c)
// normalised.
func TestFitLogisticMulticlass(t *testing.T) {
	const n, d, M = 600, 2, 30
	const lambda, eps = 1e-3, 1e-12
	x, y := synth(n, d, 91)
	rng := rand.New(rand.NewPCG(92, 1))
	cls := make([]float64, n)
	for i, v := range y {
		switch z := v + 0.3*rng.NormFloat64(); {
		case z > 5.4:
			cls[i] = 2
		case z > 4.9:
			cls[i] = 1
		}
	}
	cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Lambda: lambda, Jitter: eps,
		Iterations: 30, Tolerance: 1e-12, Seed: 5, Loss: ooc.LossLogistic, NewtonSteps: 10}
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, cls, 1, 100), cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.K() != 3 {
		t.Fatalf("%d outputs, want 3", m.K())
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	for c := range 3 {
		pm := make([]float64, n)
		for i, v := range cls {
			pm[i] = -1
			if int(v) == c {
				pm[i] = 1
			}
		}
		p := newLogisticProblem(m, x, pm, w, lambda, eps)
		ac := make([]float64, M)
		for j := range M {
			ac[j] = m.Alpha()[j*3+c]
		}
		got, want := p.objective(ac), p.objective(p.newton(t))
		if math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Errorf("class %d: objective %.10g, the reference's %.10g", c, got, want)
		}
	}
	scores, proba := make([]float64, 3), make([]float64, 3)
	m.PredictTo(scores, x[:d], 1)
	m.ProbaTo(proba, scores, 1)
	sum := 0.0
	for _, v := range scores {
		sum += 1 / (1 + math.Exp(-v))
	}
	for c, v := range scores {
		if q := 1 / (1 + math.Exp(-v)) / sum; math.Abs(proba[c]-q) > 1e-15 {
			t.Fatalf("class %d: probability %v, normalised σ(f) %v", c, proba[c], q)
		}
	}
}

// TestFitLogisticResume: a checkpoint after each Newton step; resuming
// from the third continues to the same model, bit for bit, and to more
// steps than the first fit asked for.
func TestFitLogisticResume(t *testing.T) {
	const n, d = 500, 2
	x, y := synth(n, d, 95)
	cls := make([]float64, n)
	for i, v := range y {
		if v > 5 {
			cls[i] = 1
		}
	}
	src := stream.NewMemSource(x, d, cls, 1, 100)
	cfg := ooc.Config{Centers: 25, Lambda: 1e-3, Iterations: 6, Seed: 3, Loss: ooc.LossLogistic, NewtonSteps: 6}
	var ckpts []*ooc.Checkpoint
	full, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Checkpoint: func(c *ooc.Checkpoint) error {
		ckpts = append(ckpts, c)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ckpts) != 6 || ckpts[2].Iteration != 3 {
		t.Fatalf("%d checkpoints", len(ckpts))
	}
	// Through the file format.
	path := t.TempDir() + "/c.ckpt"
	if err := ckpts[2].WriteFile(path); err != nil {
		t.Fatal(err)
	}
	c3, err := ooc.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Resume: c3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resumed.Alpha(), full.Alpha()) || len(resumed.Training().NewtonSteps) != 6 {
		t.Fatal("the fit resumed after step 3 differs from the uninterrupted one")
	}
	more := cfg
	more.NewtonSteps = 8
	ext, err := ooc.Fit(context.Background(), src, more, ooc.RunOptions{Resume: ckpts[5]})
	if err != nil {
		t.Fatal(err)
	}
	if len(ext.Training().NewtonSteps) != 8 {
		t.Fatalf("extended to %d steps, want 8", len(ext.Training().NewtonSteps))
	}
	less := cfg
	less.NewtonSteps = 2
	if _, err := ooc.Fit(context.Background(), src, less, ooc.RunOptions{Resume: c3}); err == nil ||
		err.Error() != "invalid configuration: the checkpoint is after Newton step 3, beyond the 2 steps asked for" {
		t.Fatalf("err = %v", err)
	}
}

// TestTuneLogistic: Tune and FitTuned search the logistic loss with the
// candidates sharing every pass (one gradient pass per Newton step, one
// for the last step's line search and one after a shortened step, one
// pass per CG iteration for the whole grid, and one validation pass),
// and each candidate is the logistic Fit on the training rows, validated
// as Fit validates it; binary, multiclass and with row weights.
func TestTuneLogistic(t *testing.T) {
	const n, d = 1200, 2
	x, y := synth(n, d, 97)
	cls, cls3 := make([]float64, n), make([]float64, n)
	for i, v := range y {
		if v > 5.1 {
			cls[i] = 1
		}
		cls3[i] = float64(min(2, int(math.Abs(v*7))%3))
	}
	rw := make([]float64, n)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range rw {
		rw[i] = 0.2 + 2*rng.Float64()
	}
	base := ooc.Config{Centers: 30, Iterations: 4, NewtonSteps: 4, Seed: 2, Loss: ooc.LossLogistic}
	const steps, iters = 4, 4
	sigmas, lambdas := []float64{0.5, 2}, []float64{1e-2, 1e-5, 1e-3}
	for _, tc := range []struct {
		name string
		src  stream.Source
		cw   ooc.ClassWeight
	}{
		{"binary", stream.NewMemSource(x, d, cls, 1, 200), ""},
		{"multiclass", stream.NewMemSource(x, d, cls3, 1, 200), ""},
		{"weighted", stream.NewMemSource(x, d, cls, 1, 200).WithWeights(rw, "w"), ""},
		{"balanced", stream.NewMemSource(x, d, cls, 1, 200).WithWeights(rw, "w"), ooc.ClassWeightBalanced},
		{"balanced multiclass", stream.NewMemSource(x, d, cls3, 1, 200), ooc.ClassWeightBalanced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			base := base
			base.ClassWeight = tc.cw
			ex := &countingExecutor{kinds: map[pass.Kind]int{}}
			res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: sigmas, Lambdas: lambdas,
				ValFraction: 0.25}, ooc.RunOptions{Workers: 2, Executor: ex})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) != 6 || res.Metric != "error_rate" {
				t.Fatalf("%d candidates, metric %s", len(res.Candidates), res.Metric)
			}
			// One Fit per candidate made 6 × (steps × (1 + iters)) passes.
			// With balanced class weights the first step's pass is the right-hand side's.
			if r := ex.kinds[pass.GroupTargetProduct]; (tc.cw != "") != (r == 1) || r > 1 {
				t.Errorf("%d right-hand side passes", r)
			}
			// A gradient pass per step, one more for the last step's line
			// search, and one more after each step that some candidate
			// took shorter than whole (its gradient is not the pass's).
			grads := steps + 1
			for st := range steps - 1 {
				if slices.ContainsFunc(res.Candidates, func(c ooc.TuneCandidate) bool {
					s := c.Model().Training().NewtonSteps[st].Step
					return s > 0 && s < 1
				}) {
					grads++
				}
			}
			if g, h, m := ex.kinds[pass.LogisticGradient]+ex.kinds[pass.GroupTargetProduct], ex.kinds[pass.LogisticHessianProduct], ex.kinds[pass.GroupKernelProduct]; g != grads || h != steps*iters || m != 0 {
				// The held-out rows are scored in the line searches' passes.
				t.Errorf("passes: %d gradient, %d CG, %d validation; want %d, %d, 0", g, h, m, grads, steps*iters)
			}
			if want := 1 + grads + steps*iters; res.Passes != want {
				t.Errorf("Passes = %d, want %d", res.Passes, want)
			}
			train, val := stream.Holdout(src, 0.25, base.Seed)
			for i, c := range res.Candidates {
				if c.BestMetric < res.Candidates[res.Lowest].BestMetric {
					t.Errorf("candidate %d has a lower error rate (%v) than the lowest's (%v)", i, c.BestMetric, res.Candidates[res.Lowest].BestMetric)
				}
				cfg := base
				cfg.Kernel, cfg.Lambda = c.Kernel, c.Lambda
				want, err := ooc.Fit(context.Background(), train, cfg, ooc.RunOptions{Workers: 2, Validation: val})
				if err != nil {
					t.Fatal(err)
				}
				if err := relClose(c.Model().Alpha(), want.Alpha(), 1e-12); err != nil {
					t.Fatalf("candidate %d differs from the logistic Fit on the training rows: %v", i, err)
				}
				// One validation per Newton step, the Fit's.
				wv, gv := want.Training().Validation, c.Validation
				if len(wv) != steps || len(gv) != steps || c.Iterations != want.Training().Iterations {
					t.Fatalf("candidate %d: validation %v, Fit's %v", i, gv, wv)
				}
				for j := range gv {
					if gv[j].Iteration != wv[j].Iteration {
						t.Fatalf("candidate %d: validation %d after iteration %d, Fit's after %d", i, j, gv[j].Iteration, wv[j].Iteration)
					}
					for _, p := range [][2]*float64{{gv[j].Metrics.ErrorRate, wv[j].Metrics.ErrorRate}, {gv[j].Metrics.AUC, wv[j].Metrics.AUC},
						{gv[j].Metrics.LogLoss, wv[j].Metrics.LogLoss}} {
						if (p[0] == nil) != (p[1] == nil) || p[0] != nil && math.Abs(*p[0]-*p[1]) > 1e-12 {
							t.Fatalf("candidate %d: validation %d's metrics %+v, Fit's %+v", i, j, gv[j].Metrics, wv[j].Metrics)
						}
					}
				}
				if gv[steps-1].Iteration != c.Iterations {
					t.Fatalf("candidate %d: last validation after iteration %d of %d", i, gv[steps-1].Iteration, c.Iterations)
				}
				if tc.cw != "" && !slices.Equal(c.Model().Training().ClassWeights, want.Training().ClassWeights) {
					t.Fatalf("candidate %d: class weights %v, Fit's %v", i, c.Model().Training().ClassWeights, want.Training().ClassWeights)
				}
				if ns := c.Model().Training().NewtonSteps; len(ns) != steps || ns[steps-1].Objective != want.Training().NewtonSteps[steps-1].Objective {
					t.Fatalf("candidate %d: Newton steps %+v, Fit's %+v", i, ns, want.Training().NewtonSteps)
				}
			}
		})
	}
	src := stream.NewMemSource(x, d, cls, 1, 200)
	m, err := ooc.FitTuned(context.Background(), src, ooc.FitTunedConfig{Fit: base, Rows: 600, Centers: 20,
		Search: ooc.TuneConfig{Sigmas: []float64{0.5, 2}, Lambdas: []float64{1e-2, 1e-5}}}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Config().Loss != ooc.LossLogistic || len(m.Training().NewtonSteps) != 4 || m.Training().Search == nil {
		t.Fatalf("fit --tune: loss %q, %d Newton steps", m.Config().Loss, len(m.Training().NewtonSteps))
	}
}

// relClose returns an error unless every got[i] is within tol of want[i],
// relative to want's largest magnitude.
func relClose(got, want []float64, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*scale {
			return fmt.Errorf("value %d is %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}

// TestFitLogisticClassWeight: --class-weight balanced with the logistic
// loss, binary and multiclass, with and without row weights, equals the
// fit with explicit row weights n/(C·n_c) (times the row weights; n and
// n_c sums of the row weights), and reaches the dense reference Newton
// solver's objective on those weights; resuming after a step continues
// to the same model.
func TestFitLogisticClassWeight(t *testing.T) {
	const n, d, M = 700, 2, 30
	const lambda, eps = 1e-3, 1e-12
	x, y := synth(n, d, 111)
	rng := rand.New(rand.NewPCG(112, 1))
	bin, multi := make([]float64, n), make([]float64, n)
	for i, v := range y {
		z := v + 0.3*rng.NormFloat64()
		if z > 5.6 { // a minority class
			bin[i] = 1
		}
		switch {
		case z > 5.6:
			multi[i] = 2
		case z > 5:
			multi[i] = 1
		}
	}
	rw := make([]float64, n)
	for i := range rw {
		rw[i] = 0.25 + rng.Float64()
	}
	for _, tc := range []struct {
		name     string
		cls      []float64
		classes  int
		weighted bool
	}{{"binary", bin, 2, false}, {"binary weighted", bin, 2, true}, {"multiclass", multi, 3, false}, {"multiclass weighted", multi, 3, true}} {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]float64, n)
			for i := range w {
				w[i] = 1
				if tc.weighted {
					w[i] = rw[i]
				}
			}
			// The explicit weights n/(C·n_c) · wᵢ.
			tot, nc := 0.0, make([]float64, tc.classes)
			for i, c := range tc.cls {
				tot += w[i]
				nc[int(c)] += w[i]
			}
			cw := make([]float64, n)
			for i, c := range tc.cls {
				cw[i] = w[i] * tot / (float64(tc.classes) * nc[int(c)])
			}
			src := stream.NewMemSource(x, d, tc.cls, 1, 100)
			if tc.weighted {
				src = src.WithWeights(w, "w")
			}
			cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Lambda: lambda, Jitter: eps,
				Iterations: 30, Tolerance: 1e-12, Seed: 5, Loss: ooc.LossLogistic, NewtonSteps: 8, ClassWeight: ooc.ClassWeightBalanced}
			var ckpts []*ooc.Checkpoint
			m, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, Checkpoint: func(c *ooc.Checkpoint) error {
				ckpts = append(ckpts, c)
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			ecfg := cfg
			ecfg.ClassWeight = ""
			want, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, tc.cls, 1, 100).WithWeights(cw, "cw"), ecfg, ooc.RunOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := relClose(m.Alpha(), want.Alpha(), 1e-9); err != nil {
				t.Fatalf("balanced differs from the explicit class weights: %v", err)
			}
			for i, st := range m.Training().NewtonSteps {
				ws := want.Training().NewtonSteps[i]
				g0 := want.Training().NewtonSteps[0].GradNorm
				if math.Abs(st.Objective-ws.Objective) > 1e-9*ws.Objective || math.Abs(st.GradNorm-ws.GradNorm) > 1e-9*g0 {
					t.Fatalf("Newton step %d: %+v, with explicit class weights %+v", i+1, st, ws)
				}
			}
			tr := m.Training()
			if len(tr.ClassWeights) != tc.classes || math.Abs(tr.ClassWeights[0]-tot/(float64(tc.classes)*nc[0])) > 1e-12*tr.ClassWeights[0] ||
				math.Abs(tr.WeightSum-tot) > 1e-9*tot {
				t.Fatalf("class weights %v, weight sum %v; want %v for class 0 and %v", tr.ClassWeights, tr.WeightSum, tot/(float64(tc.classes)*nc[0]), tot)
			}
			k := m.K()
			for c := range k {
				pm := make([]float64, n)
				for i, v := range tc.cls {
					pm[i] = -1
					if (k == 1 && v == 1) || (k > 1 && int(v) == c) {
						pm[i] = 1
					}
				}
				p := newLogisticProblem(m, x, pm, cw, lambda, eps)
				ac := make([]float64, M)
				for j := range M {
					ac[j] = m.Alpha()[j*k+c]
				}
				got, ref := p.objective(ac), p.objective(p.newton(t))
				if math.Abs(got-ref) > 1e-6*math.Abs(ref) {
					t.Errorf("output %d: objective %.10g, the reference's %.10g", c, got, ref)
				}
			}
			resumed, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, Resume: ckpts[2]})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(resumed.Alpha(), m.Alpha()) {
				t.Fatal("the balanced fit resumed after step 3 differs from the uninterrupted one")
			}
		})
	}
}

// TestFitLogisticLeverage: with leverage-sampled centres (weights D in
// the preconditioner) the logistic loss still reaches the dense reference
// Newton solver's objective on its centres.
func TestFitLogisticLeverage(t *testing.T) {
	const n, d, M = 800, 2, 40
	const lambda, eps = 1e-3, 1e-12
	x, y := synth(n, d, 121)
	rng := rand.New(rand.NewPCG(122, 1))
	cls, pm, w := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, v := range y {
		pm[i], w[i] = -1, 1
		if v+0.3*rng.NormFloat64() > 5.2 {
			cls[i], pm[i] = 1, 1
		}
	}
	cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Lambda: lambda, Jitter: eps,
		Iterations: 30, Tolerance: 1e-12, Seed: 5, Loss: ooc.LossLogistic, NewtonSteps: 10, Sampling: ooc.SamplingLeverage}
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, cls, 1, 100), cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Training().LambdaLeverage == 0 || m.Config().Sampling != ooc.SamplingLeverage {
		t.Fatal("the fit did not sample by leverage")
	}
	p := newLogisticProblem(m, x, pm, w, lambda, eps)
	got, want := p.objective(m.Alpha()), p.objective(p.newton(t))
	t.Logf("objective %.12g, reference %.12g; steps %+v", got, want, m.Training().NewtonSteps)
	if math.Abs(got-want) > 1e-6*math.Abs(want) {
		t.Errorf("objective %.10g, the reference's %.10g", got, want)
	}
}

// TestTuneLogisticMemory: the logistic search counts a preconditioner
// per σ and, during a Newton step, one more A per candidate, and refuses
// a grid beyond RunOptions.MaxMemory before any pass.
func TestTuneLogisticMemory(t *testing.T) {
	x, y := synth(500, 2, 161)
	cls := make([]float64, len(y))
	for i, v := range y {
		if v > 5 {
			cls[i] = 1
		}
	}
	src := stream.NewMemSource(x, 2, cls, 1, 100)
	base := ooc.Config{Centers: 400, Loss: ooc.LossLogistic, Iterations: 2, NewtonSteps: 2, PrecondPrecision: precond.Float64}
	_, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: []float64{1, 2}, Lambdas: []float64{1, 2, 3}},
		ooc.RunOptions{MaxMemory: 10 << 20})
	want := "not enough memory: the logistic search over 2 σ × 3 λ with M = 400 needs about "
	if err == nil || !errors.Is(err, ooc.ErrMemory) || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "with float64 preconditioners (one M × M buffer for each σ and, during a Newton step, one for each of the 6 candidates: 9.8 MiB)") ||
		!strings.HasSuffix(err.Error(), "use fewer centres, sigmas or lambdas, or float32 preconditioners") {
		t.Fatalf("err = %v", err)
	}
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: base, Sigmas: []float64{1, 2}, Lambdas: []float64{1, 2, 3}},
		ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Memory.Precond, 8*precond.Bytes(400, precond.Float64); got != want {
		t.Fatalf("preconditioners' memory %d, want %d (2 σ + 6 candidates)", got, want)
	}
}
