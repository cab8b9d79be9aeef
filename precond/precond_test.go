package precond_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// gaussKMM returns the Gaussian kernel matrix of m random points in 3-D.
func gaussKMM(m int, seed uint64) *mat.SymDense {
	rng := rand.New(rand.NewPCG(seed, 2))
	pts := make([][3]float64, m)
	for i := range pts {
		for j := range 3 {
			pts[i][j] = rng.NormFloat64()
		}
	}
	k := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			s := 0.0
			for l := range 3 {
				d := pts[i][l] - pts[j][l]
				s += d * d
			}
			k.SetSym(i, j, math.Exp(-s/2))
		}
	}
	return k
}

// linearKMM returns the linear kernel matrix of m random points in 3-D:
// rank 3.
func linearKMM(m int, seed uint64) *mat.SymDense {
	rng := rand.New(rand.NewPCG(seed, seed))
	x := mat.NewDense(m, 3, nil)
	for i := range m {
		for j := range 3 {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	var k mat.SymDense
	k.SymOuterK(1, x)
	return &k
}

func TestFactorsAndApplications(t *testing.T) {
	const m, k, lambda = 40, 3, 1e-3
	for _, weighted := range []bool{false, true} {
		kmm := gaussKMM(m, 1)
		orig := mat.NewSymDense(m, nil)
		orig.CopySym(kmm)
		var w []float64
		if weighted {
			rng := rand.New(rand.NewPCG(3, 3))
			w = make([]float64, m)
			for i := range w {
				w[i] = 0.5 + rng.Float64()
			}
		}
		const eps = 1e-10
		p, err := precond.New(kmm, lambda, precond.Options{Jitter: eps, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		// Reference: Dense D, K̃ = D K D + εMI, T = chol(K̃), A = chol(TTᵀ/M + λI).
		d := mat.NewDiagDense(m, nil)
		for i := range m {
			d.SetDiag(i, 1)
			if w != nil {
				d.SetDiag(i, w[i])
			}
		}
		var kt mat.Dense
		kt.Mul(d, orig)
		kt.Mul(&kt, d)
		for i := range m {
			kt.Set(i, i, kt.At(i, i)+eps*m)
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(m, kt.RawMatrix().Data)) {
			t.Fatal("reference Cholesky failed")
		}
		var tu mat.TriDense
		ch.UTo(&tu)
		var s mat.Dense
		s.Mul(&tu, tu.T())
		s.Scale(1.0/m, &s)
		for i := range m {
			s.Set(i, i, s.At(i, i)+lambda)
		}
		var ca mat.Cholesky
		if !ca.Factorize(mat.NewSymDense(m, s.RawMatrix().Data)) {
			t.Fatal("reference Cholesky of A failed")
		}
		var au mat.TriDense
		ca.UTo(&au)
		// B = D T⁻¹ A⁻¹.
		var ti, ai, b mat.Dense
		if err := ti.Inverse(&tu); err != nil {
			t.Fatal(err)
		}
		if err := ai.Inverse(&au); err != nil {
			t.Fatal(err)
		}
		b.Mul(d, &ti)
		b.Mul(&b, &ai)

		rng := rand.New(rand.NewPCG(4, 4))
		x := make([]float64, m*k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		xm := mat.NewDense(m, k, append([]float64(nil), x...))
		for _, c := range []struct {
			name  string
			apply func(dst, src []float64, k int)
			ref   mat.Matrix
		}{
			{"B", p.ApplyBTo, &b},
			{"Bᵀ", p.ApplyBTTo, b.T()},
		} {
			got := make([]float64, len(x))
			c.apply(got, x, k)
			var want mat.Dense
			want.Mul(c.ref, xm)
			// Tolerance: both sides solve with condition numbers of
			// about 1e6 here; 1e-8 relative leaves a wide margin.
			if !mat.EqualApprox(mat.NewDense(m, k, got), &want, 1e-8*mat.Norm(&want, math.Inf(1))) {
				t.Errorf("weighted=%v: %s x differs from the dense reference", weighted, c.name)
			}
		}
		if got, want := p.Bytes(), int64(m*m+2*m+len(w))*8; got != want {
			t.Errorf("Bytes() = %d, want %d", got, want)
		}
	}
}

func TestNotPositiveDefinite(t *testing.T) {
	kmm := mat.NewSymDense(3, []float64{1, 2, 0, 2, 1, 0, 0, 0, 1}) // eigenvalue -1
	_, err := precond.New(kmm, 1e-3, precond.Options{})
	if !errors.Is(err, precond.ErrNotPD) {
		t.Fatalf("err = %v, want ErrNotPD", err)
	}
	var e *precond.NotPDError
	if !errors.As(err, &e) || e.Column != 1 {
		t.Fatalf("err = %#v, want a *NotPDError at column 1", err)
	}
	want := "precond: the kernel matrix of the centres (K_MM + εMI, ε = 1e-13) is not positive definite at column 1: " +
		"the centres are (nearly) duplicated or the kernel is too wide for them; raise the jitter ε, use fewer centres, or a smaller sigma"
	if err.Error() != want {
		t.Errorf("message:\n got %q\nwant %q", err.Error(), want)
	}
	if !strings.Contains((&precond.NotPDError{Matrix: "TTᵀ/M + λI", Lambda: 1e-9}).Error(), "raise lambda") {
		t.Error("A's message does not say to raise lambda")
	}
}

// B inverts the approximation it preconditions: Bᵀ(K̃²/M + λK̃)B = I_r
// with K̃ = D K_MM D, for both methods (Cholesky up to its jitter; eigen
// exactly, on the range it keeps), also for a rank-deficient K_MM.
func TestBInvertsApproximation(t *testing.T) {
	const m, lambda = 30, 1e-2
	rank3 := func() *mat.SymDense { return linearKMM(m, 7) }
	w := make([]float64, m)
	for i := range w {
		w[i] = 0.5 + float64(i%5)/4
	}
	for _, c := range []struct {
		name      string
		kmm       func() *mat.SymDense
		opt       precond.Options
		rank      int
		tolerance float64
	}{
		{"cholesky", func() *mat.SymDense { return gaussKMM(m, 2) }, precond.Options{Jitter: 1e-14}, m, 1e-6},
		{"cholesky weighted", func() *mat.SymDense { return gaussKMM(m, 2) }, precond.Options{Jitter: 1e-14, Weights: w}, m, 1e-6},
		// float32: T and A carry relative errors of a few float32 units
		// (u = 6e-8) times the growth of the factorisation, and BᵀHB
		// inherits them times κ(T) (B = T⁻¹A⁻¹ against H's K̃ = TᵀT). With
		// the float32 jitter ε = 1e-5, κ(K̃) ≤ ‖K‖/(εM) ≤ 1e5, so
		// κ(T) ≤ 316 and u·κ(T)·M ≈ 6e-4 bounds it; 1e-4 is between that
		// bound and the 2e-6 measured here, and 100 times float64's.
		{"cholesky float32", func() *mat.SymDense { return gaussKMM(m, 2) }, precond.Options{Precision: precond.Float32}, m, 1e-4},
		{"cholesky float32 weighted", func() *mat.SymDense { return gaussKMM(m, 2) }, precond.Options{Precision: precond.Float32, Weights: w}, m, 1e-4},
		{"eigen", func() *mat.SymDense { return gaussKMM(m, 2) }, precond.Options{Method: precond.MethodEigen}, -1, 1e-8},
		{"eigen rank 3", rank3, precond.Options{Method: precond.MethodEigen}, 3, 1e-8},
		{"eigen rank 3 weighted", rank3, precond.Options{Method: precond.MethodEigen, Weights: w}, 3, 1e-8},
		{"pivoted", func() *mat.SymDense { return gaussKMM(m, 2) }, precond.Options{Method: precond.MethodPivoted}, -1, 1e-8},
		{"pivoted rank 3", rank3, precond.Options{Method: precond.MethodPivoted}, 3, 1e-8},
		{"pivoted rank 3 weighted", rank3, precond.Options{Method: precond.MethodPivoted, Weights: w}, 3, 1e-8},
	} {
		t.Run(c.name, func(t *testing.T) {
			kmm := c.kmm()
			kt := mat.NewDense(m, m, nil)
			for i := range m {
				for j := range m {
					v := kmm.At(i, j)
					if c.opt.Weights != nil {
						v *= w[i] * w[j]
					}
					kt.Set(i, j, v)
				}
			}
			p, err := precond.New(kmm, lambda, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			r := p.Rank()
			if c.rank > 0 && r != c.rank {
				t.Fatalf("rank %d, want %d", r, c.rank)
			}
			if c.opt.Method == "" || c.opt.Method == precond.MethodCholesky {
				// K̃ includes the jitter (negligible in float64, εM = 3e-4
				// in float32).
				for i := range m {
					kt.Set(i, i, kt.At(i, i)+p.Jitter()*m)
				}
			}
			// H = K̃²/M + λK̃ in the weighted coordinates.
			var h mat.Dense
			h.Mul(kt, kt)
			h.Scale(1/float64(m), &h)
			var lk mat.Dense
			lk.Scale(lambda, kt)
			h.Add(&h, &lk)
			// Columns of B: B e_j.
			bm := mat.NewDense(m, r, nil)
			for j := range r {
				e := make([]float64, r)
				e[j] = 1
				col := make([]float64, m)
				p.ApplyBTo(col, e, 1)
				for i := range m {
					// ApplyBTo includes D; the test's H is in the weighted
					// coordinates, so undo D here.
					v := col[i]
					if c.opt.Weights != nil {
						v /= w[i]
					}
					bm.Set(i, j, v)
				}
			}
			var bh, g mat.Dense
			bh.Mul(bm.T(), &h)
			g.Mul(&bh, bm)
			worst := 0.0
			for i := range r {
				for j := range r {
					want := 0.0
					if i == j {
						want = 1
					}
					worst = max(worst, math.Abs(g.At(i, j)-want))
				}
			}
			t.Logf("max |BᵀHB − I| = %.2g", worst)
			for i := range r {
				for j := range r {
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(g.At(i, j)-want) > c.tolerance {
						t.Fatalf("(BᵀHB)[%d,%d] = %v, want %v", i, j, g.At(i, j), want)
					}
				}
			}
		})
	}
}

// Build computes K_MM into the factors' buffer: it must give the same
// preconditioner as New on the same K_MM, bit for bit in float64.
func TestBuildMatchesNew(t *testing.T) {
	const m, lambda = 300, 1e-3
	ref := gaussKMM(m, 5)
	rows := func(dst []float64, lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range m {
				dst[(i-lo)*m+j] = ref.At(i, j)
			}
		}
	}
	for _, prec := range []precond.Precision{precond.Float64, precond.Float32} {
		for _, method := range []precond.Method{precond.MethodCholesky, precond.MethodEigen} {
			kmm := mat.NewSymDense(m, nil)
			kmm.CopySym(ref)
			opt := precond.Options{Precision: prec, Method: method, Jitter: 1e-6}
			p1, err := precond.New(kmm, lambda, opt)
			if err != nil {
				t.Fatal(err)
			}
			var fractions []float64
			opt.Progress = func(f float64) { fractions = append(fractions, f) }
			p2, err := precond.Build(context.Background(), m, rows, lambda, opt)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, m)
			for i := range x {
				x[i] = math.Sin(float64(i))
			}
			y1, y2 := make([]float64, m), make([]float64, m)
			p1.ApplyBTo(y1, x[:p1.Rank()], 1)
			p2.ApplyBTo(y2, x[:p2.Rank()], 1)
			for i := range y1 {
				if y1[i] != y2[i] {
					t.Fatalf("%s %s: B x differs at %d: %v vs %v", prec, method, i, y1[i], y2[i])
				}
			}
			if method == precond.MethodEigen {
				continue
			}
			if p2.Precision() != prec || p2.Bytes() != precond.Bytes(m, prec)-8*m {
				t.Errorf("%s: Precision %s, Bytes %d (Bytes(m) = %d)", prec, p2.Precision(), p2.Bytes(), precond.Bytes(m, prec))
			}
			if len(fractions) < 3 || fractions[0] != 0 || fractions[len(fractions)-1] != 1 {
				t.Fatalf("%s: progress %v", prec, fractions)
			}
			for i := 1; i < len(fractions); i++ {
				if fractions[i] < fractions[i-1] {
					t.Fatalf("%s: progress goes back: %v", prec, fractions)
				}
			}
		}
	}
}

func TestBuildCancelled(t *testing.T) {
	const m = 600
	ref := gaussKMM(m, 6)
	rows := func(dst []float64, lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range m {
				dst[(i-lo)*m+j] = ref.At(i, j)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	opt := precond.Options{Jitter: 1e-6, Progress: func(f float64) {
		if f > 0.4 {
			cancel()
		}
	}}
	if _, err := precond.Build(ctx, m, rows, 1e-3, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := precond.Build(ctx, m, rows, 1e-3, precond.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled before the first row", err)
	}
}

func TestBytesAndMaxM(t *testing.T) {
	if got, want := precond.Bytes(50000, precond.Float32), int64(50000*50000*4+3*8*50000); got != want {
		t.Errorf("Bytes(5e4, float32) = %d, want %d", got, want)
	}
	if got, want := precond.Bytes(1000, precond.Float64), int64(1000*1000*8+3*8*1000); got != want {
		t.Errorf("Bytes(1000, float64) = %d, want %d", got, want)
	}
	for _, p := range []precond.Precision{precond.Float64, precond.Float32} {
		for _, budget := range []int64{0, 100, 8 << 20, 12 << 30} {
			m := precond.MaxM(budget, p)
			if precond.Bytes(m, p) > budget && m > 0 || precond.Bytes(m+1, p) <= budget {
				t.Errorf("MaxM(%d, %s) = %d: Bytes %d, Bytes(m+1) %d", budget, p, m, precond.Bytes(m, p), precond.Bytes(m+1, p))
			}
		}
	}
}
