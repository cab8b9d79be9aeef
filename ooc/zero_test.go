package ooc_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The zero value of each Config, TuneConfig and FitTunedConfig field means
// one thing everywhere: these tests pin the fields that used to differ.

// TestZeroPatience: Config.Patience 0 is DefaultPatience wherever the
// fit has validation rows, as TuneConfig's and FitTuned's (the Nyström
// case, which holds its rows out, is TestPlanNystromStops); without them
// it runs all Iterations, and a negative Patience never stops.
func TestZeroPatience(t *testing.T) {
	x, y := synth(1200, 3, 21)
	src := stream.NewMemSource(x, 3, y, 1, 200)
	train, val, err := ooc.HoldOut(src, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	fit := func(p int, v stream.Source) *ooc.Model {
		t.Helper()
		run := ooc.RunOptions{MaxMemory: -1}
		if v != nil {
			run.Validation = v
		}
		m, err := ooc.Fit(context.Background(), train, ooc.Config{Centers: 100, Iterations: 12, Patience: p, Lambda: 1e-9}, run)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// On these data DefaultPatience stops the fit early, so that the
	// checks below see what 0 means.
	def := fit(ooc.DefaultPatience, val).Training()
	if def.Status != ooc.StatusPatience {
		t.Fatalf("Patience %d did not stop the fit (%d iterations, %s): the data do not test Patience 0", ooc.DefaultPatience, def.Iterations, def.Status)
	}
	m := fit(0, val)
	if tr := m.Training(); tr.Status != ooc.StatusPatience || tr.Iterations != def.Iterations || tr.BestIteration != def.BestIteration ||
		m.Config().Patience != ooc.DefaultPatience {
		t.Errorf("Patience 0 with validation rows: %d iterations, best %d (%s), resolved Patience %d; want DefaultPatience's %d, best %d",
			tr.Iterations, tr.BestIteration, tr.Status, m.Config().Patience, def.Iterations, def.BestIteration)
	}
	for _, c := range []struct {
		p   int
		val stream.Source
	}{{-1, val}, {0, nil}} {
		m := fit(c.p, c.val)
		if tr := m.Training(); tr.Iterations != 12 || tr.Status == ooc.StatusPatience || m.Config().Patience != c.p {
			t.Errorf("Patience %d (validation %v): %d iterations (%s), resolved Patience %d", c.p, c.val != nil, tr.Iterations, tr.Status, m.Config().Patience)
		}
	}
}

// TestZeroLambdas: TuneConfig.Lambdas nil is the same grid in Tune and
// FitTuned (LambdaGrid): {Base.Lambda} when the base gives a λ, else
// DefaultLambdas(). FitTuned reports its search through
// RunOptions.SearchProgress and its final fit through Progress.
func TestZeroLambdas(t *testing.T) {
	for _, c := range []struct {
		tc   ooc.TuneConfig
		want []float64
	}{
		{ooc.TuneConfig{}, ooc.DefaultLambdas()},
		{ooc.TuneConfig{Base: ooc.Config{Lambda: 1e-3}}, []float64{1e-3}},
		{ooc.TuneConfig{Base: ooc.Config{Lambda: 1e-3}, Lambdas: []float64{1e-5, 1e-4}}, []float64{1e-5, 1e-4}},
	} {
		if got := c.tc.LambdaGrid(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("LambdaGrid of Base.Lambda %g, Lambdas %v: %v, want %v", c.tc.Base.Lambda, c.tc.Lambdas, got, c.want)
		}
	}
	lambdas := func(res *ooc.TuneResult) []float64 {
		var out []float64
		for _, c := range res.Candidates {
			out = append(out, c.Lambda)
		}
		return out
	}
	x, y := synth(1500, 2, 26)
	src := stream.NewMemSource(x, 2, y, 1, 250)
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Centers: 60, Iterations: 2}, Sigmas: []float64{1}},
		ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lambdas(res); !reflect.DeepEqual(got, ooc.DefaultLambdas()) {
		t.Errorf("Tune with Lambdas nil and no Base.Lambda tried λ = %v, want %v", got, ooc.DefaultLambdas())
	}
	var search, fit []ooc.Stage
	m, err := ooc.FitTuned(context.Background(), src, ooc.FitTunedConfig{Fit: ooc.Config{Centers: 60, Iterations: 2, Lambda: 1e-3},
		Rows: 1000, Centers: 50, Search: ooc.TuneConfig{Sigmas: []float64{1}}},
		ooc.RunOptions{SearchProgress: func(p ooc.TuneProgress) { search = append(search, p.Stage) },
			Progress: func(p ooc.Progress) { fit = append(fit, p.Stage) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := lambdas(m.Training().Search); !reflect.DeepEqual(got, []float64{1e-3}) {
		t.Errorf("FitTuned with Lambdas nil and Fit.Lambda 1e-3 tried λ = %v, want [0.001]", got)
	}
	if !slices.Contains(search, ooc.StageSubsample) || !slices.Contains(search, ooc.StageIterate) || slices.Contains(search, ooc.StageDone) {
		t.Errorf("SearchProgress saw stages %v: want the subsample and the search's iterations, not the fit's end", search)
	}
	if !slices.Contains(fit, ooc.StageDone) || slices.Contains(fit, ooc.StageSubsample) {
		t.Errorf("Progress saw stages %v: want the final fit's, not the search's", fit)
	}
}

// TestZeroMinImprovement: TuneConfig.MinImprovement 0 is
// DefaultMinImprovement, as Config's: the search is the one with the
// default given explicitly.
func TestZeroMinImprovement(t *testing.T) {
	x, y := synth(1500, 3, 22)
	src := stream.NewMemSource(x, 3, y, 1, 250)
	run := func(mi float64) *ooc.TuneResult {
		res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Centers: 120, Iterations: 15},
			Sigmas: []float64{1, 3}, Lambdas: []float64{1e-6, 1e-3}, MinImprovement: mi, Patience: 2}, ooc.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(0), run(ooc.DefaultMinImprovement)
	for i := range a.Candidates {
		ca, cb := a.Candidates[i], b.Candidates[i]
		if ca.Iterations != cb.Iterations || ca.BestIteration != cb.BestIteration || ca.Stop != cb.Stop {
			t.Errorf("candidate %d: %d/%d iterations (%s) with 0, %d/%d (%s) with DefaultMinImprovement", i,
				ca.BestIteration, ca.Iterations, ca.Stop, cb.BestIteration, cb.Iterations, cb.Stop)
		}
	}
}

// TestZeroSigmas: TuneConfig.Sigmas nil is the same grid in Tune and
// FitTuned (SigmaGrid): DefaultSigmas(d) when the base kernel gives no
// length scale, the base kernel alone when it gives one or has none.
func TestZeroSigmas(t *testing.T) {
	const d = 3
	for _, c := range []struct {
		name string
		k    kernel.Kernel
		want []float64
	}{
		{"default kernel", kernel.Kernel{}, ooc.DefaultSigmas(d)},
		{"laplacian", kernel.Kernel{Kind: kernel.Laplacian}, ooc.DefaultSigmas(d)},
		{"sigma given", kernel.Kernel{Sigma: 2}, nil},
		{"per-feature sigmas", kernel.Kernel{Sigmas: []float64{1, 2, 3}}, nil},
		{"linear", kernel.Kernel{Kind: kernel.Linear}, nil},
	} {
		if got := (ooc.TuneConfig{Base: ooc.Config{Kernel: c.k}}).SigmaGrid(d); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: SigmaGrid = %v, want %v", c.name, got, c.want)
		}
	}
	if got := (ooc.TuneConfig{Sigmas: []float64{5}}).SigmaGrid(d); !reflect.DeepEqual(got, []float64{5}) {
		t.Errorf("given Sigmas: %v", got)
	}
	x, y := synth(1000, d, 23)
	src := stream.NewMemSource(x, d, y, 1, 250)
	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{Base: ooc.Config{Centers: 80, Iterations: 3},
		Lambdas: []float64{1e-4}, SigmaHalving: -1}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, c := range res.Candidates {
		got = append(got, c.Sigma)
	}
	if !reflect.DeepEqual(got, ooc.DefaultSigmas(d)) {
		t.Errorf("Tune with Sigmas nil tried σ = %v, want %v", got, ooc.DefaultSigmas(d))
	}
}

// TestSearchBaseRefused: FitTuned's search takes its base from
// FitTunedConfig.Fit; a Search.Base that is set is refused, not overwritten.
func TestSearchBaseRefused(t *testing.T) {
	x, y := synth(600, 2, 24)
	src := stream.NewMemSource(x, 2, y, 1, 200)
	_, err := ooc.FitTuned(context.Background(), src, ooc.FitTunedConfig{Search: ooc.TuneConfig{Base: ooc.Config{Lambda: 1e-3}}}, ooc.RunOptions{})
	var ce *ooc.ConfigError
	if !errors.As(err, &ce) || ce.Field != "FitTunedConfig.Search.Base" || !strings.Contains(ce.Msg, "leave Search.Base zero") {
		t.Errorf("err = %v", err)
	}
}

// TestConfigCarriesPrecision: a saved Config defines the model, its
// kernel precision included ("precision", left out for float64).
func TestConfigCarriesPrecision(t *testing.T) {
	b, err := json.Marshal(ooc.Config{Precision: kernel.Float32})
	if err != nil {
		t.Fatal(err)
	}
	var back ooc.Config
	if err := json.Unmarshal(b, &back); err != nil || back.Precision != kernel.Float32 || !strings.Contains(string(b), `"precision":"float32"`) {
		t.Errorf("%s → %v (%v)", b, back.Precision, err)
	}
	if b, _ := json.Marshal(ooc.Config{}); strings.Contains(string(b), "precision\":") && !strings.Contains(string(b), "precond_precision") {
		t.Errorf("float64 written: %s", b)
	}
	x, y := synth(500, 2, 25)
	m, err := ooc.Fit(context.Background(), stream.NewMemSource(x, 2, y, 1, 100),
		ooc.Config{Centers: 40, Iterations: 3, Precision: kernel.Float32, Preconditioner: precond.MethodCholesky}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.falkon")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := json.Marshal(l.Config())
	if l.Config().Precision != kernel.Float32 || !strings.Contains(string(cb), `"precision":"float32"`) {
		t.Errorf("loaded Config %s", cb)
	}
}
