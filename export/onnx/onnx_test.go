package onnx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/falkon-ooc/falkon-ooc/export/onnx"
	pb "github.com/falkon-ooc/falkon-ooc/export/onnx/internal/onnxpb"
	"github.com/falkon-ooc/falkon-ooc/internal/ortrun"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The synthetic data: d = 4 features with unlike means and scales (so
// that the graph's standardisation matters), and targets that are smooth
// functions of the standardised features.
var (
	featMean  = []float64{0, 10, -3, 100}
	featScale = []float64{1, 0.1, 5, 20}
)

const dim = 4

type task int

const (
	regression  task = iota
	regression2      // two targets
	binary           // classes 3 and 7
	multiclass       // classes 0, 1, 2
	labeled          // multiclass with string labels cat, dog, eel
)

func (t task) String() string {
	return [...]string{"regression", "regression2", "binary", "multiclass", "labeled"}[t]
}

// rows returns n rows of features and their targets for the task.
func rows(t task, n int, seed uint64) (x, y []float64, k int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x = make([]float64, n*dim)
	u := make([]float64, dim)
	k = 1
	if t == regression2 {
		k = 2
	}
	y = make([]float64, n*k)
	for i := range n {
		for j := range dim {
			u[j] = rng.NormFloat64()
			x[i*dim+j] = featMean[j] + featScale[j]*u[j]
		}
		e := 0.1 * rng.NormFloat64()
		switch t {
		case regression, regression2:
			y[i*k] = 3 + math.Sin(2*u[0]) + 0.5*u[1]*u[2] + e
			if k == 2 {
				y[i*k+1] = -20 + 5*math.Cos(u[3]) + u[0] + e
			}
		case binary:
			y[i] = 3
			if math.Sin(2*u[0])+0.5*u[1]*u[2]+3*e > 0.2 {
				y[i] = 7
			}
		case multiclass, labeled:
			s := []float64{u[0] + e, u[1]*u[2] + e, -u[0] - u[3] + e}
			y[i] = float64(slices.Index(s, slices.Max(s)))
		}
	}
	return x, y, k
}

// labelSource gives a source string labels for its target.
type labelSource struct{ *stream.MemSource }

func (labelSource) TargetLabels() [][]string { return [][]string{{"cat", "dog", "eel"}} }

func source(t task, n int, seed uint64) stream.Source {
	x, y, k := rows(t, n, seed)
	s := stream.NewMemSource(x, dim, y, k, 500)
	if t == labeled {
		return labelSource{s}
	}
	return s
}

// kernels are the kernels the tool fits, with parameters for the data.
var kernels = []struct {
	name string
	k    kernel.Kernel
}{
	{"gaussian", kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}},
	{"ard", kernel.Kernel{Kind: kernel.Gaussian, Sigmas: []float64{1, 2, 1.5, 3}}},
	{"laplacian", kernel.Kernel{Kind: kernel.Laplacian, Sigma: 3}},
	{"matern12", kernel.Kernel{Kind: kernel.Matern12, Sigma: 3}},
	{"matern32", kernel.Kernel{Kind: kernel.Matern32, Sigma: 2}},
	{"matern52", kernel.Kernel{Kind: kernel.Matern52, Sigmas: []float64{2, 1.5, 2, 3}}},
	{"linear", kernel.Kernel{Kind: kernel.Linear, Gamma: 0.5, Coef0: 1}},
	{"polynomial", kernel.Kernel{Kind: kernel.Polynomial, Degree: 3, Gamma: 0.25, Coef0: 1}},
}

// fitModel fits a model of the task with a validation source (so that
// classifiers are calibrated, and regressions can have an uncertainty).
func fitModel(t *testing.T, tk task, k kernel.Kernel, prec kernel.Precision, loss ooc.Loss) *model.Model {
	t.Helper()
	return fitWith(t, tk, ooc.Config{Kernel: k, Precision: prec, Loss: loss})
}

