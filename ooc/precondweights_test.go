package ooc_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestPrecondRowWeights measures whether FALKON's preconditioner should
// see strongly non-uniform row weights of the squared loss (issue 24):
// the error of the predictions against the direct weighted Nyström
// solution after t CG iterations, with the unweighted preconditioner (what
// Fit does) and with A = chol(T H Tᵀ/M + λI), H the centres' own row
// weights over their mean, or with H the weights smoothed by the kernel
// around each centre. The curves are logged (go test -run
// TestPrecondRowWeights -v ./ooc/) and recorded in bench/PASSES.md.
func TestPrecondRowWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement: 168 fits")
	}
	const n, d, M = 4000, 3, 200
	const lambda, eps = 1e-6, 1e-12
	x, y := synth(n, d, 131)
	xt, _ := synth(500, d, 132)
	// The weights are functions of the raw features, so that the hooks
	// gets the centres' weights from the centres (NoStandardize).
	for _, wc := range []struct {
		name string
		w    func(row []float64) float64
	}{
		{"exp(2·z0): 1e-3 to 1e3", func(r []float64) float64 { return math.Exp(2 * (r[0] - 3)) }},
		{"50 on a tail, 1 elsewhere", func(r []float64) float64 {
			if r[1] > 5 {
				return 50
			}
			return 1
		}},
		{"lognormal(0, 2) noise", nil},
		{"ones", func([]float64) float64 { return 1 }},
	} {
		t.Run(wc.name, func(t *testing.T) {
			w := make([]float64, n)
			for i := range w {
				if wc.w != nil {
					w[i] = wc.w(x[i*d : (i+1)*d])
				} else {
					// A hash of the row: the hook recomputes it from the centre.
					w[i] = math.Exp(2 * hashNormal(x[i*d:(i+1)*d]))
				}
			}
			weightOf := func(row []float64) float64 {
				if wc.w != nil {
					return wc.w(row)
				}
				return math.Exp(2 * hashNormal(row))
			}
			cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Lambda: lambda, Jitter: eps,
				Seed: 3, NoStandardize: true}
			// variant 0: FALKON's unweighted preconditioner (H = 1);
			// 1: the centres' own weights; 2: the weights smoothed by the
			// kernel around each centre, Σᵢ wᵢ k(xᵢ, c_j) / Σᵢ k(xᵢ, c_j);
			// 3: Fit's own (smoothedWeights: the same with Σᵢ k(xᵢ, c_j)
			// estimated from the centres, nothing beyond the weighted
			// right-hand side's pass).
			fit := func(iters int, variant int) *ooc.Model {
				switch variant {
				case 0:
					defer ooc.SetCentreRowWeightsForTest(func(c []float64, m, d int) []float64 {
						h := make([]float64, m)
						for j := range h {
							h[j] = 1
						}
						return h
					})()
				case 1:
					defer ooc.SetCentreRowWeightsForTest(func(c []float64, m, d int) []float64 {
						h := make([]float64, m)
						for j := range h {
							h[j] = weightOf(c[j*d : (j+1)*d])
						}
						return h
					})()
				case 2:
					defer ooc.SetCentreRowWeightsForTest(func(c []float64, m, d int) []float64 {
						h := make([]float64, m)
						for j := range h {
							num, den := 0.0, 0.0
							for i := range n {
								k := cfg.Kernel.Eval(x[i*d:(i+1)*d], c[j*d:(j+1)*d])
								num += w[i] * k
								den += k
							}
							h[j] = num / den
						}
						return h
					})()
				}
				cfg := cfg
				cfg.Iterations = iters
				m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 500).WithWeights(w, "w"), cfg, ooc.RunOptions{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			ref := fit(1, 0)
			want := directWeighted(t, ref, x, y, w, lambda, eps, xt)
			errAt := func(m *ooc.Model) float64 {
				p := make([]float64, len(want))
				m.PredictTo(p, xt, len(want))
				return relDiff(p, want)
			}
			var line strings.Builder
			var last, at160 [4]float64
			for _, it := range []int{10, 20, 40, 80, 160, 320} {
				for v := range last {
					last[v] = errAt(fit(it, v))
				}
				if it == 160 {
					at160 = last
				}
				fmt.Fprintf(&line, " %d: %.2g / %.2g / %.2g / %.2g;", it, last[0], last[1], last[2], last[3])
			}
			t.Logf("error against the direct solution, preconditioner unweighted / centres' weights / smoothed weights / Fit's (smoothed, density from the centres), by iterations:%s", line.String())
			// Every preconditioner solves the same system; Fit's is
			// measured to get closer sooner than the unweighted one.
			for v, e := range last {
				if !(e < 0.05) {
					t.Errorf("preconditioner %d: error %.3g after 320 iterations", v, e)
				}
			}
			if !(last[3] < 1e-3) || !(at160[3] <= at160[0]) {
				t.Errorf("Fit's preconditioner: error %.3g after 160 iterations (%.3g after 320), the unweighted one's %.3g", at160[3], last[3], at160[0])
			}
		})
	}
}

// hashNormal is a deterministic pseudo-normal value of a row.
func hashNormal(row []float64) float64 {
	h := uint64(1469598103934665603)
	for _, v := range row {
		h ^= math.Float64bits(v)
		h *= 1099511628211
		h ^= h >> 29
	}
	u1 := (float64(h>>11) + 0.5) / (1 << 53)
	h *= 0x9E3779B97F4A7C15
	u2 := (float64(h>>11) + 0.5) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
