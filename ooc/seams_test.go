package ooc_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Model files written before the Model became immutable (by commit
// 87f42d0, testdata/model_v1_*.fkom) load and predict exactly as that
// build did (testdata/model_v1_predictions.json, written by it too).
func TestModelFixturesV1(t *testing.T) {
	b, err := os.ReadFile("testdata/model_v1_predictions.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	var probe []float64
	if err := json.Unmarshal(want["probe"], &probe); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		task ooc.Task
		prec kernel.Precision
		m, k int
	}{
		{"regression_f32", ooc.TaskRegression, kernel.Float32, 25, 2},
		{"multiclass_f64", ooc.TaskMulticlass, kernel.Float64, 30, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := ooc.Load(filepath.Join("testdata", "model_v1_"+c.name+".fkom"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Task() != c.task || m.Precision() != c.prec || m.M() != c.m || m.K() != c.k || m.D() != 3 {
				t.Fatalf("task %s, precision %s, M %d, K %d, D %d", m.Task(), m.Precision(), m.M(), m.K(), m.D())
			}
			var scores []float64
			if err := json.Unmarshal(want[c.name], &scores); err != nil {
				t.Fatal(err)
			}
			got := make([]float64, len(scores))
			m.PredictTo(got, probe, len(probe)/3)
			// The scores were computed by the AVX-512 kernel of the build
			// that wrote the file. The same kernel gives them bit for bit;
			// the pure-Go fallback (-tags noasm) and the AVX2 kernel round
			// exp and the sums differently: about 1e-6 relative in float32
			// blocks (measured 1.2e-6), 1e-13 in float64 (measured 8e-14).
			tol := 1e-12
			if c.prec == kernel.Float32 {
				tol = 1e-5
			}
			for i := range got {
				if math.Abs(got[i]-scores[i]) > tol*math.Max(1, math.Abs(scores[i])) {
					t.Fatalf("score %d = %v, the model's own build predicted %v", i, got[i], scores[i])
				}
			}
			// Saving it again and loading gives the same model.
			path := filepath.Join(t.TempDir(), "again.fkom")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			again, err := ooc.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again.Alpha(), m.Alpha()) || !reflect.DeepEqual(again.Config(), m.Config()) || !reflect.DeepEqual(again.Training(), m.Training()) {
				t.Fatal("the model changed in a save and load")
			}
		})
	}
}

// Concurrent PredictTo and Predict on a model fresh from Fit and on a
// loaded one: run with -race (CI does), this shows that a Model needs no
// lazy preparation.
func TestModelConcurrentPredict(t *testing.T) {
	x, y := synth(600, 3, 21)
	src := stream.NewMemSource(x, 3, y, 1, 50)
	fresh, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 40, Iterations: 5, Precision: kernel.Float32}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.fkom")
	if err := fresh.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*ooc.Model{"fresh": fresh, "loaded": loaded} {
		t.Run(name, func(t *testing.T) {
			want := make([]float64, 600)
			m.PredictTo(want, x, 600)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if g%2 == 0 {
						out := make([]float64, 600)
						m.PredictTo(out, x, 600)
						if !reflect.DeepEqual(out, want) {
							errs <- errors.New("PredictTo differs")
						}
						return
					}
					i := 0
					err := m.Predict(context.Background(), src, ooc.PredictOptions{Workers: 2}, false, func(b ooc.Batch) error {
						for _, s := range b.Scores {
							if s != want[i] {
								return errors.New("Predict differs from PredictTo")
							}
							i++
						}
						return nil
					})
					if err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// A NaN feature and an infinite target are refused with an error that
// names the chunk, the row and the column.
func TestFitRefusesNonFinite(t *testing.T) {
	for _, c := range []struct {
		name  string
		stats bool // the source reports statistics: no full sampling pass
		col   int  // 0..2 features, 3 the target
		row   int
		value float64
		want  string
	}{
		{"NaN feature, sampling pass", false, 1, 437, math.NaN(), `chunk 4, row 37, column "b": value NaN is not a finite number`},
		{"+Inf target, sampling pass", false, 3, 1234, math.Inf(1), `chunk 12, row 34, column "y": value +Inf is not a finite number`},
		{"NaN feature, right-hand side", true, 2, 950, math.NaN(), `chunk 9, row 50, column "c": value NaN is not a finite number`},
		{"+Inf target, right-hand side", true, 3, 1234, math.Inf(1), `chunk 12, row 34, column "y": value +Inf is not a finite number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, y := synth(1500, 3, 4)
			if c.col < 3 {
				x[c.row*3+c.col] = c.value
			} else {
				y[c.row] = c.value
			}
			var src stream.Source = stream.NewMemSource(x, 3, y, 1, 100).WithColumns([]string{"a", "b", "c"}, []string{"y"})
			if c.stats {
				src = withStats{src}
			}
			_, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 20, Iterations: 2, Task: ooc.TaskRegression}, ooc.RunOptions{Workers: 3})
			var ve *stream.ValueError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// Predict standardises in the kernel's tile loading: the source's rows
// are not written, the scores equal PredictTo's, and a non-finite
// feature is an error naming the chunk, the row and the column.
func TestPredictStreamsRawRows(t *testing.T) {
	x, y := synth(1500, 3, 4)
	for i := range x {
		x[i] = 5 + 3*x[i] // far from standardised
	}
	src := stream.NewMemSource(x, 3, y, 1, 100).WithColumns([]string{"a", "b", "c"}, []string{"y"})
	model, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 40, Iterations: 5, Task: ooc.TaskRegression}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 1500)
	model.PredictTo(want, x, 1500)
	orig := slices.Clone(x)
	got := make([]float64, 0, 1500)
	err = model.Predict(context.Background(), src, ooc.PredictOptions{Workers: 3}, false, func(b ooc.Batch) error {
		got = append(got, b.Scores...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, orig) {
		t.Fatal("Predict wrote into the source's rows")
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("row %d: Predict %v, PredictTo %v", i, got[i], want[i])
		}
	}
	x[937*3+1] = math.Inf(-1)
	err = model.Predict(context.Background(), src, ooc.PredictOptions{Workers: 3}, false, func(ooc.Batch) error { return nil })
	var ve *stream.ValueError
	if want := `chunk 9, row 37, column "b": value -Inf is not a finite number`; !errors.As(err, &ve) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// withStats reports fixed statistics, so that Fit skips the statistics
// pass and meets bad values first in the right-hand-side pass.
type withStats struct{ stream.Source }

func (w withStats) Columns() ([]string, []string) { return w.Source.(stream.Columner).Columns() }
func (w withStats) FeatureStats() (mean, std []float64) {
	return []float64{3, 3, 3}, []float64{1, 2, 3}
}

// An Executor that ships each job as JSON (as a distributed one would)
// gives the same model, bit for bit, as the local pipeline.
func TestFitThroughJSONExecutor(t *testing.T) {
	x, y := synth(3000, 4, 17)
	src := stream.NewMemSource(x, 4, y, 1, 128)
	cfg := ooc.Config{Centers: 80, Iterations: 6, Seed: 2}
	local, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ex := &jsonExecutor{}
	remote, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	if ex.passes != 1+6 {
		t.Errorf("%d passes through the executor, want 7 (right-hand side and 6 iterations)", ex.passes)
	}
	if !reflect.DeepEqual(local.Alpha(), remote.Alpha()) {
		t.Fatal("a fit through a JSON-shipping executor differs from the local one")
	}
}

// jsonExecutor ships every job through JSON and runs it on LocalExecutor.
type jsonExecutor struct{ passes int }

func (e *jsonExecutor) Pass(ctx context.Context, src stream.Source, job *pass.Job) ([]float64, error) {
	e.passes++
	remote, err := ship(job)
	if err != nil {
		return nil, err
	}
	return pass.LocalExecutor{Workers: 1}.Pass(ctx, src, remote)
}

// A resumed fit may use another worker count, and a finished fit can be
// extended: resuming the checkpoint of a 4-iteration fit with 9
// iterations ends where a 9-iteration fit ends, bit for bit.
func TestResumeExtendsFinishedFit(t *testing.T) {
	x, y := synth(2000, 3, 31)
	src := stream.NewMemSource(x, 3, y, 1, 150)
	cfg := ooc.Config{Centers: 90, Iterations: 9, Seed: 8}
	full, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var last *ooc.Checkpoint
	short := cfg
	short.Iterations = 4
	if _, err := ooc.Fit(context.Background(), src, short, ooc.RunOptions{Workers: 2, Checkpoint: func(c *ooc.Checkpoint) error { last = c; return nil }}); err != nil {
		t.Fatal(err)
	}
	if last == nil || last.Iteration != 4 {
		t.Fatalf("last checkpoint %+v", last)
	}
	ext, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 3, Resume: last})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ext.Alpha(), full.Alpha()) {
		t.Fatal("the extended fit differs from the uninterrupted 9-iteration fit")
	}
	// A checkpoint beyond the iterations asked for is refused by Plan.
	short.Iterations = 3
	if _, err := ooc.Plan(src, short, ooc.RunOptions{Resume: last}); err == nil ||
		err.Error() != "invalid configuration: the checkpoint is after iteration 4, beyond the 3 iterations asked for" {
		t.Fatalf("err = %v", err)
	}
}

// Plan resolves the configuration, the task from the source's target
// values, and a memory estimate, without reading data.
func TestPlan(t *testing.T) {
	x := make([]float64, 5000*2)
	y := make([]float64, 5000)
	for i := range y {
		y[i] = float64(i % 4)
	}
	src := stream.NewMemSource(x, 2, y, 1, 1000)
	p, err := ooc.Plan(src, ooc.Config{Task: ooc.TaskMulticlass}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.N != 5000 || p.D != 2 || p.Task != ooc.TaskMulticlass || p.K != 0 || p.Config.Centers != 1000 ||
		p.Config.Kernel.Sigma != math.Sqrt2 || p.Config.Lambda != ooc.DefaultLambda || p.Workers != 2 ||
		!reflect.DeepEqual(p.Features, []string{"x0", "x1"}) || p.Stats {
		t.Fatalf("plan %+v", p)
	}
	tv := targetValues{src, [][]float64{{0, 1, 2, 3}}}
	if p, err = ooc.Plan(tv, ooc.Config{Task: ooc.TaskMulticlass}, ooc.RunOptions{Workers: 2}); err != nil || p.K != 4 {
		t.Fatalf("K = %d, err = %v", p.K, err)
	}
	if p.Memory.Precond != precond.Bytes(1000, precond.Float64) || p.Memory.Total <= p.Memory.Precond {
		t.Errorf("memory %+v", p.Memory)
	}
	if _, err := ooc.Plan(tv, ooc.Config{Task: ooc.TaskBinary}, ooc.RunOptions{}); err == nil ||
		err.Error() != `invalid configuration: binary classification needs exactly two classes in target "y0", found 4: [0 1 2 3]` {
		t.Errorf("err = %v", err)
	}
	if _, err := ooc.Plan(src, ooc.Config{}, ooc.RunOptions{Workers: -1}); err == nil ||
		err.Error() != "invalid configuration: workers must be ≥ 0, got -1" {
		t.Errorf("err = %v", err)
	}
}

type targetValues struct {
	stream.Source
	v [][]float64
}

func (t targetValues) TargetDistinct() [][]float64 { return t.v }
