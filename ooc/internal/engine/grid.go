package engine

import (
	"context"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// Cand is one candidate of a Grid: a λ of its σ group, with K columns
// of the CG state, its own A = chol(T Tᵀ/M + λI) and α of its current
// iterate.
type Cand struct {
	Col    int     // its first column in the CG state
	Lambda float64 // λ
	// A is its preconditioner; its T is its group's.
	A *precond.Preconditioner
	// Live says it takes part in the next pass. A candidate stopped
	// (Live false) gets 0 from MulTo, which freezes it in CG.
	Live bool
	// Alpha (M × K) is α = Bβ of its current iterate when StepAlpha
	// follows every step (the caller sets it when β is not 0).
	Alpha []float64
	v, z  []float64
}

// Group is one σ of a Grid: the kernel block its candidates share in a
// pass, and its T = chol(K_MM + εMI).
type Group struct {
	// T is a preconditioner of the group's; only its T is used.
	T     *precond.Preconditioner
	Cands []*Cand
	// KMM, needed when T's λ term is not the identity (ExplicitLambda:
	// the Nyström preconditioner), adds a·K_MM·u to dst (u and dst
	// M × k): W(p) = Bᵀ(K_nMᵀK_nM u/n + λ K_MM u) then.
	KMM func(ctx context.Context, dst, u []float64, k int, a float64) error
	// During a pass (Grid.Pass): the live candidates, in order, and
	// their columns side by side, live·K each: U = T⁻¹A⁻¹p per
	// candidate, and Alpha their α (packed when the pass validates).
	Live      []*Cand
	U, Alpha  []float64
	v, w, z   []float64
	u, alpha  []float64
	kmmU, kmm []float64
}

// Grid is the CG operator of σ groups × λ candidates that share every
// pass (DESIGN.md, "Choosing hyper-parameters without paying for each
// guess"): on candidate c's K columns of p it computes
//
//	W_c(p) = A_c⁻ᵀ(T_g⁻ᵀ K_gᵀ W K_g T_g⁻¹A_c⁻¹p / n + λ_c A_c⁻¹p)
//
// with one pass over the data for all live candidates (Pass: per group
// one kernel block, multiplying the group's live candidates' columns
// together). A fit is a grid of one group and one candidate. Grid is not
// safe for concurrent use.
type Grid struct {
	M, K    int     // centres and outputs
	N       float64 // n of λ·n
	Workers int     // goroutines of the solves
	Groups  []*Group
	NCols   int // columns of the CG state: K per candidate
	// Iter is the number of iterations done: MulTo makes the pass of
	// iteration Iter + 1 (its callbacks see Iter unchanged), then
	// increments it.
	Iter int
	// Pass runs the pass of iteration Iter + 1 over LiveGroups (each
	// with its Live, U and, when the pass validates, Alpha) and returns
	// the products K_gᵀ W K_g U_g, group after group, M × len(Live)·K
	// each.
	Pass func(ctx context.Context) ([]float64, error)
	// After, when set, is called after the pass, before its products
	// are used: it may stop candidates (Live = false: they get 0); an
	// error ends MulTo (and CG) before its step.
	After func(ctx context.Context) error

	live []*Group
}

// NewGrid returns the grid of groups with M centres, K outputs, n in
// λ·n, solves on workers goroutines, and each candidate's columns at
// Col = K × its place over the groups. Live candidates need A.
func NewGrid(m, k int, n float64, workers int, groups []*Group) *Grid {
	g := &Grid{M: m, K: k, N: n, Workers: workers, Groups: groups}
	for _, gr := range groups {
		lk := len(gr.Cands) * k
		gr.v, gr.u, gr.w, gr.z, gr.alpha = make([]float64, m*lk), make([]float64, m*lk), make([]float64, m*lk), make([]float64, m*lk), make([]float64, m*lk)
		for _, c := range gr.Cands {
			c.Col = g.NCols
			g.NCols += k
			c.v, c.z = make([]float64, m*k), make([]float64, m*k)
			if c.Alpha == nil {
				c.Alpha = make([]float64, m*k)
			}
		}
	}
	return g
}

// LiveGroups returns the groups of the current pass: those with a live
// candidate, in order.
func (g *Grid) LiveGroups() []*Group { return g.live }

// Gather lists each group's live candidates and, with alpha, packs their
// α (M × live·K) into the group's Alpha for a pass that validates them.
func (g *Grid) Gather(alpha bool) {
	m, k := g.M, g.K
	g.live = g.live[:0]
	for _, gr := range g.Groups {
		gr.Live = gr.Live[:0]
		for _, c := range gr.Cands {
			if c.Live {
				gr.Live = append(gr.Live, c)
			}
		}
		gk := len(gr.Live) * k
		gr.U, gr.Alpha = gr.u[:m*gk], nil
		if len(gr.Live) == 0 {
			continue
		}
		g.live = append(g.live, gr)
		if alpha {
			gr.Alpha = gr.alpha[:m*gk]
			for q, c := range gr.Live {
				SetCols(gr.Alpha, gk, q*k, c.Alpha, k)
			}
		}
	}
}

// MulTo sets dst = W(src) for every live candidate's columns (0 on the
// others) with one pass: Gather(Iter > 0), then u = T⁻¹A⁻¹p per
// candidate (T shared by its group), Pass, After, and W p.
func (g *Grid) MulTo(ctx context.Context, dst, src []float64) error {
	m, k, nc := g.M, g.K, g.NCols
	g.Gather(g.Iter > 0)
	// Each candidate's A is its own: the solves run a candidate per
	// worker (a solve with one column is sequential and memory-bound).
	g.eachLive(func(gr *Group, q int, c *Cand) {
		gk, r := len(gr.Live)*k, gr.T.Rank()
		GetCols(c.v[:r*k], k, src, nc, c.Col)
		c.A.SolveA(c.v[:r*k], k)
		SetCols(gr.v[:r*gk], gk, q*k, c.v[:r*k], k)
	})
	g.eachLiveGroup(func(gr *Group) {
		gk := len(gr.Live) * k
		gr.T.SolveTTo(gr.U, gr.v[:gr.T.Rank()*gk], gk)
	})
	out, err := g.Pass(ctx)
	if err != nil {
		return err
	}
	at := 0
	for _, gr := range g.live {
		n := m * len(gr.Live) * k
		copy(gr.w[:n], out[at:at+n])
		at += n
	}
	if g.After != nil {
		if err := g.After(ctx); err != nil {
			return err
		}
	}
	clear(dst)
	var kmmErr error
	g.eachLiveGroup(func(gr *Group) {
		gk := len(gr.Live) * k
		w := gr.w[:m*gk]
		for i := range w {
			w[i] /= g.N
		}
		if gr.T.ExplicitLambda() {
			if err := gr.addKMM(ctx, w, k); err != nil {
				kmmErr = err
				return
			}
		}
		gr.T.SolveTTTo(gr.z[:gr.T.Rank()*gk], w, gk)
	})
	if kmmErr != nil {
		return kmmErr
	}
	g.eachLive(func(gr *Group, q int, c *Cand) {
		if !c.Live {
			return // stopped after this pass's validation: frozen
		}
		gk, r := len(gr.Live)*k, gr.T.Rank()
		z := c.z[:r*k]
		GetCols(z, k, gr.z[:r*gk], gk, q*k)
		if !gr.T.ExplicitLambda() {
			for i := range z {
				z[i] += c.Lambda * c.v[i]
			}
		}
		c.A.SolveAT(z, k)
		SetCols(dst[:r*nc], nc, c.Col, z, k)
	})
	g.Iter++
	return nil
}

// addKMM adds λ·K_MM·u to each live candidate's columns of w (the
// group's columns, M × live·K), one candidate at a time.
func (gr *Group) addKMM(ctx context.Context, w []float64, k int) error {
	gk := len(gr.Live) * k
	if len(gr.Live) == 1 {
		return gr.KMM(ctx, w, gr.U, k, gr.Live[0].Lambda)
	}
	m := len(w) / gk
	gr.kmmU, gr.kmm = make([]float64, m*k), make([]float64, m*k)
	for q, c := range gr.Live {
		GetCols(gr.kmmU, k, gr.U, gk, q*k)
		GetCols(gr.kmm, k, w, gk, q*k)
		if err := gr.KMM(ctx, gr.kmm, gr.kmmU, k, c.Lambda); err != nil {
			return err
		}
		SetCols(w, gk, q*k, gr.kmm, k)
	}
	return nil
}

// StepAlpha follows CG's step on the candidates of the last pass: with
// β ← β + a p, their α = Bβ moves by a·Bp, and Bp is the pass's u. This
// keeps α current at the cost of an axpy instead of a solve with A and T
// per candidate and iteration.
func (g *Grid) StepAlpha(step []float64) {
	m, k := g.M, g.K
	for _, gr := range g.live {
		gk := len(gr.Live) * k
		for q, c := range gr.Live {
			for j := range k {
				a := step[c.Col+j]
				if a == 0 {
					continue
				}
				u := gr.U[q*k+j:]
				for i := range m {
					c.Alpha[i*k+j] += a * u[i*gk]
				}
			}
		}
	}
}

// eachLive calls fn for every live candidate of the current pass (q: its
// place in gr.Live), on up to Workers goroutines.
func (g *Grid) eachLive(fn func(gr *Group, q int, c *Cand)) {
	type item struct {
		gr *Group
		q  int
	}
	var items []item
	for _, gr := range g.live {
		for q := range gr.Live {
			items = append(items, item{gr, q})
		}
	}
	Parallel(len(items), g.Workers, func(i int) {
		it := items[i]
		fn(it.gr, it.q, it.gr.Live[it.q])
	})
}

// eachLiveGroup calls fn for every group of the current pass, on up to
// Workers goroutines.
func (g *Grid) eachLiveGroup(fn func(gr *Group)) {
	Parallel(len(g.live), g.Workers, func(i int) { fn(g.live[i]) })
}
