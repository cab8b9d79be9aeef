package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// gridProblem is a small dense problem: per group a kernel block K_g
// (n × m, from a Gaussian kernel of its own σ on random rows and
// centres) and its K_MM.
type gridProblem struct {
	n, m, k int
	knm     [][]float64 // per group, n × m
	kmm     [][]float64 // per group, m × m
}

func newGridProblem(n, m, k int, sigmas []float64) *gridProblem {
	rng := rand.New(rand.NewPCG(7, 9))
	x, c := make([]float64, n*2), make([]float64, m*2)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range c {
		c[i] = rng.NormFloat64()
	}
	gauss := func(a, b []float64, s float64) float64 {
		d0, d1 := a[0]-b[0], a[1]-b[1]
		return math.Exp(-(d0*d0 + d1*d1) / (2 * s * s))
	}
	p := &gridProblem{n: n, m: m, k: k}
	for _, s := range sigmas {
		knm, kmm := make([]float64, n*m), make([]float64, m*m)
		for i := range n {
			for j := range m {
				knm[i*m+j] = gauss(x[2*i:2*i+2], c[2*j:2*j+2], s)
			}
		}
		for i := range m {
			for j := range m {
				kmm[i*m+j] = gauss(c[2*i:2*i+2], c[2*j:2*j+2], s)
			}
		}
		p.knm, p.kmm = append(p.knm, knm), append(p.kmm, kmm)
	}
	return p
}

// product returns K_gᵀ K_g u (m × cols) for group g.
func (p *gridProblem) product(g int, u []float64, cols int) []float64 {
	n, m, knm := p.n, p.m, p.knm[g]
	ku := make([]float64, n*cols)
	for i := range n {
		for j := range m {
			for c := range cols {
				ku[i*cols+c] += knm[i*m+j] * u[j*cols+c]
			}
		}
	}
	out := make([]float64, m*cols)
	for i := range n {
		for j := range m {
			for c := range cols {
				out[j*cols+c] += knm[i*m+j] * ku[i*cols+c]
			}
		}
	}
	return out
}

// grid returns the grid of groups gs × lambdas on p, its pass computing
// the products densely.
func (p *gridProblem) grid(t *testing.T, gs []int, lambdas []float64) *Grid {
	var groups []*Group
	for _, g := range gs {
		kmm := p.kmm[g]
		pres := make([]*precond.Preconditioner, len(lambdas))
		for i, l := range lambdas {
			pre, err := precond.Build(context.Background(), p.m, func(dst []float64, lo, hi int) {
				copy(dst, kmm[lo*p.m:hi*p.m])
			}, l, precond.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			pres[i] = pre
		}
		gr := &Group{T: pres[0]}
		for i, l := range lambdas {
			gr.Cands = append(gr.Cands, &Cand{Lambda: l, A: pres[i], Live: true})
		}
		groups = append(groups, gr)
	}
	grid := NewGrid(p.m, p.k, float64(p.n), 2, groups)
	grid.Pass = func(context.Context) ([]float64, error) {
		var out []float64
		for _, gr := range grid.LiveGroups() {
			out = append(out, p.product(gs[indexOf(groups, gr)], gr.U, len(gr.Live)*p.k)...)
		}
		return out, nil
	}
	return grid
}

func indexOf(groups []*Group, g *Group) int {
	for i, x := range groups {
		if x == g {
			return i
		}
	}
	return -1
}

// TestGridSharesPasses: a grid of 2 σ × 3 λ applies to each candidate's
// columns what a grid of that candidate alone (a fit) applies, in one
// pass for all; a candidate stopped after the pass gets 0 and the others
// are unchanged.
func TestGridSharesPasses(t *testing.T) {
	const n, m, k = 60, 12, 2
	lambdas := []float64{1e-4, 1e-2, 1}
	p := newGridProblem(n, m, k, []float64{0.7, 1.5})
	all := p.grid(t, []int{0, 1}, lambdas)
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, m*all.NCols)
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	passes := 0
	pass := all.Pass
	all.Pass = func(ctx context.Context) ([]float64, error) { passes++; return pass(ctx) }
	dst := make([]float64, len(src))
	if err := all.MulTo(context.Background(), dst, src); err != nil {
		t.Fatal(err)
	}
	if passes != 1 || all.Iter != 1 {
		t.Fatalf("%d passes, Iter %d after one MulTo; want 1 and 1", passes, all.Iter)
	}
	for g := range 2 {
		for i, l := range lambdas {
			one := p.grid(t, []int{g}, []float64{l})
			c := all.Groups[g].Cands[i]
			in, want := make([]float64, m*k), make([]float64, m*k)
			GetCols(in, k, src, all.NCols, c.Col)
			if err := one.MulTo(context.Background(), want, in); err != nil {
				t.Fatal(err)
			}
			got := make([]float64, m*k)
			GetCols(got, k, dst, all.NCols, c.Col)
			for j := range got {
				if math.Abs(got[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
					t.Fatalf("σ %d, λ %g: W(p)[%d] = %v in the grid, %v alone", g, l, j, got[j], want[j])
				}
			}
		}
	}
	// The second σ's first λ stops after the next pass: it gets 0.
	stop := all.Groups[1].Cands[0]
	all.After = func(context.Context) error { stop.Live = false; return nil }
	dst2 := make([]float64, len(src))
	if err := all.MulTo(context.Background(), dst2, src); err != nil {
		t.Fatal(err)
	}
	for j := range dst2 {
		inStop := j%all.NCols >= stop.Col && j%all.NCols < stop.Col+k
		if inStop && dst2[j] != 0 || !inStop && dst2[j] != dst[j] {
			t.Fatalf("after the stop, W(p)[%d] = %v, before %v (stopped columns %d…%d)", j, dst2[j], dst[j], stop.Col, stop.Col+k-1)
		}
	}
}

// TestGridCGSolves: CG on a grid reaches each candidate's solution of
// its own system, (K_gᵀK_g/n + λ K_MM) α = K_gᵀ y / n, with α = Bβ
// followed by StepAlpha.
func TestGridCGSolves(t *testing.T) {
	const n, m, k = 80, 10, 1
	p := newGridProblem(n, m, k, []float64{1})
	lambdas := []float64{1e-3, 1e-1}
	grid := p.grid(t, []int{0}, lambdas)
	rng := rand.New(rand.NewPCG(3, 4))
	y := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	knm := p.knm[0]
	kty := make([]float64, m)
	for i := range n {
		for j := range m {
			kty[j] += knm[i*m+j] * y[i] / n
		}
	}
	b := make([]float64, m*grid.NCols)
	for _, c := range grid.Groups[0].Cands {
		bc := make([]float64, m)
		c.A.ApplyBTTo(bc, kty, 1)
		SetCols(b, grid.NCols, c.Col, bc, 1)
	}
	st := NewState(b, grid.NCols)
	if _, err := CG(context.Background(), grid, st, grid.NCols, 60, 0, func(st *State) error {
		grid.StepAlpha(st.Step)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range grid.Groups[0].Cands {
		// Residual of the normal equations at the carried α.
		ka := p.product(0, c.Alpha, 1)
		worst, scale := 0.0, 0.0
		for j := range m {
			r := ka[j]/n - kty[j]
			for l := range m {
				r += c.Lambda * p.kmm[0][j*m+l] * c.Alpha[l]
			}
			worst, scale = max(worst, math.Abs(r)), max(scale, math.Abs(kty[j]))
		}
		if worst > 1e-8*scale {
			t.Errorf("λ %g: the normal equations' residual at α is %.3g (‖b‖∞ %.3g)", c.Lambda, worst, scale)
		}
	}
}
