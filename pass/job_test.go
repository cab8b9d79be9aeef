package pass_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/pass"
)

// A Job survives its JSON encoding exactly, float64 bits included, and
// the encoding carries its version and the names of the precision and the
// kind.
func TestJobJSON(t *testing.T) {
	job := &pass.Job{
		Kind: pass.TargetProduct, Kernel: kernel.Kernel{Kind: kernel.Matern52, Sigmas: []float64{0.1, 1.0 / 3}},
		Precision: kernel.Float32, M: 2, D: 2, K: 3,
		Centers: []float64{math.Pi, -0.0, 1e-300, math.MaxFloat64 / 3}, Mean: []float64{1.0 / 7, 2},
		InvStd: []float64{math.SmallestNonzeroFloat64, 5e-324 * 3}, Task: model.TaskMulticlass, Classes: []float64{-1, 0.5, 2},
		U: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, Features: []string{"a", "b"}, Targets: []string{"y"},
	}
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	var back pass.Job
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(&back)
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the job:\n%s\n%s", b, b2)
	}
	for i, v := range job.Centers {
		if math.Float64bits(v) != math.Float64bits(back.Centers[i]) {
			t.Fatalf("centre %d: %v after the round trip, was %v", i, back.Centers[i], v)
		}
	}
	for _, want := range []string{`"version":1,`, `"precision":"float32"`, `"kind":"target_product"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the encoding has no %s: %s", want, b)
		}
	}
	// A value, not only a pointer, encodes with its version.
	if b3, _ := json.Marshal(*job); string(b3) != string(b) {
		t.Errorf("a Job value encodes as %s, a pointer as %s", b3, b)
	}
}

// A decoder refuses an encoding of a version it does not read, or of
// none, with an error that says which and wraps ErrVersion, and leaves
// the job zero.
func TestJobVersion(t *testing.T) {
	good, err := json.Marshal(&pass.Job{Kind: pass.KernelProduct, M: 1, D: 1, K: 1, Centers: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, enc, want string
	}{
		{"newer", strings.Replace(string(good), `"version":1`, `"version":4`, 1),
			"pass: unsupported job encoding version 4 (this build reads versions 1 to 3)"},
		{"zero", strings.Replace(string(good), `"version":1`, `"version":0`, 1),
			"pass: unsupported job encoding version 0 (this build reads versions 1 to 3)"},
		{"huge", strings.Replace(string(good), `"version":1`, `"version":4096`, 1),
			"pass: unsupported job encoding version 4096 (this build reads versions 1 to 3)"},
		{"none", strings.Replace(string(good), `"version":1,`, ``, 1),
			"pass: unsupported job encoding version: the job has none (this build reads versions 1 to 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.enc == string(good) {
				t.Fatalf("the test did not change the encoding %s", good)
			}
			j := pass.Job{M: 7}
			err := json.Unmarshal([]byte(c.enc), &j)
			if !errors.Is(err, pass.ErrVersion) || err.Error() != c.want {
				t.Fatalf("err = %v, want %q (wrapping ErrVersion)", err, c.want)
			}
			if j.M != 0 || j.Kind != "" {
				t.Errorf("a refused decoding left %+v", j)
			}
		})
	}
	var j pass.Job
	if err := json.Unmarshal(good, &j); err != nil || j.Kind != pass.KernelProduct {
		t.Fatalf("version 1: %v, kind %q", err, j.Kind)
	}
}

func TestJobInvalid(t *testing.T) {
	for _, c := range []struct {
		job  pass.Job
		want string
	}{
		{pass.Job{Kind: "x"}, `pass: invalid job: unknown kind "x"`},
		{pass.Job{Kind: pass.KernelProduct, M: 2, D: 1, K: 1, Centers: []float64{1}}, "pass: invalid job: 1 centre values for M × D = 2 × 1"},
		{pass.Job{Kind: pass.KernelProduct, M: 1, D: 1, K: 1, Centers: []float64{1}, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, "pass: invalid job: len(U) = 0, want M × K = 1"},
		{pass.Job{Kind: pass.TargetProduct, M: 1, D: 1, K: 1, Centers: []float64{1}, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Task: model.TaskBinary}, "pass: invalid job: binary task with 0 classes and K = 1"},
	} {
		if _, err := c.job.NewWorker(); err == nil || err.Error() != c.want {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}
