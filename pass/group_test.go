package pass_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// synth returns n rows of d features around 3 and a smooth target.
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

// TestGroupKernelProduct checks a GroupKernelProduct over two kernels with a hold-out
// against what it stands for: its sums are, bit for bit, KernelProduct's of
// each kernel over the rows not held out; its row values are the held-out
// rows' K(x, C) α by a direct product, then their targets.
func TestGroupKernelProduct(t *testing.T) {
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
	job := &pass.Job{Kind: pass.GroupKernelProduct, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: centres,
		Mean: mean, InvStd: invStd, Task: model.TaskRegression, Holdout: &pass.Holdout{Fraction: 0.25, Seed: 3}}
	for i, kn := range kerns {
		job.Groups = append(job.Groups, pass.Group{Kernel: kn, Cols: cols[i], U: vec(m * cols[i]), Alpha: vec(m * cols[i])})
	}
	rest, held := stream.Holdout(src, 0.25, 3)
	job.ScoreRows = stream.Rows(held)
	// Through JSON, as a remote executor ships it.
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	var back pass.Job
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, job) {
		t.Fatal("the JSON round trip changed the job")
	}
	out, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), src, &back)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != job.OutLen() || job.RowLen() != 2+3+1 {
		t.Fatalf("%d values, OutLen %d, RowLen %d", len(out), job.OutLen(), job.RowLen())
	}
	at := 0
	for i, g := range job.Groups {
		kj := &pass.Job{Kind: pass.KernelProduct, Kernel: g.Kernel, Precision: kernel.Float64, M: m, D: d, K: g.Cols,
			Centers: centres, Mean: mean, InvStd: invStd, U: g.U}
		want, err := pass.LocalExecutor{Workers: 2}.Pass(context.Background(), rest, kj)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out[at:at+len(want)], want) {
			t.Fatalf("group %d: the sums differ from KernelProduct's over the training rows", i)
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
	if _, err := (pass.LocalExecutor{}).Pass(context.Background(), src, &bad); err == nil {
		t.Fatal("a GroupKernelProduct with ScoreRows one too many ran")
	}
}
