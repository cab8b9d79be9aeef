package beam

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// classStore writes a store of n rows of d features and a 0/1 class, and
// returns the same kind of rows (another seed) as a validation source.
func classStore(t *testing.T, dir string, n, d, chunkRows int) stream.Source {
	t.Helper()
	gen := func(n int, seed uint64) ([][]float64, []float64, []float64) {
		rng := rand.New(rand.NewPCG(seed, 3))
		cols := make([][]float64, d+1)
		for j := range cols {
			cols[j] = make([]float64, n)
		}
		x := make([]float64, n*d)
		for i := range n {
			s := 0.0
			for j := range d {
				v := rng.NormFloat64()
				cols[j][i], x[i*d+j] = v, v
				s += math.Sin(1.5 * v)
			}
			if s+0.3*rng.NormFloat64() > 0 {
				cols[d][i] = 1
			}
		}
		return cols, x, cols[d]
	}
	cols, _, _ := gen(n, 1)
	var feats []chunkstore.ColumnSpec
	for j := range d {
		feats = append(feats, chunkstore.ColumnSpec{Name: fmt.Sprintf("x%d", j), Type: "float64"})
	}
	w, err := chunkstore.Create(dir, feats, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}},
		chunkstore.Options{ChunkRows: chunkRows, Codec: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, vx, vy := gen(n/4, 2)
	return stream.NewMemSource(vx, d, vy, 1, 256)
}

// TestLogisticTuneCentresOnBeam: a search of the logistic loss on Beam
// draws its centres with a rows job, as Tune does; the driver reads no
// chunk of the store (its validation rows are a source of its own, scored
// locally), and every candidate's centres and predictions are the local
// search's.
func TestLogisticTuneCentresOnBeam(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "class.store")
	val := classStore(t, dir, 6000, 3, 512)
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 40, Iterations: 3, Seed: 4, Loss: ooc.LossLogistic, NewtonSteps: 2,
		Task: ooc.TaskBinary}, Sigmas: []float64{1, 2}, Lambdas: []float64{1e-3, 1e-5}}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	local, err := ooc.Tune(ctx, r, tc, ooc.RunOptions{Validation: val})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 3, Temp: t.TempDir(),
		OnJob: func(s JobStats) { kinds = append(kinds, s.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var reads atomic.Int64
	res, err := ooc.Tune(ctx, countingStore{e.Source(), &reads}, tc, ooc.RunOptions{Executor: e, Validation: val})
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 0 || len(kinds) < 2 || kinds[0] != kindRows || kinds[1] != string(pass.LogisticGradient) {
		t.Fatalf("the driver read %d chunks of the store; jobs %v", reads.Load(), kinds)
	}
	tx := make([]float64, 3*50)
	for i := range tx {
		tx[i] = float64(i%13)/6 - 1
	}
	for i, c := range res.Candidates {
		lc := local.Candidates[i]
		if !slices.Equal(c.Model().Centers(), lc.Model().Centers()) {
			t.Fatalf("candidate %d: the centres differ from the local search's", i)
		}
		got, want := make([]float64, 50), make([]float64, 50)
		c.Model().PredictTo(got, tx, 50)
		lc.Model().PredictTo(want, tx, 50)
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-9*(1+math.Abs(want[j])) {
				t.Fatalf("candidate %d: score %v, locally %v", i, got[j], want[j])
			}
		}
	}
}

// TestExactVarianceOnBeam: fit --uncertainty-method exact on Beam forms
// its Gram matrix K_nMᵀK_nM with a job (the validation rows are a source
// of the driver's own, scored locally): the driver reads no chunk of the
// store, and with one partition (the sums in chunk order, as locally) the
// uncertainty is the local fit's, bit for bit.
func TestExactVarianceOnBeam(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "reg.store")
	writeStore(t, dir, 8000, 3, 512, 6)
	vdir := filepath.Join(t.TempDir(), "val.store")
	writeStore(t, vdir, 1500, 3, 256, 7)
	v, err := chunkstore.Open(vdir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	cfg := ooc.Config{Centers: 50, Lambda: 1e-4, Iterations: 10, Seed: 3, Task: ooc.TaskRegression,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, Uncertainty: ooc.UncertaintyExact, UncertaintyRank: 10}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	local, err := ooc.Fit(ctx, r, cfg, ooc.RunOptions{Validation: v})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 1, Temp: t.TempDir(),
		OnJob: func(s JobStats) { kinds = append(kinds, s.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var reads atomic.Int64
	remote, err := ooc.Fit(ctx, countingStore{e.Source(), &reads}, cfg, ooc.RunOptions{Executor: e, Validation: v})
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 0 || kinds[len(kinds)-1] != string(pass.Gram) {
		t.Fatalf("the driver read %d chunks of the store; jobs %v (the last: the Gram matrix)", reads.Load(), kinds)
	}
	gu, wu := remote.Uncertainty(), local.Uncertainty()
	if !slices.Equal(gu.Sigma, wu.Sigma) || !slices.Equal(gu.Scale, wu.Scale) || gu.Lambda != wu.Lambda || gu.NLPD != wu.NLPD {
		t.Errorf("uncertainty on Beam %+v, locally %+v", gu, wu)
	}
}
