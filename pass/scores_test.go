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

// TestScores checks the Scores pass against the model it scores for: with
// a Holdout over the whole source, its rows are, bit for bit, the scores
// Model.Predict gives the held side of stream.Holdout, with their targets
// and weights, in order, for each precision; without one it scores every
// row. Its encoding is version 3 and round-trips; a non-finite feature
// of a scored row names the row in the chunk, and one of a row it does not
// score is not read.
func TestScores(t *testing.T) {
	const n, d, m, k = 700, 3, 9, 3
	x, y := synth(n, d, 29)
	for i := range y {
		y[i] = float64(int(y[i]*5) % k)
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.25 + float64(i%4)
	}
	src := stream.NewMemSource(x, d, y, 1, 96).WithWeights(w, "w")
	hold := pass.Holdout{Fraction: 0.3, Seed: 11}
	_, heldSide := stream.Holdout(src, hold.Fraction, hold.Seed)
	rng := rand.New(rand.NewPCG(5, 5))
	mean, std := []float64{3, 2.5, 3.5}, []float64{1.1, 2.2, 0.9}
	centres := make([]float64, m*d)
	alpha := make([]float64, m*k)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	for i := range alpha {
		alpha[i] = rng.NormFloat64()
	}
	kn := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.7}
	for _, prec := range []kernel.Precision{kernel.Float64, kernel.Float32} {
		t.Run(prec.String(), func(t *testing.T) {
			mdl, err := model.New(model.Params{Kernel: kn, Precision: prec, Task: model.TaskMulticlass, Classes: []float64{0, 1, 2},
				Features: []string{"a", "b", "c"}, Targets: []string{"t"}, FeatureMean: mean, FeatureStd: std,
				TargetMean: make([]float64, k), M: m, D: d, K: k, Centers: centres, Alpha: alpha})
			if err != nil {
				t.Fatal(err)
			}
			var want []float64
			err = mdl.Predict(context.Background(), heldSide, model.PredictOptions{Workers: 2}, true, func(b model.Batch) error {
				for r := range b.Rows {
					want = append(want, b.Scores[r*k:(r+1)*k]...)
					want = append(want, b.Targets[r], b.Weights[r])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			job := pass.Job{Kind: pass.Scores, Kernel: kn, Precision: prec, M: m, D: d, K: k, Centers: centres,
				Mean: mean, InvStd: model.InvStd(std), Task: model.TaskMulticlass, Classes: []float64{0, 1, 2},
				Alpha: alpha, Weight: "w", Holdout: &hold, ScoreRows: stream.Rows(heldSide),
				Features: []string{"a", "b", "c"}, Targets: []string{"t"}}
			b, err := json.Marshal(&job)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"version":3,`) {
				t.Errorf("a scores job does not encode as version 3: %.60s…", b)
			}
			var back pass.Job
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if job.SumLen() != 0 || job.RowLen() != k+2 {
				t.Fatalf("SumLen %d, RowLen %d; want 0 and %d", job.SumLen(), job.RowLen(), k+2)
			}
			got, err := pass.LocalExecutor{Workers: 3}.Pass(context.Background(), src, &back)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(want) != int(job.ScoreRows)*job.RowLen() {
				t.Fatalf("%d values, Predict gives %d, the job says %d", len(got), len(want), int(job.ScoreRows)*job.RowLen())
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("value %d (row %d): %v from the pass, %v from Predict", i, i/job.RowLen(), got[i], want[i])
				}
			}

			// Without a hold-out: every row, as Predict scores the whole source.
			all := back
			all.Holdout, all.ScoreRows = nil, n
			got, err = pass.LocalExecutor{Workers: 1}.Pass(context.Background(), src, &all)
			if err != nil {
				t.Fatal(err)
			}
			r := 0
			err = mdl.Predict(context.Background(), src, model.PredictOptions{}, false, func(b model.Batch) error {
				for i := range b.Rows * k {
					if g := got[(r+i/k)*all.RowLen()+i%k]; math.Float64bits(g) != math.Float64bits(b.Scores[i]) {
						t.Fatalf("row %d: score %v, Predict's %v", r+i/k, g, b.Scores[i])
					}
				}
				r += b.Rows
				return nil
			})
			if err != nil || r != n {
				t.Fatalf("%d rows compared: %v", r, err)
			}
		})
	}

	job := pass.Job{Kind: pass.Scores, Kernel: kn, Precision: kernel.Float64, M: m, D: d, K: k, Centers: centres,
		Task: model.TaskMulticlass, Classes: []float64{0, 1, 2}, Alpha: alpha, Holdout: &hold, ScoreRows: stream.Rows(heldSide),
		Features: []string{"a", "b", "c"}}
	heldRows := stream.HeldOutRows(nil, 96, 96, hold.Fraction, hold.Seed) // chunk 1's
	notHeld := 0
	for slices.Contains(heldRows, int32(notHeld)) {
		notHeld++
	}
	bad := func(row int) error {
		bx := slices.Clone(x)
		bx[(96+row)*d+2] = math.NaN()
		_, err := pass.LocalExecutor{Workers: 1}.Pass(context.Background(), stream.NewMemSource(bx, d, y, 1, 96), &job)
		return err
	}
	if want := `chunk 1, row ` + strconv.Itoa(int(heldRows[1])) + `, column "c": value NaN`; !strings.Contains(errString(bad(int(heldRows[1]))), want) {
		t.Errorf("a held-out row's NaN: err = %v, want it to contain %q", bad(int(heldRows[1])), want)
	}
	if err := bad(notHeld); err != nil {
		t.Errorf("a NaN in a row the pass does not score: %v", err)
	}
	job.Alpha = alpha[:m]
	if _, err := job.NewWorker(); err == nil || !strings.Contains(err.Error(), "9 coefficients (Alpha) in a scores pass of M × K = 9 × 3") {
		t.Errorf("short Alpha: err = %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
