package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTuneFailedCandidate: a search in which some candidates fail (σ =
// 1e6 with a jitter of 1e-300: K_MM is all ones to rounding and its
// Cholesky fails) still writes tune's and fit --tune's --json, with the
// failed candidates' stop, error and a null metric; the text output and
// inspect say which candidates failed and why.
func TestTuneFailedCandidate(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 1, "y")
	model := filepath.Join(dir, "m.falkon")
	grid := []string{"--centers", "100", "--iters", "5", "--sigma", "1e6,1", "--lambda", "1e-3,1e-6", "--jitter", "1e-300"}
	type cand struct {
		Sigma      float64
		BestMetric *float64 `json:"best_metric"`
		Stop       string
		Error      string
	}
	checkJSON := func(who string, cands []cand, best int) {
		t.Helper()
		failed := 0
		for i, c := range cands {
			if c.Sigma != 1e6 {
				if c.BestMetric == nil || c.Stop == "failed" {
					t.Errorf("%s: candidate %d (σ = %g): metric null (%v), stop %q", who, i+1, c.Sigma, c.BestMetric == nil, c.Stop)
				}
				continue
			}
			failed++
			if c.BestMetric != nil || c.Stop != "failed" || !strings.Contains(c.Error, "not positive definite") {
				t.Errorf("%s: failed candidate %d: metric not null (%v), stop %q, error %q", who, i+1, c.BestMetric != nil, c.Stop, c.Error)
			}
		}
		if failed != 2 || cands[best].Sigma != 1 {
			t.Errorf("%s: %d failed candidates, best σ = %g; want 2, and σ = 1", who, failed, cands[best].Sigma)
		}
	}

	code, out, errOut := runCLI(append([]string{"tune", "--out", model, "--json", "--quiet", train}, grid...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("tune --json: exit %d, stderr %q", code, errOut)
	}
	var res struct {
		Best       int
		Candidates []cand
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("tune --json is not one document: %v\n%s", err, out)
	}
	checkJSON("tune --json", res.Candidates, res.Best)

	code, out, errOut = runCLI(append([]string{"tune", "--out", model, "--quiet", train}, grid...)...)
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "failed     candidate(s) 1, 2: ") || !strings.Contains(out, "not positive definite") {
		t.Errorf("tune's output does not say which candidates failed and why:\n%s", out)
	}

	code, out, errOut = runCLI(append([]string{"fit", "--tune", "--out", model, "--tune-centers", "100", "--json", "--quiet", train}, grid...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("fit --tune --json: exit %d, stderr %q", code, errOut)
	}
	var fit struct {
		Search *struct {
			Best       int
			Candidates []cand
		}
	}
	if err := json.Unmarshal([]byte(out), &fit); err != nil {
		t.Fatalf("fit --tune --json is not one document: %v\n%s", err, out)
	}
	if fit.Search == nil {
		t.Fatalf("fit --tune --json has no search:\n%s", out)
	}
	checkJSON("fit --tune --json", fit.Search.Candidates, fit.Search.Best)

	// The model holds the search: inspect reads it back and says so.
	code, out, errOut = runCLI("inspect", model)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "failed     candidate(s) 1, 2: ") {
		t.Errorf("inspect does not say which candidates of the search failed:\n%s", out)
	}
}
