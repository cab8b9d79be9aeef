package ooc_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// directWeighted solves the weighted Nyström system
// (K_nMᵀ W K_nM + λ·n_w·(K_MM + εMI)) α = K_nMᵀ W (y − μ_w), with n_w = Σ w
// and μ_w the weighted mean, densely with gonum on the model's own
// standardisation and centres (w nil: every weight 1), and returns the
// predictions K(xt, C) α + μ_w on the rows xt.
func directWeighted(t *testing.T, m *ooc.Model, x, y, w []float64, lambda, eps float64, xt []float64) []float64 {
	t.Helper()
	n, d, M := len(y), m.D(), m.M()
	if w == nil {
		w = make([]float64, n)
		for i := range w {
			w[i] = 1
		}
	}
	z := standardized(m, x)
	c := m.Centers()
	knm := mat.NewDense(n, M, nil)
	wk := mat.NewDense(n, M, nil) // W K_nM
	for i := range n {
		for j := range M {
			v := m.Kernel().Eval(z[i*d:(i+1)*d], c[j*d:(j+1)*d])
			knm.Set(i, j, v)
			wk.Set(i, j, w[i]*v)
		}
	}
	kmm := mat.NewDense(M, M, nil)
	for i := range M {
		for j := range M {
			kmm.Set(i, j, m.Kernel().Eval(c[i*d:(i+1)*d], c[j*d:(j+1)*d]))
		}
		kmm.Set(i, i, kmm.At(i, i)+eps*float64(M))
	}
	nw, mean := 0.0, 0.0
	for i, v := range y {
		nw += w[i]
		mean += w[i] * v
	}
	mean /= nw
	var h mat.Dense
	h.Mul(knm.T(), wk)
	kmm.Scale(lambda*nw, kmm)
	h.Add(&h, kmm)
	yc := make([]float64, n)
	for i, v := range y {
		yc[i] = v - mean
	}
	var rhs, alpha mat.VecDense
	rhs.MulVec(wk.T(), mat.NewVecDense(n, yc))
	if err := alpha.SolveVec(&h, &rhs); err != nil {
		t.Fatalf("direct solve: %v", err)
	}
	zt := standardized(m, xt)
	out := make([]float64, len(xt)/d)
	for i := range out {
		s := mean
		for j := range M {
			s += alpha.AtVec(j) * m.Kernel().Eval(zt[i*d:(i+1)*d], c[j*d:(j+1)*d])
		}
		out[i] = s
	}
	return out
}

// TestFitWeighted checks a weighted fit (weights from the source,
// stream.Weighter) against direct dense solves on the fit's own centres:
// the weighted Nyström solution; weights of 2 against the rows
// duplicated; zero weights against the rows dropped; and weights of 1
// against the unweighted fit, bit for bit. n in λ·n is the sum of the
// weights throughout.
func TestFitWeighted(t *testing.T) {
	const n, d, M = 600, 3, 40
	const lambda, eps = 1e-3, 1e-12
	x, y := synth(n, d, 41)
	xt, _ := synth(200, d, 42)
	rng := rand.New(rand.NewPCG(43, 1))
	cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, Lambda: lambda, Jitter: eps,
		Iterations: 200, Tolerance: 1e-14, Seed: 3}
	fit := func(w []float64) *ooc.Model {
		t.Helper()
		src := stream.NewMemSource(x, d, y, 1, 64)
		if w != nil {
			src = src.WithWeights(w, "w")
		}
		m, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	predict := func(m *ooc.Model) []float64 {
		p := make([]float64, 200)
		m.PredictTo(p, xt, 200)
		return p
	}
	// Tolerance 1e-8: CG to a residual of 1e-14 on a well-conditioned
	// system (λ = 1e-3, M = 40); the dense solve is exact to ~1e-12.
	const tol = 1e-8
	t.Run("direct", func(t *testing.T) {
		w := make([]float64, n)
		for i := range w {
			w[i] = 3 * rng.Float64()
		}
		m := fit(w)
		if tr := m.Training(); tr.Weight != "w" || math.Abs(tr.WeightSum-floatsSum(w)) > 1e-9*tr.WeightSum {
			t.Errorf("training records weight %q summing to %v, want \"w\" and %v", tr.Weight, tr.WeightSum, floatsSum(w))
		}
		if r := relDiff(predict(m), directWeighted(t, m, x, y, w, lambda, eps, xt)); r > tol {
			t.Errorf("predictions differ from the direct weighted solution by %.3g relative", r)
		}
	})
	t.Run("twice is duplicated", func(t *testing.T) {
		w := make([]float64, n)
		var dx, dy []float64
		for i := range w {
			w[i] = 1
			dx, dy = append(dx, x[i*d:(i+1)*d]...), append(dy, y[i])
			if i%3 == 0 {
				w[i] = 2
				dx, dy = append(dx, x[i*d:(i+1)*d]...), append(dy, y[i])
			}
		}
		m := fit(w)
		if r := relDiff(predict(m), directWeighted(t, m, dx, dy, nil, lambda, eps, xt)); r > tol {
			t.Errorf("weights of 2 differ from duplicated rows by %.3g relative", r)
		}
	})
	t.Run("zero is dropped", func(t *testing.T) {
		w := make([]float64, n)
		var kx, ky []float64
		for i := range w {
			if i%4 != 1 {
				w[i] = 1
				kx, ky = append(kx, x[i*d:(i+1)*d]...), append(ky, y[i])
			}
		}
		m := fit(w)
		if r := relDiff(predict(m), directWeighted(t, m, kx, ky, nil, lambda, eps, xt)); r > tol {
			t.Errorf("zero weights differ from dropped rows by %.3g relative", r)
		}
	})
	t.Run("ones are unweighted", func(t *testing.T) {
		w := make([]float64, n)
		for i := range w {
			w[i] = 1
		}
		// The same solution; the preconditioner sees the weights only
		// when there are some (smoothedWeights), so not bit for bit.
		if r := relDiff(predict(fit(w)), predict(fit(nil))); r > tol {
			t.Errorf("weights of 1 differ from no weights by %.3g relative", r)
		}
	})
}

