package pass_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestHoldoutKinds checks the passes that sum over training rows only
// (TargetProduct, KernelProduct with class weights, the logistic
// gradient and Hessian product), weighted: with a Holdout over the whole
// source, each gives bit for bit the pass over the training side of
// stream.Holdout; and its encoding is version 2, which a version 1
// reader would have read without the hold-out.
func TestHoldoutKinds(t *testing.T) {
	const n, d, m = 900, 2, 6
	x, y := synth(n, d, 17)
	for i := range y { // two classes, for the class weights and the logistic loss
		y[i] = float64(int(y[i]*3) % 2)
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.5 + float64(i%3)
	}
	src := stream.NewMemSource(x, d, y, 1, 128).WithWeights(w, "w")
	hold := pass.Holdout{Fraction: 0.25, Seed: 5}
	rest, _ := stream.Holdout(src, hold.Fraction, hold.Seed)
	rng := rand.New(rand.NewPCG(3, 3))
	vec := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	kn := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.3}
	base := pass.Job{Kernel: kn, Precision: kernel.Float64, M: m, D: d, K: 1, Centers: slices.Clone(x[:m*d]),
		Task: model.TaskBinary, Classes: []float64{0, 1}, Weight: "w"}
	group := []pass.Group{{Kernel: kn, Cols: 1, U: vec(m)}}
	jobs := map[string]pass.Job{}
	jobs["target_product"] = func() pass.Job { j := base; j.Kind = pass.TargetProduct; return j }()
	jobs["kernel_product"] = func() pass.Job {
		j := base
		j.Kind, j.U, j.ClassWeights = pass.KernelProduct, vec(m), []float64{0.7, 1.9}
		return j
	}()
	jobs["logistic_gradient"] = func() pass.Job { j := base; j.Kind, j.Groups = pass.LogisticGradient, group; return j }()
	jobs["logistic_hessian_product"] = func() pass.Job {
		j := base
		j.Kind, j.Groups = pass.LogisticHessianProduct, []pass.Group{{Kernel: kn, Cols: 1, U: vec(2 * m)}}
		return j
	}()
	for name, job := range jobs {
		t.Run(name, func(t *testing.T) {
			want, err := pass.LocalExecutor{Workers: 1}.Pass(context.Background(), rest, &job)
			if err != nil {
				t.Fatal(err)
			}
			held := job
			held.Holdout = &hold
			b, err := json.Marshal(&held)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"version":2,`) {
				t.Errorf("a %s job with a hold-out encodes as version 1: %.60s…", name, b)
			}
			var back pass.Job
			if err := json.Unmarshal(b, &back); err != nil || back.Holdout == nil || *back.Holdout != hold {
				t.Fatalf("decoding: %v, hold-out %v", err, back.Holdout)
			}
			got, err := pass.LocalExecutor{Workers: 1}.Pass(context.Background(), src, &back)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d values, want %d", len(got), len(want))
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("value %d: %v with the hold-out, %v over the training side", i, got[i], want[i])
				}
			}
			if b, _ := json.Marshal(&job); !strings.Contains(string(b), `"version":1,`) {
				t.Errorf("a %s job without a hold-out does not encode as version 1: %.60s…", name, b)
			}
		})
	}

	// Errors name the row within the chunk, not within its training rows.
	heldRows := stream.HeldOutRows(nil, 0, 128, hold.Fraction, hold.Seed)
	train := -1 // a training row of chunk 0 after its first held-out row
	for r := int(heldRows[0]) + 1; r < 128; r++ {
		if !slices.Contains(heldRows, int32(r)) {
			train = r
			break
		}
	}
	job := jobs["target_product"]
	job.Holdout, job.Features, job.Targets = &hold, []string{"a", "b"}, []string{"t"}
	bad := func(mend func(x, y []float64)) error {
		bx, by := slices.Clone(x), slices.Clone(y)
		mend(bx, by)
		_, err := pass.LocalExecutor{Workers: 1}.Pass(context.Background(),
			stream.NewMemSource(bx, d, by, 1, 128).WithWeights(w, "w"), &job)
		return err
	}
	err := bad(func(x, y []float64) { x[train*d+1] = math.Inf(1) })
	if want := `chunk 0, row ` + strconv.Itoa(train) + `, column "b": value +Inf`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a non-finite feature: err = %v, want it to contain %q", err, want)
	}
	err = bad(func(x, y []float64) { y[train] = 7 })
	if want := `target "t": value 7 in row ` + strconv.Itoa(train) + ` of the chunk is not one of the classes [0 1]`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a target not a class: err = %v, want it to contain %q", err, want)
	}
	// A held-out row's value is not the training pass's business.
	if err := bad(func(x, y []float64) { y[heldRows[0]] = 7 }); err != nil {
		t.Errorf("a held-out row's target: %v", err)
	}
}
