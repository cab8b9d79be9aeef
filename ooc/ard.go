package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/dense"
	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// StageARD is the stage of Tune that learns per-feature length scales.
const StageARD Stage = "ard"

// ARDConfig configures the learning of per-feature length scales (ARD,
// automatic relevance determination) on an in-memory row subsample, by
// gradient steps on the hold-out error of the Nyström kernel ridge
// regression there — the hold-out objective of Meanti, Carratino, De
// Vito, Rosasco, "Efficient hyperparameter tuning for large scale kernel
// ridge regression" (AISTATS 2022). The zero value means the defaults.
type ARDConfig struct {
	// Rows is the subsample size (training and hold-out rows together).
	// 0 means min(n, 5000) below 10⁵ rows, and 20 000 from 10⁵ rows on.
	// 5000 rows rank the features' length scales of the UCI sets at a
	// cost of seconds (bench/PAPER.md, "ARD against the grid"), but on
	// the higgs-rough shape they missed the 3 features that carry its
	// fine structure, where 20 000 rows found them (length scales 0.4
	// against 2–6) and lifted the validation AUC from 0.74 to 0.88 at
	// M = 10⁴ (bench/PAPER.md, "higgs-rough"); at 10⁵ rows and more the
	// fit costs minutes to hours and the 20 000 rows' tens of seconds are
	// a small share of it.
	Rows int `json:"rows"`
	// Centers is the number of Nyström centres of the subsample's model.
	// 0 means min(500, Rows/10).
	Centers int `json:"centers"`
	// Steps is the number of gradient (Adam) steps. 0 means 80.
	Steps int `json:"steps"`
	// Rate is the step size on log σⱼ and log λ. 0 means 0.05.
	Rate float64 `json:"rate"`
}

// ARDResult is what LearnARD found.
type ARDResult struct {
	// Sigmas are the learned length scales, one per feature (in
	// standardised units when the features are standardised). Features
	// made from one input column share theirs (ardGroups): the one-hot
	// features of a categorical column, and the sine and cosine of each
	// cycle of a time column.
	Sigmas []float64 `json:"sigmas"`
	// Lambda is the λ learned with them on the subsample.
	Lambda float64 `json:"lambda"`
	// Start and Loss are the hold-out MSE at the start and at the best
	// step.
	Start, Loss float64 `json:"-"`
	Steps       int     `json:"steps"`
}

// ardLargeN is the subsample size from which ARD's default rows grow
// from 5000 to 20 000 (ARDConfig.Rows).
const ardLargeN = 100_000

func (a ARDConfig) resolved(n int64) ARDConfig {
	if a.Rows <= 0 {
		a.Rows = int(min(n, 5000))
		if n >= ardLargeN {
			a.Rows = 20_000
		}
	}
	a.Rows = int(min(int64(a.Rows), n))
	if a.Centers <= 0 {
		a.Centers = min(500, max(a.Rows/10, 1))
	}
	if a.Steps <= 0 {
		a.Steps = 80
	}
	if a.Rate <= 0 {
		a.Rate = 0.05
	}
	return a
}

// ardProblem is the hold-out objective on an in-memory subsample: Nyström
// KRR with a Gaussian ARD kernel fitted on (x, y) with centres c, scored
// on (xv, yv). Rows are standardised; y is centred on the training mean.
type ardProblem struct {
	// y and yv hold k outputs per row (row-major; k = 0 means 1): the
	// regression target, or the ±1 / one-hot codes a fit of a binary or
	// multiclass task regresses on. The loss sums over the outputs.
	x, y, xv, yv, c []float64
	n, nv, m, d, k  int
	// group maps each feature to its length scale (nil: one each); the
	// scales are the parameters learned.
	group   []int
	workers int // goroutines of the dense algebra
	// Scratch kept between steps: K_nM, K_vM, K_MM and H.
	knm, kvm, kmm, h []float64
	// progress, when not nil, is called after each step of learn.
	progress func(step int)
}

