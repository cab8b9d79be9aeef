package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// Sampling says how the Nyström centres are drawn.
type Sampling string

// Centre sampling schemes.
const (
	// SamplingUniform draws M rows uniformly without replacement.
	SamplingUniform Sampling = "uniform"
	// SamplingLeverage draws M distinct rows without replacement with
	// inclusion probabilities proportional to approximate ridge leverage
	// scores at the λ whose effective dimension is M, and weights them by
	// D_jj = √(M / (q π_j)) (FALKON appendix, Defs. 2–3).
	SamplingLeverage Sampling = "leverage"
)

// ParseSampling parses "uniform" (or "") and "leverage".
func ParseSampling(s string) (Sampling, error) {
	switch Sampling(s) {
	case "", SamplingUniform:
		return SamplingUniform, nil
	case SamplingLeverage:
		return SamplingLeverage, nil
	}
	return "", fmt.Errorf("ooc: unknown centre sampling %q (want uniform or leverage)", s)
}

// maxDictionary caps the dictionary against which leverage scores are
// estimated: their cost is (rows scored) × (dictionary)² flops.
const maxDictionary = 2000

// Path constants of the leverage-score estimation (see leverageSelect).
const (
	levShrink   = 2    // λ_{h+1} = λ_h / levShrink
	levDictMul  = 3    // dictionary size: levDictMul × d_eff of the previous step
	levDictMin  = 32   // smallest dictionary
	levEvalMul  = 4    // rows scored along the path: levEvalMul × dictionary
	levEvalMin  = 1000 // at least this many rows scored along the path
	levMinRatio = 1e-12
	levJitter   = 1e-12 // × |J| K(x_j, x_j) on the dictionary's diagonal
	// levStopFrac: the path stops once d_eff ≥ M / levStopFrac and
	// extrapolates from there (the steps beyond cost the most).
	levStopFrac = 4
)

// lamOfDeff returns the λ at which d_eff is m, from the path's points
// (λ decreasing, d_eff increasing): log d_eff is close to linear in log λ,
// so it interpolates log-log between the two points around m or, if the
// path stopped below m, extrapolates with the slope of its last two
// halvings (clamped to (0.1, 1]: d_eff grows at most like 1/λ).
func lamOfDeff(lams, deffs []float64, m float64) float64 {
	h := len(lams) - 1
	if h == 0 || !(deffs[h] > 0) {
		return lams[h]
	}
	k := max(0, h-2)
	if deffs[h] >= m {
		k = h - 1
	}
	if !(deffs[k] > 0) || deffs[h] <= deffs[k] {
		return lams[h]
	}
	slope := math.Log(deffs[h]/deffs[k]) / math.Log(lams[k]/lams[h])
	slope = min(max(slope, 0.1), 1)
	return lams[h] * math.Pow(deffs[h]/m, 1/slope)
}

// leverageCandidates is the number of uniformly drawn rows whose leverage
// scores are estimated, out of which the M centres are drawn.
func leverageCandidates(n int64, m, configured int) int {
	q := configured
	if q <= 0 {
		q = 10 * m
	}
	return int(min(int64(max(q, m)), n))
}

// leverageParams is what leverage sampling reads of a fit: the
// features, kernel, seed and λ of the configuration and the worker count.
type leverageParams struct {
	d       int
	kern    kernel.Kernel
	seed    uint64
	lambda  float64
	workers int // ≥ 1
}

