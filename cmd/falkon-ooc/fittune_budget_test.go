package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestFitTuneBudget: fit --tune's final fit continues past --iters while
// its validation improves, within the budget of passes (--max-passes),
// which the start line states; one that the budget stops says so, with
// its last improvement, and --json has it.
func TestFitTuneBudget(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 3000, 1, "y")
	model := filepath.Join(dir, "m.falkon")
	args := []string{"fit", "--tune", "--out", model, "--centers", "150", "--tune-centers", "100", "--sigma", "1",
		"--lambda", "1e-9", "--iters", "3", "--max-passes", "7", train}
	code, out, errOut := runCLI(args...)
	if code != 0 {
		t.Fatalf("fit --tune exit %d: %s", code, errOut)
	}
	if want := "at M = 150, at most 7 passes over the data (--max-passes): past --iters 3 the fit continues while its validation improves (--patience 3)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if want := "cap        stopped at its budget of 7 passes (--max-passes; 4 iterations) with the validation RMSE still improving ("; !strings.Contains(out, want) ||
		!strings.Contains(out, "at iteration 4): a larger --max-passes may give a better model") {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	code, out, errOut = runCLI(append(args, "--json", "--quiet")...)
	if code != 0 {
		t.Fatalf("fit --tune --json exit %d: %s", code, errOut)
	}
	var res struct {
		Iterations int
		Cap        *ooc.Improvement `json:"stopped_at_cap"`
		Handoff    *ooc.Handoff
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 4 || res.Cap == nil || !res.Cap.Still || res.Cap.Iteration != 4 || res.Handoff == nil || res.Handoff.MaxPasses != 7 {
		t.Errorf("--json: %d iterations, stopped_at_cap %+v, handoff %+v", res.Iterations, res.Cap, res.Handoff)
	}
}
