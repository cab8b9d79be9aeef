package precond_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// denseB returns B (m × m) column by column through ApplyBTo, and Bᵀ
// through ApplyBTTo.
func denseB(p *precond.Preconditioner) (b, bt *mat.Dense) {
	m := p.M()
	b, bt = mat.NewDense(m, m, nil), mat.NewDense(m, m, nil)
	for j := range m {
		e, col, colt := make([]float64, m), make([]float64, m), make([]float64, m)
		e[j] = 1
		p.ApplyBTo(col, e, 1)
		p.ApplyBTTo(colt, e, 1)
		for i := range m {
			b.Set(i, j, col[i])
			bt.Set(i, j, colt[i])
		}
	}
	return b, bt
}

// symEigenvalues returns the eigenvalues, ascending, of the symmetric
// part of the m × m matrix a.
func symEigenvalues(t *testing.T, a mat.Matrix, m int) []float64 {
	t.Helper()
	s := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		t.Fatal("eigendecomposition failed")
	}
	return es.Values(nil)
}

// weighted returns D K D (d nil: K) as a dense matrix.
func weighted(kmm *mat.SymDense, d []float64) *mat.Dense {
	m := kmm.SymmetricDim()
	k := mat.NewDense(m, m, nil)
	for i := range m {
		for j := range m {
			v := kmm.At(i, j)
			if d != nil {
				v *= d[i] * d[j]
			}
			k.Set(i, j, v)
		}
	}
	return k
}

// TestNystromFullRank: at r = M the Nyström preconditioner is FALKON's
// without jitter: Bᵀ(K'²/M + λK')B = I for K' = D K_MM D, in the
// weighted coordinates (B = D B'), Bᵀ is ApplyBTTo, and with centre
// weights h, Bᵀ(K'HK'/M + λK')B = I. WithLambda gives what a new build at
// that λ gives, bit for bit.
func TestNystromFullRank(t *testing.T) {
	const m, lambda = 30, 1e-2
	w := make([]float64, m)
	h := make([]float64, m)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range w {
		w[i] = 0.5 + float64(i%5)/4
		h[i] = 0.25 + rng.Float64()
	}
	for _, c := range []struct {
		name    string
		d       []float64
		centres bool
	}{{"plain", nil, false}, {"leverage weights", w, false}, {"centre weights", nil, true}, {"both", w, true}} {
		t.Run(c.name, func(t *testing.T) {
			opt := precond.Options{Method: precond.MethodNystrom, Rank: m, Weights: c.d, Seed: 3}
			p, err := precond.New(gaussKMM(m, 2), lambda, opt)
			if err != nil {
				t.Fatal(err)
			}
			if p.Rank() != m || p.NystromRank() != m || !p.ExplicitLambda() {
				t.Fatalf("Rank %d, NystromRank %d, ExplicitLambda %v; want %d, %d, true", p.Rank(), p.NystromRank(), p.ExplicitLambda(), m, m)
			}
			if r := p.NystromResidual(); r > 1e-12 {
				t.Fatalf("full rank misses %g of the trace", r)
			}
			hh := make([]float64, m)
			for i := range hh {
				hh[i] = 1
			}
			if c.centres {
				copy(hh, h)
				if p, err = p.WithCenterWeights(h, lambda); err != nil {
					t.Fatal(err)
				}
			}
			kt := weighted(gaussKMM(m, 2), c.d)
			hk := mat.DenseCopyOf(kt)
			for i := range m {
				for j := range m {
					hk.Set(i, j, hh[i]*hk.At(i, j))
				}
			}
			var sys, lk mat.Dense
			sys.Mul(kt, hk)
			sys.Scale(1/float64(m), &sys)
			lk.Scale(lambda, kt)
			sys.Add(&sys, &lk)
			b, bt := denseB(p)
			// Undo D: the test's system is in the weighted coordinates.
			for i := range m {
				for j := range m {
					if c.d != nil {
						b.Set(i, j, b.At(i, j)/c.d[i])
						bt.Set(j, i, bt.At(j, i)/c.d[i])
					}
				}
			}
			var tmp, out mat.Dense
			tmp.Mul(&sys, b)
			out.Mul(bt, &tmp)
			for i := range m {
				for j := range m {
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(out.At(i, j)-want) > 1e-7 {
						t.Fatalf("Bᵀ(K'HK'/M + λK')B[%d][%d] = %v, want %v", i, j, out.At(i, j), want)
					}
				}
			}
		})
	}
	p, err := precond.New(gaussKMM(m, 2), 0.5, precond.Options{Method: precond.MethodNystrom, Rank: m})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.WithLambda(lambda)
	if err != nil {
		t.Fatal(err)
	}
	want, err := precond.New(gaussKMM(m, 2), lambda, precond.Options{Method: precond.MethodNystrom, Rank: m})
	if err != nil {
		t.Fatal(err)
	}
	src := make([]float64, 2*m)
	for i := range src {
		src[i] = math.Sin(float64(i))
	}
	if g, w := apply(q, src, 2), apply(want, src, 2); !slices.Equal(g, w) {
		t.Fatal("WithLambda differs from a new build at that λ")
	}
}