// leverageSelect draws m distinct centres out of the q candidate rows
// (standardised, q × d, already in memory) with inclusion probabilities
// proportional to their ridge leverage scores at λ_lev, the λ at which
// the effective dimension d_eff(λ) = Σᵢ ℓᵢ(λ) is m. It returns the
// centres, their weights D and λ_lev.
//
// Why λ_lev and not the fit's λ: at a small λ the scores of nearly every
// row are close to 1 and those of isolated rows (heavy tails, outliers)
// largest, so sampling by them spends centres on the tails. At λ_lev the
// scores sum to m and say how much of an m-dimensional approximation
// each row needs (Rudi, Calandriello, Carratino, Rosasco, "On fast
// leverage score sampling and optimal learning", NeurIPS 2018, BLESS).
//
// λ_lev is never below the fit's λ: if d_eff(λ) < m there (a kernel
// whose effective dimension saturates, as on low-dimensional data), the
// scores at the fit's λ are the ones the theory asks for (M ≳ d_eff(λ)
// log centres suffice; Rudi, Camoriano, Rosasco 2015), and smaller λ
// only adds rounding.
//
// λ_lev is found along a decreasing path λ_0 = mean K(x, x) (where
// d_eff ≤ 1), λ_{h+1} = λ_h / 2, as BLESS does: at step h a dictionary J_h
// of about 3 d_eff(λ_{h−1}) rows is drawn from the rows scored at step
// h−1 in proportion to their scores, and the scores of a uniform subset
// U_h of the candidates are estimated against it (Nyström, BLESS eq. 5):
//
//	ℓ̃(x) = (K(x, x) − k_xJᵀ (K_JJ + λ |U_{h−1}| Π_J)⁻¹ k_xJ) / λ
//
// with Π_J the inclusion probabilities of J within U_{h−1} (the leverage
// score of x among N rows is about ℓ̃(x)/N). d_eff(λ_h) is estimated as
// the mean of ℓ̃ over U_h. The steps near d_eff = m cost the most (q R²
// flops for R dictionary rows), so the path stops at the first λ_h where
// d_eff ≥ m/4 and extrapolates log-log to d_eff = m with the slope of its
// last two halvings (lamOfDeff; on the 12-column data of the tests, at
// m = 1000, the final scores give d_eff(λ_lev) = 1028). A final dictionary of
// min(3m, 2000) rows is drawn from the last scores and all q candidates
// are scored at λ_lev.
//
// The centres are drawn without replacement by randomly ordered
// systematic sampling with inclusion probabilities πⱼ = min(1, c ℓ̃ⱼ),
// Σ πⱼ = m: exactly m distinct centres. Since the candidates are a
// uniform sample of the n rows, K_nMᵀK_nM = Σᵢ kᵢkᵢᵀ ≈ (n/q) Σ_{j∈S}
// kⱼkⱼᵀ / πⱼ (Horvitz–Thompson) = (n/m) K_MM D² K_MM with
// D_jj = √(m / (q πⱼ)): D = I when the draw is uniform (πⱼ = m/q).
func (f leverageParams) selectCentres(ctx context.Context, cand []float64, m int) (centres, weights []float64, lamLev float64, err error) {
	d := f.d
	q := len(cand) / d
	if q <= m {
		weights = make([]float64, q)
		for i := range weights {
			weights[i] = 1
		}
		return cand, weights, 0, nil
	}
	rng := newRand(f.seed, 0x6c657665726167) // "leverag"
	kern := f.kern
	diag := make([]float64, q) // K(xᵢ, xᵢ)
	kappa := 0.0
	for i := range q {
		x := cand[i*d : (i+1)*d]
		diag[i] = kern.Eval(x, x)
		kappa += diag[i]
	}
	kappa /= float64(q)
	if !(kappa > 0) {
		return nil, nil, 0, fmt.Errorf("leverage scores: the kernel's diagonal K(x, x) averages %g over the candidates; want > 0", kappa)
	}
	perm := rng.Perm(q) // U_h = perm[:u_h]: nested uniform subsets
	scores := make([]float64, q)
	// Step 0: a uniform dictionary.
	u := min(q, levEvalMin)
	uScores := make([]float64, u)
	for i := range uScores {
		uScores[i] = 1
	}
	lam := kappa
	lamFit := f.lambda
	var lams, deffs []float64 // the path
	var dict []int
	var dictPi []float64
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, err
		}
		prevDeff := 0.0
		if len(deffs) > 0 {
			prevDeff = deffs[len(deffs)-1]
		}
		r := min(u, maxDictionary, max(levDictMin, int(math.Ceil(levDictMul*prevDeff))))
		// Dictionary: r of the u rows scored at the previous step, in
		// proportion to their scores; Π within U_prev.
		pi := inclusion(uScores, r)
		dict, dictPi = dict[:0], dictPi[:0]
		for _, i := range systematic(rng, pi) {
			dict = append(dict, perm[i])
			dictPi = append(dictPi, pi[i])
		}
		uPrev := u
		u = min(q, max(levEvalMin, levEvalMul*r))
		uScores = slices.Grow(uScores[:0], u)[:u]
		if err := f.nystromScores(ctx, cand, diag, dict, dictPi, float64(uPrev), lam, perm[:u], uScores); err != nil {
			return nil, nil, 0, err
		}
		deff := 0.0
		for _, s := range uScores {
			deff += s
		}
		deff /= float64(u)
		lams, deffs = append(lams, lam), append(deffs, deff)
		if deff >= float64(m)/levStopFrac || lam <= lamFit || lam < levMinRatio*kappa {
			break
		}
		lam /= levShrink
	}
	lamLev = max(lamOfDeff(lams, deffs, float64(m)), lamFit)
	// Final dictionary from the last scores, then every candidate at λ_lev.
	r := min(u, maxDictionary, max(levDictMin, levDictMul*m))
	pi := inclusion(uScores, r)
	dict, dictPi = dict[:0], dictPi[:0]
	for _, i := range systematic(rng, pi) {
		dict = append(dict, perm[i])
		dictPi = append(dictPi, pi[i])
	}
	all := make([]int, q)
	for i := range all {
		all[i] = i
	}
	if err := f.nystromScores(ctx, cand, diag, dict, dictPi, float64(u), lamLev, all, scores); err != nil {
		return nil, nil, 0, err
	}
	pi = inclusion(scores, m)
	for _, i := range systematic(rng, pi) {
		centres = append(centres, cand[i*d:(i+1)*d]...)
		weights = append(weights, math.Sqrt(float64(m)/(float64(q)*pi[i])))
	}
	return centres, weights, lamLev, nil
}

