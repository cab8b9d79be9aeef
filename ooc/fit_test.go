package ooc_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// synth returns n rows of d features (with different scales and offsets,
// so that standardisation matters) and a smooth noisy target.
func synth(n, d int, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x = make([]float64, n*d)
	y = make([]float64, n)
	for i := range n {
		s := 0.0
		for j := range d {
			v := rng.NormFloat64()
			x[i*d+j] = 3 + float64(j+1)*v
			s += math.Sin(v * float64(j+1) / 2)
		}
		y[i] = s + 0.1*rng.NormFloat64() + 5
	}
	return x, y
}

// direct solves the Nyström system (K_nMᵀK_nM + λn(K_MM + εMI)) α =
// K_nMᵀ(y − ȳ) densely with gonum, on the model's own standardisation
// and centres, with the reference kernel Eval.
func direct(t *testing.T, m *ooc.Model, x, y []float64, lambda, eps float64) []float64 {
	t.Helper()
	n, d, M := len(y), m.D(), m.M()
	z := standardized(m, x)
	knm := mat.NewDense(n, M, nil)
	for i := range n {
		for j := range M {
			knm.Set(i, j, m.Kernel().Eval(z[i*d:(i+1)*d], m.Centers()[j*d:(j+1)*d]))
		}
	}
	kmm := mat.NewDense(M, M, nil)
	for i := range M {
		for j := range M {
			kmm.Set(i, j, m.Kernel().Eval(m.Centers()[i*d:(i+1)*d], m.Centers()[j*d:(j+1)*d]))
		}
	}
	var h mat.Dense
	h.Mul(knm.T(), knm)
	for i := range M {
		kmm.Set(i, i, kmm.At(i, i)+eps*float64(M))
	}
	kmm.Scale(lambda*float64(n), kmm)
	h.Add(&h, kmm)
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(n)
	yc := make([]float64, n)
	for i, v := range y {
		yc[i] = v - mean
	}
	var rhs mat.VecDense
	rhs.MulVec(knm.T(), mat.NewVecDense(n, yc))
	var alpha mat.VecDense
	if err := alpha.SolveVec(&h, &rhs); err != nil {
		t.Fatalf("direct solve: %v", err)
	}
	return alpha.RawVector().Data
}

// directPredict returns the predictions of coefficients alpha on m's
// centres for the raw rows x, with the reference kernel Eval: ȳ +
// Σⱼ αⱼ k(z, cⱼ), z the standardised row.
func directPredict(m *ooc.Model, alpha, x []float64) []float64 {
	d, M := m.D(), m.M()
	z := standardized(m, x)
	out := make([]float64, len(x)/d)
	for i := range out {
		s := m.TargetMean()[0]
		for j := range M {
			s += alpha[j] * m.Kernel().Eval(z[i*d:(i+1)*d], m.Centers()[j*d:(j+1)*d])
		}
		out[i] = s
	}
	return out
}

func standardized(m *ooc.Model, x []float64) []float64 {
	d := m.D()
	z := append([]float64(nil), x...)
	if m.FeatureMean() == nil {
		return z
	}
	for i := range z {
		j := i % d
		s := m.FeatureStd()[j]
		if s == 0 {
			s = 1
		}
		z[i] = (z[i] - m.FeatureMean()[j]) / s
	}
	return z
}

func relDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// FALKON with enough iterations equals the direct solution of the Nyström
// system, for several kernels.
func TestFitMatchesDirectNystrom(t *testing.T) {
	const n, d, M = 2000, 5, 200
	x, y := synth(n, d, 1)
	for _, kern := range []kernel.Kernel{
		{Kind: kernel.Gaussian, Sigma: 2},
		{Kind: kernel.Laplacian, Sigma: 3},
		{Kind: kernel.Matern52, Sigmas: []float64{1, 2, 3, 2, 1}},
	} {
		t.Run(string(kern.Kind), func(t *testing.T) {
			const lambda, eps = 1e-4, 1e-12
			src := stream.NewMemSource(x, d, y, 1, 300)
			m, err := ooc.Fit(context.Background(), src, ooc.Config{
				Centers: M, Kernel: kern, Lambda: lambda, Jitter: eps, Iterations: 200, Tolerance: 1e-13, Seed: 3,
			}, ooc.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := direct(t, m, x, y, lambda, eps)
			// Tolerance: the 1e-6 relative; CG is run to a
			// residual of 1e-13 on a system of condition ~1e2–1e4.
			if r := relDiff(m.Alpha(), want); r > 1e-6 {
				t.Errorf("α differs from the direct solution by %.3g relative (status %s after %d iterations)", r, m.Training().Status, m.Training().Iterations)
			}
			// Predictions on fresh points.
			xt, _ := synth(300, d, 99)
			got := make([]float64, 300)
			m.PredictTo(got, xt, 300)
			ref := directPredict(m, want, xt)
			if r := relDiff(got, ref); r > 1e-6 {
				t.Errorf("predictions differ from the direct solution's by %.3g relative", r)
			}
		})
	}
}

// With M = n the Nyström estimator is exact kernel ridge regression:
// f = K(x, X)(K + λnI)⁻¹(y − ȳ) + ȳ.
func TestFitAllCentersIsExactKRR(t *testing.T) {
	const n, d = 300, 3
	x, y := synth(n, d, 2)
	const lambda = 1e-3
	kern := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, 64), ooc.Config{
		Centers: n, Kernel: kern, Lambda: lambda, Jitter: 1e-14, Iterations: 300, Tolerance: 1e-14,
	}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z := standardized(m, x)
	kk := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := kern.Eval(z[i*d:(i+1)*d], z[j*d:(j+1)*d])
			if i == j {
				v += lambda * n
			}
			kk.SetSym(i, j, v)
		}
	}
	mean := 0.0
	for _, v := range y {
		mean += v / n
	}
	yc := mat.NewVecDense(n, nil)
	for i, v := range y {
		yc.SetVec(i, v-mean)
	}
	var c mat.VecDense
	if err := c.SolveVec(kk, yc); err != nil {
		t.Fatal(err)
	}
	xt, _ := synth(100, d, 5)
	zt := standardized(m, xt)
	got := make([]float64, 100)
	m.PredictTo(got, xt, 100)
	want := make([]float64, 100)
	for i := range 100 {
		s := mean
		for j := range n {
			s += c.AtVec(j) * kern.Eval(zt[i*d:(i+1)*d], z[j*d:(j+1)*d])
		}
		want[i] = s
	}
	if r := relDiff(got, want); r > 1e-6 {
		t.Errorf("M = n predictions differ from exact KRR by %.3g relative", r)
	}
}

