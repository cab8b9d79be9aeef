package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel/internal/tile"
	"gonum.org/v1/gonum/mat"
)

// Tolerances. Float64: the block products compute r² = ‖x‖² + ‖c‖² − 2x·c,
// whose absolute error is a few ulp of ‖x‖² + ‖c‖² (≤ 2d/σ² ≈ 10 here), so
// about 1e-14 on r²; the square-root kernels amplify it by 1/(2r), and r
// between random points here is rarely below 1e-2; the vectorised exp adds
// a few ulp relative (TestExpAccuracy in internal/tile). That bounds the
// error by about 1e-13; 1e-12 leaves room (the tests pass at 1e-14 today).
// Float32: the same with ε = 6e-8 gives a few 1e-6 (they pass at 3e-6):
// 1e-5. BF16 (with the AMX cross term): x·c is within about 2⁻¹⁶ of
// Σ|xⱼcⱼ| (≤ d/σ² ≈ 5 here, tile.TestGramBF16), so r² within about 1e-4
// (the tests pass at about 1e-5): 1e-3. Polynomial values grow as
// (γ x·c + c₀)^degree, hence the relative term of within.
const (
	tol64   = 1e-12
	tol32   = 1e-5
	tolBF16 = 1e-3
)

func within(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*max(1, math.Abs(want))
}

func tolFor(p Precision) float64 {
	switch p {
	case Float32:
		return tol32
	case BF16:
		return tolBF16
	}
	return tol64
}

var precisions = []Precision{Float64, Float32, BF16}

func TestBlockToMatchesEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range []struct{ rows, m, d int }{
		{1, 1, 1}, {5, 17, 3}, {70, 33, 7}, {131, 50, 28}, {3, 100, 20},
	} {
		x := randMat(rng, sz.rows, sz.d)
		cen := randMat(rng, sz.m, sz.d)
		for _, k := range testKernels(sz.d, rng) {
			for _, p := range precisions {
				name := fmt.Sprintf("%v/%v/%dx%dx%d", k, p, sz.rows, sz.m, sz.d)
				cs := NewCenters(k, cen, sz.m, sz.d, p)
				ws := cs.NewWorkspace()
				dst := make([]float64, sz.rows*sz.m)
				cs.BlockTo(ws, dst, x, sz.rows)
				bad := 0
				for i := 0; i < sz.rows; i++ {
					for j := 0; j < sz.m; j++ {
						want := k.Eval(x[i*sz.d:(i+1)*sz.d], cen[j*sz.d:(j+1)*sz.d])
						if got := dst[i*sz.m+j]; !within(got, want, tolFor(p)) {
							if bad < 3 {
								t.Errorf("%s: K[%d,%d] = %v, want %v", name, i, j, got, want)
							}
							bad++
						}
					}
				}
			}
		}
	}
}

// TestKMM checks that BlockTo(C, C) is exactly symmetric with exactly 1 on
// the diagonal for distance kernels, and positive semi-definite to working
// precision (Gaussian, via a Cholesky with a tiny jitter).
func TestKMM(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range []struct{ m, d int }{{1, 1}, {37, 5}, {100, 28}, {150, 3}} {
		cen := randMat(rng, sz.m, sz.d)
		for _, k := range testKernels(sz.d, rng) {
			for _, p := range precisions {
				name := fmt.Sprintf("%v/%v/%dx%d", k, p, sz.m, sz.d)
				cs := NewCenters(k, cen, sz.m, sz.d, p)
				ws := cs.NewWorkspace()
				m := sz.m
				kmm := make([]float64, m*m)
				cs.BlockTo(ws, kmm, cen, m)
				for i := 0; i < m; i++ {
					if k.Kind.IsDistance() && kmm[i*m+i] != 1 {
						t.Errorf("%s: K[%d,%d] = %v, want exactly 1", name, i, i, kmm[i*m+i])
					}
					for j := 0; j < i; j++ {
						if kmm[i*m+j] != kmm[j*m+i] {
							t.Fatalf("%s: K[%d,%d] = %v != K[%d,%d] = %v", name, i, j, kmm[i*m+j], j, i, kmm[j*m+i])
						}
					}
				}
				if k.Kind == Gaussian {
					// Rounding perturbs each entry by about ε, so the
					// smallest eigenvalue by up to about m·ε: add that.
					eps := 0x1p-52
					if p != Float64 {
						eps = 0x1p-23
					}
					jit := float64(m) * eps
					a := mat.NewSymDense(m, nil)
					for i := 0; i < m; i++ {
						for j := i; j < m; j++ {
							a.SetSym(i, j, kmm[i*m+j])
						}
						a.SetSym(i, i, kmm[i*m+i]+jit)
					}
					var ch mat.Cholesky
					if !ch.Factorize(a) {
						t.Errorf("%s: K_MM + %g I is not positive definite", name, jit)
					}
				}
			}
		}
	}
}