// nystromScores sets out[k] to the Nyström estimate of the leverage
// function ℓ(x) = ⟨k_x, (C + λ)⁻¹ k_x⟩ (C the kernel's covariance
// operator: d_eff(λ) = E ℓ(x), and a row's ridge leverage score among N
// rows is about ℓ(x)/N) at candidate rows[k], against the dictionary dict
// (candidate indices) whose inclusion probabilities within a uniform
// subset of u candidates are pi:
//
//	ℓ̃(x) = (K(x, x) − k_xJᵀ (K_JJ + λ u Π)⁻¹ k_xJ) / λ
//
// Scores are floored at 1e-9 × the largest, so that rounding never gives
// a row zero or negative probability.
func (f leverageParams) nystromScores(ctx context.Context, cand, diag []float64, dict []int, pi []float64, u, lam float64, rows []int, out []float64) error {
	d := f.d
	nj := len(dict)
	dx := make([]float64, 0, nj*d)
	for _, i := range dict {
		dx = append(dx, cand[i*d:(i+1)*d]...)
	}
	cj := kernel.NewCenters(f.kern, dx, nj, d, kernel.Float64)
	kjj := make([]float64, nj*nj)
	if err := blockParallel(ctx, cj, kjj, dx, nj, d, f.workers); err != nil {
		return err
	}
	for j := range nj {
		// The jitter keeps the factorisation defined where λ u π_j falls
		// below rounding (a kernel whose d_eff saturates, tiny λ).
		kjj[j*nj+j] += lam*u*pi[j] + levJitter*float64(nj)*kjj[j*nj+j]
	}
	workers := f.workers
	if ok, col := dense.Cholesky(kjj, nj, nj, workers); !ok {
		return fmt.Errorf("leverage scores: the dictionary's kernel matrix plus λ|U|Π is not positive definite at column %d (λ = %g)", col, lam)
	}
	// Each worker takes every workers-th block of rows. The block's rows
	// act as the "centres" of a kernel block whose rows are the
	// dictionary, so that K_Jx comes out as the nj × rows right-hand side
	// the triangular solve wants, without a transpose.
	const block = 512
	nblocks := (len(rows) + block - 1) / block
	g, gctx := errgroup.WithContext(ctx)
	for w := range min(workers, nblocks) {
		g.Go(func() error {
			xb := make([]float64, 0, block*d)
			kt := make([]float64, nj*block)
			s := make([]float64, block)
			for b := w; b < nblocks; b += workers {
				if err := gctx.Err(); err != nil {
					return err
				}
				lo, hi := b*block, min((b+1)*block, len(rows))
				nr := hi - lo
				xb = xb[:0]
				for _, i := range rows[lo:hi] {
					xb = append(xb, cand[i*d:(i+1)*d]...)
				}
				cx := kernel.NewCenters(f.kern, xb, nr, d, kernel.Float64)
				kt := kt[:nj*nr]
				cx.BlockTo(cx.NewWorkspace(), kt, dx, nj)     // K_Jx: nj × nr
				dense.SolveUpperT(kjj, nj, nj, kt, nr, nr, 1) // U⁻ᵀK_Jx: column norms² = kᵀ(K_JJ + λuΠ)⁻¹k
				s := s[:nr]
				clear(s)
				for j := range nj {
					for r, v := range kt[j*nr : (j+1)*nr] {
						s[r] += v * v
					}
				}
				for r := range nr {
					out[lo+r] = (diag[rows[lo+r]] - s[r]) / lam
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	top := slices.Max(out)
	if !(top > 0) {
		top = 1
	}
	for i, s := range out {
		out[i] = max(s, 1e-9*top)
	}
	return nil
}

// inclusion returns inclusion probabilities πᵢ = min(1, c sᵢ) for the
// positive sizes s, with c such that Σ πᵢ = k (k ≤ len(s)).
func inclusion(s []float64, k int) []float64 {
	pi := make([]float64, len(s))
	capped := make([]bool, len(s))
	ncap := 0
	for {
		rest := 0.0
		for i, v := range s {
			if !capped[i] {
				rest += v
			}
		}
		c := float64(k-ncap) / rest
		grew := false
		for i, v := range s {
			if !capped[i] && c*v >= 1 {
				capped[i] = true
				ncap++
				grew = true
			}
		}
		if !grew || ncap >= k {
			for i, v := range s {
				pi[i] = 1
				if !capped[i] {
					pi[i] = min(1, c*v)
				}
			}
			return pi
		}
	}
}

// systematic draws round(Σ π) distinct indices, index i with probability
// πᵢ ≤ 1, by randomly ordered systematic sampling (Hartley and Rao
// 1962): the indices in random order, their cumulated π, and the points
// u, u+1, u+2, … for one uniform u in [0, 1). It returns them sorted.
func systematic(rng interface {
	Float64() float64
	Perm(int) []int
}, pi []float64) []int {
	k := 0.0
	for _, p := range pi {
		k += p
	}
	want := int(math.Round(k))
	order := rng.Perm(len(pi))
	next := rng.Float64()
	cum := 0.0
	sel := make([]int, 0, want)
	taken := make([]bool, len(pi))
	for _, i := range order {
		cum += pi[i]
		if cum > next && len(sel) < want {
			sel = append(sel, i)
			taken[i] = true
			next++
		}
	}
	// Rounding in the cumulated sum can leave the last point unreached.
	for _, i := range order {
		if len(sel) >= want {
			break
		}
		if !taken[i] {
			sel = append(sel, i)
			taken[i] = true
		}
	}
	slices.Sort(sel)
	return sel
}
