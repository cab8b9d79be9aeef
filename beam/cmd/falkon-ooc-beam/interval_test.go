package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestPredictIntervalMethodFlag: falkon-ooc-beam predict --interval-method
// takes falkon-ooc predict's values, says in its summary and --json which
// it used and with what multiplier, and refuses what falkon-ooc predict
// refuses with the same words.
func TestPredictIntervalMethodFlag(t *testing.T) {
	dir := t.TempDir()
	ins := csvInputs(t, dir)
	st := filepath.Join(t.TempDir(), "s.store")
	if _, err := ingest.Run(t.Context(), ins, ingest.Config{Out: st, Targets: []string{"y"}, Exclude: []string{"id", "w"}}); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	train, val, err := ooc.HoldOut(r, 0.3, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Fit(t.Context(), train, ooc.Config{Centers: 20, Lambda: 1e-3, Iterations: 5, Uncertainty: ooc.UncertaintyPrecond,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{Validation: val})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	mfile := filepath.Join(t.TempDir(), "m.falkon")
	if err := m.Save(mfile); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := runCmd(append([]string{"predict", "--out", out, "--model", mfile, "--interval", "0.5", "--interval-method", "gaussian", "--quiet"}, ins...)...)
	if want := "\ninterval   50 % gaussian: prediction ± 0.6745 std\n"; code != exitOK || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	z, _, err := m.IntervalMultipliers(0.5, ooc.IntervalConformal)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCmd(append([]string{"predict", "--out", out, "--force", "--model", mfile, "--interval", "0.5", "--json", "--quiet"}, ins...)...)
	var doc struct {
		Method string  `json:"interval_method"`
		Z      float64 `json:"interval_z"`
	}
	if code != exitOK || json.Unmarshal([]byte(stdout), &doc) != nil || doc.Method != "conformal" || doc.Z != z[0] {
		t.Fatalf("exit %d, stdout %s, stderr %q; want the conformal multiplier %v", code, stdout, stderr, z[0])
	}
	top := m.Conformal().Levels
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--interval", "0.9", "--interval-method", "student"}, exitUsage, `falkon-ooc-beam predict: --interval-method: unknown interval method "student" (want gaussian or conformal)`},
		{[]string{"--interval-method", "gaussian"}, exitUsage, `falkon-ooc-beam predict: --interval-method gaussian needs --interval`},
		{[]string{"--interval", "0.999", "--interval-method", "conformal"}, exitFailure, fmt.Sprintf("falkon-ooc-beam predict: --interval-method conformal: model %s: the model has no conformal calibration at this level (its %d validation rows reach %v); fit it again with --uncertainty and more validation rows, or use --interval-method gaussian",
			mfile, m.Conformal().Rows, top[len(top)-1])},
	} {
		code, stdout, stderr := runCmd(append(append([]string{"predict", "--out", t.TempDir(), "--model", mfile, "--quiet"}, c.args...), ins...)...)
		if code != c.code || stdout != "" || !strings.HasPrefix(stderr, c.msg) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout, stderr, c.code, c.msg)
		}
	}
}
