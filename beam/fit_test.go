package beam

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// The equivalence tests share one 200 000-row store.
var big struct {
	once  sync.Once
	dir   string
	cols  [][]float64
	local *ooc.Model
	err   error
}

const bigRows, bigDim = 200_000, 4

func bigConfig() ooc.Config {
	return ooc.Config{Centers: 300, Lambda: 1e-6, Iterations: 8, Seed: 7,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}}
}

// bigStore writes the store (chunks of 4096 rows: 49 chunks) and fits it
// locally with ooc.Fit, once per test binary.
func bigStore(t *testing.T) (string, *ooc.Model) {
	t.Helper()
	big.once.Do(func() {
		big.dir = filepath.Join(testDir, "big.store")
		big.cols = writeStore(t, big.dir, bigRows, bigDim, 4096, 11)
		r, err := chunkstore.Open(big.dir)
		if err != nil {
			big.err = err
			return
		}
		defer r.Close()
		cfg := bigConfig()
		big.local, big.err = ooc.Fit(context.Background(), r, cfg, ooc.RunOptions{})
	})
	if big.err != nil {
		t.Fatal(big.err)
	}
	return big.dir, big.local
}

// predictions of m on the first rows of the big store's columns.
func predictions(t *testing.T, m *ooc.Model) []float64 {
	t.Helper()
	const rows = 2000
	x := make([]float64, rows*bigDim)
	for i := range rows {
		for j := range bigDim {
			x[i*bigDim+j] = big.cols[j][i*97%bigRows]
		}
	}
	out := make([]float64, rows*m.K())
	m.PredictTo(out, x, rows)
	return out
}

func beamFit(t *testing.T, parts int, run ooc.RunOptions, mod func(*Options)) (*ooc.Model, []JobStats, error) {
	t.Helper()
	dir, _ := bigStore(t)
	var jobs []JobStats
	temp := t.TempDir()
	opts := Options{Store: dir, Partitions: parts, Temp: temp, OnJob: func(s JobStats) { jobs = append(jobs, s) }}
	if mod != nil {
		mod(&opts)
	}
	m, err := Fit(context.Background(), bigConfig(), run, opts)
	if left, _ := os.ReadDir(temp); len(left) > 0 {
		t.Errorf("%d files left in the temporary directory, e.g. %s", len(left), left[0].Name())
	}
	return m, jobs, err
}

