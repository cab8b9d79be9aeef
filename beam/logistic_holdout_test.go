package beam

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
)

// TestLogisticHoldOutOnBeam: a logistic fit whose validation rows are
// held out of the store, and a logistic search that holds its own out,
// run on Beam with the driver reading no chunk of the store: every pass
// is a job over the whole store that holds the rows out, and each line
// search's gradient pass scores them (there is no scoring pass of its
// own). The models and their validations are the local runs' to rounding.
func TestLogisticHoldOutOnBeam(t *testing.T) {
	ctx := context.Background()
	const n, d, chunk = 6000, 3, 512
	dir := filepath.Join(t.TempDir(), "class.store")
	classStore(t, dir, n, d, chunk)
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const frac, seed = 0.2, 5
	cfg := ooc.Config{Centers: 40, Iterations: 3, Seed: 4, Loss: ooc.LossLogistic, NewtonSteps: 3, Task: ooc.TaskBinary,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}}
	tc := ooc.TuneConfig{Base: cfg, ValFraction: frac, Sigmas: []float64{1, 2}, Lambdas: []float64{1e-3, 1e-5}}
	train, held, err := ooc.HoldOut(r, frac, seed)
	if err != nil {
		t.Fatal(err)
	}
	local, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Validation: held})
	if err != nil {
		t.Fatal(err)
	}
	localTune, err := ooc.Tune(ctx, r, tc, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 3, Temp: t.TempDir(),
		OnJob: func(s JobStats) {
			kinds = append(kinds, s.Kind)
			if s.Kind != kindRows && s.Rows != n {
				t.Errorf("a %s job read %d rows, want the store's %d", s.Kind, s.Rows, n)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var reads atomic.Int64
	store := countingStore{e.Source(), &reads}
	btrain, bheld, err := ooc.HoldOut(store, frac, seed)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := ooc.Fit(ctx, btrain, cfg, ooc.RunOptions{Executor: e, Validation: bheld})
	if err != nil {
		t.Fatal(err)
	}
	fitKinds := slices.Clone(kinds)
	kinds = kinds[:0]
	remoteTune, err := ooc.Tune(ctx, store, tc, ooc.RunOptions{Executor: e})
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 0 {
		t.Fatalf("the driver read %d chunks of the store; jobs %v then %v", reads.Load(), fitKinds, kinds)
	}
	for _, ks := range [][]string{fitKinds, kinds} {
		// The centres, then the logistic passes only: no scoring pass.
		if len(ks) < 2 || ks[0] != kindRows || ks[len(ks)-1] != string(pass.LogisticGradient) ||
			slices.Contains(ks, string(pass.GroupKernelProduct)) {
			t.Fatalf("jobs %v", ks)
		}
	}
	close := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Fatalf("%s: %v on Beam, %v locally", what, got, want)
		}
	}
	lv, rv := local.Training().Validation, remote.Training().Validation
	if len(lv) != cfg.NewtonSteps || len(rv) != len(lv) {
		t.Fatalf("%d validations on Beam, %d locally, want one per Newton step (%d)", len(rv), len(lv), cfg.NewtonSteps)
	}
	for i := range lv {
		close("fit: validation log-loss", *rv[i].Metrics.LogLoss, *lv[i].Metrics.LogLoss)
		close("fit: validation error rate", *rv[i].Metrics.ErrorRate, *lv[i].Metrics.ErrorRate)
	}
	for i, a := range local.Alpha() {
		close("fit: α", remote.Alpha()[i], a)
	}
	if remoteTune.Best != localTune.Best || remoteTune.Passes != localTune.Passes {
		t.Fatalf("the search picked %d in %d passes on Beam, %d in %d locally", remoteTune.Best, remoteTune.Passes, localTune.Best, localTune.Passes)
	}
	for i, c := range remoteTune.Candidates {
		lc := localTune.Candidates[i]
		close("search: metric", c.BestMetric, lc.BestMetric)
		if len(c.Validation) != tc.Base.NewtonSteps {
			t.Fatalf("candidate %d: %d validations, want one per Newton step", i, len(c.Validation))
		}
		close("search: log-loss", *c.Validation[len(c.Validation)-1].Metrics.LogLoss, *lc.Validation[len(lc.Validation)-1].Metrics.LogLoss)
	}
}
