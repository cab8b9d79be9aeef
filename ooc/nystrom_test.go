package ooc_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestFitNystromMatchesDirect: with the Nyström preconditioner the
// conjugate gradient still solves the exact M-centre system: at full rank
// and at low rank (more iterations), with leverage-sampled centres, in
// float32 kernel blocks, FALKON's α equals the direct solution of
// (K_nMᵀK_nM + λnK_MM)α = K_nMᵀ(y − ȳ).
func TestFitNystromMatchesDirect(t *testing.T) {
	const n, d, M, lambda = 1000, 5, 240, 1e-3
	x, y := synth(n, d, 1)
	for _, c := range []struct {
		name  string
		cfg   ooc.Config
		iters int     // at most
		tol   float64 // α against the direct solution, relative
	}{
		{"full rank", ooc.Config{PrecondRank: M}, 50, 1e-6},
		// At half rank K_MM's small-eigenvalue directions stay
		// ill-conditioned: 400 iterations reach 4e-6 (uniform) and 4e-11
		// (leverage), where the full rank needs 32 for 3e-10.
		{"rank 120", ooc.Config{PrecondRank: 120}, 400, 1e-5},
		{"rank 120 leverage", ooc.Config{PrecondRank: 120, Sampling: ooc.SamplingLeverage, Candidates: 600}, 400, 1e-5},
		// float32 kernel blocks: the pass and K_MM·u carry float32
		// rounding, ≈ 1e-7 relative per entry, times the system's
		// condition at λ = 1e-4 (the direct solve is float64).
		{"rank 120 float32", ooc.Config{PrecondRank: 120, Precision: kernel.Float32}, 400, 2e-3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.iters > 50 && c.cfg.Sampling == "" {
				t.Skip("400 iterations: without -short (the leverage case runs)")
			}
			cfg := c.cfg
			cfg.Centers, cfg.Kernel, cfg.Lambda, cfg.Iterations, cfg.Tolerance, cfg.Seed = M, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, lambda, 400, 1e-13, 3
			cfg.Preconditioner = precond.MethodNystrom
			m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 300), cfg, ooc.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tr := m.Training()
			want := direct(t, m, x, y, lambda, 0)
			// α itself is ill-determined along K_MM's near-null
			// directions (κ(K_MM) ≈ 1e12 here), which change no
			// prediction: compare the functions on fresh points.
			xt, _ := synth(300, d, 99)
			got := make([]float64, 300)
			m.PredictTo(got, xt, 300)
			ref := directPredict(m, want, xt)
			for i := range ref { // relative to the function, not ȳ
				ref[i] -= m.TargetMean()[0]
				got[i] -= m.TargetMean()[0]
			}
			r := relDiff(got, ref)
			t.Logf("%d iterations (%s), predictions within %.3g of the direct solution's", tr.Iterations, tr.Status, r)
			if r > c.tol {
				t.Errorf("predictions differ from the direct solution's by %.3g relative (status %s after %d iterations)", r, tr.Status, tr.Iterations)
			}
			if c.tol <= 1e-5 && tr.Iterations > c.iters {
				t.Errorf("%d iterations, want at most %d", tr.Iterations, c.iters)
			}
			if tr.Jitter != precond.DefaultJitter || tr.Rank != M {
				t.Errorf("Training: jitter %g, rank %d; want %g and %d", tr.Jitter, tr.Rank, precond.DefaultJitter, M)
			}
		})
	}
}

