package ooc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Predictive uncertainty (Config.Uncertainty).
//
// Kernel ridge regression with M Nyström centres is the posterior mean of
// a Gaussian process with inducing points (the centres), prior covariance
// a²·k and noise variance s² = λ·n·a². The same factors give the
// deterministic-training-conditional (DTC) predictive variance of y at x:
//
//	var(x) = a²·v(x) + s²,   v(x) = k(x,x) − k_xᵀ (K_MM⁻¹ − λn·H⁻¹) k_x,
//	H = K_nMᵀK_nM + λn·K_MM,
//
// with k_x = K(C, x): k(x,x) − k_xᵀK_MM⁻¹k_x is what the centres do not
// explain, λn·k_xᵀH⁻¹k_x the subset-of-regressors variance. With
// K_MM = TᵀT and Ŝ = T⁻ᵀ (K_nMᵀK_nM/n) T⁻¹ = V diag(σ) Vᵀ,
//
//	v(x) = k(x,x) − Σᵢ σᵢ/(σᵢ + λ) · (uᵢᵀ k_x)²,   uᵢ = T⁻¹ vᵢ,
//
// a sum over the directions of the data's signal, each weighted by the
// share σᵢ/(σᵢ + λ) that the fit takes from the data. Keeping the r
// largest σᵢ costs M·r per predicted row (beside the M·d of the prediction
// itself) and drops only positive terms, so truncation can only widen v.
// Ŝ is known in two ways:
//   - UncertaintyPrecond: as FALKON's preconditioner knows it, with
//     K_nMᵀK_nM ≈ (n/M)·K_MM², so σᵢ = κᵢ/M and uᵢ = xᵢ/√κᵢ for the
//     eigenpairs (κᵢ, xᵢ) of K_MM: v is then the variance of a GP on the
//     centres alone with noise λM. No pass over the data.
//   - UncertaintyExact: K_nMᵀK_nM formed in one pass (n·M² flops), exact
//     DTC.
//
// The fit's λ is chosen for accuracy, and conjugate gradients stopped
// early regularise the model further, so λ is not taken as the variance's:
// the variance's λ (Uncertainty.Lambda), a² and s² are fitted on the
// validation rows by maximising the Gaussian likelihood of their
// residuals, so that the standardised residuals there have unit variance.

// DefaultUncertaintyRank returns the rank r of the variance's factor when
// Config.UncertaintyRank is 0, for d features: 2d, within [16, 64] (and at
// most M). Each predicted row costs about M·(2d + 20) flops for its
// kernel row and M·2r more for the variance, so the default keeps
// predict --std within about 3 × predict (bench/ACCURACY.md, "Predictive
// uncertainty": r = 16 costs 1.7 × at d = 9, r = 64 costs 5.5 ×) and
// gives up little: the test NLPD at r = 16 was within 0.02 of r = 64 and
// within 0.03 of full rank on the five sets measured.
func DefaultUncertaintyRank(d int) int { return min(max(2*d, 16), 64) }

// rankCheckRows is how many validation rows compare the rank-r variance
// with the full-rank one (Uncertainty.RankError).
const rankCheckRows = 500

// stationaryPrior returns k(x, x) for the distance kernels (the same for
// every x), or false for linear and polynomial kernels.
func stationaryPrior(k kernel.Kernel) (float64, bool) {
	switch k.Kind {
	case kernel.Gaussian, kernel.Laplacian, kernel.Matern12, kernel.Matern32, kernel.Matern52, "":
		return 1, true
	}
	return 0, false
}

// checkUncertainty says why a fit cannot keep an uncertainty, before any
// expensive work.
func checkUncertainty(cfg Config, task Task) error {
	if cfg.Uncertainty == "" {
		return nil
	}
	if task != TaskRegression {
		return configErr("Config.Uncertainty", "predictive standard deviations are for regression; a %s model's probabilities (Model.ProbaTo) are its uncertainty, calibrated on the validation rows", task)
	}
	if _, ok := stationaryPrior(cfg.Kernel); !ok {
		return configErr("Config.Uncertainty", "predictive standard deviations need a distance kernel (gaussian, laplacian, matern12/32/52), not %s", cfg.Kernel.Kind)
	}
	return nil
}