// TestNystromLowRank: at r < M the basis is orthonormal, its trace
// deficit is what NystromResidual reports, B is D[UCUᵀ + √c(I − UUᵀ)]
// with ApplyBTTo its adjoint, and BᵀHB is far better conditioned than
// H = K²/M + λK itself.
func TestNystromLowRank(t *testing.T) {
	const m, r, lambda = 200, 80, 1e-4
	kmm := gaussKMM(m, 9)
	p, err := precond.New(gaussKMM(m, 9), lambda, precond.Options{Method: precond.MethodNystrom, Rank: r, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Rank() != m || p.NystromRank() != r {
		t.Fatalf("Rank %d, NystromRank %d; want %d, %d", p.Rank(), p.NystromRank(), m, r)
	}
	q, sm, _, _, mu := p.NystromBasis()
	um := mat.NewDense(m, r, q)
	var utu mat.Dense
	utu.Mul(um.T(), um)
	for i := range r {
		for j := range r {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(utu.At(i, j)-want) > 1e-8 {
				t.Fatalf("QᵀQ[%d][%d] = %v", i, j, utu.At(i, j))
			}
		}
	}
	trace, approx := 0.0, 0.0
	for i := range m {
		trace += kmm.At(i, i)
	}
	for i := range r {
		approx += sm[i*r+i]
	}
	if got, want := p.NystromResidual(), (trace-approx)/trace; math.Abs(got-want) > 1e-9 || got > 0.05 {
		t.Fatalf("NystromResidual %v, trace deficit %v (want equal and below 5%% at r = %d)", got, want, r)
	}
	// H and BᵀHB.
	kd := weighted(kmm, nil)
	var hm, lk mat.Dense
	hm.Mul(kd, kd)
	hm.Scale(1/float64(m), &hm)
	lk.Scale(lambda, kd)
	hm.Add(&hm, &lk)
	b, bt := denseB(p)
	var tmp, g mat.Dense
	tmp.Mul(&hm, b)
	g.Mul(bt, &tmp)
	if !mat.EqualApprox(bt, b.T(), 1e-10) {
		t.Fatal("ApplyBTTo is not the adjoint of ApplyBTo")
	}
	cond := func(a mat.Matrix) (lo, hi float64) {
		v := symEigenvalues(t, a, m)
		return v[0], v[m-1]
	}
	hlo, hhi := cond(&hm)
	glo, ghi := cond(&g)
	t.Logf("κ(H) = %.3g, κ(BᵀHB) = %.3g, λ_max(BᵀHB) = %.3g", hhi/hlo, ghi/glo, ghi)
	// The bottom of BᵀHB's spectrum is K_MM's numerically null
	// directions (no right-hand side reaches them); its top is the
	// complement's residual, which μ bounds.
	if !(ghi/glo < 1e-2*hhi/hlo) || ghi > 100 {
		t.Fatalf("BᵀHB: eigenvalues [%g, %g] (H: [%g, %g]); want κ 100 × smaller than H's and the top below 100", glo, ghi, hlo, hhi)
	}
	// BBᵀ from its formula: Q G⁻¹ Qᵀ + c(I − QQᵀ), G = S²/M + λS, c =
	// 1/(μ²/M + λμ).
	smat := mat.NewDense(r, r, sm)
	var s2, gm, gi mat.Dense
	s2.Mul(smat, smat)
	s2.Scale(1/float64(m), &s2)
	gm.Scale(lambda, smat)
	gm.Add(&gm, &s2)
	if err := gi.Inverse(&gm); err != nil {
		t.Fatal(err)
	}
	// μ: the top eigenvalue of the residual on Q's complement,
	// (I − QQᵀ)K(I − QQᵀ), from its power steps (New passes K·x).
	var pk, pkp mat.Dense
	proj := mat.NewDense(m, m, nil)
	var qqt mat.Dense
	qqt.Mul(um, um.T())
	for i := range m {
		for j := range m {
			v := -qqt.At(i, j)
			if i == j {
				v++
			}
			proj.Set(i, j, v)
		}
	}
	pk.Mul(proj, kd)
	pkp.Mul(&pk, proj)
	rho := symEigenvalues(t, &pkp, m)[m-1]
	t.Logf("μ = %.4g, the complement residual's top eigenvalue %.4g", mu, rho)
	if !(mu <= rho*(1+1e-9) && mu >= 0.5*rho) {
		t.Fatalf("μ = %g, want within [ρ/2, ρ] of ρ = %g", mu, rho)
	}
	c := 1 / (mu*mu/m + lambda*mu)
	var qg, qgq, uut, bbt mat.Dense
	qg.Mul(um, &gi)
	qgq.Mul(&qg, um.T())
	uut.Mul(um, um.T())
	bbt.Mul(b, bt)
	worst := 0.0
	for i := range m {
		for j := range m {
			id := 0.0
			if i == j {
				id = 1
			}
			want := qgq.At(i, j) + c*(id-uut.At(i, j))
			worst = max(worst, math.Abs(bbt.At(i, j)-want)/c)
		}
	}
	// The core adds a floor of max(εM, 1e-12·max S_ii) to S, which this
	// formula leaves out.
	if worst > 1e-6 {
		t.Fatalf("BBᵀ differs from Q G⁻¹ Qᵀ + c(I − QQᵀ) by %.3g·c", worst)
	}
}

// TestNystromRankDeficient: duplicate centres and a rank-3 kernel end the
// factorisation at their rank, with finite factors, and a seed gives the
// same pivots every time.
func TestNystromRankDeficient(t *testing.T) {
	const m = 60
	k := gaussKMM(m/2, 4)
	dup := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			dup.SetSym(i, j, k.At(i%(m/2), j%(m/2)))
		}
	}
	p, err := precond.New(dup, 1e-3, precond.Options{Method: precond.MethodNystrom, Rank: m})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.NystromRank(); r > m/2 {
		t.Fatalf("duplicated centres: rank %d, want at most %d", r, m/2)
	}
	out := apply(p, make([]float64, m), 1)
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("entry %d is %v", i, v)
		}
	}
	p, err = precond.New(linearKMM(m, 8), 1e-3, precond.Options{Method: precond.MethodNystrom, Rank: 20})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.NystromRank(); r != 3 {
		t.Fatalf("rank-3 kernel: rank %d, want 3", r)
	}
	a, _ := precond.New(gaussKMM(m, 4), 1e-3, precond.Options{Method: precond.MethodNystrom, Rank: 10, Seed: 7})
	b, _ := precond.New(gaussKMM(m, 4), 1e-3, precond.Options{Method: precond.MethodNystrom, Rank: 10, Seed: 7})
	ua, _, _, _, _ := a.NystromBasis()
	ub, _, _, _, _ := b.NystromBasis()
	if !slices.Equal(ua, ub) {
		t.Fatal("the same seed gave another basis")
	}
}