// The model is bit for bit the same for any number of workers (partials
// are reduced in chunk order); different chunk sizes group the sums
// differently, so they agree to rounding only.
func TestFitWorkersAndChunks(t *testing.T) {
	const n, d = 3000, 4
	x, y := synth(n, d, 3)
	cfg := ooc.Config{Centers: 150, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, Lambda: 1e-5, Iterations: 15, Seed: 9}
	fit := func(workers, chunk int) *ooc.Model {
		m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, d, y, 1, chunk), cfg, ooc.RunOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ref := fit(1, 256)
	for _, w := range []int{2, 8} {
		m := fit(w, 256)
		for i := range ref.Alpha() {
			if math.Float64bits(m.Alpha()[i]) != math.Float64bits(ref.Alpha()[i]) {
				t.Fatalf("%d workers: α[%d] = %v, 1 worker %v", w, i, m.Alpha()[i], ref.Alpha()[i])
			}
		}
	}
	// Chunk sizes change how sums are grouped, so results differ by
	// rounding. Unconverged CG amplifies rounding (at λ = 1e-5, 60
	// iterations with residual 1e-5 differ by 1e-5 between chunkings), so
	// compare converged fits. α = T⁻¹A⁻¹β passes through T⁻¹, whose norm
	// is the square root of K_MM's condition number, so α itself is
	// ill-determined; the predictions are well conditioned and must agree.
	cfg.Lambda, cfg.Iterations, cfg.Tolerance = 1e-3, 300, 1e-12
	pred := func(m *ooc.Model) []float64 {
		out := make([]float64, n)
		m.PredictTo(out, x, n)
		return out
	}
	refPred := pred(fit(2, 256))
	for _, chunk := range []int{100, 1000, 3000} {
		m := fit(2, chunk)
		r := relDiff(pred(m), refPred)
		if r > 1e-9 {
			t.Errorf("chunk %d rows: predictions differ by %.3g relative", chunk, r)
		}
	}
}

