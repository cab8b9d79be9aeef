package beam

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"google.golang.org/protobuf/proto"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
)

// noop is a pass that reads nothing: a job of it measures what Beam costs
// per job (submission, stages, the reduction, the result file).
type noop struct{}

func (noop) AddRows(_ []float64, _ int64, _, _, _ []float64, _ int, placed []float64) ([]float64, error) {
	return placed, nil
}

func init() {
	jobKinds["noop"] = func(job []byte) (int, bool, bool, func() (adder, error), error) {
		var n int
		if err := json.Unmarshal(job, &n); err != nil {
			return 0, false, false, nil, err
		}
		return n, false, false, func() (adder, error) { return noop{}, nil }, nil
	}
}

// benchStore returns the store of BEAM_BENCH_STORE, or writes one of
// BEAM_BENCH_ROWS rows (default 200 000) × 28 features.
func benchStore(b *testing.B) string {
	b.Helper()
	if s := os.Getenv("BEAM_BENCH_STORE"); s != "" {
		return s
	}
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("BEAM_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	dir := filepath.Join(testDir, fmt.Sprintf("bench-%d.store", n))
	if _, err := os.Stat(dir); err != nil {
		writeStore(b, dir, n, 28, 32768, 5)
	}
	return dir
}

func benchM() int {
	if v, err := strconv.Atoi(os.Getenv("BEAM_BENCH_M")); err == nil && v > 0 {
		return v
	}
	return 1000
}

// BenchmarkJobOverhead: one Beam job on Prism over a store of 64 chunks
// of one row, whose contribution is nothing, with a result of M values:
// the per-pass cost of the job-per-pass design on Prism.
func BenchmarkJobOverhead(b *testing.B) {
	store := filepath.Join(testDir, "tiny.store")
	if _, err := os.Stat(store); err != nil {
		writeStore(b, store, 64, 28, 1, 1)
	}
	for _, parts := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("P=%d", parts), func(b *testing.B) {
			job, _ := json.Marshal(benchM())
			ps := passSpec{Runner: "prism", Store: store, Kind: "noop", Job: job, OutLen: benchM(), SumLen: benchM(), Parts: parts}
			for b.Loop() {
				ps.Out = uniqueName(b.TempDir(), "noop")
				if _, _, err := runPass(context.Background(), ps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIteration: seconds per CG iteration of a fit on this machine,
// ooc.Fit's local pipeline against the same fit with each pass a Prism job
// (partitions 4 and 16), interleaved. It reports s/iteration (the fit's
// own measure) and the mean job seconds.
func BenchmarkIteration(b *testing.B) {
	store := benchStore(b)
	r, err := chunkstore.Open(store)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cfg := ooc.Config{Centers: benchM(), Lambda: 1e-6, Iterations: 5, Seed: 1,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian}}
	for _, name := range []string{"local", "prism-P=4", "prism-P=16"} {
		b.Run(name, func(b *testing.B) {
			var jobSec float64
			var jobs int
			var perIter float64
			for b.Loop() {
				var m *ooc.Model
				var err error
				if name == "local" {
					m, err = ooc.Fit(context.Background(), r, cfg, ooc.RunOptions{})
				} else {
					parts := 4
					if name == "prism-P=16" {
						parts = 16
					}
					m, err = Fit(context.Background(), cfg, ooc.RunOptions{}, Options{Store: store, Partitions: parts,
						OnJob: func(s JobStats) { jobSec += s.Seconds; jobs++ }})
				}
				if err != nil {
					b.Fatal(err)
				}
				perIter += m.Training().SecondsPerIteration
			}
			b.ReportMetric(perIter/float64(b.N), "s/iter")
			if jobs > 0 {
				b.ReportMetric(jobSec/float64(jobs), "s/job")
			}
			b.ReportMetric(0, "ns/op")
			_ = time.Second
		})
	}
}

// BenchmarkShipped reports what one CG pass ships at d = 28, k = 1: the
// pass.Job as JSON, the pipeline proto that carries it (the job's DoFn
// payload, sent to the job service and to every worker), and the part
// each range sends to the reduction. Nothing is timed.
func BenchmarkShipped(b *testing.B) {
	const d = 28
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			job := &pass.Job{Kind: pass.KernelProduct, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 5},
				Precision: kernel.Float64, M: m, D: d, K: 1, Task: ooc.TaskRegression,
				Centers: make([]float64, m*d), Mean: make([]float64, d), InvStd: make([]float64, d), U: make([]float64, m)}
			for i := range job.Centers {
				job.Centers[i] = rng.NormFloat64()
			}
			for i := range job.U {
				job.U[i] = rng.NormFloat64()
			}
			for j := range d {
				job.Mean[j], job.InvStd[j] = rng.NormFloat64(), 1/(1+rng.Float64())
			}
			js, err := json.Marshal(job)
			if err != nil {
				b.Fatal(err)
			}
			ps := passSpec{Runner: "prism", Store: "/data/x.store", Kind: kindFalkon, Job: js, OutLen: job.OutLen(), SumLen: job.SumLen(), Parts: 16, Out: "/tmp/r.bin"}
			edges, _, err := buildPass(ps).Build()
			if err != nil {
				b.Fatal(err)
			}
			pb, err := graphx.Marshal(edges, &graphx.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
			}
			b.ReportMetric(float64(len(js)), "job-B")
			b.ReportMetric(float64(proto.Size(pb)), "pipeline-B")
			b.ReportMetric(float64(16+8*job.OutLen()), "part-B")
			b.ReportMetric(0, "ns/op")
		})
	}
}
