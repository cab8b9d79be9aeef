package ooc_test

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// knownStats is a source whose feature statistics are known (as a chunk
// store's manifest gives them) and that counts the chunks read from it.
type knownStats struct {
	stream.Source
	mean, std []float64
	reads     *atomic.Int64 // ReadChunk runs on the pass's workers
}

func (k knownStats) Columns() ([]string, []string) { return k.Source.(stream.Columner).Columns() }
func (k knownStats) FeatureStats() (mean, std []float64) {
	return k.mean, k.std
}
func (k knownStats) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	k.reads.Add(1)
	return k.Source.ReadChunk(ctx, i, x, y)
}

// remoteExecutor runs every pass, shipped as JSON, on view (another
// source of the same rows, as a worker reading the store would) and reads
// the rows asked for from view too: the driver's source is never read.
type remoteExecutor struct {
	view stream.Source
	rows int // rows read for the centres
}

func (e *remoteExecutor) Pass(ctx context.Context, _ stream.Source, job *pass.Job) ([]float64, error) {
	remote, err := ship(job)
	if err != nil {
		return nil, err
	}
	return pass.LocalExecutor{Workers: 1}.Pass(ctx, e.view, remote)
}

func (e *remoteExecutor) ReadRows(ctx context.Context, _ stream.Source, idx []int64) ([]float64, error) {
	e.rows += len(idx)
	return readRows(ctx, e.view, idx)
}

// ship returns job after the round trip through its encoding, as an
// executor ships it to a remote worker.
func ship(job *pass.Job) (*pass.Job, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	var remote pass.Job
	if err := json.Unmarshal(b, &remote); err != nil {
		return nil, err
	}
	return &remote, nil
}

// readRows reads the features of rows idx (ascending) of src.
func readRows(ctx context.Context, src stream.Source, idx []int64) ([]float64, error) {
	d := src.Dim()
	out := make([]float64, 0, len(idx)*d)
	var lo int64
	p := 0
	for c := 0; c < src.NumChunks() && p < len(idx); c++ {
		n := src.ChunkRows(c)
		if idx[p] >= lo+int64(n) {
			lo += int64(n)
			continue
		}
		x, y := make([]float64, n*d), make([]float64, n*src.NumTargets())
		if err := src.ReadChunk(ctx, c, x, y); err != nil {
			return nil, err
		}
		for ; p < len(idx) && idx[p] < lo+int64(n); p++ {
			r := int(idx[p] - lo)
			out = append(out, x[r*d:(r+1)*d]...)
		}
		lo += int64(n)
	}
	return out, nil
}

// TestFitReadsRowsThroughExecutor: with an Executor that is a RowReader
// and the statistics known, Fit reads no chunk itself; the centres
// (uniform, with duplicates replaced, and leverage) and the model are
// those of the local fit, bit for bit (the executor's passes read the
// same chunks).
func TestFitReadsRowsThroughExecutor(t *testing.T) {
	const n, d = 3000, 3
	x, y := synth(n, d, 31)
	dup := slices.Clone(x)
	for i := range n { // a data set of 40 distinct rows, repeated
		copy(dup[i*d:(i+1)*d], x[(i%40)*d:(i%40+1)*d])
	}
	for _, c := range []struct {
		name string
		x    []float64
		cfg  ooc.Config
	}{
		{"uniform", x, ooc.Config{Centers: 90, Iterations: 5, Seed: 4, Task: ooc.TaskRegression}},
		{"duplicates", dup, ooc.Config{Centers: 60, Iterations: 5, Seed: 4, Task: ooc.TaskRegression}},
		{"leverage", x, ooc.Config{Centers: 60, Iterations: 5, Seed: 5, Task: ooc.TaskRegression, Sampling: ooc.SamplingLeverage}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mean, std := make([]float64, d), make([]float64, d)
			for j := range d {
				for i := range n {
					mean[j] += c.x[i*d+j] / n
				}
				for i := range n {
					std[j] += (c.x[i*d+j] - mean[j]) * (c.x[i*d+j] - mean[j]) / n
				}
				std[j] = math.Sqrt(std[j])
			}
			var reads atomic.Int64
			src := knownStats{Source: stream.NewMemSource(c.x, d, y, 1, 128), mean: mean, std: std, reads: &reads}
			local, err := ooc.Fit(context.Background(), src, c.cfg, ooc.RunOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() == 0 {
				t.Fatal("the local fit read no chunk: the counter counts nothing")
			}
			reads.Store(0)
			ex := &remoteExecutor{view: stream.NewMemSource(c.x, d, y, 1, 128)}
			remote, err := ooc.Fit(context.Background(), src, c.cfg, ooc.RunOptions{Workers: 2, Executor: ex})
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() != 0 || ex.rows < c.cfg.Centers {
				t.Fatalf("the driver read %d chunks; the executor %d rows", reads.Load(), ex.rows)
			}
			lc, rc := local.Centers(), remote.Centers()
			if len(lc) != len(rc) || !slices.Equal(lc, rc) {
				t.Fatalf("%d centre values, locally %d, or other centres", len(rc), len(lc))
			}
			if !slices.Equal(local.Alpha(), remote.Alpha()) {
				t.Fatal("the model differs from the local one")
			}
		})
	}
}