// symOp applies a symmetric positive semi-definite p × p matrix to a
// p × k block, row-major.
type symOp func(ctx context.Context, dst, src []float64, k int) error

// topEigen returns the r largest eigenvalues of op, descending, and their
// eigenvectors (p × r, row-major). For r ≥ p/2 (or p ≤ 600) it forms the
// matrix and decomposes it; otherwise it runs randomized subspace
// iteration (Halko, Martinsson and Tropp 2011, Alg. 4.4 with two power
// steps) on a Gaussian sketch of r + max(10, r/2) columns and keeps the
// Rayleigh–Ritz pairs.
func topEigen(ctx context.Context, op symOp, p, r int, seed uint64) (vals, vecs []float64, err error) {
	r = min(r, p)
	var basis *mat.Dense // p × l, orthonormal columns
	var l int
	if 2*r >= p || p <= 600 {
		l = p
		basis = nil
	} else {
		l = min(p, r+max(10, r/2))
		rng := rand.New(rand.NewPCG(seed, 0x756e63))
		y := make([]float64, p*l)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		for step := 0; step < 3; step++ {
			q := orthonormal(y, p, l)
			if step == 2 {
				basis = q
				break
			}
			if err := op(ctx, y, q.RawMatrix().Data, l); err != nil {
				return nil, nil, err
			}
		}
	}
	// B = Qᵀ A Q (or A itself).
	var src []float64
	if basis == nil {
		src = make([]float64, p*p)
		for i := range p {
			src[i*p+i] = 1
		}
	} else {
		src = basis.RawMatrix().Data
	}
	aq := make([]float64, p*l)
	if err := op(ctx, aq, src, l); err != nil {
		return nil, nil, err
	}
	b := mat.NewSymDense(l, nil)
	if basis == nil {
		for i := range l {
			for j := i; j < l; j++ {
				b.SetSym(i, j, (aq[i*l+j]+aq[j*l+i])/2)
			}
		}
	} else {
		var qb mat.Dense
		qb.Mul(basis.T(), mat.NewDense(p, l, aq))
		for i := range l {
			for j := i; j < l; j++ {
				b.SetSym(i, j, (qb.At(i, j)+qb.At(j, i))/2)
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(b, true) {
		return nil, nil, fmt.Errorf("uncertainty: the eigendecomposition did not converge")
	}
	ev := eig.Values(nil) // ascending
	var u mat.Dense
	eig.VectorsTo(&u)
	var full *mat.Dense
	if basis == nil {
		full = &u
	} else {
		full = new(mat.Dense)
		full.Mul(basis, &u)
	}
	vals = make([]float64, r)
	vecs = make([]float64, p*r)
	for q := range r {
		idx := l - 1 - q
		vals[q] = ev[idx]
		for i := range p {
			vecs[i*r+q] = full.At(i, idx)
		}
	}
	return vals, vecs, nil
}

// orthonormal returns an orthonormal basis of the columns of y (p × l).
func orthonormal(y []float64, p, l int) *mat.Dense {
	var qr mat.QR
	qr.Factorize(mat.NewDense(p, l, slices.Clone(y)))
	var q mat.Dense
	qr.QTo(&q)
	out := mat.NewDense(p, l, nil)
	out.Copy(q.Slice(0, p, 0, l))
	return out
}

// varModel is how one method knows Ŝ: its top eigenpairs in the centres'
// coordinates, and v(x) at full rank for the rank check.
type varModel struct {
	sigma []float64 // σᵢ, descending
	u     []float64 // M × r: uᵢ = T⁻¹vᵢ
	// full returns v(x) at full rank and the variance's λ for the raw
	// rows xs, or nil when the matrix at that λ cannot be factorised
	// (full itself nil: M is too large to measure).
	full func(ctx context.Context, xs []float64, rows int, lambda float64) ([]float64, error)
}

// maxRankCheck is the largest M for which the rank check factorises an
// M × M matrix at the variance's λ.
const maxRankCheck = 12000

// precondModel is UncertaintyPrecond: Ŝ ≈ T⁻ᵀ(K_MM²/M)T⁻¹, whose
// eigenpairs are (κᵢ/M, T xᵢ/√κᵢ) for those (κᵢ, xᵢ) of K_MM, so uᵢ =
// xᵢ/√κᵢ. K_MM is applied by the kernel, never stored.
func precondModel(ctx context.Context, centres []float64, c64, c64m *kernel.Centers,
	kmm func(dst []float64, lo, hi int), m, d, r, workers int, seed uint64) (*varModel, error) {
	op := func(ctx context.Context, dst, src []float64, k int) error {
		parallelRows(m, workers, func(lo, hi int) {
			ws := c64.NewWorkspace()
			c64.KvTo(ws, dst[lo*k:hi*k], centres[lo*d:hi*d], hi-lo, src, k)
		})
		return ctx.Err()
	}
	kappa, x, err := topEigen(ctx, op, m, r, seed)
	if err != nil {
		return nil, err
	}
	vm := &varModel{}
	for _, kv := range kappa {
		if !(kv > 1e-12*kappa[0]) {
			break // numerically null directions carry no signal
		}
		vm.sigma = append(vm.sigma, kv/float64(m))
	}
	rr := len(vm.sigma)
	vm.u = make([]float64, m*rr)
	for i := range m {
		for q := range rr {
			vm.u[i*rr+q] = x[i*r+q] / math.Sqrt(kappa[q])
		}
	}
	if m <= maxRankCheck {
		vm.full = func(ctx context.Context, xs []float64, rows int, lambda float64) ([]float64, error) {
			// v = k(x,x) − k_xᵀ(K_MM + λM·I)⁻¹k_x.
			a, ok := cholRetry(m, workers, func(a []float64) {
				kmm(a, 0, m)
				for i := range m {
					a[i*m+i] += lambda * float64(m)
				}
			})
			if !ok {
				return nil, nil
			}
			kt := kernelColumns(c64m, xs, rows, m)
			dense.SolveUpperT(a, m, m, kt, rows, rows, workers)
			v := colNorms2(kt, m, rows)
			for i, q := range v {
				v[i] = 1 - q
			}
			return v, nil
		}
	}
	return vm, nil
}

// exactModel is UncertaintyExact: G = K_nMᵀK_nM from one pass over src,
// K_MM + εMI = TᵀT, and the eigenpairs of Ŝ = T⁻ᵀ(G/n)T⁻¹.
func exactModel(ctx context.Context, src stream.Source, c64m *kernel.Centers, kmm func(dst []float64, lo, hi int),
	m int, n float64, weighted bool, jitter float64, r, workers int, seed uint64, report func(done, chunks int)) (*varModel, error) {
	g, err := gramPass(ctx, src, c64m, m, weighted, workers, report)
	if err != nil {
		return nil, err
	}
	t := make([]float64, m*m)
	kmm(t, 0, m)
	for i := range m {
		t[i*m+i] += jitter * float64(m)
	}
	if ok, col := dense.Cholesky(t, m, m, workers); !ok {
		return nil, fmt.Errorf("uncertainty: K_MM + εMI is not positive definite at column %d (ε = %g)", col, jitter)
	}
	for i := 1; i < m; i++ {
		clear(t[i*m : i*m+i])
	}
	nf := n
	op := func(ctx context.Context, dst, src []float64, k int) error {
		y := slices.Clone(src)
		dense.SolveUpper(t, m, m, y, k, k, workers) // T⁻¹X
		clear(dst)
		dense.Gemm(false, false, m, k, m, 1/nf, g, m, y, k, dst, k, workers)
		dense.SolveUpperT(t, m, m, dst, k, k, workers)
		return ctx.Err()
	}
	sig, v, err := topEigen(ctx, op, m, r, seed)
	if err != nil {
		return nil, err
	}
	vm := &varModel{}
	for _, s := range sig {
		vm.sigma = append(vm.sigma, max(s, 0))
	}
	dense.SolveUpper(t, m, m, v, r, r, workers) // uᵢ = T⁻¹vᵢ
	vm.u = v
	if m <= maxRankCheck {
		vm.full = func(ctx context.Context, xs []float64, rows int, lambda float64) ([]float64, error) {
			// v = k(x,x) − ‖T⁻ᵀk_x‖² + λn·‖R⁻ᵀk_x‖², H = G + λn·K_MM = RᵀR.
			h, ok := cholRetry(m, workers, func(h []float64) {
				kmm(h, 0, m)
				for i := range h {
					h[i] = g[i] + lambda*nf*h[i]
				}
			})
			if !ok {
				return nil, nil
			}
			kt := kernelColumns(c64m, xs, rows, m)
			k2 := slices.Clone(kt)
			dense.SolveUpperT(t, m, m, kt, rows, rows, workers)
			dense.SolveUpperT(h, m, m, k2, rows, rows, workers)
			v, q := colNorms2(kt, m, rows), colNorms2(k2, m, rows)
			for i := range v {
				v[i] = 1 - v[i] + lambda*nf*q[i]
			}
			return v, nil
		}
	}
	return vm, nil
}

// cholRetry fills an M × M matrix with fill and factorises it; when it
// is not numerically positive definite (a tiny variance λ), it refills it
// with ε·(mean diagonal) added to the diagonal, ε = 1e-12 … 1e-6. It
// reports false when even that fails.
func cholRetry(m, workers int, fill func(a []float64)) ([]float64, bool) {
	a := make([]float64, m*m)
	for eps := 0.0; eps <= 1e-6; {
		fill(a)
		if eps > 0 {
			tr := 0.0
			for i := range m {
				tr += a[i*m+i]
			}
			for i := range m {
				a[i*m+i] += eps * tr / float64(m)
			}
		}
		if ok, _ := dense.Cholesky(a, m, m, workers); ok {
			return a, true
		}
		if eps == 0 {
			eps = 1e-12
		} else {
			eps *= 100
		}
	}
	return nil, false
}

// kernelColumns returns K(C, X) (M × rows, row-major) for the raw rows xs.
func kernelColumns(c *kernel.Centers, xs []float64, rows, m int) []float64 {
	kb := make([]float64, rows*m)
	c.BlockTo(c.NewWorkspace(), kb, xs, rows)
	kt := make([]float64, m*rows)
	for i := range rows {
		for j := range m {
			kt[j*rows+i] = kb[i*m+j]
		}
	}
	return kt
}

// colNorms2 returns the squared norm of each column of a (M × rows).
func colNorms2(a []float64, m, rows int) []float64 {
	out := make([]float64, rows)
	for j := range m {
		for i, v := range a[j*rows : (j+1)*rows] {
			out[i] += v * v
		}
	}
	return out
}

// parallelRows runs fn on about workers equal row ranges of [0, m).
func parallelRows(m, workers int, fn func(lo, hi int)) {
	workers = max(1, min(workers, m))
	per := (m + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < m; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+per, m))
	}
	wg.Wait()
}

// gramPass forms K_nMᵀK_nM (K_nMᵀ W K_nM with the source's row weights
// when weighted) in one pass over src, reduced in chunk order (the same
// result for any number of workers).
func gramPass(ctx context.Context, src stream.Source, c64m *kernel.Centers, m int, weighted bool, workers int, report func(done, chunks int)) ([]float64, error) {
	if workers < 1 {
		workers = 1
	}
	const tile = 256
	g := make([]float64, m*m)
	chunks := src.NumChunks()
	done := 0
	err := stream.Run(ctx, src, stream.Options{Workers: workers, InFlight: workers}, stream.Job[[]float64]{
		Weights:    weighted,
		NewPartial: func() []float64 { return make([]float64, m*m) },
		NewWorker: func() func(context.Context, stream.Chunk, []float64) error {
			ws := c64m.NewWorkspace()
			blk := make([]float64, tile*m)
			return func(ctx context.Context, c stream.Chunk, p []float64) error {
				clear(p)
				d := len(c.X) / max(c.Rows, 1)
				for r0 := 0; r0 < c.Rows; r0 += tile {
					n := min(tile, c.Rows-r0)
					c64m.BlockTo(ws, blk, c.X[r0*d:(r0+n)*d], n)
					if r := ws.NonFinite(); r >= 0 {
						return fmt.Errorf("chunk %d row %d: a feature is not finite", c.Index, r0+r)
					}
					if c.W != nil { // row i of K_b times √wᵢ: K_bᵀ W K_b
						for i, w := range c.W[r0 : r0+n] {
							sw := math.Sqrt(w)
							for j := range blk[i*m : (i+1)*m] {
								blk[i*m+j] *= sw
							}
						}
					}
					dense.Gemm(true, false, m, m, n, 1, blk, m, blk, m, p, m, 1)
				}
				return nil
			}
		},
		Reduce: func(_ int, p []float64) error {
			for i, v := range p {
				g[i] += v
			}
			done++
			if report != nil {
				report(done, chunks)
			}
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("uncertainty pass: %w", err)
	}
	return g, nil
}

// fitVariance returns, per output, the a² and s² that maximise the
// Gaussian likelihood of the residuals e (rows × k) with variances
// a²·v + s², v ≥ 0 per row, and the mean negative log-likelihood (without
// its constant ½log 2π) summed over outputs. With ρ = s²/a² fixed the best
// a² is mean(e²/(v + ρ)); ρ is searched on a log grid, refined by golden
// section, against the constant variance (a² = 0) as well.
func fitVariance(e, v []float64, k int) (scale, noise []float64, nll float64) {
	n := len(v)
	scale, noise = make([]float64, k), make([]float64, k)
	vbar := 0.0
	for _, x := range v {
		vbar += x
	}
	vbar /= float64(max(n, 1))
	for j := range k {
		e2 := 0.0
		for i := range n {
			e2 += e[i*k+j] * e[i*k+j]
		}
		e2 /= float64(max(n, 1))
		scale[j], noise[j] = 0, e2
		best := 0.5 * (math.Log(e2) + 1)
		if n == 0 || vbar <= 0 || e2 == 0 {
			nll += best
			continue
		}
		obj := func(lr float64) (float64, float64) {
			rho := math.Exp(lr)
			c := 0.0
			for i := range n {
				c += e[i*k+j] * e[i*k+j] / (v[i] + rho)
			}
			c /= float64(n)
			if c <= 0 {
				return math.Inf(1), 0
			}
			l := 0.0
			for i := range n {
				l += math.Log(c * (v[i] + rho))
			}
			return 0.5 * (l/float64(n) + 1), c
		}
		lo, hi := math.Log(vbar*1e-8), math.Log(vbar*1e6)
		const steps = 70
		bestL := lo - 1 // below lo: the constant variance
		for s := 0; s <= steps; s++ {
			lr := lo + (hi-lo)*float64(s)/steps
			if f, _ := obj(lr); f < best {
				best, bestL = f, lr
			}
		}
		if bestL >= lo {
			a, b := bestL-(hi-lo)/steps, bestL+(hi-lo)/steps
			f := func(x float64) float64 { v, _ := obj(x); return v }
			if x, fx := goldenMin(f, a, b, 40); fx <= best {
				best, bestL = fx, x
			}
			_, c := obj(bestL)
			scale[j], noise[j] = c, c*math.Exp(bestL)
		}
		nll += best
	}
	return scale, noise, nll
}

// goldenMin narrows [a, b] around a minimum of the unimodal f by iters
// golden-section steps and returns the midpoint and f there.
func goldenMin(f func(float64) float64, a, b float64, iters int) (float64, float64) {
	const gr = 0.6180339887498949
	x1, x2 := b-gr*(b-a), a+gr*(b-a)
	f1, f2 := f(x1), f(x2)
	for range iters {
		if f1 < f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - gr*(b-a)
			f1 = f(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + gr*(b-a)
			f2 = f(x2)
		}
	}
	m := (a + b) / 2
	return m, f(m)
}

// intervalQuality returns the coverage of the 50, 90 and 95 % intervals,
// the NLPD of the residuals e (rows × k) under variances vr (rows × k),
// and the NLPD of the best constant variance per output.
func intervalQuality(e, vr []float64, k int) (cov [3]float64, nlpd, nlpdConst float64) {
	n := len(e) / max(k, 1)
	if n == 0 {
		return
	}
	zs := [3]float64{model.IntervalZ(0.5), model.IntervalZ(0.9), model.IntervalZ(0.95)}
	for i, x := range e {
		s := math.Sqrt(vr[i])
		for q, z := range zs {
			if math.Abs(x) <= z*s {
				cov[q]++
			}
		}
		nlpd += 0.5*math.Log(2*math.Pi*vr[i]) + x*x/(2*vr[i])
	}
	for q := range cov {
		cov[q] /= float64(len(e))
	}
	nlpd /= float64(len(e))
	for j := range k {
		e2 := 0.0
		for i := range n {
			e2 += e[i*k+j] * e[i*k+j]
		}
		e2 /= float64(n)
		nlpdConst += 0.5*math.Log(2*math.Pi*e2) + 0.5
	}
	nlpdConst /= float64(k)
	return
}

// maxVarianceRows bounds the validation rows whose residuals and
// projections fit the variance (the first ones in chunk order; the
// hold-out is a random sample already).
const maxVarianceRows = 100_000

// buildUncertainty computes the variance's directions for the fitted
// regression model m and fits its λ, scale and noise on the validation
// rows: the last phase of Fit with Config.Uncertainty.
func buildUncertainty(ctx context.Context, m *Model, plan *FitPlan, cs *centreSample, op *fitOperator,
	opts RunOptions, report func(Progress)) (*Model, error) {
	cfg := plan.Config
	t0 := time.Now()
	prior, _ := stationaryPrior(cfg.Kernel)
	mm, d := cs.m, plan.D
	c64, kmm := kmmRows(cfg.Kernel, cs.centres, mm, d)
	c64m := c64
	if cs.std.invStd != nil {
		c64m = c64.WithInputMap(cs.std.mean, cs.std.invStd)
	}
	workers := plan.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rank := cfg.UncertaintyRank
	if rank == 0 {
		rank = DefaultUncertaintyRank(d)
	}
	rank = min(rank, mm)
	var vm *varModel
	var err error
	switch cfg.Uncertainty {
	case UncertaintyPrecond:
		report(Progress{Stage: StageUncertainty, Fraction: 0})
		vm, err = precondModel(ctx, cs.centres, c64, c64m, kmm, mm, d, rank, workers, cfg.Seed)
	case UncertaintyExact:
		vm, err = exactModel(ctx, plan.src, c64m, kmm, mm, math.Ldexp(op.n, -plan.WeightExp), plan.Weight != "", cmp.Or(op.pre.Jitter(), precond.DefaultJitter), rank, workers, cfg.Seed, func(done, chunks int) {
			report(Progress{Stage: StageUncertainty, Chunk: done, Chunks: chunks})
		})
		report(Progress{Stage: StageUncertainty, Fraction: 0})
	default:
		err = configErr("Config.Uncertainty", "unknown uncertainty method %q (want precond or exact)", cfg.Uncertainty)
	}
	if err != nil {
		return nil, err
	}
	rank = len(vm.sigma)
	u := &Uncertainty{Method: cfg.Uncertainty, Rank: rank, Prior: prior, Sigma: vm.sigma, Lambda: cfg.Lambda, FitLambda: cfg.Lambda}
	// The validation pass needs only the directions: a model with a
	// provisional scale and noise, fitted below.
	pu := *u
	pu.Scale, pu.Noise = make([]float64, m.K()), make([]float64, m.K())
	mu, err := m.withUncertainty(&pu, vm.u)
	if err != nil {
		return nil, err
	}

	// The validation rows: residuals and the projections (uᵢᵀk_x)².
	k := m.K()
	var e, p2 []float64
	var check []float64 // raw rows for the rank check
	type valPart struct {
		rows         int
		scores, p, y []float64
		x            []float64 // the first rows, for the rank check
	}
	err = stream.Run(ctx, opts.Validation, stream.Options{Workers: workers}, stream.Job[*valPart]{
		Targets:    true,
		NewPartial: func() *valPart { return &valPart{} },
		NewWorker: func() func(context.Context, stream.Chunk, *valPart) error {
			pr := mu.NewProjector()
			return func(_ context.Context, c stream.Chunk, p *valPart) error {
				p.rows = c.Rows
				p.scores = slices.Grow(p.scores[:0], c.Rows*k)[:c.Rows*k]
				p.p = slices.Grow(p.p[:0], c.Rows*rank)[:c.Rows*rank]
				if err := pr.ProjectTo(p.scores, p.p, c.X, c.Rows); err != nil {
					return err
				}
				p.y = append(p.y[:0], c.Y...)
				p.x = append(p.x[:0], c.X[:min(c.Rows, rankCheckRows)*d]...)
				return nil
			}
		},
		Reduce: func(_ int, p *valPart) error {
			nt := len(p.y) / max(p.rows, 1)
			for i := range p.rows {
				if len(p2) >= maxVarianceRows*rank {
					break
				}
				for j := range k {
					e = append(e, p.y[i*nt+j]-p.scores[i*k+j])
				}
				for _, x := range p.p[i*rank : (i+1)*rank] {
					p2 = append(p2, x*x)
				}
			}
			if c := rankCheckRows*d - len(check); c > 0 {
				check = append(check, p.x[:min(c, len(p.x))]...)
			}
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("uncertainty: validation: %w", err)
	}
	rows := len(e) / k
	if rows == 0 {
		return nil, fmt.Errorf("uncertainty: the validation data has no rows")
	}
	// The variance's λ: the best likelihood on a log grid in √10 steps
	// from λ/10⁴ to λ·10⁶, refined by golden section.
	vAt := func(lambda float64, v []float64) {
		for i := range rows {
			s := prior
			for q, x := range p2[i*rank : (i+1)*rank] {
				s -= vm.sigma[q] / (vm.sigma[q] + lambda) * x
			}
			v[i] = max(s, 0)
		}
	}
	v := make([]float64, rows)
	nllAt := func(ll float64) float64 {
		vAt(math.Exp(ll), v)
		_, _, nll := fitVariance(e, v, k)
		return nll
	}
	l0 := math.Log(cfg.Lambda)
	bestL, best := l0, nllAt(l0)
	for j := -8; j <= 12; j++ {
		ll := l0 + float64(j)*math.Ln10/2
		if f := nllAt(ll); f < best {
			best, bestL = f, ll
		}
	}
	a, b := bestL-math.Ln10/2, bestL+math.Ln10/2
	if x, fx := goldenMin(nllAt, a, b, 30); fx < best {
		bestL = x
	}
	u.Lambda = math.Exp(bestL)
	vAt(u.Lambda, v)
	u.Scale, u.Noise, _ = fitVariance(e, v, k)
	u.Rows = int64(rows)
	u.ResidualVar = make([]float64, k)
	for i, x := range e {
		u.ResidualVar[i%k] += x * x / float64(rows)
	}
	for _, s := range vm.sigma {
		u.EffectiveDim += s / (s + u.Lambda)
	}
	vr := make([]float64, len(e))
	for i := range rows {
		for j := range k {
			vr[i*k+j] = max(u.Scale[j]*v[i]+u.Noise[j], math.SmallestNonzeroFloat64)
		}
	}
	var cov [3]float64
	cov, u.NLPD, u.NLPDConstant = intervalQuality(e, vr, k)
	u.Coverage50, u.Coverage90, u.Coverage95 = cov[0], cov[1], cov[2]
	// The split-conformal calibration: the standardised residuals'
	// quantiles (vr is no longer needed).
	for i, x := range e {
		vr[i] = math.Abs(x) / math.Sqrt(vr[i])
	}
	conf := model.NewConformal(vr)
	u.RankKept = 1
	switch nc := len(check) / d; {
	case vm.full == nil:
		u.RankError, u.RankErrorMax, u.RankKept = -1, -1, -1
	case rank < mm && nc > 0:
		full, err := vm.full(ctx, check, nc, u.Lambda)
		if err != nil {
			return nil, err
		}
		if full == nil { // not factorisable at this λ: not measured
			u.RankError, u.RankErrorMax, u.RankKept = -1, -1, -1
			break
		}
		low := varianceOf(m, u, vm.u, c64m, check, nc)
		rel := make([]float64, nc)
		var kept, all float64
		for i := range nc {
			rel[i] = math.Abs(low[i]-full[i]) / max(full[i], 1e-12*prior)
			kept += max(prior-low[i], 0)
			all += max(prior-full[i], 0)
		}
		if all > 0 {
			u.RankKept = min(kept/all, 1)
		}
		sort.Float64s(rel)
		u.RankError, u.RankErrorMax = rel[nc/2], rel[nc-1]
	}
	u.Seconds = time.Since(t0).Seconds()
	if mu, err = m.withUncertainty(u, vm.u); err != nil { // complete, at the chosen λ
		return nil, err
	}
	cm, err := mu.Model.WithConformal(conf)
	if err != nil {
		return nil, err
	}
	mu = mu.with(cm)
	report(Progress{Stage: StageUncertainty, Fraction: 1})
	return mu, nil
}

// varianceOf returns v(x) (see Uncertainty) of u, with directions w
// (M × u.Rank), for the raw rows xs, as the centres c (m's, or others of
// the same points) load them, with K(X,C)·[α | W] as the model computes
// it.
func varianceOf(m *Model, u *Uncertainty, w []float64, c *kernel.Centers, xs []float64, rows int) []float64 {
	k, r := m.K(), u.Rank
	alpha := m.Alpha()
	aug := make([]float64, m.M()*(k+r))
	for i := range m.M() {
		copy(aug[i*(k+r):], alpha[i*k:(i+1)*k])
		copy(aug[i*(k+r)+k:], w[i*r:(i+1)*r])
	}
	b := make([]float64, rows*(k+r))
	c.KvTo(c.NewWorkspace(), b, xs, rows, aug, k+r)
	proj := make([]float64, rows*r)
	for i := range rows {
		copy(proj[i*r:(i+1)*r], b[i*(k+r)+k:(i+1)*(k+r)])
	}
	return projVariance(u, u.Lambda, proj, rows)
}

// projVariance returns v(x) = max(Prior − Σᵢ σᵢ/(σᵢ + λ)·pᵢ², 0) per row
// of the projections proj (rows × Rank) of u's directions, in the
// model's order of operations.
func projVariance(u *Uncertainty, lambda float64, proj []float64, rows int) []float64 {
	r := u.Rank
	wt := make([]float64, r)
	for i, s := range u.Sigma {
		wt[i] = s / (s + lambda)
	}
	v := make([]float64, rows)
	for i := range rows {
		x := u.Prior
		for q, g := range proj[i*r : (i+1)*r] {
			x -= wt[q] * g * g
		}
		v[i] = max(x, 0)
	}
	return v
}

// withUncertainty returns a copy of m that keeps u and its directions w
// (M × u.Rank).
func (m *Model) withUncertainty(u *Uncertainty, w []float64) (*Model, error) {
	mm, err := m.Model.WithUncertainty(u, w)
	if err != nil {
		return nil, err
	}
	return m.with(mm), nil
}