func fitWith(t *testing.T, tk task, cfg ooc.Config) *model.Model {
	t.Helper()
	k := cfg.Kernel
	cfg.Centers, cfg.Lambda, cfg.Iterations, cfg.Seed = 100, 1e-6, 20, 1
	switch tk {
	case binary:
		cfg.Task = ooc.TaskBinary
	case multiclass, labeled:
		cfg.Task = ooc.TaskMulticlass
	}
	if !k.Kind.IsDistance() {
		cfg.Preconditioner = precond.MethodEigen // K_MM has rank < M
	}
	m, err := ooc.Fit(context.Background(), source(tk, 3000, 1), cfg, ooc.RunOptions{Validation: source(tk, 1000, 2)})
	if err != nil {
		t.Fatalf("fit %s %s: %v", tk, k, err)
	}
	return saved(t, m)
}

// saved returns m as its model file reads (with its provenance: the
// configuration and training record), as the command exports it.
func saved(t *testing.T, m *ooc.Model) *model.Model {
	t.Helper()
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	mm, err := model.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return mm
}

// tolerances of ONNX Runtime's outputs against the model's own, relative
// to the output's largest magnitude (see within): float64 graphs agree
// to 1e-9; float32 graphs to 1e-4 on values and 1e-5 on probabilities,
// or, where the model's own float32 arithmetic is further than that from
// the exact value (the float64 graph of the same model), to twice its
// distance: two float32 evaluations differ by their rounding, which
// neither can undo. Labels agree except where the decision lies within
// 1e-6 (and, in float32, that distance) of its threshold.
type tols struct{ value, proba float64 }

var (
	tol64 = tols{1e-9, 1e-9}
	tol32 = tols{1e-4, 1e-5}
)

// check is one exported graph and what it must reproduce.
type check struct {
	name  string
	m     *model.Model
	std   bool // the graph has OutputStd
	path  string
	f32   bool
	tol   tols
	x     []float64
	nrows int
	// exact is, for a float32 graph, the float64 graph of the same
	// model: its exact predictions.
	exact string
}

func exportTo(t *testing.T, m *model.Model, opt onnx.Options, path string) onnx.Info {
	t.Helper()
	info, err := onnx.WriteFile(path, m, opt)
	if err != nil {
		t.Fatalf("export %s: %v", path, err)
	}
	return info
}