// TestFitMatchesLocal: on Prism, a fit over 4 and 16 partitions of a
// 200 000-row store predicts what ooc.Fit predicts on the same store,
// within 1e-9 relative (the sums are associated differently), and a
// second fit with the same partitioning is bit-identical.
func TestFitMatchesLocal(t *testing.T) {
	_, local := bigStore(t)
	want := predictions(t, local)
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for _, parts := range []int{4, 16} {
		m, jobs, err := beamFit(t, parts, ooc.RunOptions{}, nil)
		if err != nil {
			t.Fatalf("%d partitions: %v", parts, err)
		}
		if got := len(jobs); got != 2+bigConfig().Iterations || jobs[0].Kind != kindRows {
			t.Errorf("%d partitions: %d jobs, want %d (the centres' rows, the right-hand side, one per iteration)", parts, got, 2+bigConfig().Iterations)
		}
		for _, j := range jobs[1:] {
			// M·d = 1200 centre values: the description goes through a file.
			if j.Parts != parts || j.Rows != bigRows || j.Err != nil || !j.JobFile {
				t.Errorf("%d partitions: job %+v", parts, j)
			}
		}
		got := predictions(t, m)
		worst := 0.0
		for i := range want {
			worst = math.Max(worst, math.Abs(got[i]-want[i])/scale)
		}
		t.Logf("%d partitions: worst relative difference from the local fit %.3g", parts, worst)
		if worst > 1e-9 {
			t.Errorf("%d partitions: predictions differ from the local fit by %.3g relative, want ≤ 1e-9", parts, worst)
		}
		if parts == 16 {
			m2, _, err := beamFit(t, parts, ooc.RunOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			assertSameModel(t, "second run", m, m2)
		}
	}
}

func assertSameModel(t *testing.T, what string, a, b *ooc.Model) {
	t.Helper()
	aa, ba := a.Alpha(), b.Alpha()
	if len(aa) != len(ba) {
		t.Fatalf("%s: %d coefficients, want %d", what, len(ba), len(aa))
	}
	for i := range aa {
		if math.Float64bits(aa[i]) != math.Float64bits(ba[i]) {
			t.Fatalf("%s: α[%d] = %v, want %v bit for bit", what, i, ba[i], aa[i])
		}
	}
}

// TestFitWorkerFailure: a range that fails once (the first time range 2
// of the third job runs) makes that job fail; it is run again and the
// model is bit-identical to an undisturbed fit with the same partitioning.
func TestFitWorkerFailure(t *testing.T) {
	want, _, err := beamFit(t, 4, ooc.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls, failed atomic.Int32
	rangeHook = func(i int) error {
		if i != 2 {
			return nil
		}
		if calls.Add(1) == 3 && failed.Add(1) == 1 {
			return errors.New("injected worker failure")
		}
		return nil
	}
	defer func() { rangeHook = nil }()
	got, jobs, err := beamFit(t, 4, ooc.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if failed.Load() != 1 {
		t.Fatalf("the failure was injected %d times, want 1", failed.Load())
	}
	var nfail int
	for _, j := range jobs {
		if j.Err != nil {
			nfail++
		}
	}
	if nfail != 1 || len(jobs) != 3+bigConfig().Iterations { // the rows job, a failed one, its retry, the others
		t.Errorf("%d jobs, %d failed; want %d and 1", len(jobs), nfail, 3+bigConfig().Iterations)
	}
	assertSameModel(t, "after a failed worker", want, got)
}

// TestFitFailureGivesUp: a pass that fails on every attempt returns the
// error of each attempt.
func TestFitFailureGivesUp(t *testing.T) {
	rangeHook = func(i int) error { return errors.New("disk on fire") }
	defer func() { rangeHook = nil }()
	_, jobs, err := beamFit(t, 4, ooc.RunOptions{}, func(o *Options) { o.Attempts = 2 })
	if err == nil {
		t.Fatal("no error")
	}
	if len(jobs) != 1+2 { // the centres' rows, then the right-hand side's 2 attempts
		t.Errorf("%d jobs, want the rows job and 2 attempts", len(jobs))
	}
	for _, want := range []string{"attempt 1:", "attempt 2:", "disk on fire", "pass failed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestFitResume: a fit stopped after iteration 3 and resumed from its
// checkpoint ends with the model of an uninterrupted Beam fit, bit for bit.
func TestFitResume(t *testing.T) {
	want, _, err := beamFit(t, 4, ooc.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var last *ooc.Checkpoint
	stop := errors.New("stop")
	_, _, err = beamFit(t, 4, ooc.RunOptions{Checkpoint: func(c *ooc.Checkpoint) error {
		last = c
		if c.Iteration == 3 {
			return stop
		}
		return nil
	}}, nil)
	if !errors.Is(err, stop) {
		t.Fatalf("interrupted fit: %v", err)
	}
	got, jobs, err := beamFit(t, 4, ooc.RunOptions{Resume: last}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1+bigConfig().Iterations-3 { // the centres are drawn again (and checked against the checkpoint)
		t.Errorf("resumed fit ran %d jobs, want %d", len(jobs), 1+bigConfig().Iterations-3)
	}
	assertSameModel(t, "resumed", want, got)
}

// TestFitSubsetRefused: the workers read the whole store, so a pass over
// a subset of its rows is refused.
func TestFitSubsetRefused(t *testing.T) {
	dir, _ := bigStore(t)
	e, err := NewExecutor(context.Background(), Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sub := rangeSource{e.r, 0, 3}
	_, err = e.Pass(context.Background(), sub, nil)
	want := "beam: the pass's source has 12288 rows × 4 features, the store " + dir + " 200000 × 4: a Beam fit runs over a whole store"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
