package ooc_test

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestTuneFailedCandidateJSON: a search with a failed candidate (its
// BestMetric is +Inf) writes its JSON, FitTuned's model holding that
// search is saved and loaded, and the failed candidate reads back as
// failed, with +Inf, its error and no iterations; the others as they were.
func TestTuneFailedCandidateJSON(t *testing.T) {
	x, y := synth(2000, 3, 21)
	src := stream.NewMemSource(x, 3, y, 1, 200)
	// σ = 1e6 makes K_MM all ones to rounding: with a jitter of 1e-300 its
	// Cholesky fails (as in TestTuneFailedSigma).
	search := ooc.TuneConfig{Sigmas: []float64{1e6, 1}, Lambdas: []float64{1e-3, 1e-6}}
	check := func(t *testing.T, want, got *ooc.TuneResult) {
		t.Helper()
		if len(got.Candidates) != len(want.Candidates) || got.Best != want.Best {
			t.Fatalf("read back %d candidates, best %d; wrote %d, best %d", len(got.Candidates), got.Best, len(want.Candidates), want.Best)
		}
		failed := 0
		for i, w := range want.Candidates {
			g := got.Candidates[i]
			if w.Stop == ooc.StopFailed {
				failed++
				if !math.IsInf(w.BestMetric, 1) || !math.IsInf(g.BestMetric, 1) || g.Stop != ooc.StopFailed ||
					!strings.Contains(g.Err, "not positive definite") || g.BestIteration != 0 {
					t.Errorf("failed candidate %d read back as metric %v, stop %q, error %q, best iteration %d",
						i, g.BestMetric, g.Stop, g.Err, g.BestIteration)
				}
				continue
			}
			if g.BestMetric != w.BestMetric || g.BestSE != w.BestSE || g.Stop != w.Stop || !reflect.DeepEqual(g.Residuals, w.Residuals) ||
				len(g.Validation) != len(w.Validation) {
				t.Errorf("candidate %d read back as %+v, wrote %+v", i, g, w)
			}
		}
		if failed != 2 {
			t.Fatalf("%d candidates failed, want the two at σ = 1e6", failed)
		}
	}

	res, err := ooc.Tune(context.Background(), src, ooc.TuneConfig{
		Base:   ooc.Config{Centers: 100, Iterations: 5, Seed: 3, Jitter: 1e-300},
		Sigmas: search.Sigmas, Lambdas: search.Lambdas,
	}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("the search's JSON: %v", err)
	}
	var back ooc.TuneResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	check(t, res, &back)
	if !strings.Contains(string(b), `"best_metric":null`) {
		t.Errorf("a failed candidate's metric is not null: %s", b)
	}

	m, err := ooc.FitTuned(context.Background(), src, ooc.FitTunedConfig{
		Fit:    ooc.Config{Centers: 200, Iterations: 5, Seed: 3, Jitter: 1e-300},
		Search: search, Rows: 1500, Centers: 100,
	}, ooc.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.falkon")
	if err := m.Save(path); err != nil {
		t.Fatalf("a model whose search had a failed candidate: %v", err)
	}
	if _, err := m.SummaryJSON(); err != nil {
		t.Fatalf("summary: %v", err)
	}
	loaded, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	check(t, m.Training().Search, loaded.Training().Search)
}

// TestNotFiniteJSON: every value a search's record may hold that JSON
// cannot (NaN and ±Inf residuals, validation metrics, a candidate's
// metric and standard error) is written, and read back as +Inf (the
// metric), NaN (residuals) or absent (a validation metric).
func TestNotFiniteJSON(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	// Every scalar metric NaN, found by reflection so that a metric added
	// later is covered too.
	var bad ooc.Metrics
	v := reflect.ValueOf(&bad).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[*float64]() {
			f.Set(reflect.ValueOf(&nan))
		}
	}
	bad.Rows = 10
	rmse := 0.5
	c := ooc.TuneCandidate{Lambda: 1e-6, BestMetric: inf, BestSE: nan, Stop: ooc.StopPatience, Iterations: 3,
		Residuals:  []float64{0.5, nan, inf, -inf},
		Validation: []ooc.ValPoint{{Iteration: 1, Metrics: ooc.Metrics{Rows: 10, RMSE: &rmse}}, {Iteration: 2, Metrics: bad}}}
	b, err := json.Marshal(ooc.TuneResult{Metric: "rmse", Candidates: []ooc.TuneCandidate{c}})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back ooc.TuneResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	g := back.Candidates[0]
	if !math.IsInf(g.BestMetric, 1) || g.BestSE != 0 || g.Stop != c.Stop || g.Iterations != 3 || g.Lambda != c.Lambda {
		t.Errorf("read back %+v", g)
	}
	if len(g.Residuals) != 4 || g.Residuals[0] != 0.5 || !math.IsNaN(g.Residuals[1]) || !math.IsNaN(g.Residuals[2]) || !math.IsNaN(g.Residuals[3]) {
		t.Errorf("residuals read back as %v, want [0.5 NaN NaN NaN]", g.Residuals)
	}
	if len(g.Validation) != 2 || g.Validation[0].RMSE == nil || *g.Validation[0].RMSE != 0.5 || g.Validation[1].Iteration != 2 ||
		g.Validation[1].Rows != 10 {
		t.Fatalf("validation read back as %+v", g.Validation)
	}
	if !reflect.DeepEqual(g.Validation[1].Metrics, ooc.Metrics{Rows: 10}) {
		t.Errorf("the NaN metrics read back as %+v, want absent", g.Validation[1].Metrics)
	}
	// A finite candidate keeps its fields as before (a standard error
	// of 0 is absent, as it always was).
	f := ooc.TuneCandidate{Lambda: 1e-3, BestMetric: 0.25, BestIteration: 2, Stop: ooc.StopIterations, Residuals: []float64{0.1, 0.01}}
	b, err = json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "best_se") || !strings.Contains(string(b), `"best_metric":0.25`) {
		t.Errorf("finite candidate: %s", b)
	}
	var fb ooc.TuneCandidate
	if err := json.Unmarshal(b, &fb); err != nil || !reflect.DeepEqual(fb, f) {
		t.Errorf("finite candidate read back as %+v (%v), wrote %+v", fb, err, f)
	}
}