// runChecks runs every graph in ONNX Runtime in one node process and
// compares each with the model's own predictions.
func runChecks(t *testing.T, checks []check) {
	t.Helper()
	if err := ortrun.Available(); err != nil {
		t.Skipf("ONNX Runtime unavailable, graphs not run: %v", err)
	}
	var reqs []ortrun.Request
	for i := range checks {
		c := &checks[i]
		if c.f32 {
			// A float32 graph reads float32 rows: the model predicts the
			// same rounded rows.
			c.x = slices.Clone(c.x)
			for j, v := range c.x {
				c.x[j] = float64(float32(v))
			}
		}
		reqs = append(reqs, ortrun.Request{Model: c.path, X: c.x, Rows: c.nrows, Cols: dim, Float32: c.f32, Batch: 1000})
		if c.exact != "" {
			reqs = append(reqs, ortrun.Request{Model: c.exact, X: c.x, Rows: c.nrows, Cols: dim, Batch: 1000})
		}
	}
	res, err := ortrun.Run(t.TempDir(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		out := res[0].Outputs
		var exact map[string]*ortrun.Output
		res = res[1:]
		if c.exact != "" {
			exact, res = res[0].Outputs, res[1:]
		}
		t.Run(c.name, func(t *testing.T) { compare(t, c, out, exact) })
	}
}

// exactOf adds, for a float32 graph, the float64 graph of its model.
func exactOf(t *testing.T, c check) check {
	if !c.f32 {
		return c
	}
	f64 := kernel.Float64
	c.exact = strings.TrimSuffix(c.path, ".onnx") + "_exact.onnx"
	exportTo(t, c.m, onnx.Options{Precision: &f64, Std: c.std}, c.exact)
	return c
}

// compare holds the graph's outputs out to the model's predictions (its
// Predictor's) and to the exact ones of a float32 graph.
func compare(t *testing.T, c check, out, exact map[string]*ortrun.Output) {
	m, n, k := c.m, c.nrows, c.m.K()
	var want model.Want
	if m.HasProba() {
		want |= model.WantProba
	}
	if c.std {
		want |= model.WantStd
	}
	var pred model.Prediction
	if err := m.NewPredictor().PredictTo(&pred, c.x, n, want); err != nil {
		t.Fatal(err)
	}
	scores := pred.Scores
	get := func(name string, width int) *ortrun.Output {
		o := out[name]
		if o == nil {
			t.Fatalf("no output %q (outputs: %v)", name, keys(out))
		}
		if len(o.Data)+len(o.Strings) != n*width {
			t.Fatalf("output %q has %d values, want %d × %d", name, len(o.Data)+len(o.Strings), n, width)
		}
		return o
	}
	if m.Task() == ooc.TaskRegression {
		if _, ok := out[onnx.OutputScores]; ok {
			t.Errorf("a regression graph has %q", onnx.OutputScores)
		}
		within(t, onnx.OutputValue, get(onnx.OutputValue, k).Data, scores, exactData(exact, onnx.OutputValue), c.tol.value)
		if c.std {
			within(t, onnx.OutputStd, get(onnx.OutputStd, k).Data, pred.Std, exactData(exact, onnx.OutputStd), c.tol.value)
		} else if _, ok := out[onnx.OutputStd]; ok {
			t.Errorf("a graph without Options.Std has %q", onnx.OutputStd)
		}
		return
	}
	slack := within(t, onnx.OutputScores, get(onnx.OutputScores, k).Data, scores, exactData(exact, onnx.OutputScores), c.tol.value)
	nc := m.NumClasses()
	if m.HasProba() {
		pslack := within(t, onnx.OutputProbabilities, get(onnx.OutputProbabilities, nc).Data, pred.Proba, exactData(exact, onnx.OutputProbabilities), c.tol.proba)
		if m.Task() == model.TaskBinary {
			slack = pslack
		}
	} else if _, ok := out[onnx.OutputProbabilities]; ok {
		t.Errorf("a model without probabilities has %q", onnx.OutputProbabilities)
	}
	ci, lab := get(onnx.OutputClassIndex, 1), get(onnx.OutputLabel, 1)
	names, classes := m.ClassNames(), m.Classes()
	// The decision's margin: binary |p − threshold| for the probability
	// p of the second class, multiclass the gap between the two largest
	// scores, on the scale of the scores.
	scale := 1.0
	if m.Task() == model.TaskMulticlass {
		for _, v := range scores {
			scale = max(scale, math.Abs(v))
		}
	}
	proba := make([]float64, n*nc)
	m.ProbaTo(proba, scores, n)
	d, _ := m.Decision()
	near, diff := 0, 0
	for r := range n {
		s := scores[r*k : (r+1)*k]
		want := pred.Class[r]
		if want != m.ClassIndex(s) {
			t.Fatalf("row %d: the Predictor's class %d, ClassIndex %d", r, want, m.ClassIndex(s))
		}
		margin := math.Abs(proba[r*2+1] - d.Threshold)
		if k > 1 {
			top := slices.Clone(s)
			slices.Sort(top)
			margin = top[k-1] - top[k-2]
		}
		if margin <= max(1e-6*scale, slack) {
			near++
			continue
		}
		got := int(ci.Data[r])
		if got != want {
			diff++
			if diff <= 3 {
				t.Errorf("row %d: class index %d, want %d (scores %v)", r, got, want, s)
			}
			continue
		}
		if m.Labeled() {
			if lab.Strings[r] != names[want] {
				t.Errorf("row %d: label %q, want %q", r, lab.Strings[r], names[want])
			}
		} else if lab.Data[r] != classes[want] && !(c.f32 && float64(float32(classes[want])) == lab.Data[r]) {
			t.Errorf("row %d: label %v, want %v", r, lab.Data[r], classes[want])
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d rows have another class (%d within 1e-6 of the threshold not compared)", diff, n, near)
	}
}

// within checks that got matches want to tol relative to the largest
// magnitude of want, max |got − want| ≤ tol·max |want| (for
// probabilities, whose largest value is near 1, an absolute difference),
// so that scores near 0 beside others near 1 are held to the accuracy of
// the sums that make them. With exact (a float32 graph) the bound is at
// least twice the model's own distance to exact, and got must be as near
// to exact; within returns that slack (0 without exact). It logs the
// worst element-wise relative difference too.
func within(t *testing.T, name string, got, want, exact []float64, tol float64) (slack float64) {
	t.Helper()
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	worst := func(a, b []float64) (w float64, at int) {
		at = -1
		for i := range b {
			if d := math.Abs(a[i] - b[i]); !(d <= w) {
				w, at = d, i
			}
		}
		return w, at
	}
	if exact != nil {
		own, _ := worst(want, exact)
		slack = 2 * own
	}
	bound := max(tol*scale, slack)
	w, at := worst(got, want)
	elem := 0.0
	for i := range want {
		elem = max(elem, math.Abs(got[i]-want[i])/max(math.Abs(want[i]), math.SmallestNonzeroFloat64))
	}
	if !(w <= bound) {
		t.Errorf("%s: max difference %.3g of max magnitude %.3g (%.3g) at %d (%v, want %v), bound %.3g", name, w, scale, w/scale, at, got[at], want[at], bound)
		return slack
	}
	t.Logf("%s: max difference %.3g of max magnitude %.3g (%.3g); element-wise relative %.3g", name, w, scale, w/scale, elem)
	if exact != nil {
		we, at := worst(got, exact)
		if !(we <= bound) {
			t.Errorf("%s: %.3g from the exact value at %d (%v, exact %v), bound %.3g", name, we, at, got[at], exact[at], bound)
		}
		t.Logf("%s: distance to exact: graph %.3g, model %.3g (of %.3g)", name, we, slack/2, scale)
	}
	return slack
}

func exactData(exact map[string]*ortrun.Output, name string) []float64 {
	if exact == nil {
		return nil
	}
	return exact[name].Data
}

func keys(m map[string]*ortrun.Output) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// testRows is how many held-out rows each graph predicts: 10⁴ (as the
// evidence asks), or 500 with -short.
func testRows() int {
	if testing.Short() {
		return 500
	}
	return 10000
}

// TestRuntimeMatchesModel exports every kernel for every task in float64
// and float32, runs each graph in ONNX Runtime on held-out rows, and
// compares its outputs with the model's: values, calibrated probabilities
// (Platt for binary, temperature for multiclass), class indices and
// labels (class values, or string labels).
func TestRuntimeMatchesModel(t *testing.T) {
	dir := t.TempDir()
	n := testRows()
	var checks []check
	for _, kc := range kernels {
		for _, tk := range []task{regression, binary, multiclass} {
			for _, prec := range []kernel.Precision{kernel.Float64, kernel.Float32} {
				m := fitModel(t, tk, kc.k, prec, "")
				if tk != regression && m.Calibration() == nil {
					t.Fatalf("%s %s: the fit has no calibration", kc.name, tk)
				}
				name := fmt.Sprintf("%s_%s_%s", kc.name, tk, prec)
				path := filepath.Join(dir, name+".onnx")
				info := exportTo(t, m, onnx.Options{Version: "test"}, path)
				if info.Precision != prec {
					t.Errorf("%s: graph precision %v, want the model's %v", name, info.Precision, prec)
				}
				x, _, _ := rows(tk, n, 99)
				tol := tol64
				if prec == kernel.Float32 {
					tol = tol32
				}
				checks = append(checks, exactOf(t, check{name: name, m: m, path: path, f32: prec == kernel.Float32, tol: tol, x: x, nrows: n}))
			}
		}
	}
	runChecks(t, checks)
}

// TestRuntimeOtherModels covers what the kernel sweep does not: several
// targets, string labels, the logistic loss's own probabilities (no
// calibration), a classifier without probabilities, a model fitted
// without standardisation, a constant feature, and a float64 model
// exported as a float32 graph.
func TestRuntimeOtherModels(t *testing.T) {
	dir := t.TempDir()
	n := min(testRows(), 2000)
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	var checks []check
	add := func(name string, m *model.Model, opt onnx.Options, tk task, tol tols) {
		path := filepath.Join(dir, name+".onnx")
		info := exportTo(t, m, opt, path)
		x, _, _ := rows(tk, n, 99)
		checks = append(checks, exactOf(t, check{name: name, m: m, path: path, f32: info.Precision == kernel.Float32, std: opt.Std, tol: tol, x: x, nrows: n}))
	}
	add("regression2", fitModel(t, regression2, gauss, kernel.Float64, ""), onnx.Options{}, regression2, tol64)
	add("labeled", fitModel(t, labeled, gauss, kernel.Float64, ""), onnx.Options{}, labeled, tol64)
	add("labeled_f32", fitModel(t, labeled, gauss, kernel.Float32, ""), onnx.Options{}, labeled, tol32)
	add("logistic_binary", fitModel(t, binary, gauss, kernel.Float64, ooc.LossLogistic), onnx.Options{}, binary, tol64)
	add("logistic_multiclass", fitModel(t, multiclass, gauss, kernel.Float64, ooc.LossLogistic), onnx.Options{}, multiclass, tol64)
	// A binary model with a decision threshold of its own (the format's
	// capability "decision"): labels where p ≥ 0.3.
	thr, err := fitModel(t, binary, gauss, kernel.Float64, "").WithDecision(model.Decision{Threshold: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(thr.Requires(), []string{"decision"}) {
		t.Fatalf("Requires = %q", thr.Requires())
	}
	add("decision_threshold", thr, onnx.Options{}, binary, tol64)
	f32 := kernel.Float32
	add("f64_model_f32_graph", fitModel(t, regression, gauss, kernel.Float64, ""), onnx.Options{Precision: &f32}, regression, tol32)

	// Without validation rows a classifier has no calibration, and the
	// graph no probabilities.
	uncalFit, err := ooc.Fit(context.Background(), source(binary, 2000, 1),
		ooc.Config{Centers: 80, Kernel: gauss, Lambda: 1e-6, Iterations: 15, Seed: 1, Task: ooc.TaskBinary}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	add("uncalibrated_binary", saved(t, uncalFit), onnx.Options{}, binary, tol64)

	// No standardisation; and a constant feature, whose deviation is 0
	// (the model divides by 1 instead).
	x, y, _ := rows(regression, 2000, 1)
	for i := range 2000 {
		x[i*dim+3] = 5
	}
	raw, err := ooc.Fit(context.Background(), stream.NewMemSource(x, dim, y, 1, 500),
		ooc.Config{Centers: 80, Kernel: kernel.Kernel{Kind: kernel.Matern52, Sigma: 20}, Lambda: 1e-6, Iterations: 15, Seed: 1, NoStandardize: true}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if raw.FeatureStd() != nil {
		t.Fatal("NoStandardize: the model has a standardisation")
	}
	add("no_standardize", saved(t, raw), onnx.Options{}, regression, tol64)
	cst, err := ooc.Fit(context.Background(), stream.NewMemSource(x, dim, y, 1, 500),
		ooc.Config{Centers: 80, Kernel: gauss, Lambda: 1e-6, Iterations: 15, Seed: 1}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cst.FeatureStd()[3] != 0 {
		t.Fatalf("constant feature: deviation %v", cst.FeatureStd()[3])
	}
	add("constant_feature", saved(t, cst), onnx.Options{}, regression, tol64)
	runChecks(t, checks)
}

// TestRuntimeStd exports regression models with an uncertainty, for
// every distance kernel (the kernels an uncertainty is fitted for) in
// float64 and float32, with Options.Std, and compares the graph's values
// and standard deviations with the model's (Predictor, WantStd); also two
// targets and the exact method.
func TestRuntimeStd(t *testing.T) {
	dir := t.TempDir()
	n := min(testRows(), 2000)
	var checks []check
	add := func(name string, tk task, cfg ooc.Config) {
		m := fitWith(t, tk, cfg)
		if m.Uncertainty() == nil {
			t.Fatalf("%s: the fit has no uncertainty", name)
		}
		path := filepath.Join(dir, name+".onnx")
		info := exportTo(t, m, onnx.Options{Std: true}, path)
		if !slices.Equal(info.Outputs, []string{onnx.OutputValue, onnx.OutputStd}) {
			t.Errorf("%s: outputs %v", name, info.Outputs)
		}
		x, _, _ := rows(tk, n, 99)
		tol := tol64
		if cfg.Precision == kernel.Float32 {
			tol = tol32
		}
		checks = append(checks, exactOf(t, check{name: name, m: m, path: path, f32: cfg.Precision == kernel.Float32, std: true, tol: tol, x: x, nrows: n}))
	}
	for _, kc := range kernels {
		if !kc.k.Kind.IsDistance() {
			continue
		}
		for _, prec := range []kernel.Precision{kernel.Float64, kernel.Float32} {
			add(fmt.Sprintf("%s_std_%s", kc.name, prec), regression, ooc.Config{Kernel: kc.k, Precision: prec, Uncertainty: ooc.UncertaintyPrecond})
		}
	}
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	add("regression2_std", regression2, ooc.Config{Kernel: gauss, Uncertainty: ooc.UncertaintyPrecond})
	add("exact_std", regression, ooc.Config{Kernel: gauss, Uncertainty: ooc.UncertaintyExact, UncertaintyRank: 8})
	runChecks(t, checks)
}

// TestStdRefused: Options.Std for a model without an uncertainty (a
// regression fitted without one, a classifier) is refused, naming the
// option.
func TestStdRefused(t *testing.T) {
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	for _, tk := range []task{regression, binary} {
		m := fitModel(t, tk, gauss, kernel.Float64, "")
		_, _, err := onnx.Marshal(m, onnx.Options{Std: true})
		if err == nil || !strings.Contains(err.Error(), "Options.Std: the model has no predictive standard deviations") {
			t.Errorf("%s: err = %v", tk, err)
		}
	}
}

// TestChecker runs the ONNX checker of the onnx Python package (full
// check: strict shape inference against the declared outputs) on a graph
// of every kernel, task and precision, with --std and string labels; it
// skips, saying why, when no python3 has the package (Debian:
// python3-onnx).
func TestChecker(t *testing.T) {
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import onnx").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with the onnx package: the ONNX checker not run (the runtime tests still load every graph)")
	}
	dir := t.TempDir()
	var paths []string
	export := func(name string, m *model.Model, opt onnx.Options) {
		p := filepath.Join(dir, name+".onnx")
		exportTo(t, m, opt, p)
		paths = append(paths, p)
	}
	f32, f64 := kernel.Float32, kernel.Float64
	for _, kc := range kernels {
		for _, tk := range []task{regression, binary, multiclass} {
			m := fitModel(t, tk, kc.k, kernel.Float64, "")
			export(fmt.Sprintf("%s_%s_f64", kc.name, tk), m, onnx.Options{Precision: &f64})
			export(fmt.Sprintf("%s_%s_f32", kc.name, tk), m, onnx.Options{Precision: &f32})
		}
	}
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	std := fitWith(t, regression2, ooc.Config{Kernel: gauss, Uncertainty: ooc.UncertaintyPrecond})
	export("std_f64", std, onnx.Options{Std: true})
	export("std_f32", std, onnx.Options{Std: true, Precision: &f32})
	export("labeled", fitModel(t, labeled, gauss, kernel.Float64, ""), onnx.Options{})
	export("logistic", fitModel(t, multiclass, gauss, kernel.Float64, ooc.LossLogistic), onnx.Options{})
	out, err := exec.Command(python, append([]string{filepath.Join("testdata", "check.py")}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("the ONNX checker refused a graph: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// TestGraph reads an exported file back: the opset, the IR version, the
// input and outputs with their types and shapes, and the metadata.
func TestGraph(t *testing.T) {
	m := fitModel(t, labeled, kernel.Kernel{Kind: kernel.Matern32, Sigma: 2}, kernel.Float32, "")
	data, info, err := onnx.Marshal(m, onnx.Options{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	if mp.IrVersion != onnx.IRVersion || len(mp.OpsetImport) != 1 || mp.OpsetImport[0].Version != onnx.Opset || mp.OpsetImport[0].Domain != "" {
		t.Errorf("IR version %d, opsets %v", mp.IrVersion, mp.OpsetImport)
	}
	if mp.ProducerName != "falkon-ooc" || mp.ProducerVersion != "1.2.3" {
		t.Errorf("producer %q %q", mp.ProducerName, mp.ProducerVersion)
	}
	wantOut := []string{onnx.OutputScores, onnx.OutputProbabilities, onnx.OutputClassIndex, onnx.OutputLabel}
	if !slices.Equal(info.Outputs, wantOut) {
		t.Errorf("Info.Outputs %v, want %v", info.Outputs, wantOut)
	}
	g := mp.Graph
	type io struct {
		name string
		elem pb.TensorProto_DataType
		dims string
	}
	desc := func(v *pb.ValueInfoProto) io {
		tt := v.Type.GetTensorType()
		var dims []string
		for _, d := range tt.Shape.Dim {
			if p := d.GetDimParam(); p != "" {
				dims = append(dims, p)
			} else {
				dims = append(dims, fmt.Sprint(d.GetDimValue()))
			}
		}
		return io{v.Name, pb.TensorProto_DataType(tt.ElemType), strings.Join(dims, "×")}
	}
	if len(g.Input) != 1 || desc(g.Input[0]) != (io{onnx.Input, pb.TensorProto_FLOAT, "N×4"}) {
		t.Errorf("inputs %v", g.Input)
	}
	want := []io{
		{onnx.OutputScores, pb.TensorProto_FLOAT, "N×3"},
		{onnx.OutputProbabilities, pb.TensorProto_FLOAT, "N×3"},
		{onnx.OutputClassIndex, pb.TensorProto_INT64, "N"},
		{onnx.OutputLabel, pb.TensorProto_STRING, "N"},
	}
	for i, o := range g.Output {
		if i >= len(want) || desc(o) != want[i] {
			t.Errorf("output %d: %+v", i, desc(o))
		}
	}
	if len(g.Output) != len(want) {
		t.Errorf("%d outputs, want %d", len(g.Output), len(want))
	}
	ops := map[string]bool{}
	for _, n := range g.Node {
		ops[n.OpType] = true
		if n.Domain != "" {
			t.Errorf("node %s: domain %q, want the default", n.Name, n.Domain)
		}
	}
	for _, op := range []string{"Sub", "Mul", "ReduceSumSquare", "Concat", "Gemm", "MatMul", "Max", "Sqrt", "Exp", "Softmax", "ArgMax", "Gather"} {
		if !ops[op] {
			t.Errorf("no %s node", op)
		}
	}
	meta := map[string]string{}
	for _, p := range mp.MetadataProps {
		meta[p.Key] = p.Value
	}
	wantMeta := map[string]string{
		"falkon_ooc_version": "1.2.3",
		"task":               "multiclass",
		"features":           `["x0","x1","x2","x3"]`,
		"classes":            "[0,1,2]",
		"class_names":        `["cat","dog","eel"]`,
		"kernel":             `{"kind":"matern32","sigma":2}`,
		"sigma":              "2",
		"lambda":             "1e-06",
		"centers":            "100",
		"precision":          "float32",
		"model_precision":    "float32",
	}
	for k, v := range wantMeta {
		if meta[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, meta[k], v)
		}
	}
	if !strings.Contains(meta["calibration"], `"method":"temperature"`) {
		t.Errorf("metadata calibration = %q", meta["calibration"])
	}
}

// TestPrecisionRefused: a precision other than float32 and float64 is
// refused, naming the option.
func TestPrecisionRefused(t *testing.T) {
	m := fitModel(t, regression, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, kernel.Float64, "")
	bad := kernel.Precision(7)
	_, _, err := onnx.Marshal(m, onnx.Options{Precision: &bad})
	if err == nil || !strings.Contains(err.Error(), "Options.Precision") {
		t.Fatalf("err = %v, want one naming Options.Precision", err)
	}
	if errors.Is(err, onnx.ErrUnsupported) {
		t.Errorf("a bad option is not an unsupported model: %v", err)
	}
}

// TestWriteFileKeepsOldOnError: a failed export leaves the file at path
// as it was.
func TestWriteFileKeepsOldOnError(t *testing.T) {
	m := fitModel(t, regression, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}, kernel.Float64, "")
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := kernel.Precision(7)
	if _, err := onnx.WriteFile(path, m, onnx.Options{Precision: &bad}); err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("file now holds %q", b)
	}
	if _, err := onnx.WriteFile(filepath.Join(path, "sub.onnx"), m, onnx.Options{}); err == nil || !strings.Contains(err.Error(), "sub.onnx") {
		t.Errorf("write under a file: err = %v, want one naming the path", err)
	}
}