// TestFitNystromAgreesWithCholesky: a multiclass fit and a logistic fit
// with the Nyström preconditioner at low rank reach the Cholesky
// preconditioner's model on the same centres (the same system, to the CG
// tolerance); Fit refuses a rank without the nystrom method, and tune
// refuses the method with the message the user sees.
func TestFitNystromAgreesWithCholesky(t *testing.T) {
	const n, d = 1500, 2
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float64, n*d)
	yc := make([]float64, n)
	yb := make([]float64, n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x[i*2], x[i*2+1] = a, b
		switch {
		case a > 0.5:
			yc[i] = 7
		case b > 0:
			yc[i] = 3
		default:
			yc[i] = 5
		}
		yb[i] = 1
		if a*a+b*b+0.3*rng.NormFloat64() > 1.4 {
			yb[i] = 2
		}
	}
	fit := func(y []float64, cfg ooc.Config) *ooc.Model {
		t.Helper()
		m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 200), cfg, ooc.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := ooc.Config{Centers: 150, Lambda: 1e-3, Iterations: 300, Tolerance: 1e-12, Seed: 2, Task: ooc.TaskMulticlass}
	ny := base
	ny.Preconditioner, ny.PrecondRank = precond.MethodNystrom, 120
	a, b := fit(yc, base), fit(yc, ny)
	pa, pb := make([]float64, 3*n), make([]float64, 3*n)
	a.PredictTo(pa, x, n)
	b.PredictTo(pb, x, n)
	// K_MM of 150 centres in 2-D has eigenvalues down to 1e-12·‖K‖: the
	// Nyström preconditioner leaves them ill-conditioned and CG stalls
	// near a residual of 1e-5 (DefaultNystromJitter), where the Cholesky
	// one reaches 1e-12.
	if r := relDiff(pb, pa); r > 1e-3 {
		t.Errorf("multiclass: scores differ from the Cholesky fit's by %.3g (iterations %d against %d)", r, b.Training().Iterations, a.Training().Iterations)
	}
	lbase := ooc.Config{Centers: 60, Lambda: 1e-3, Iterations: 100, Tolerance: 1e-13, Seed: 5, Loss: ooc.LossLogistic, NewtonSteps: 8}
	lny := lbase
	lny.Preconditioner, lny.PrecondRank, lny.Iterations = precond.MethodNystrom, 40, 200
	la, lb := fit(yb, lbase), fit(yb, lny)
	sa, sb := la.Training().NewtonSteps, lb.Training().NewtonSteps
	oa, ob := sa[len(sa)-1].Objective, sb[len(sb)-1].Objective
	// The Cholesky fit's objective carries its jitter εM·‖α‖² (1e-14 of
	// the penalty); the rest is the Newton and CG tolerance, which the
	// 2-D kernel's conditioning limits as above.
	if math.Abs(oa-ob) > 1e-5*math.Abs(oa) {
		t.Errorf("logistic: objective %.12g with nystrom, %.12g with cholesky; steps %+v and %+v", ob, oa, sb, sa)
	}
	_, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, yb, 1, 200), ooc.Config{Centers: 50, PrecondRank: 10, Preconditioner: precond.MethodCholesky}, ooc.RunOptions{})
	var ce *ooc.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a rank is for the nystrom preconditioner, not cholesky") {
		t.Errorf("rank without nystrom: %v", err)
	}
	err = ooc.ValidateTune(ooc.TuneConfig{Base: ny}, ooc.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "the nystrom preconditioner is for the final fit") {
		t.Errorf("tune with nystrom: %v", err)
	}
}

