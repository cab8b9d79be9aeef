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
	"github.com/falkon-ooc/falkon-ooc/pass"
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

// exactModel is UncertaintyExact: G = K_nMᵀK_nM (exactGram),
// K_MM + εMI = TᵀT, and the eigenpairs of Ŝ = T⁻ᵀ(G/n)T⁻¹.
func exactModel(ctx context.Context, g []float64, c64m *kernel.Centers, kmm func(dst []float64, lo, hi int),
	m int, n float64, jitter float64, r, workers int, seed uint64) (*varModel, error) {
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

// gramFn and varianceRowsFn are the exact variance's passes, exactGram
// and varianceRows (a reference test swaps in the local passes they
// replaced).
var gramFn, varianceRowsFn = exactGram, varianceRows

// exactGram forms K_nMᵀK_nM (K_nMᵀ W K_nM with the row weights) over the
// fit's training rows in one pass.Gram through the fit's executor: over
// the whole data with the validation rows' hold-out when they are held out
// of it (so that an executor reads the data where it is), else over the
// training source. The sums are reduced in chunk order (the same result
// for any number of workers).
func exactGram(ctx context.Context, plan *FitPlan, cs *centreSample, c64m *kernel.Centers, op *fitOperator, opts RunOptions, report func(done, chunks int)) ([]float64, error) {
	job := &pass.Job{Kind: pass.Gram, Kernel: plan.Config.Kernel, Precision: kernel.Float64, M: cs.m, D: plan.D, K: 1,
		Centers: cs.centres, Mean: cs.std.mean, InvStd: cs.std.invStd, Features: plan.Features, Weight: plan.Weight, Prepared: c64m}
	run := passOver(plan.src, opts)
	if op.held != nil {
		job.Holdout, run = op.held.job.Holdout, op.held.passFn.plain()
	}
	g, err := run(ctx, job, func(done, chunks int, _ int64) { report(done, chunks) })
	if err != nil {
		return nil, fmt.Errorf("uncertainty pass: %w", err)
	}
	return g, nil
}

// varianceRows returns, for the first maxVarianceRows validation rows,
// the residuals e (rows × K) of the model m and the squared projections
// (uᵢᵀk_x)² (rows × rank) on the variance's directions w (M × rank), and
// the first rankCheckRows rows' features, raw, for the rank check.
//
// The residuals and projections come from one pass.GroupKernelProduct
// that scores the rows by K(x, C)·[α | w]: through the fit's executor over
// the whole data when the validation rows are held out of it (more than
// maxVarianceRows of them: a random sample of about maxVarianceRows, the
// rows that a hold-out of a smaller fraction with the same seed holds
// out), else locally over the validation source's first chunks, as Fit's
// other validations on a source of their own run. The rank check's rows
// are read through the executor when it is a pass.RowReader.
func varianceRows(ctx context.Context, m *Model, plan *FitPlan, cs *centreSample, op *fitOperator, w []float64, rank int,
	opts RunOptions) (e, p2, check []float64, err error) {
	val, d, k := opts.Validation, plan.D, m.K()
	alpha := m.Alpha()
	aug := make([]float64, cs.m*(k+rank))
	for i := range cs.m {
		copy(aug[i*(k+rank):], alpha[i*k:(i+1)*k])
		copy(aug[i*(k+rank)+k:], w[i*rank:(i+1)*rank])
	}
	job := &pass.Job{Kind: pass.GroupKernelProduct, Precision: plan.Config.Precision, M: cs.m, D: d, K: k,
		Centers: cs.centres, Mean: cs.std.mean, InvStd: cs.std.invStd, Task: TaskRegression,
		Features: plan.Features, Targets: plan.Targets,
		Groups:         []pass.Group{{Kernel: plan.Config.Kernel, Cols: k + rank, Alpha: aug}},
		PreparedGroups: []*kernel.Centers{op.passJob.Prepared}}
	var run scoredPass
	if op.held != nil {
		h := *op.held.job.Holdout
		job.ScoreRows = stream.Rows(val)
		if job.ScoreRows > maxVarianceRows {
			root, _ := stream.RootRows(val, nil)
			h.Fraction *= maxVarianceRows / float64(job.ScoreRows)
			job.ScoreRows = heldRows(root, h)
		}
		job.Holdout, run = &h, op.held.passFn
	} else {
		var prefix firstChunks
		prefix.Source, job.ScoreRows = val, 0
		for prefix.n < val.NumChunks() && job.ScoreRows < maxVarianceRows {
			job.ScoreRows += int64(val.ChunkRows(prefix.n))
			prefix.n++
		}
		run = scoredPassOver(prefix, RunOptions{Workers: opts.Workers})
	}
	if job.ScoreRows == 0 {
		return nil, nil, nil, nil
	}
	rowLen := job.RowLen()
	out, err := run(ctx, job, func(int, int, int64) {}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	tm := m.TargetMean()
	vals := out[job.SumLen():]
	n := min(int(job.ScoreRows), maxVarianceRows)
	e, p2 = make([]float64, 0, n*k), make([]float64, 0, n*rank)
	for i := range n {
		row := vals[i*rowLen : (i+1)*rowLen]
		for j := range k {
			e = append(e, row[k+rank+j]-(row[j]+tm[j]))
		}
		for _, x := range row[k : k+rank] {
			p2 = append(p2, x*x)
		}
	}
	nc := int(min(stream.Rows(val), rankCheckRows))
	idx := make([]int64, nc)
	for i := range idx {
		idx[i] = int64(i)
	}
	if rr := rowReader(opts.Executor); rr != nil && op.held != nil {
		check, err = rr.ReadRows(ctx, val, idx)
		if err == nil && len(check) != nc*d {
			err = fmt.Errorf("the executor read %d values for %d rows of %d features", len(check), nc, d)
		}
	} else {
		check, err = firstRows(ctx, val, nc)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the rank check's rows: %w", err)
	}
	return e, p2, check, nil
}

// heldRows returns the number of rows of src that the hold-out h holds
// out (stream.HeldOutRows), from the chunks' row counts alone.
func heldRows(src stream.Source, h pass.Holdout) int64 {
	var n, first int64
	var held []int32
	for c := range src.NumChunks() {
		r := src.ChunkRows(c)
		held = stream.HeldOutRows(held[:0], first, r, h.Fraction, h.Seed)
		n += int64(len(held))
		first += int64(r)
	}
	return n
}

// firstChunks is the first n chunks of a source.
type firstChunks struct {
	stream.Source
	n int
}

func (f firstChunks) NumChunks() int { return f.n }

// firstRows reads the features of the first n rows of src, row-major.
func firstRows(ctx context.Context, src stream.Source, n int) ([]float64, error) {
	d := src.Dim()
	out := make([]float64, 0, n*d)
	var x, y []float64
	for c := 0; c < src.NumChunks() && len(out) < n*d; c++ {
		r := src.ChunkRows(c)
		x, y = slices.Grow(x[:0], r*d)[:r*d], slices.Grow(y[:0], r*src.NumTargets())[:r*src.NumTargets()]
		if err := src.ReadChunk(ctx, c, x, y); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", c, err)
		}
		out = append(out, x[:min(r*d, n*d-len(out))]...)
	}
	return out, nil
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
		var g []float64
		g, err = gramFn(ctx, plan, cs, c64m, op, opts, func(done, chunks int) {
			report(Progress{Stage: StageUncertainty, Chunk: done, Chunks: chunks})
		})
		if err == nil {
			vm, err = exactModel(ctx, g, c64m, kmm, mm, math.Ldexp(op.n, -plan.WeightExp), cmp.Or(op.pre.Jitter(), precond.DefaultJitter), rank, workers, cfg.Seed)
		}
		report(Progress{Stage: StageUncertainty, Fraction: 0})
	default:
		err = configErr("Config.Uncertainty", "unknown uncertainty method %q (want precond or exact)", cfg.Uncertainty)
	}
	if err != nil {
		return nil, err
	}
	rank = len(vm.sigma)
	u := &Uncertainty{Method: cfg.Uncertainty, Rank: rank, Prior: prior, Sigma: vm.sigma, Lambda: cfg.Lambda, FitLambda: cfg.Lambda}
	// The validation rows: residuals and the projections (uᵢᵀk_x)².
	k := m.K()
	e, p2, check, err := varianceRowsFn(ctx, m, plan, cs, op, vm.u, rank, opts)
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
	// quantiles, per output (vr is no longer needed).
	for i, x := range e {
		vr[i] = math.Abs(x) / math.Sqrt(vr[i])
	}
	conf := model.NewConformalOutputs(vr, k)
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
	mu, err := m.withUncertainty(u, vm.u) // complete, at the chosen λ
	if err != nil {
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
