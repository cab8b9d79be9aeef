package ooc_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// readAll returns every row of src.
func readAll(t *testing.T, src stream.Source) (x, y []float64) {
	t.Helper()
	for i := range src.NumChunks() {
		r := src.ChunkRows(i)
		cx, cy := make([]float64, r*src.Dim()), make([]float64, r*src.NumTargets())
		if err := src.ReadChunk(context.Background(), i, cx, cy); err != nil {
			t.Fatal(err)
		}
		x, y = append(x, cx...), append(y, cy...)
	}
	return x, y
}

// TestPassMulti checks a PassMulti over two kernels with a hold-out
// against what it stands for: its sums are, bit for bit, PassKernel's of
// each kernel over the rows not held out; its row values are the held-out
// rows' K(x, C) α by a direct product, then their targets.
func TestPassMulti(t *testing.T) {
	const n, d, m = 700, 3, 9
	x, y := synth(n, d, 31)
	src := stream.NewMemSource(x, d, y, 1, 64)
	rng := rand.New(rand.NewPCG(4, 1))
	vec := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	centres := vec(m * d)
	mean, invStd := []float64{0.1, -0.2, 0.3}, []float64{1.5, 0.5, 2}
	kerns := []kernel.Kernel{{Kind: kernel.Gaussian, Sigma: 1.3}, {Kind: kernel.Laplacian, Sigma: 2}}
	cols := []int{2, 3}
	job := &ooc.PassJob{Kind: ooc.PassMulti, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: centres,
		Mean: mean, InvStd: invStd, Task: ooc.TaskRegression, Holdout: &ooc.Holdout{Fraction: 0.25, Seed: 3}}
	for i, kn := range kerns {
		job.Groups = append(job.Groups, ooc.PassGroup{Kernel: kn, Cols: cols[i], U: vec(m * cols[i]), Alpha: vec(m * cols[i])})
	}
	rest, held := stream.Holdout(src, 0.25, 3)
	job.ScoreRows = int64(rowCount(held))
	// Through JSON, as a remote executor ships it.
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	var back ooc.PassJob
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, job) {
		t.Fatal("the JSON round trip changed the job")
	}
	out, err := ooc.LocalExecutor{Workers: 2}.Pass(context.Background(), src, &back)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != job.OutLen() || job.RowLen() != 2+3+1 {
		t.Fatalf("%d values, OutLen %d, RowLen %d", len(out), job.OutLen(), job.RowLen())
	}
	at := 0
	for i, g := range job.Groups {
		kj := &ooc.PassJob{Kind: ooc.PassKernel, Kernel: g.Kernel, Precision: kernel.Float64, M: m, D: d, K: g.Cols,
			Centers: centres, Mean: mean, InvStd: invStd, U: g.U}
		want, err := ooc.LocalExecutor{Workers: 2}.Pass(context.Background(), rest, kj)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out[at:at+len(want)], want) {
			t.Fatalf("group %d: the sums differ from PassKernel's over the training rows", i)
		}
		at += len(want)
	}
	hx, hy := readAll(t, held)
	nv := len(hy)
	std := slices.Clone(hx)
	for r := range nv {
		for j := range d {
			std[r*d+j] = (std[r*d+j] - mean[j]) * invStd[j]
		}
	}
	col := 0
	for i, g := range job.Groups {
		c := kernel.NewCenters(g.Kernel, centres, m, d, kernel.Float64)
		kb := make([]float64, nv*m)
		c.BlockTo(c.NewWorkspace(), kb, std, nv)
		for r := range nv {
			for q := range g.Cols {
				s := 0.0
				for j := range m {
					s += kb[r*m+j] * g.Alpha[j*g.Cols+q]
				}
				got := out[at+r*6+col+q]
				if math.Abs(got-s) > 1e-12*(1+math.Abs(s)) {
					t.Fatalf("group %d, held-out row %d, column %d: score %v, want %v", i, r, q, got, s)
				}
			}
		}
		col += g.Cols
	}
	for r := range nv {
		if out[at+r*6+5] != hy[r] {
			t.Fatalf("held-out row %d: target %v, want %v", r, out[at+r*6+5], hy[r])
		}
	}
	// A wrong ScoreRows is an error, not a silent misplacement.
	bad := *job
	bad.ScoreRows++
	if _, err := (ooc.LocalExecutor{}).Pass(context.Background(), src, &bad); err == nil {
		t.Fatal("a PassMulti with ScoreRows one too many ran")
	}
}