func floatsSum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// TestFitWeightErrors: a negative or non-finite weight is an error naming
// its chunk, row and column; weights that sum to 0 are refused.
func TestFitWeightErrors(t *testing.T) {
	const n, d = 300, 2
	x, y := synth(n, d, 44)
	cfg := ooc.Config{Centers: 20, Iterations: 3, Seed: 1}
	for _, tc := range []struct {
		name string
		set  func(w []float64)
		want string
	}{
		{"negative", func(w []float64) { w[130] = -0.5 }, `right-hand side: chunk 1, row 30, column "wt": value -0.5 is a negative weight`},
		{"NaN", func(w []float64) { w[7] = math.NaN() }, `right-hand side: chunk 0, row 7, column "wt": value NaN is not a finite number`},
		{"infinite", func(w []float64) { w[299] = math.Inf(1) }, `right-hand side: chunk 2, row 99, column "wt": value +Inf is not a finite number`},
		{"all zero", func(w []float64) { clear(w) }, `right-hand side: the weights of column "wt" sum to 0: no row weighs anything`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]float64, n)
			for i := range w {
				w[i] = 1
			}
			tc.set(w)
			src := stream.NewMemSource(x, d, y, 1, 100).WithWeights(w, "wt")
			_, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestTuneWeighted: a search over a weighted source (held-out rows by
// ValFraction, then a weighted validation source) gives every candidate
// the model of the weighted Fit on the training rows (1e-9), and its
// validation points are the weighted metrics Model.Evaluate gives on the
// validation rows.
func TestTuneWeighted(t *testing.T) {
	const n, d = 2500, 3
	x, y := synth(n, d, 51)
	rng := rand.New(rand.NewPCG(52, 1))
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(rng.IntN(5)) / 2
	}
	src := stream.NewMemSource(x, d, y, 1, 200).WithWeights(w, "w")
	base := ooc.Config{Centers: 70, Iterations: 6, Seed: 4}
	cfg := ooc.TuneConfig{Base: base, Sigmas: []float64{1, 2.5}, Lambdas: []float64{1e-3, 1e-6}, ValFraction: 0.2,
		SigmaHalving: -1, Patience: -1}
	vx, vy := synth(600, d, 53)
	vw := make([]float64, 600)
	for i := range vw {
		vw[i] = rng.Float64() * 2
	}
	valSrc := stream.NewMemSource(vx, d, vy, 1, 100).WithWeights(vw, "w")
	for _, tc := range []struct {
		name string
		val  bool
	}{{"held-out", false}, {"validation source", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, run := cfg, ooc.RunOptions{Workers: 2}
			train, held := stream.Holdout(src, 0.2, base.Seed)
			if tc.val {
				cfg.ValFraction, run.Validation, train, held = 0, valSrc, src, valSrc
			}
			res, err := ooc.Tune(context.Background(), src, cfg, run)
			if err != nil {
				t.Fatal(err)
			}
			tx, _ := synth(200, d, 54)
			for i, c := range res.Candidates {
				want := fitCandidate(t, train, base, &c, c.BestIteration)
				got := c.Model()
				if got.Training().Weight != "w" || math.Abs(got.Training().WeightSum-want.Training().WeightSum) > 1e-9*want.Training().WeightSum {
					t.Fatalf("candidate %d: weight %q sum %v, Fit's %v", i, got.Training().Weight, got.Training().WeightSum, want.Training().WeightSum)
				}
				pg, pw := make([]float64, 200), make([]float64, 200)
				got.PredictTo(pg, tx, 200)
				want.PredictTo(pw, tx, 200)
				if e := maxRelDiff(pg, pw); e > 1e-9 {
					t.Errorf("candidate %d: predictions differ from the weighted Fit's by %.3g relative", i, e)
				}
				// The best iteration's validation point is Evaluate's,
				// weighted, of that model on the validation rows.
				met, err := got.Evaluate(context.Background(), held, ooc.PredictOptions{})
				if err != nil {
					t.Fatal(err)
				}
				vp := c.Validation[len(c.Validation)-1]
				for _, p := range c.Validation {
					if p.Iteration == c.BestIteration {
						vp = p
					}
				}
				if math.Abs(*vp.RMSE-*met.RMSE) > 1e-9**met.RMSE {
					t.Errorf("candidate %d: validation RMSE %v in the search, %v by Evaluate", i, *vp.RMSE, *met.RMSE)
				}
			}
		})
	}
}

