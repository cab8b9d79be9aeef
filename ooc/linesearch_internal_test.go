package ooc

import (
	"strings"
	"testing"
)

// TestNewtonSearch: the line search takes the longest length with
// sufficient decrease, else the lowest objective below J(α); when none
// falls it stops the candidate, converged when the step's predicted
// decrease is within rounding, else with a note that says what to do.
func TestNewtonSearch(t *testing.T) {
	// One centre, one output, K_MM = 1, λ = 1, J(α) = 1, slope −1: the
	// penalty along Δ = 1 from α = 0 is s²/2.
	mk := func(loss func(s float64) float64, slope float64) *newtonCand {
		c := &newtonCand{alpha: []float64{0}, dir: []float64{1},
			steps: []NewtonStep{{Lambda: 1, Objective: 1, Slope: slope}},
			pv:    gradValues{sl: []float64{loss(1)}, ka: []float64{0}, kd: []float64{1}, n: 1}}
		for _, s := range lineSteps {
			c.pv.line = append(c.pv.line, loss(s))
		}
		return c
	}
	r := &newtonRun{m: 1, k: 1}
	for _, tc := range []struct {
		name      string
		loss      func(s float64) float64
		slope     float64
		step      float64
		regrad    bool
		stop      Status
		noteWords []string
	}{
		{"whole", func(s float64) float64 { return 1 - s }, -1, 1, false, "", nil},
		{"eighth", func(s float64) float64 { return 1 - s + 4*s*s }, -1, 0.125, true, "", nil}, // J = 1 − s + 4.5s²
		{"no descent", func(s float64) float64 { return 1 + s }, -1, 0, false, StatusNoDescent,
			[]string{"did not fall along Newton step 1", "λ = 1", "Raise Config.Lambda", "Config.Iterations"}},
		{"converged", func(s float64) float64 { return 1 + 1e-17 }, -1e-15, 0, false, StatusConverged, nil},
	} {
		c := mk(tc.loss, tc.slope)
		regrad := r.search(c)
		s := c.steps[0]
		if s.Step != tc.step || regrad != tc.regrad || c.stop != tc.stop || c.dir != nil || s.After > s.Objective {
			t.Errorf("%s: length %v (want %v), regrad %v, stop %q, after %v", tc.name, s.Step, tc.step, regrad, c.stop, s.After)
		}
		if c.alpha[0] != tc.step {
			t.Errorf("%s: α = %v after a step of %v", tc.name, c.alpha[0], tc.step)
		}
		for _, w := range tc.noteWords {
			if !strings.Contains(c.note, w) {
				t.Errorf("%s: note %q lacks %q", tc.name, c.note, w)
			}
		}
		if tc.noteWords == nil && c.note != "" {
			t.Errorf("%s: note %q", tc.name, c.note)
		}
	}
}
