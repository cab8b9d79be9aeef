package beam

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
)

// writeWeightedStore writes a store of n rows, d features, one target and
// a weight column (0, 0.5, …, 2) with chunks of chunkRows rows.
func writeWeightedStore(t *testing.T, dir string, n, d, chunkRows int) [][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 1))
	cols := make([][]float64, d+2)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range n {
		s := 0.0
		for j := range d {
			v := rng.NormFloat64()
			cols[j][i] = v
			s += math.Sin(v * float64(j+1))
		}
		cols[d][i] = s + 0.1*rng.NormFloat64()
		cols[d+1][i] = float64(rng.IntN(5)) / 2
	}
	var feats []chunkstore.ColumnSpec
	for j := range d {
		feats = append(feats, chunkstore.ColumnSpec{Name: fmt.Sprintf("x%d", j), Type: "float64"})
	}
	w, err := chunkstore.Create(dir, feats, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}, {Name: "w", Type: "float64"}},
		chunkstore.Options{ChunkRows: chunkRows, Codec: "none", Weight: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// TestWeightedMatchesLocal: on Prism, a fit and a search over a store with
// a weight column minimise the weighted loss as ooc.Fit and ooc.Tune do
// on the same store: the same sum of weights, predictions within 1e-9
// (fit) and 1e-8 (search) relative; the workers read the weights.
func TestWeightedMatchesLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w.store")
	cols := writeWeightedStore(t, dir, 20_000, 3, 1024)
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ooc.Config{Centers: 80, Lambda: 1e-4, Iterations: 6, Seed: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}}
	local, err := ooc.Fit(context.Background(), r, cfg, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 60, Iterations: 4, Seed: 3}, Sigmas: []float64{1, 2.5},
		Lambdas: []float64{1e-3, 1e-5}, ValFraction: 0.1, SigmaHalving: -1}
	localTune, err := ooc.Tune(context.Background(), r, tc, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Store: dir, Partitions: 4, Temp: t.TempDir()}
	remote, err := Fit(context.Background(), cfg, ooc.RunOptions{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	remoteTune, err := Tune(context.Background(), tc, ooc.RunOptions{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 500
	x := make([]float64, rows*3)
	for i := range rows {
		for j := range 3 {
			x[i*3+j] = cols[j][i*37]
		}
	}
	compare := func(what string, a, b *ooc.Model, tol float64) {
		t.Helper()
		if a.Training().Weight != "w" || math.Abs(a.Training().WeightSum-b.Training().WeightSum) > 1e-12*b.Training().WeightSum {
			t.Fatalf("%s: weight %q summing to %v, locally %v", what, a.Training().Weight, a.Training().WeightSum, b.Training().WeightSum)
		}
		got, want := make([]float64, rows), make([]float64, rows)
		a.PredictTo(got, x, rows)
		b.PredictTo(want, x, rows)
		worst, scale := 0.0, 0.0
		for k := range want {
			worst, scale = math.Max(worst, math.Abs(got[k]-want[k])), math.Max(scale, math.Abs(want[k]))
		}
		if worst > tol*scale {
			t.Errorf("%s: predictions differ from the local ones by %.3g relative", what, worst/scale)
		}
	}
	compare("fit", remote, local, 1e-9)
	if remoteTune.Best != localTune.Best {
		t.Fatalf("the search picks %d on Beam, %d locally", remoteTune.Best, localTune.Best)
	}
	for i := range remoteTune.Candidates {
		compare(fmt.Sprintf("candidate %d", i), remoteTune.Candidates[i].Model(), localTune.Candidates[i].Model(), 1e-8)
	}
	// A fit that ignored the weights would differ by far more.
	r2, _ := chunkstore.Open(dir)
	defer r2.Close()
	if local.Training().WeightSum == float64(r2.Rows()) {
		t.Fatal("the weights sum to the row count: the test cannot tell weighted from unweighted")
	}
}

// TestLogisticMatchesLocal: on Prism, a fit of the logistic loss (its
// gradient and Hessian passes are pass.Jobs too) predicts what ooc.Fit
// predicts on the same store, within 1e-9 relative.
func TestLogisticMatchesLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b.store")
	cols := writeWeightedStore(t, dir, 10_000, 3, 1024)
	// Binary targets: the store's y above its median, rewritten.
	bin := filepath.Join(t.TempDir(), "bin.store")
	y := cols[3]
	med := append([]float64(nil), y...)
	slices.Sort(med)
	lab := make([]float64, len(y))
	for i, v := range y {
		if v > med[len(med)/2] {
			lab[i] = 1
		}
	}
	var feats []chunkstore.ColumnSpec
	for j := range 3 {
		feats = append(feats, chunkstore.ColumnSpec{Name: fmt.Sprintf("x%d", j), Type: "float64"})
	}
	w, err := chunkstore.Create(bin, feats, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}, {Name: "w", Type: "float64"}},
		chunkstore.Options{ChunkRows: 1024, Codec: "none", Weight: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append([][]float64{cols[0], cols[1], cols[2], lab, cols[4]}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := ooc.Config{Centers: 60, Lambda: 1e-4, Iterations: 5, Seed: 2, Loss: ooc.LossLogistic, NewtonSteps: 4,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}}
	r, err := chunkstore.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	local, err := ooc.Fit(context.Background(), r, cfg, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var jobs []JobStats
	remote, err := Fit(context.Background(), cfg, ooc.RunOptions{}, Options{Store: bin, Partitions: 4, Temp: t.TempDir(),
		OnJob: func(s JobStats) { jobs = append(jobs, s) }})
	if err != nil {
		t.Fatal(err)
	}
	// A gradient pass and 5 CG passes per step, the last step's line
	// search, and a gradient pass after each step shortened by its own.
	njobs := 1 + 4*(1+5) + 1
	for _, s := range local.Training().NewtonSteps[:3] {
		if s.Step < 1 {
			njobs++
		}
	}
	if len(jobs) != njobs || jobs[1].Kind != string(pass.LogisticGradient) || jobs[2].Kind != string(pass.LogisticHessianProduct) {
		t.Fatalf("%d jobs (then %s, %s), want %d: the centres' rows, then a gradient pass and 5 CG passes per Newton step, and the line search's", len(jobs), jobs[1].Kind, jobs[2].Kind, njobs)
	}
	const rows = 300
	x := make([]float64, rows*3)
	for i := range rows {
		for j := range 3 {
			x[i*3+j] = cols[j][i*29]
		}
	}
	got, want := make([]float64, rows), make([]float64, rows)
	remote.PredictTo(got, x, rows)
	local.PredictTo(want, x, rows)
	worst, scale := 0.0, 0.0
	for k := range want {
		worst, scale = math.Max(worst, math.Abs(got[k]-want[k])), math.Max(scale, math.Abs(want[k]))
	}
	if worst > 1e-9*scale {
		t.Errorf("predictions differ from the local logistic fit by %.3g relative", worst/scale)
	}
}