// countingExecutor ships every job through JSON and runs it with
// LocalExecutor on view, the same rows as the pass's source in another
// chunking, as a remote executor reading the store would: the rows a job
// holds out must not depend on the chunking.
type countingExecutor struct {
	view  stream.Source
	kinds map[ooc.PassKind]int
}

func (e *countingExecutor) Pass(ctx context.Context, src stream.Source, job *ooc.PassJob) ([]float64, error) {
	e.kinds[job.Kind]++
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	var remote ooc.PassJob
	if err := json.Unmarshal(b, &remote); err != nil {
		return nil, err
	}
	view := e.view
	if view == nil {
		view = src
	}
	return ooc.LocalExecutor{Workers: 1}.Pass(ctx, view, &remote)
}

// TestTuneThroughExecutor runs Tune's passes through an Executor that
// ships each job as JSON: every pass over the training data goes
// through it, and the search is the local one — bit for bit on the same
// chunks, to rounding on another chunking of the same rows.
func TestTuneThroughExecutor(t *testing.T) {
	const n, d = 2000, 3
	x, y := synth(n, d, 21)
	src := stream.NewMemSource(x, d, y, 1, 100)
	cfg := ooc.TuneConfig{Base: ooc.Config{Centers: 60, Iterations: 6, Seed: 3}, Sigmas: []float64{1, 3},
		Lambdas: []float64{1e-3, 1e-6}, ValFraction: 0.2, SigmaHalving: -1}
	local, err := ooc.Tune(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := synth(200, d, 22)
	for _, tc := range []struct {
		name string
		view stream.Source
		tol  float64
	}{
		{"same chunks", nil, 0},
		{"other chunks", stream.NewMemSource(x, d, y, 1, 333), 1e-7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &countingExecutor{view: tc.view, kinds: map[ooc.PassKind]int{}}
			res, err := ooc.Tune(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, Executor: ex})
			if err != nil {
				t.Fatal(err)
			}
			if ex.kinds[ooc.PassMultiRHS] != 1 || ex.kinds[ooc.PassMulti]+1 != res.Passes-1 {
				t.Errorf("passes through the executor %v; the search made %d (one local: the centres)", ex.kinds, res.Passes)
			}
			if res.Best != local.Best || res.Passes != local.Passes {
				t.Fatalf("best %d after %d passes, locally %d after %d", res.Best, res.Passes, local.Best, local.Passes)
			}
			for i, c := range res.Candidates {
				lc := local.Candidates[i]
				if c.BestIteration != lc.BestIteration || len(c.Validation) != len(lc.Validation) {
					t.Fatalf("candidate %d: best iteration %d of %d validations, locally %d of %d",
						i, c.BestIteration, len(c.Validation), lc.BestIteration, len(lc.Validation))
				}
				for v := range c.Validation {
					g, w := *c.Validation[v].RMSE, *lc.Validation[v].RMSE
					if math.Abs(g-w) > tc.tol*w {
						t.Fatalf("candidate %d, validation %d: RMSE %v, locally %v", i, v, g, w)
					}
				}
				pg, pw := make([]float64, 200), make([]float64, 200)
				c.Model().PredictTo(pg, tx, 200)
				lc.Model().PredictTo(pw, tx, 200)
				if e := maxRelDiff(pg, pw); e > tc.tol {
					t.Fatalf("candidate %d: predictions differ from the local search's by %.3g relative", i, e)
				}
			}
		})
	}
}