// TestEvaluateWeighted: Model.Evaluate on a weighted source gives the
// metrics of its rows repeated by (integer) weight, zero weights dropped.
func TestEvaluateWeighted(t *testing.T) {
	const n, d = 500, 2
	x, y := synth(n, d, 61)
	cy := make([]float64, n)
	mean := floatsSum(y) / n
	for i, v := range y {
		if v > mean {
			cy[i] = 1
		}
	}
	w := make([]float64, n)
	var rx, ry []float64
	for i := range w {
		w[i] = float64(i % 3)
		for range i % 3 {
			rx, ry = append(rx, x[i*d:(i+1)*d]...), append(ry, cy[i])
		}
	}
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, cy, 1, 100), ooc.Config{Centers: 30, Iterations: 5, Seed: 1, Task: ooc.TaskBinary}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Evaluate(context.Background(), stream.NewMemSource(x, d, cy, 1, 64).WithWeights(w, "w"), ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Evaluate(context.Background(), stream.NewMemSource(rx, d, ry, 1, 64), ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		g, w *float64
	}{{"error rate", got.ErrorRate, want.ErrorRate}, {"AUC", got.AUC, want.AUC}, {"log-loss", got.LogLoss, want.LogLoss}, {"ECE", got.ECE, want.ECE}} {
		if c.g == nil || c.w == nil || math.Abs(*c.g-*c.w) > 1e-12 {
			t.Errorf("%s: weighted %v, repeated %v", c.name, c.g, c.w)
		}
	}
}