// lossGrad returns the hold-out MSE at log length scales theta (d) and
// log λ phi, and its gradient (d + 1, the last for phi) into grad.
//
// With K = K_nM, H = KᵀK + λnK_MM + δI, α = H⁻¹Kᵀy, r = K_vMα − y_v,
// L = ‖r‖²/n_v and g = H⁻¹K_vMᵀr, for each parameter:
//
//	dL = (2/n_v)·[rᵀ dK_vM α + eᵀ dK g − (Kg)ᵀ dK α − λn gᵀ dK_MM α − λn gᵀK_MMα·dφ]
//
// with e = y − Kα, and dK_im/dθⱼ = K_im (x_ij − c_mj)²/σⱼ² for the
// Gaussian kernel exp(−½ Σⱼ (xⱼ − cⱼ)²/σⱼ²). The O(n·M²) products and the
// factorisation of H run on the package's blocked GEMM and Cholesky
// (internal/dense), so a subsample of 10⁴–2·10⁴ rows costs seconds a step.
func (p *ardProblem) lossGrad(theta []float64, phi float64, grad []float64) float64 {
	d, m, n, nv := p.d, p.m, p.n, p.nv
	w := p.workers
	inv := make([]float64, d)
	for j, t := range theta {
		inv[j] = math.Exp(-t)
	}
	scale := func(x []float64) []float64 {
		s := make([]float64, len(x))
		for i, v := range x {
			s[i] = v * inv[i%d]
		}
		return s
	}
	xs, xvs, cs := scale(p.x), scale(p.xv), scale(p.c)
	sig := make([]float64, d)
	for j, t := range theta {
		sig[j] = math.Exp(t)
	}
	p.knm = gaussGram(p.knm, p.x, p.c, sig, d, w)
	p.kvm = gaussGram(p.kvm, p.xv, p.c, sig, d, w)
	p.kmm = gaussGram(p.kmm, p.c, p.c, sig, d, w)
	knm, kvm, kmm := p.knm, p.kvm, p.kmm
	lambda := math.Exp(phi)
	ln := lambda * float64(n)
	// H in the upper triangle (dense.Cholesky reads only that).
	p.h = slices.Grow(p.h[:0], m*m)[:m*m]
	h := p.h
	clear(h)
	dense.Gemm(true, false, m, m, n, 1, knm, m, knm, m, h, m, w)
	for i := range m {
		for j := i; j < m; j++ {
			h[i*m+j] += ln * kmm[i*m+j]
		}
		h[i*m+i] += 1e-10 * float64(n)
	}
	if ok, _ := dense.Cholesky(h, m, m, w); !ok {
		return math.Inf(1)
	}
	solve := func(x []float64) { // H⁻¹x in place: UᵀU x = b
		dense.SolveUpperTVec(h, m, m, x)
		dense.SolveUpperVec(h, m, m, x)
	}
	k := max(p.k, 1)
	col := func(y []float64, rows, o int) []float64 {
		if k == 1 {
			return y
		}
		c := make([]float64, rows)
		for i := range c {
			c[i] = y[i*k+o]
		}
		return c
	}
	loss := 0.0
	if grad != nil {
		clear(grad)
	}
	c := 2 / float64(nv)
	for o := range k {
		y, yv := col(p.y, n, o), col(p.yv, nv, o)
		alpha := matTVec(knm, n, m, y)
		solve(alpha)
		r := matVec(kvm, nv, m, alpha)
		for i := range r {
			r[i] -= yv[i]
		}
		loss += dot(r, r) / float64(nv)
		if math.IsNaN(loss) {
			return math.Inf(1)
		}
		if grad == nil {
			continue
		}
		g := matTVec(kvm, nv, m, r)
		solve(g)
		e := matVec(knm, n, m, alpha)
		for i := range e {
			e[i] = y[i] - e[i]
		}
		kg := matVec(knm, n, m, g)
		for i := range kg {
			kg[i] = -kg[i]
		}
		pairSums(grad[:d], r, alpha, kvm, xvs, cs, d, c, w)
		pairSums(grad[:d], e, g, knm, xs, cs, d, c, w)
		pairSums(grad[:d], kg, alpha, knm, xs, cs, d, c, w)
		pairSums(grad[:d], g, alpha, kmm, cs, cs, d, -c*ln, w)
		grad[d] += -c * ln * dot(g, matVec(kmm, m, m, alpha))
	}
	return loss
}

