package ooc_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// With a linear kernel in 3-D, K_MM of 50 centres has rank 3: the
// Cholesky preconditioner needs a jitter, the eigen preconditioner keeps
// the 3 directions, and the Nyström estimator is then exactly linear
// ridge regression, w = (ZᵀZ + λnI)⁻¹ Zᵀ(y − ȳ) on the standardised Z.
func TestEigenPreconditionerRankDeficient(t *testing.T) {
	for _, method := range []precond.Method{precond.MethodEigen, precond.MethodPivoted} {
		t.Run(string(method), func(t *testing.T) { testRankDeficient(t, method) })
	}
}

func testRankDeficient(t *testing.T, method precond.Method) {
	const n, d, lambda = 1000, 3, 1e-3
	rng := rand.New(rand.NewPCG(31, 1))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		for j := range d {
			x[i*d+j] = rng.NormFloat64()*float64(j+1) + 2
		}
		y[i] = x[i*d] - 2*x[i*d+1] + 0.5*x[i*d+2] + 0.1*rng.NormFloat64()
	}
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 128), ooc.Config{
		Centers: 50, Kernel: kernel.Kernel{Kind: kernel.Linear}, Lambda: lambda,
		Preconditioner: method, Iterations: 50, Tolerance: 1e-12,
	}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Training().Rank != 3 {
		t.Fatalf("rank %d, want 3", m.Training().Rank)
	}
	z := standardized(m, x)
	zm := mat.NewDense(n, d, z)
	var ztz mat.Dense
	ztz.Mul(zm.T(), zm)
	for j := range d {
		ztz.Set(j, j, ztz.At(j, j)+lambda*n)
	}
	mean := 0.0
	for _, v := range y {
		mean += v / n
	}
	yc := mat.NewVecDense(n, nil)
	for i, v := range y {
		yc.SetVec(i, v-mean)
	}
	var zty, w mat.VecDense
	zty.MulVec(zm.T(), yc)
	if err := w.SolveVec(&ztz, &zty); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n)
	m.PredictTo(got, x, n)
	want := make([]float64, n)
	for i := range n {
		want[i] = mean + mat.Dot(zm.RowView(i), &w)
	}
	if r := relDiff(got, want); r > 1e-6 {
		t.Errorf("predictions differ from linear ridge regression by %.3g relative", r)
	}
}

// Duplicate rows: 2000 rows that are 40 distinct points repeated, with M
// close to (and above) the number of distinct rows. Both preconditioners
// fit without failure and predict equally well.
func TestDuplicateRows(t *testing.T) {
	const distinct, n, d = 40, 2000, 2
	rng := rand.New(rand.NewPCG(41, 1))
	base := make([]float64, distinct*d)
	for i := range base {
		base[i] = rng.NormFloat64()
	}
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		p := rng.IntN(distinct)
		copy(x[i*d:], base[p*d:(p+1)*d])
		y[i] = math.Sin(2*x[i*d]) + x[i*d+1] + 0.05*rng.NormFloat64()
	}
	src := stream.NewMemSource(x, d, y, 1, 200)
	var rmse []float64
	for _, method := range []precond.Method{precond.MethodCholesky, precond.MethodEigen} {
		for _, centers := range []int{35, 60} {
			m, err := ooc.Fit(context.Background(), src, ooc.Config{
				Centers: centers, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5}, Lambda: 1e-6, Preconditioner: method,
			}, ooc.RunOptions{})
			if err != nil {
				t.Fatalf("%s, M = %d: %v", method, centers, err)
			}
			if m.M() > distinct {
				t.Errorf("%s, M = %d: %d centres kept, more than the %d distinct rows", method, centers, m.M(), distinct)
			}
			// Duplicates are replaced by other rows while the data has
			// distinct ones to give: M = 35 distinct centres, and for
			// M = 60 all 40 distinct rows.
			if want := min(centers, distinct); m.M() != want {
				t.Errorf("%s, M = %d: %d centres, want %d (duplicates replaced)", method, centers, m.M(), want)
			}
			ev, err := m.Evaluate(context.Background(), src, ooc.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, M = %d: %d distinct centres, rank %d, training RMSE %.4f", method, centers, m.M(), m.Training().Rank, *ev.RMSE)
			rmse = append(rmse, *ev.RMSE)
		}
	}
	// Same accuracy with either preconditioner at each M (duplicates are
	// merged before factorising, so the jitter does no harm); with 60
	// draws (40 distinct centres) the fit reaches the noise level.
	for i := range 2 {
		if math.Abs(rmse[i]-rmse[i+2]) > 1e-6 {
			t.Errorf("M = %d: cholesky RMSE %.6f, eigen %.6f", []int{35, 60}[i], rmse[i], rmse[i+2])
		}
	}
	if rmse[1] > 0.1 {
		t.Errorf("M = 60: RMSE %.4f, want < 0.1", rmse[1])
	}
}

