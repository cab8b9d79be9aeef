package beam

import (
	"context"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// countingStore is the driver's store, counting the chunks it reads.
type countingStore struct {
	*chunkstore.Reader
	reads *atomic.Int64
}

func (c countingStore) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	c.reads.Add(1)
	return c.Reader.ReadChunk(ctx, i, x, y)
}

// TestCentresOnBeam: a fit on Beam draws its centres (uniform, and by
// leverage among uniform candidates) with a job that returns the drawn
// rows; the driver reads no chunk of the store, and the centres are the
// local fit's, bit for bit, for the same seed.
func TestCentresOnBeam(t *testing.T) {
	dir, local := bigStore(t)
	ctx := context.Background()
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lev := bigConfig()
	lev.Sampling, lev.Iterations = ooc.SamplingLeverage, 2
	localLev, err := ooc.Fit(ctx, r, lev, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  ooc.Config
		want *ooc.Model
	}{
		{"uniform", bigConfig(), local},
		{"leverage", lev, localLev},
	} {
		t.Run(c.name, func(t *testing.T) {
			var kinds []string
			e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 5, Temp: t.TempDir(),
				OnJob: func(s JobStats) { kinds = append(kinds, s.Kind) }})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var reads atomic.Int64
			m, err := ooc.Fit(ctx, countingStore{e.Source(), &reads}, c.cfg, ooc.RunOptions{Executor: e})
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() != 0 || kinds[0] != kindRows || slices.Index(kinds[1:], kindRows) >= 0 {
				t.Fatalf("the driver read %d chunks; jobs %v", reads.Load(), kinds)
			}
			if !slices.Equal(m.Centers(), c.want.Centers()) {
				t.Fatal("the centres differ from the local fit's")
			}
		})
	}
}

// TestTuneCentresOnBeam: a search on Beam draws its centres from the
// training rows of its hold-out with a rows job (the rows mapped to the
// store's); the driver reads no chunk of the store, and every candidate's
// centres are the local search's, bit for bit.
func TestTuneCentresOnBeam(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "tune.store")
	writeStore(t, dir, 20_000, 3, 1024, 5)
	tc := ooc.TuneConfig{Base: ooc.Config{Centers: 60, Iterations: 3, Seed: 9},
		Sigmas: []float64{1, 2.5}, Lambdas: []float64{1e-3, 1e-5}, ValFraction: 0.2, SigmaHalving: -1}
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	local, err := ooc.Tune(ctx, r, tc, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 4, Temp: t.TempDir(),
		OnJob: func(s JobStats) { kinds = append(kinds, s.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var reads atomic.Int64
	res, err := ooc.Tune(ctx, countingStore{e.Source(), &reads}, tc, ooc.RunOptions{Executor: e})
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 0 || len(kinds) == 0 || kinds[0] != kindRows || slices.Index(kinds[1:], kindRows) >= 0 {
		t.Fatalf("the driver read %d chunks; jobs %v", reads.Load(), kinds)
	}
	for i, c := range res.Candidates {
		if !slices.Equal(c.Model().Centers(), local.Candidates[i].Model().Centers()) {
			t.Fatalf("candidate %d: the centres differ from the local search's", i)
		}
	}
}
