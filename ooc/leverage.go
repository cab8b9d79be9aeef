package ooc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

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
	// SamplingLeverage draws M rows with replacement with probabilities
	// proportional to approximate ridge leverage scores, and weights them
	// by D_jj = 1/√(n p_j) (FALKON appendix, Defs. 2–3).
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

// maxDictionary caps the uniform dictionary against which leverage scores
// are estimated: their cost is (candidates) × (dictionary)² flops.
const maxDictionary = 2000

// leverageCandidates is the number of uniformly drawn rows whose leverage
// scores are estimated, out of which the M centres are drawn.
func leverageCandidates(n int64, m, configured int) int {
	q := configured
	if q <= 0 {
		q = 10 * m
	}
	return int(min(int64(max(q, m)), n))
}

// leverageSelect estimates the ridge leverage scores of the candidate rows
// (standardised, q × d) and draws m centres from them with probability
// proportional to the scores, with replacement. It returns the distinct
// centres drawn and their weights D_jj = √(c_j Σℓ / (q ℓ_j)) for a row drawn
// c_j times: 1/√(n p_j) with p_j = (q/n) ℓ_j/Σℓ, the probability that one
// draw picks row j out of all n rows, merged over repeated draws
// (K_nMᵀK_nM ≈ (n/M) K_MM D² K_MM counts a row drawn twice twice).
//
// The scores are the Nyström estimates of BLESS (Rudi, Calandriello,
// Carratino, Rosasco, NeurIPS 2018) on a uniform dictionary J of the
// candidates:
//
//	ℓ̃_i = (K(x_i, x_i) − k_iJᵀ (K_JJ + λ|J| I)⁻¹ k_iJ) / (λ n)
//
// computed in one pass over the candidates (already in memory).
func (f *fitter) leverageSelect(ctx context.Context, cand []float64, m int) (centres, weights []float64, err error) {
	d := f.d
	q := len(cand) / d
	rng := newRand(f.cfg.Seed, 0x6c657665726167) // "leverag"
	// The dictionary: a uniform subset of the candidates.
	nj := min(q, m, maxDictionary)
	perm := rng.Perm(q)[:nj]
	slices.Sort(perm)
	dict := make([]float64, 0, nj*d)
	for _, i := range perm {
		dict = append(dict, cand[i*d:(i+1)*d]...)
	}
	kern := f.cfg.Kernel
	cj := kernel.NewCenters(kern, dict, nj, d, kernel.Float64)
	kjj := make([]float64, nj*nj)
	if err := blockParallel(ctx, cj, kjj, dict, nj, d, f.opts); err != nil {
		return nil, nil, err
	}
	lam := f.cfg.Lambda
	for i := range nj {
		kjj[i*nj+i] += lam * float64(nj)
	}
	workers := workersOf(f.opts)
	if ok, col := dense.Cholesky(kjj, nj, nj, workers); !ok {
		return nil, nil, fmt.Errorf("leverage scores: the dictionary's kernel matrix plus λ|J|I is not positive definite at column %d; raise lambda", col)
	}
	// Scores, in blocks of candidates, in parallel.
	scores := make([]float64, q)
	const block = 256
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for lo := 0; lo < q; lo += block {
		hi := min(lo+block, q)
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			rows := hi - lo
			ws := cj.NewWorkspace()
			kb := make([]float64, rows*nj)
			cj.BlockTo(ws, kb, cand[lo*d:hi*d], rows)
			kt := make([]float64, nj*rows) // k_iJ as columns
			for r := range rows {
				for j := range nj {
					kt[j*rows+r] = kb[r*nj+j]
				}
			}
			dense.SolveUpperT(kjj, nj, nj, kt, rows, rows, 1) // U⁻ᵀ k: ‖·‖² = kᵀ(K_JJ+λ|J|I)⁻¹k
			for r := range rows {
				x := cand[(lo+r)*d : (lo+r+1)*d]
				s := 0.0
				for j := range nj {
					v := kt[j*rows+r]
					s += v * v
				}
				scores[lo+r] = (kern.Eval(x, x) - s) / (lam * float64(f.n))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	// Guard against rounding: every candidate keeps a small chance.
	top := slices.Max(scores)
	if !(top > 0) {
		top = 1
	}
	floor := 1e-9 * top
	cum := make([]float64, q)
	total := 0.0
	for i, s := range scores {
		s = max(s, floor)
		scores[i] = s
		total += s
		cum[i] = total
	}
	counts := make([]int, q)
	for range m {
		u := rng.Float64() * total
		i := sort.SearchFloat64s(cum, u)
		counts[min(i, q-1)]++
	}
	for i, c := range counts {
		if c == 0 {
			continue
		}
		centres = append(centres, cand[i*d:(i+1)*d]...)
		weights = append(weights, math.Sqrt(float64(c)*total/(float64(q)*scores[i])))
	}
	return centres, weights, nil
}