// The pivoted Cholesky preconditioner gives the eigen preconditioner's
// model on rank-deficient K_MM (a linear kernel in 3-D: rank 3; a
// polynomial kernel of degree 2 in 2-D: rank 6): both solve the Nyström
// problem over the same span of kernel functions, so with CG converged
// their predictions agree to 1e-8 although their α differ (pivoted puts
// weight on r pivot centres only, eigen spreads it).
func TestPivotedMatchesEigen(t *testing.T) {
	for _, c := range []struct {
		kern kernel.Kernel
		d    int
		rank int
	}{
		{kernel.Kernel{Kind: kernel.Linear}, 3, 3},
		{kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Coef0: 1}, 2, 6},
	} {
		t.Run(string(c.kern.Kind), func(t *testing.T) {
			const n = 800
			x, y := synth(n, c.d, 5)
			src := stream.NewMemSource(x, c.d, y, 1, 100)
			var preds [][]float64
			for _, method := range []precond.Method{precond.MethodEigen, precond.MethodPivoted} {
				m, err := ooc.Fit(context.Background(), src, ooc.Config{
					Centers: 60, Kernel: c.kern, Lambda: 1e-4, Preconditioner: method,
					Iterations: 100, Tolerance: 1e-14, Seed: 2,
				}, ooc.RunOptions{})
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				if m.Training().Rank != c.rank {
					t.Fatalf("%s: rank %d, want %d", method, m.Training().Rank, c.rank)
				}
				xt, _ := synth(200, c.d, 6)
				p := make([]float64, 200)
				m.PredictTo(p, xt, 200)
				preds = append(preds, p)
			}
			r := relDiff(preds[1], preds[0])
			t.Logf("pivoted vs eigen predictions: %.3g relative", r)
			if r > 1e-8 {
				t.Errorf("pivoted predictions differ from eigen's by %.3g relative", r)
			}
		})
	}
}

// TestCentresReport: the sampling stage's last report says how many
// distinct centres were drawn and how many draws repeated a row.
func TestCentresReport(t *testing.T) {
	const distinct, n, d = 30, 1000, 2
	rng := rand.New(rand.NewPCG(43, 1))
	base := make([]float64, distinct*d)
	for i := range base {
		base[i] = rng.NormFloat64()
	}
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		p := rng.IntN(distinct)
		copy(x[i*d:], base[p*d:(p+1)*d])
		y[i] = x[i*d] + 0.1*rng.NormFloat64()
	}
	src := stream.NewMemSource(x, d, y, 1, 100)
	var got ooc.Progress
	_, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 50, Iterations: 2, Preconditioner: precond.MethodPivoted},
		ooc.RunOptions{Progress: func(p ooc.Progress) {
			if p.Stage == ooc.StageSample && p.Centers > 0 {
				got = p
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Centers != distinct || got.Duplicates == 0 {
		t.Errorf("sampling report: %d centres, %d duplicates; want %d and some", got.Centers, got.Duplicates, distinct)
	}
}
