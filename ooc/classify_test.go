package ooc_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

func TestAutoTask(t *testing.T) {
	ints := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i * 3)
		}
		return v
	}
	for _, tc := range []struct {
		name     string
		targets  int
		distinct []float64
		want     ooc.Task
	}{
		{"2 values", 1, []float64{0, 1}, ooc.TaskBinary},
		{"2 fractional values", 1, []float64{-0.5, 0.5}, ooc.TaskBinary},
		{"3 integers", 1, ints(3), ooc.TaskMulticlass},
		{"100 integers", 1, ints(100), ooc.TaskMulticlass},
		{"101 integers", 1, ints(101), ooc.TaskRegression},
		{"3 values, one fractional", 1, []float64{0, 1, 2.5}, ooc.TaskRegression},
		{"more than MaxDistinct", 1, nil, ooc.TaskRegression},
		{"one value", 1, []float64{4}, ooc.TaskRegression},
		{"two target columns", 2, ints(3), ooc.TaskRegression},
	} {
		if got := ooc.AutoTask(tc.targets, tc.distinct); got != tc.want {
			t.Errorf("%s: AutoTask = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// labeledSource is a MemSource that reports its target's distinct values
// and, optionally, label names (as a chunk store with a string target).
type labeledSource struct {
	*stream.MemSource
	distinct []float64
	labels   []string
}

func (s *labeledSource) TargetDistinct() [][]float64 { return [][]float64{s.distinct} }
func (s *labeledSource) TargetLabels() [][]string    { return [][]string{s.labels} }

// classData returns n rows of 2 features and a class code 0 … k−1 by
// the angle of the point, with some label noise.
func classData(n, k int, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x, y = make([]float64, 2*n), make([]float64, n)
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x[2*i], x[2*i+1] = a, b
		c := int((math.Atan2(b, a) + math.Pi) / (2 * math.Pi) * float64(k))
		if rng.Float64() < 0.1 {
			c = rng.IntN(k)
		}
		y[i] = float64(min(c, k-1))
	}
	return x, y
}

// TestAutoTaskPlan: through Plan, an integer target with 2, 3, 100 and
// 101 distinct values, and string labels with 2, 3, 100 and 101 (as
// codes with names).
func TestAutoTaskPlan(t *testing.T) {
	for _, k := range []int{2, 3, 100, 101} {
		for _, labeled := range []bool{false, true} {
			n := 2 * k
			x := make([]float64, n)
			y := make([]float64, n)
			distinct := make([]float64, k)
			var labels []string
			for i := range n {
				x[i] = float64(i)
				y[i] = float64(i % k)
			}
			for c := range k {
				distinct[c] = float64(c)
				if labeled {
					labels = append(labels, "class "+string(rune('A'+c%26))+strings.Repeat("'", c/26))
				}
			}
			src := &labeledSource{MemSource: stream.NewMemSource(x, 1, y, 1, 64), distinct: distinct, labels: labels}
			p, err := ooc.Plan(src, ooc.Config{Centers: 2}, ooc.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, wantK := ooc.TaskMulticlass, k
			switch {
			case k == 2:
				want, wantK = ooc.TaskBinary, 1
			case k > ooc.MaxAutoClasses:
				want, wantK = ooc.TaskRegression, 1
			}
			if p.Task != want || p.K != wantK {
				t.Errorf("k = %d labeled %v: task %q with %d outputs, want %q with %d", k, labeled, p.Task, p.K, want, wantK)
			}
			if labeled && want != ooc.TaskRegression && !slices.Equal(p.ClassNames, labels) {
				t.Errorf("k = %d: class names %q, want %q", k, p.ClassNames, labels)
			}
		}
	}
}

// TestFitLabelsAndCalibration fits a 3-class labelled target with
// validation rows: the model keeps the names, carries a temperature that
// lowers the validation log-loss, survives Save and Load, and its
// probabilities sum to 1 and agree with its predicted class.
func TestFitLabelsAndCalibration(t *testing.T) {
	x, y := classData(3000, 3, 5)
	labels := []string{"cat", "dog", "eel"}
	src := &labeledSource{MemSource: stream.NewMemSource(x, 2, y, 1, 500), distinct: []float64{0, 1, 2}, labels: labels}
	train, val := stream.Holdout(src, 0.3, 9)
	m, err := ooc.Fit(context.Background(), train, ooc.Config{Centers: 100, Iterations: 10}, ooc.RunOptions{Validation: val})
	if err != nil {
		t.Fatal(err)
	}
	if m.Task() != ooc.TaskMulticlass || !slices.Equal(m.ClassNames(), labels) || !m.Labeled() {
		t.Fatalf("task %s, class names %q", m.Task(), m.ClassNames())
	}
	c := m.Calibration()
	if c == nil || c.Method != ooc.CalibrationTemperature || !(c.Temperature > 0) || c.Rows < 800 {
		t.Fatalf("calibration %+v", c)
	}
	if !(c.LogLossAfter < c.LogLossBefore) {
		t.Errorf("log-loss %.4f before, %.4f after calibration", c.LogLossBefore, c.LogLossAfter)
	}
	path := filepath.Join(t.TempDir(), "m.fkom")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := ooc.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.ClassNames(), labels) || *l.Calibration() != *c {
		t.Errorf("after Load: names %q, calibration %+v, want %+v", l.ClassNames(), l.Calibration(), c)
	}
	rows := 50
	scores := make([]float64, rows*3)
	proba := make([]float64, rows*3)
	l.PredictTo(scores, x[:rows*2], rows)
	l.ProbaTo(proba, scores, rows)
	for r := range rows {
		p := proba[r*3 : r*3+3]
		if math.Abs(p[0]+p[1]+p[2]-1) > 1e-12 || slices.Index(p, slices.Max(p)) != l.ClassIndex(scores[r*3:r*3+3]) {
			t.Fatalf("row %d: probabilities %v for scores %v", r, p, scores[r*3:r*3+3])
		}
	}
	met, err := l.Evaluate(context.Background(), val, ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if met.Accuracy == nil || *met.Accuracy < 0.8 || met.AUC == nil || *met.AUC < 0.9 ||
		met.LogLoss == nil || math.Abs(*met.LogLoss-c.LogLossAfter) > 1e-12 || met.ECE == nil {
		t.Errorf("validation metrics %+v (calibration %+v)", met, c)
	}

	// A validation source that numbers the labels otherwise (ingested on
	// its own, without "cat") is mapped to the model's codes.
	vx, vy := classData(600, 3, 6)
	var kx, ky []float64
	for i, v := range vy {
		if v != 0 {
			kx = append(kx, vx[2*i:2*i+2]...)
			ky = append(ky, v-1) // dog → 0, eel → 1
		}
	}
	other := &labeledSource{MemSource: stream.NewMemSource(kx, 2, ky, 1, 100), distinct: []float64{0, 1}, labels: labels[1:]}
	rel, err := l.Relabel(other)
	if err != nil {
		t.Fatal(err)
	}
	mo, err := l.Evaluate(context.Background(), rel, ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *mo.Accuracy < 0.8 {
		t.Errorf("accuracy on relabelled data %.3f", *mo.Accuracy)
	}
	_, err = l.Relabel(&labeledSource{MemSource: other.MemSource, distinct: []float64{0, 1}, labels: []string{"dog", "fox"}})
	if want := `the data: target "y0" has the label "fox", which the model's classes ["cat" "dog" "eel"] lack`; err == nil || err.Error() != want {
		t.Errorf("unknown label: %v, want %s", err, want)
	}
}

// TestFitBinaryPlatt: a binary fit with validation rows gets Platt
// parameters (A > 0) that lower the log-loss; without validation rows
// the model has no calibration.
func TestFitBinaryPlatt(t *testing.T) {
	x, y := classData(2000, 2, 8)
	src := stream.NewMemSource(x, 2, y, 1, 400)
	train, val := stream.Holdout(src, 0.3, 1)
	m, err := ooc.Fit(context.Background(), train, ooc.Config{Centers: 80, Iterations: 8}, ooc.RunOptions{Validation: val, ValEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Calibration()
	if m.Task() != ooc.TaskBinary || c == nil || c.Method != ooc.CalibrationPlatt || !(c.A > 0) || !(c.LogLossAfter < c.LogLossBefore) {
		t.Fatalf("task %s, calibration %+v", m.Task(), c)
	}
	if got := m.ClassNames(); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("class names %q", got)
	}
	m2, err := ooc.Fit(context.Background(), train, ooc.Config{Centers: 80, Iterations: 8}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Calibration() != nil {
		t.Errorf("calibration without validation rows: %+v", m2.Calibration())
	}
	// Calibrate gives the same calibration as the fit's.
	m3, err := ooc.Calibrate(context.Background(), m2, val, ooc.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *m3.Calibration() != *c {
		t.Errorf("Calibrate: %+v, Fit: %+v", m3.Calibration(), c)
	}
}