// TestNystromMemoryEstimate: the plan's estimate counts the Nyström
// basis, not an M × M buffer.
func TestNystromMemoryEstimate(t *testing.T) {
	x, y := synth(1000, 4, 1)
	plan, err := ooc.Plan(stream.NewMemSource(x, 4, y, 1, 100), ooc.Config{Centers: 500, Preconditioner: precond.MethodNystrom, PrecondRank: 50}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := plan.MemoryWith(precond.Float64).Precond, precond.NystromBytes(500, 50); got != want {
		t.Fatalf("Memory.Precond = %d, want %d", got, want)
	}
}

// TestNystromBasisCache: RunOptions.PrecondCache writes the basis, a
// second fit reads it and gives the same model bit for bit, and a
// damaged, truncated or foreign file is never used: the fit says why,
// builds the basis again (the same model) and writes it.
func TestNystromBasisCache(t *testing.T) {
	x, y := synth(1500, 4, 3)
	path := filepath.Join(t.TempDir(), "m.ckpt.basis")
	cfg := ooc.Config{Centers: 200, Lambda: 1e-4, Iterations: 8, Seed: 1, Preconditioner: precond.MethodNystrom, PrecondRank: 50}
	fit := func(cfg ooc.Config) *ooc.Model {
		t.Helper()
		m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 4, y, 1, 250), cfg, ooc.RunOptions{PrecondCache: path})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := fit(cfg)
	if got := first.Training().PrecondCache; got != "written" {
		t.Fatalf("first fit: PrecondCache %q, want written", got)
	}
	check := func(name, want string) {
		t.Helper()
		m := fit(cfg)
		if got := m.Training().PrecondCache; !strings.Contains(got, want) {
			t.Errorf("%s: PrecondCache %q, want it to contain %q", name, got, want)
		}
		if !slices.Equal(m.Alpha(), first.Alpha()) {
			t.Errorf("%s: the model differs from the first fit's", name)
		}
	}
	check("reread", "read")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damage := func(b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flipped := slices.Clone(data)
	flipped[len(flipped)/2] ^= 0x10
	damage(flipped)
	check("a flipped bit", "not used: checksum mismatch: the file is damaged; written")
	damage(data[:len(data)-100])
	check("truncated", "bytes, want")
	damage(data)
	other := cfg
	other.Seed = 2
	m := fit(other) // other centres: the file must not be used
	if got := m.Training().PrecondCache; got != path+" not used: it holds the basis of other centres or settings; written" {
		t.Errorf("other seed: PrecondCache %q", got)
	}
	damage([]byte("hello"))
	check("not a basis", "truncated header")
}

// TestNystromKMMProgress: with the Nyström preconditioner every CG
// iteration reports its λ·K_MM·u term (StageKMM) after the iteration's
// pass, by blocks of K_MM's rows, rising to 1; a context that ends
// during the term stops the fit with its error.
func TestNystromKMMProgress(t *testing.T) {
	const n, d, M = 4000, 3, 2500 // three blocks of K_MM's rows
	x, y := synth(n, d, 5)
	cfg := ooc.Config{Centers: M, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, Lambda: 1e-4, Iterations: 3,
		Seed: 1, Preconditioner: precond.MethodNystrom, PrecondRank: 200}
	var got []string
	last := map[int]float64{}
	run := ooc.RunOptions{Progress: func(p ooc.Progress) {
		switch p.Stage {
		case ooc.StageKMM:
			if p.Fraction <= last[p.Iteration] || p.Fraction > 1 {
				t.Errorf("iteration %d: K_MM·u fraction %g after %g", p.Iteration, p.Fraction, last[p.Iteration])
			}
			last[p.Iteration] = p.Fraction
			if p.Fraction == 1 {
				got = append(got, fmt.Sprintf("kmm %d/%d", p.Iteration, p.Iterations))
			}
		case ooc.StageIterate:
			if p.Chunks == 0 && p.Iteration > 0 {
				got = append(got, fmt.Sprintf("iteration %d", p.Iteration))
			}
		}
	}}
	if _, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 500), cfg, run); err != nil {
		t.Fatal(err)
	}
	want := []string{"kmm 1/3", "iteration 1", "kmm 2/3", "iteration 2", "kmm 3/3", "iteration 3"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run.Progress = func(p ooc.Progress) {
		if p.Stage == ooc.StageKMM && p.Iteration == 2 {
			cancel()
		}
	}
	_, err := ooc.Fit(ctx, stream.NewMemSource(x, d, y, 1, 500), cfg, run)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during K_MM·u: err %v, want context.Canceled", err)
	}
}

// TestNystromForgedBasis: a cached Nyström basis whose Q holds an Inf,
// with its checksum recomputed (so it is read), makes α NaN: the fit
// fails with ErrNotFinite and says to delete the file, instead of
// returning a model of NaNs.
func TestNystromForgedBasis(t *testing.T) {
	x, y := synth(800, 3, 5)
	path := filepath.Join(t.TempDir(), "m.ckpt.basis")
	cfg := ooc.Config{Centers: 100, Lambda: 1e-4, Iterations: 5, Seed: 1, Preconditioner: precond.MethodNystrom, PrecondRank: 20}
	fit := func() (*ooc.Model, error) {
		return ooc.Fit(context.Background(), stream.NewMemSource(x, 3, y, 1, 200), cfg, ooc.RunOptions{PrecondCache: path})
	}
	if _, err := fit(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// "FKNB" | version | key [32] | M | r | trace | residual | μ | S (r·r) | Q (M·r) | CRC-32C
	r := int(binary.LittleEndian.Uint64(data[48:56]))
	q := 80 + 8*r*r
	binary.LittleEndian.PutUint64(data[q:], math.Float64bits(math.Inf(1)))
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := fit()
	if !errors.Is(err, ooc.ErrNotFinite) || !strings.Contains(err.Error(), "delete the file so that it is rebuilt") {
		t.Fatalf("a forged basis: model %v, err %v", m != nil, err)
	}
	t.Log(err)
}