// naive returns K(X,C) from Eval, dense rows × m.
func naive(k Kernel, x, cen []float64, rows, m, d int) []float64 {
	K := make([]float64, rows*m)
	for i := 0; i < rows; i++ {
		for j := 0; j < m; j++ {
			K[i*m+j] = k.Eval(x[i*d:(i+1)*d], cen[j*d:(j+1)*d])
		}
	}
	return K
}

func TestProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range []struct{ rows, m, d int }{
		{1, 1, 2}, {7, 19, 3}, {200, 45, 5}, {97, 130, 20},
	} {
		x := randMat(rng, sz.rows, sz.d)
		cen := randMat(rng, sz.m, sz.d)
		for _, k := range testKernels(sz.d, rng) {
			K := naive(k, x, cen, sz.rows, sz.m, sz.d)
			for _, p := range precisions {
				cs := NewCenters(k, cen, sz.m, sz.d, p)
				ws := cs.NewWorkspace()
				for _, nk := range []int{1, 3} {
					for _, mode := range []string{"u+v", "u", "v"} {
						name := fmt.Sprintf("%v/%v/%dx%dx%d/k=%d/%s", k, p, sz.rows, sz.m, sz.d, nk, mode)
						u := randMat(rng, sz.m, nk)
						v := randMat(rng, sz.rows, nk)
						switch mode {
						case "u":
							v = nil
						case "v":
							u = nil
						}
						w0 := randMat(rng, sz.m, nk)
						w := append([]float64(nil), w0...)
						cs.KtKvAdd(ws, w, x, sz.rows, u, v, nk)
						want, scale := dense(K, w0, u, v, sz.rows, sz.m, nk)
						for i := range w {
							if math.Abs(w[i]-want[i]) > tolFor(p)*scale[i] {
								t.Fatalf("%s: w[%d] = %v, want %v (scale %v)", name, i, w[i], want[i], scale[i])
							}
						}
						if u == nil {
							continue
						}
						out := make([]float64, sz.rows*nk)
						cs.KvTo(ws, out, x, sz.rows, u, nk)
						for i := 0; i < sz.rows; i++ {
							for l := 0; l < nk; l++ {
								var want, scale float64
								for j := 0; j < sz.m; j++ {
									want += K[i*sz.m+j] * u[j*nk+l]
									scale += math.Abs(K[i*sz.m+j] * u[j*nk+l])
								}
								if got := out[i*nk+l]; math.Abs(got-want) > tolFor(p)*max(scale, 1) {
									t.Fatalf("%s: KvTo[%d,%d] = %v, want %v", name, i, l, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// dense returns w0 + Kᵀ(K u + v) and, per entry, the sum of the absolute
// values of the terms (the scale of its rounding error).
func dense(K, w0, u, v []float64, rows, m, k int) (want, scale []float64) {
	s := make([]float64, rows*k)
	sa := make([]float64, rows*k)
	for i := 0; i < rows; i++ {
		for l := 0; l < k; l++ {
			for j := 0; j < m && u != nil; j++ {
				s[i*k+l] += K[i*m+j] * u[j*k+l]
				sa[i*k+l] += math.Abs(K[i*m+j] * u[j*k+l])
			}
			if v != nil {
				s[i*k+l] += v[i*k+l]
				sa[i*k+l] += math.Abs(v[i*k+l])
			}
		}
	}
	want = append([]float64(nil), w0...)
	scale = make([]float64, len(w0))
	for j := 0; j < m; j++ {
		for l := 0; l < k; l++ {
			scale[j*k+l] = 1 + math.Abs(w0[j*k+l])
			for i := 0; i < rows; i++ {
				want[j*k+l] += K[i*m+j] * s[i*k+l]
				scale[j*k+l] += math.Abs(K[i*m+j]) * sa[i*k+l]
			}
		}
	}
	return want, scale
}

func TestZeroAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const rows, m, d, k = 300, 200, 10, 2
	x, cen := randMat(rng, rows, d), randMat(rng, m, d)
	u, v, w := randMat(rng, m, k), randMat(rng, rows, k), make([]float64, m*k)
	out, blk := make([]float64, rows*k), make([]float64, rows*m)
	for _, p := range precisions {
		// With the input map (the solver's standardisation), as the fit
		// uses it.
		cs := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, cen, m, d, p).WithInputMap(randMat(rng, 1, d), randMat(rng, 1, d))
		ws := cs.NewWorkspace()
		cs.KtKvAdd(ws, w, x, rows, u, v, k) // grow to k
		if n := testing.AllocsPerRun(5, func() {
			cs.KtKvAdd(ws, w, x, rows, u, v, k)
			cs.KvTo(ws, out, x, rows, u, k)
			cs.BlockTo(ws, blk, x, rows)
		}); n != 0 {
			t.Errorf("%v: %v allocations per run, want 0", p, n)
		}
	}
}

func TestBytes(t *testing.T) {
	cen := make([]float64, 1000*10)
	for _, p := range precisions {
		cs := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, cen, 1000, 10, p)
		e := 8
		if p != Float64 {
			e = 4
		}
		lo := 1000*10*e + 2*len(cs.pb) // BF16: the bfloat16 panels too
		if got := cs.Bytes(); got < lo || got > 2*lo {
			t.Errorf("%v: Bytes = %d, want about %d", p, got, lo)
		}
		ws := cs.NewWorkspace()
		want := e*(len(ws.xs64)+len(ws.xn64)+len(ws.t64)) + 8*(len(ws.uT)+len(ws.wT)+len(ws.s))
		if p != Float64 {
			want = e*(len(ws.xs32)+len(ws.xn32)+len(ws.t32)) + 8*(len(ws.uT)+len(ws.wT)+len(ws.s)+len(ws.row)) + 2*len(ws.xb)
		}
		if got := cs.WorkspaceBytes(1); got != want {
			t.Errorf("%v: WorkspaceBytes(1) = %d, want %d", p, got, want)
		}
	}
}

func TestPanics(t *testing.T) {
	cen := make([]float64, 6)
	cs := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, cen, 3, 2, Float64)
	other := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, cen, 3, 2, Float64)
	for name, f := range map[string]func(){
		"shape":     func() { NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, cen, 4, 2, Float64) },
		"invalid":   func() { NewCenters(Kernel{Kind: Gaussian}, cen, 3, 2, Float64) },
		"workspace": func() { cs.BlockTo(other.NewWorkspace(), make([]float64, 3), cen[:2], 1) },
		"short w":   func() { cs.KtKvAdd(cs.NewWorkspace(), make([]float64, 2), cen[:2], 1, nil, []float64{1}, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestVariants runs the block products on every instruction-set variant
// this CPU has (the default run covers only the best one), against Eval
// and a dense computation.
func TestVariants(t *testing.T) {
	def := tile.Selected()
	defer tile.Use(def)
	rng := rand.New(rand.NewPCG(9, 10))
	const rows, m, d = 37, 53, 6
	x, cen := randMat(rng, rows, d), randMat(rng, m, d)
	for _, v := range tile.Available() {
		tile.Use(v)
		for _, k := range testKernels(d, rng) {
			K := naive(k, x, cen, rows, m, d)
			for _, p := range precisions {
				name := fmt.Sprintf("%v/%v/%v", v, k, p)
				cs := NewCenters(k, cen, m, d, p)
				ws := cs.NewWorkspace()
				blk := make([]float64, rows*m)
				cs.BlockTo(ws, blk, x, rows)
				for i := range blk {
					if !within(blk[i], K[i], tolFor(p)) {
						t.Fatalf("%s: K[%d] = %v, want %v", name, i, blk[i], K[i])
					}
				}
				u, vv := randMat(rng, m, 2), randMat(rng, rows, 2)
				w0 := randMat(rng, m, 2)
				w := append([]float64(nil), w0...)
				cs.KtKvAdd(ws, w, x, rows, u, vv, 2)
				want, scale := dense(K, w0, u, vv, rows, m, 2)
				for i := range w {
					if math.Abs(w[i]-want[i]) > tolFor(p)*scale[i] {
						t.Fatalf("%s: w[%d] = %v, want %v", name, i, w[i], want[i])
					}
				}
			}
		}
	}
}