func TestFitClassification(t *testing.T) {
	const n, d = 2000, 2
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float64, n*d)
	yb := make([]float64, n)
	yc := make([]float64, n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x[i*2], x[i*2+1] = a, b
		yb[i] = 1 // classes 1 and 2, like the Skin data set
		if a*a+b*b > 1.4 {
			yb[i] = 2
		}
		switch {
		case a > 0.5:
			yc[i] = 7
		case b > 0:
			yc[i] = 3
		default:
			yc[i] = 5
		}
	}
	train := func(y []float64, task ooc.Task) *ooc.Model {
		m, err := ooc.Fit(context.Background(), stream.NewMemSource(x[:1500*d], d, y[:1500], 1, 200),
			ooc.Config{Centers: 200, Lambda: 1e-6, Iterations: 20, Task: task}, ooc.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mb := train(yb, ooc.TaskAuto)
	if mb.Task() != ooc.TaskBinary || mb.Classes()[0] != 1 || mb.Classes()[1] != 2 {
		t.Fatalf("auto task = %s %v, want binary [1 2]", mb.Task(), mb.Classes())
	}
	ev, err := mb.Evaluate(context.Background(), stream.NewMemSource(x[1500*d:], d, yb[1500:], 1, 100), ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *ev.ErrorRate > 0.05 || *ev.AUC < 0.98 || ev.Rows != 500 {
		t.Errorf("binary: error %.3f, AUC %.3f on %d rows", *ev.ErrorRate, *ev.AUC, ev.Rows)
	}
	mc := train(yc, ooc.TaskMulticlass)
	if mc.K() != 3 {
		t.Fatalf("multiclass outputs = %d, want 3", mc.K())
	}
	ev, err = mc.Evaluate(context.Background(), stream.NewMemSource(x[1500*d:], d, yc[1500:], 1, 100), ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *ev.ErrorRate > 0.05 {
		t.Errorf("multiclass error %.3f", *ev.ErrorRate)
	}
	scores := make([]float64, 3)
	mc.PredictTo(scores, []float64{2, 0}, 1)
	if got := mc.Label(scores); got != 7 {
		t.Errorf("label of (2, 0) = %v, want 7", got)
	}
}

func TestModelSaveLoad(t *testing.T) {
	x, y := synth(500, 3, 5)
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 3, y, 1, 100), ooc.Config{Centers: 50, Iterations: 5}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.falkon")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]float64, 500), make([]float64, 500)
	m.PredictTo(a, x, 500)
	l.PredictTo(b, x, 500)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("prediction %d: loaded %v, saved %v", i, b[i], a[i])
		}
	}
	data, _ := os.ReadFile(path)
	write := func(b []byte) string {
		p := filepath.Join(t.TempDir(), "bad.falkon")
		os.WriteFile(p, b, 0o644)
		return p
	}
	newer := bytes.Clone(data)
	newer[4] = 9
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0x10
	for _, c := range []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"truncated", data[:len(data)-7], ooc.ErrFormat, "the trailer is missing or damaged (truncated or extended file)"},
		{"tiny", data[:10], ooc.ErrFormat, "10 bytes is too short (truncated?)"},
		{"flipped", flipped, ooc.ErrFormat, "checksum mismatch"},
		{"newer", newer, ooc.ErrFormat, ""},
		{"foreign", []byte(strings.Repeat("PAR1", 20)), ooc.ErrFormat, `wrong magic number "PAR1"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(c.data)
			_, err := ooc.Load(p)
			if err == nil || !strings.Contains(err.Error(), "model file "+p+": ") || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, p, c.msg)
			}
		})
	}
	// A newer version is checked after the checksum, so re-seal the file.
	resealed := reseal(t, m, 9)
	_, err = ooc.Load(write(resealed))
	if !errors.Is(err, ooc.ErrVersion) || !strings.Contains(err.Error(), "format version 9 was written by a newer falkon-ooc (this build reads versions 1–3); upgrade falkon-ooc") {
		t.Fatalf("newer version: err = %v", err)
	}
}

// reseal writes m with another version byte and a valid checksum.
func reseal(t *testing.T, m *ooc.Model, version byte) []byte {
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	b[4] = version
	body := b[:len(b)-16]
	crc := crc32c(body)
	b[len(b)-8], b[len(b)-7], b[len(b)-6], b[len(b)-5] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
	return b
}

func TestFitErrors(t *testing.T) {
	x, y := synth(100, 2, 6)
	src := stream.NewMemSource(x, 2, y, 1, 50)
	noY := stream.NewMemSource(x, 2, nil, 0, 50)
	for _, c := range []struct {
		name string
		src  stream.Source
		cfg  ooc.Config
		want string
	}{
		{"lambda", src, ooc.Config{Lambda: -1}, "invalid configuration: lambda must be > 0, got -1"},
		{"sigma", src, ooc.Config{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: -2}}, "invalid configuration: kernel: sigma must be > 0 and finite, got -2"},
		{"centers", src, ooc.Config{Centers: -1}, "invalid configuration: centers must be ≥ 0 (0: the default), got -1"},
		{"too many centers", src, ooc.Config{Centers: 101}, "invalid configuration: centers (M = 101) must not exceed the number of training rows (n = 100)"},
		{"no targets", noY, ooc.Config{}, "the data has no target column: fit needs targets (a source with a target column)"},
		{"binary with 3 classes", stream.NewMemSource(x, 2, func() []float64 {
			v := make([]float64, 100)
			for i := range v {
				v[i] = float64(i % 3)
			}
			return v
		}(), 1, 50), ooc.Config{Task: ooc.TaskBinary}, `binary classification needs exactly two classes in target "y0", found 3: [0 1 2]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ooc.Fit(context.Background(), c.src, c.cfg, ooc.RunOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	// K_MM not positive definite even with the jitter: a linear kernel in
	// 2-D has rank 2, so 50 centres cannot be factorised without jitter.
	_, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 50, Kernel: kernel.Kernel{Kind: kernel.Linear}, Jitter: 1e-300}, ooc.RunOptions{})
	if !errors.Is(err, precond.ErrNotPD) {
		t.Fatalf("rank-deficient K_MM: err = %v, want precond.ErrNotPD", err)
	}
}

func TestFitCancel(t *testing.T) {
	x, y := synth(2000, 3, 8)
	ctx, cancel := context.WithCancel(context.Background())
	iters := 0
	_, err := ooc.Fit(ctx, stream.NewMemSource(x, 3, y, 1, 100), ooc.Config{
		Centers: 100, Iterations: 50,
	}, ooc.RunOptions{Progress: func(p ooc.Progress) {
		if p.Stage == ooc.StageIterate && p.Chunks == 0 {
			iters = p.Iteration
			if iters == 2 {
				cancel()
			}
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