// gaussGram returns, in dst's memory when it is large enough, the Gaussian kernel matrix between the rows of p and
// the centres q (d columns each) with length scales sigmas,
// len(p)/d × len(q)/d row-major, through the kernel package's fused
// blocks (vectorised exp), on workers goroutines.
func gaussGram(dst, p, q, sigmas []float64, d, workers int) []float64 {
	np, nq := len(p)/d, len(q)/d
	c := kernel.NewCenters(kernel.Kernel{Kind: kernel.Gaussian, Sigmas: sigmas}, q, nq, d, kernel.Float64)
	k := slices.Grow(dst[:0], np*nq)[:np*nq]
	const block = 256
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := c.NewWorkspace()
			for lo := range next {
				hi := min(lo+block, np)
				c.BlockTo(ws, k[lo*nq:hi*nq], p[lo*d:hi*d], hi-lo)
			}
		}()
	}
	for lo := 0; lo < np; lo += block {
		next <- lo
	}
	close(next)
	wg.Wait()
	return k
}

func rowNorms(p []float64, d int) []float64 {
	out := make([]float64, len(p)/d)
	for i := range out {
		out[i] = dot(p[i*d:(i+1)*d], p[i*d:(i+1)*d])
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// matVec returns A x for A rows × cols (row-major).
func matVec(a []float64, rows, cols int, x []float64) []float64 {
	out := make([]float64, rows)
	for i := range rows {
		out[i] = dot(a[i*cols:(i+1)*cols], x)
	}
	return out
}

// matTVec returns Aᵀ x for A rows × cols (row-major).
func matTVec(a []float64, rows, cols int, x []float64) []float64 {
	out := make([]float64, cols)
	for i := range rows {
		xi := x[i]
		if xi == 0 {
			continue
		}
		for j, v := range a[i*cols : (i+1)*cols] {
			out[j] += xi * v
		}
	}
	return out
}

// pairSums adds, for each feature j, w·Σᵢₘ aᵢ bₘ K_im (ps_ij − qs_mj)² to
// dst[j], expanding the square: Σᵢ aᵢ ps_ij² (Kb)ᵢ − 2 Σᵢ aᵢ ps_ij
// (K(b∘qs_j))ᵢ + Σₘ bₘ qs_mj² (Kᵀa)ₘ, so the cost is a few products with
// K, not a pass per feature. K is len(ps)/d × len(qs)/d.
func pairSums(dst, a, b, k, ps, qs []float64, d int, w float64, workers int) {
	np, nq := len(ps)/d, len(qs)/d
	kb := matVec(k, np, nq, b)
	kta := matTVec(k, np, nq, a)
	bq := make([]float64, nq*d)
	for m := range nq {
		for j := range d {
			bq[m*d+j] = b[m] * qs[m*d+j]
		}
	}
	kbq := make([]float64, np*d)
	dense.Gemm(false, false, np, d, nq, 1, k, nq, bq, d, kbq, d, workers)
	for j := range d {
		s := 0.0
		for i := range np {
			pv := ps[i*d+j]
			s += a[i] * (pv*pv*kb[i] - 2*pv*kbq[i*d+j])
		}
		for m := range nq {
			qv := qs[m*d+j]
			s += b[m] * qv * qv * kta[m]
		}
		dst[j] += w * s
	}
}

// learn runs Adam on (log σ, log λ) from the given start and returns the
// best point seen. With p.group the parameters are one log σ per group,
// whose gradient is the sum of its features'.
func (p *ardProblem) learn(ctx context.Context, sigma0, lambda0 float64, ac ARDConfig) (*ARDResult, error) {
	d := p.d
	group := p.group
	if group == nil {
		group = make([]int, p.d)
		for j := range group {
			group[j] = j
		}
	}
	d = slices.Max(group) + 1
	theta := make([]float64, p.d)           // per feature
	fgrad := make([]float64, p.d+1)         // per feature, then λ
	expand := func(x []float64) []float64 { // per-group log σ to per feature
		for j, g := range group {
			theta[j] = x[g]
		}
		return theta
	}
	x := make([]float64, d+1)
	for j := range d {
		x[j] = math.Log(sigma0)
	}
	x[d] = math.Log(lambda0)
	grad := make([]float64, d+1)
	m1, m2 := make([]float64, d+1), make([]float64, d+1)
	const b1, b2, eps = 0.9, 0.999, 1e-8
	res := &ARDResult{Loss: math.Inf(1)}
	best := slices.Clone(x)
	for step := range ac.Steps + 1 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		loss := p.lossGrad(expand(x[:d]), x[d], fgrad)
		clear(grad)
		for j, g := range group {
			grad[g] += fgrad[j]
		}
		grad[d] = fgrad[p.d]
		if step == 0 {
			res.Start = loss
		}
		if loss < res.Loss {
			res.Loss, res.Steps = loss, step
			copy(best, x)
		}
		if p.progress != nil {
			p.progress(step)
		}
		if step == ac.Steps || math.IsInf(loss, 0) || math.IsNaN(loss) {
			break
		}
		t := float64(step + 1)
		for i, gi := range grad {
			m1[i] = b1*m1[i] + (1-b1)*gi
			m2[i] = b2*m2[i] + (1-b2)*gi*gi
			mh, vh := m1[i]/(1-math.Pow(b1, t)), m2[i]/(1-math.Pow(b2, t))
			x[i] -= ac.Rate * mh / (math.Sqrt(vh) + eps)
		}
		// Keep λ where the solve stays meaningful.
		x[d] = min(max(x[d], math.Log(1e-12)), math.Log(1))
	}
	res.Sigmas = make([]float64, p.d)
	for j, g := range group {
		res.Sigmas[j] = math.Exp(best[g])
	}
	res.Lambda = math.Exp(best[d])
	return res, nil
}

// learnARD learns length scales for the tuner's training rows: on the
// regression target, or for a classification on the codes its fit
// regresses on (±1 for binary, one-hot for multiclass), so the length
// scales are those the squared loss of the fit prefers.
func (t *tuner) learnARD(ctx context.Context) (*ARDResult, error) {
	plan, cfg := t.plan, t.plan.Config
	if t.enc.task == TaskRegression && plan.TargetColumns != 1 {
		return nil, configErr("TuneConfig.ARD", "ARD learns length scales for one target, not %d", plan.TargetColumns)
	}
	if cfg.Kernel.Kind != kernel.Gaussian {
		return nil, configErr("TuneConfig.ARD", "ARD needs the Gaussian kernel, not %s", cfg.Kernel.Kind)
	}
	ac := t.tc.ARD.resolved(plan.N)
	t.progress(TuneProgress{Progress: Progress{Stage: StageARD, Iterations: ac.Steps}})
	idx := sampleIndices(plan.N, ac.Rows, cfg.Seed^0x617264) // "ard"
	x, yraw, err := readRows(ctx, plan.src, idx, nil)
	if err != nil {
		return nil, fmt.Errorf("ARD subsample: %w", err)
	}
	if t.cs.std.invStd != nil {
		standardize(x, t.cs.std.mean, t.cs.std.invStd)
	}
	k := t.enc.k
	y := make([]float64, len(idx)*k)
	if err := t.enc.encode(yraw, len(idx), plan.TargetColumns, y, k, plan.Targets); err != nil {
		return nil, fmt.Errorf("ARD subsample: %w", err)
	}
	sigma0 := cfg.Kernel.Sigma
	if len(t.tc.Sigmas) > 0 {
		// Start from the middle of the grid the scales compete with.
		s := slices.Sorted(slices.Values(t.tc.Sigmas))
		sigma0 = s[len(s)/2]
	}
	start := time.Now()
	group := ardGroups(plan.Features, plan.Encoding)
	return learnOn(ctx, x, y, plan.D, k, ac, sigma0, cfg.Seed, t.run.Workers, group, func(step int) {
		t.progress(TuneProgress{Progress: Progress{Stage: StageARD, Iteration: step, Iterations: ac.Steps,
			Elapsed: time.Since(start)}})
	})
}

// learnOn splits the subsample 80/20 (shuffled by seed), takes the
// centres from the training part and learns σⱼ and λ; y holds k outputs
// per row; group (nil: one each) maps each feature to its length scale
// (ardGroups). progress, when not nil, is called after each step.
func learnOn(ctx context.Context, x, y []float64, d, k int, ac ARDConfig, sigma0 float64, seed uint64, workers int,
	group []int, progress func(step int)) (*ARDResult, error) {
	n := len(x) / d
	perm := newRand(seed, 0x617264).Perm(n)
	nv := max(n/5, 1)
	if n-nv < ac.Centers || nv < 1 {
		return nil, configErr("TuneConfig.ARD", "ARD needs at least %d rows, the training data has %d", ac.Centers+1, n)
	}
	p := &ardProblem{n: n - nv, nv: nv, m: ac.Centers, d: d, k: k, workers: workers, group: group}
	for j, i := range perm {
		if j < nv {
			p.xv, p.yv = append(p.xv, x[i*d:(i+1)*d]...), append(p.yv, y[i*k:(i+1)*k]...)
		} else {
			p.x, p.y = append(p.x, x[i*d:(i+1)*d]...), append(p.y, y[i*k:(i+1)*k]...)
		}
	}
	p.c = slices.Clone(p.x[:ac.Centers*d])
	for o := range k {
		mu := 0.0
		for i := o; i < len(p.y); i += k {
			mu += p.y[i]
		}
		mu /= float64(p.n)
		for i := o; i < len(p.y); i += k {
			p.y[i] -= mu
		}
		for i := o; i < len(p.yv); i += k {
			p.yv[i] -= mu
		}
	}
	p.progress = progress
	return p.learn(ctx, sigma0, 1e-4, ac)
}

// ardGroups returns, per feature, the index of its length scale, in
// order of first use: the one-hot features of a categorical input column
// share one (a change of level is one difference, whichever levels),
// the sine and cosine of each cycle of a time column share one (their
// distance depends on the phase difference alone only when scaled
// alike), and every other feature has its own. It returns nil when no
// two features share one.
func ardGroups(features []string, enc *featenc.Spec) []int {
	if enc == nil {
		return nil
	}
	key := map[string]string{} // feature -> name of its group
	for _, c := range enc.Columns {
		switch c.Kind {
		case featenc.OneHot:
			for _, f := range c.Features {
				key[f] = "onehot\x00" + c.Source
			}
		case featenc.Time:
			for i, cyc := range c.Cyclic {
				for _, f := range c.Features[1+2*i : 3+2*i] {
					key[f] = "cycle\x00" + c.Source + "\x00" + cyc
				}
			}
		}
	}
	group := make([]int, len(features))
	index := map[string]int{}
	shared := false
	for j, f := range features {
		k, ok := key[f]
		if !ok {
			k = "feature\x00" + strconv.Itoa(j)
		}
		g, seen := index[k]
		if !seen {
			g = len(index)
			index[k] = g
		}
		shared = shared || seen
		group[j] = g
	}
	if !shared {
		return nil
	}
	return group
}