// TestClassWeightBalanced: Config.ClassWeight "balanced" (the counts from
// the right-hand side's pass, no pass of their own) fits the model of the
// rows weighted by n/(C·n_c) explicitly, for binary and multiclass, alone
// and on top of row weights; and it refuses regression.
func TestClassWeightBalanced(t *testing.T) {
	const n, d = 900, 3
	x, y := synth(n, d, 71)
	rng := rand.New(rand.NewPCG(72, 1))
	for _, tc := range []struct {
		name    string
		classes int
		rowW    bool
	}{{"binary", 2, false}, {"multiclass", 3, false}, {"binary, row weights", 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cls := make([]float64, n)
			q := slices.Sorted(slices.Values(y))
			for i, v := range y {
				// Imbalanced: 70 % in class 0.
				switch {
				case v > q[n*85/100]:
					cls[i] = float64(tc.classes - 1)
				case v > q[n*70/100]:
					cls[i] = float64(tc.classes - 2)
				}
			}
			rw := make([]float64, n)
			for i := range rw {
				rw[i] = 1
				if tc.rowW {
					rw[i] = float64(1 + rng.IntN(3))
				}
			}
			counts := make([]float64, tc.classes)
			total := 0.0
			for i, c := range cls {
				counts[int(c)] += rw[i]
				total += rw[i]
			}
			w := make([]float64, n)
			for i, c := range cls {
				w[i] = rw[i] * total / (float64(tc.classes) * counts[int(c)])
			}
			cfg := ooc.Config{Centers: 50, Iterations: 8, Seed: 2, Lambda: 1e-4}
			src := stream.NewMemSource(x, d, cls, 1, 128)
			if tc.rowW {
				src = src.WithWeights(rw, "rw")
			}
			bal := cfg
			bal.ClassWeight = ooc.ClassWeightBalanced
			got, err := ooc.Fit(context.Background(), src, bal, ooc.RunOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			want, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, cls, 1, 128).WithWeights(w, "cw"), cfg, ooc.RunOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if cw := got.Training().ClassWeights; len(cw) != tc.classes || math.Abs(cw[0]-total/(float64(tc.classes)*counts[0])) > 1e-12*cw[0] {
				t.Fatalf("class weights %v", cw)
			}
			k := got.K()
			pg, pw := make([]float64, 200*k), make([]float64, 200*k)
			tx, _ := synth(200, d, 73)
			got.PredictTo(pg, tx, 200)
			want.PredictTo(pw, tx, 200)
			if e := maxRelDiff(pg, pw); e > 1e-9 {
				t.Errorf("balanced class weights differ from the explicit weights by %.3g relative", e)
			}
			if tc.rowW {
				return
			}
			// The search, on a validation source: every candidate the
			// explicitly weighted search's, to 1e-8 (λ ≥ 1e-4: at λ = 1e-5
			// and σ = 3 CG amplifies the two ways of rounding to ~1e-6).
			vsrc := stream.NewMemSource(x[:300*d], d, cls[:300], 1, 100)
			tcfg := ooc.TuneConfig{Base: bal, Sigmas: []float64{1, 3}, Lambdas: []float64{1e-3, 1e-4}, SigmaHalving: -1, Patience: -1}
			tb, err := ooc.Tune(context.Background(), src, tcfg, ooc.RunOptions{Validation: vsrc})
			if err != nil {
				t.Fatal(err)
			}
			tcfg.Base = cfg
			tw, err := ooc.Tune(context.Background(), stream.NewMemSource(x, d, cls, 1, 128).WithWeights(w, "cw"), tcfg, ooc.RunOptions{Validation: vsrc})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tb.Candidates {
				tb.Candidates[i].Model().PredictTo(pg, tx, 200)
				tw.Candidates[i].Model().PredictTo(pw, tx, 200)
				if e := maxRelDiff(pg, pw); e > 1e-8 {
					t.Errorf("search candidate %d: balanced differs from explicit weights by %.3g relative", i, e)
				}
			}
		})
	}
	_, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 128),
		ooc.Config{Centers: 20, Iterations: 2, ClassWeight: ooc.ClassWeightBalanced}, ooc.RunOptions{})
	if want := `invalid configuration: class weights need a classification task; target "y0" is regression (set the task, or give no class weights)`; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// TestFitWeightedResume: a weighted fit's checkpoints keep the weights
// its preconditioner sees, so resuming continues to the same model, bit
// for bit (through the file format); a checkpoint without them is
// refused.
func TestFitWeightedResume(t *testing.T) {
	const n, d = 500, 2
	x, y := synth(n, d, 141)
	w := make([]float64, n)
	rng := rand.New(rand.NewPCG(142, 1))
	for i := range w {
		w[i] = math.Exp(2 * rng.NormFloat64())
	}
	src := stream.NewMemSource(x, d, y, 1, 100).WithWeights(w, "w")
	cfg := ooc.Config{Centers: 30, Lambda: 1e-5, Iterations: 8, Seed: 3}
	var ckpts []*ooc.Checkpoint
	full, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Checkpoint: func(c *ooc.Checkpoint) error {
		ckpts = append(ckpts, c)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ckpts) < 3 || len(ckpts[2].PrecondWeights) != full.M() {
		t.Fatalf("%d checkpoints; %d weights for the preconditioner", len(ckpts), len(ckpts[len(ckpts)-1].PrecondWeights))
	}
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
	if !slices.Equal(resumed.Alpha(), full.Alpha()) {
		t.Fatal("the weighted fit resumed after iteration 3 differs from the uninterrupted one")
	}
	c3.PrecondWeights = nil
	_, err = ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Resume: c3})
	if want := "checkpoint does not match this fit: the checkpoint has 0 weights for the preconditioner's 30 centres (it predates the weighted preconditioner: fit again)"; err == nil || err.Error() != want || !errors.Is(err, ooc.ErrCheckpointMismatch) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// TestWeightedMemory: a weighted fit's estimate counts the second M × M
// buffer of the preconditioner that sees the weights.
func TestWeightedMemory(t *testing.T) {
	x, y := synth(300, 2, 151)
	w := make([]float64, 300)
	for i := range w {
		w[i] = 1
	}
	cfg := ooc.Config{Centers: 50}
	one, err := ooc.Plan(stream.NewMemSource(x, 2, y, 1, 100), cfg, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	two, err := ooc.Plan(stream.NewMemSource(x, 2, y, 1, 100).WithWeights(w, "w"), cfg, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := one.MemoryWith(precond.Float64).Precond, two.MemoryWith(precond.Float64).Precond; a != precond.Bytes(50, precond.Float64) || b != 2*a {
		t.Fatalf("preconditioner memory %d unweighted, %d weighted; want %d and twice that", a, b, precond.Bytes(50, precond.Float64))
	}
}
