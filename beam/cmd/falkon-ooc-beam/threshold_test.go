package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// binaryStore writes a store of n rows, 2 features and a class 0 or 1.
func binaryStore(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "b.store")
	rng := rand.New(rand.NewPCG(8, 2))
	cols := make([][]float64, 3)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range n {
		cols[0][i], cols[1][i] = rng.NormFloat64(), rng.NormFloat64()
		if math.Sin(2*cols[0][i])+cols[1][i]+0.5*rng.NormFloat64() > 0.8 { // about 30 % positive
			cols[2][i] = 1
		}
	}
	spec := func(s string) chunkstore.ColumnSpec { return chunkstore.ColumnSpec{Name: s, Type: "float64"} }
	w, err := chunkstore.Create(dir, []chunkstore.ColumnSpec{spec("a"), spec("b")}, []chunkstore.ColumnSpec{spec("y")},
		chunkstore.Options{ChunkRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTuneThresholdAsFalkonOOC: 'falkon-ooc-beam tune --threshold RULE'
// picks what 'falkon-ooc tune --threshold RULE' picks with the same flags:
// the same candidate, its calibration and decision threshold chosen on
// the same held-out rows (scored by a job), and the same probabilities
// and labels, within 1e-9 (one chunk per range: the sums in the local
// passes' order).
func TestTuneThresholdAsFalkonOOC(t *testing.T) {
	bin := buildFalkonOOC(t)
	s := binaryStore(t, 4000)
	for _, rule := range []string{"f1", "cost:1:4"} {
		t.Run(rule, func(t *testing.T) {
			dir := t.TempDir()
			flags := []string{"--sigma", "0.5,1", "--lambda", "1e-3,1e-5", "--centers", "60", "--iters", "6", "--threshold", rule,
				"--json", "--quiet"}
			local := filepath.Join(dir, "local.falkon")
			out, err := exec.Command(bin, append([]string{"tune", "--out", local, s}, flags...)...).Output()
			if err != nil {
				t.Fatalf("falkon-ooc tune: %v", err)
			}
			var want, got struct {
				Best int `json:"best"`
			}
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			onBeam := filepath.Join(dir, "beam.falkon")
			code, stdout, stderr := runCmd(append([]string{"tune", "--out", onBeam, "--partitions", "8", s}, flags...)...)
			if code != exitOK {
				t.Fatalf("falkon-ooc-beam tune: exit %d: %s", code, stderr)
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			ml, err := ooc.Load(local)
			if err != nil {
				t.Fatal(err)
			}
			mb, err := ooc.Load(onBeam)
			if err != nil {
				t.Fatal(err)
			}
			near := func(what string, b, l float64) {
				t.Helper()
				if math.Abs(b-l) > 1e-9*max(1, math.Abs(l)) {
					t.Errorf("%s: %.15g from falkon-ooc-beam, %.15g from falkon-ooc", what, b, l)
				}
			}
			ld, lok := ml.Decision()
			bd, bok := mb.Decision()
			if got.Best != want.Best || !lok || !bok || bd.Rule != rule || ld.Rule != rule || bd.Rows != ld.Rows || mb.Calibration() == nil || ml.Calibration() == nil {
				t.Fatalf("falkon-ooc-beam picks %d, decision %+v (%v); falkon-ooc %d, %+v (%v)", got.Best, bd, bok, want.Best, ld, lok)
			}
			near("threshold", bd.Threshold, ld.Threshold)
			lc, bc := ml.Calibration(), mb.Calibration()
			near("Platt's A", bc.A, lc.A)
			near("Platt's B", bc.B, lc.B)
			if bc.Rows != lc.Rows {
				t.Errorf("calibrated on %d rows, falkon-ooc on %d", bc.Rows, lc.Rows)
			}
			x := make([]float64, 0, 2*300)
			for i := range 300 {
				x = append(x, float64(i%20)/5-2, float64(i/20)/4-2)
			}
			sl, sb, pl, pb := make([]float64, 300), make([]float64, 300), make([]float64, 600), make([]float64, 600)
			ml.PredictTo(sl, x, 300)
			mb.PredictTo(sb, x, 300)
			ml.ProbaTo(pl, sl, 300)
			mb.ProbaTo(pb, sb, 300)
			for i := range pl {
				near("probability", pb[i], pl[i])
			}
			for i := range sl {
				if ml.Label(sl[i:i+1]) != mb.Label(sb[i:i+1]) && math.Abs(pl[2*i+1]-ld.Threshold) > 1e-6 {
					t.Errorf("row %d: label %v from falkon-ooc-beam's model, %v from falkon-ooc's", i, mb.Label(sb[i:i+1]), ml.Label(sl[i:i+1]))
				}
			}
		})
	}
}

// TestClassifierFitAsFalkonOOC: 'falkon-ooc-beam fit --val-fraction 0.2
// --threshold f1' and 'fit --tune --threshold f1' on a classifier give
// the model falkon-ooc fit gives with the same flags: the same centres,
// iterations and search, the calibration and decision threshold chosen on
// the held-out rows (scored by a job; --tune's row subsample drawn by a
// job), and the probabilities within 1e-9 (one chunk per range).
func TestClassifierFitAsFalkonOOC(t *testing.T) {
	bin := buildFalkonOOC(t)
	s := binaryStore(t, 4000)
	for _, flags := range [][]string{
		{"--val-fraction", "0.2", "--sigma", "1", "--lambda", "1e-5", "--iters", "10"},
		{"--tune", "--val-fraction", "0.2", "--sigma", "0.5,1", "--lambda", "1e-3,1e-5", "--iters", "6", "--tune-rows", "2000"},
	} {
		dir := t.TempDir()
		flags = append(flags, "--threshold", "f1", "--centers", "60", "--json", "--quiet", "--no-checkpoint")
		local := filepath.Join(dir, "local.falkon")
		if out, err := exec.Command(bin, append([]string{"fit", "--out", local, s}, flags...)...).CombinedOutput(); err != nil {
			t.Fatalf("falkon-ooc fit %q: %v\n%s", flags, err, out)
		}
		onBeam := filepath.Join(dir, "beam.falkon")
		if code, _, stderr := runCmd(append([]string{"fit", "--out", onBeam, "--partitions", "8", s}, flags...)...); code != exitOK {
			t.Fatalf("falkon-ooc-beam fit %q: exit %d: %s", flags, code, stderr)
		}
		ml, err := ooc.Load(local)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := ooc.Load(onBeam)
		if err != nil {
			t.Fatal(err)
		}
		near := func(what string, b, l float64) {
			t.Helper()
			if math.Abs(b-l) > 1e-9*max(1, math.Abs(l)) {
				t.Errorf("%q: %s: %.15g from falkon-ooc-beam, %.15g from falkon-ooc", flags, what, b, l)
			}
		}
		lt, bt := ml.Training(), mb.Training()
		ld, _ := ml.Decision()
		bd, _ := mb.Decision()
		if !slices.Equal(ml.Centers(), mb.Centers()) || lt.Iterations != bt.Iterations || lt.BestIteration != bt.BestIteration ||
			bd.Rule != "f1" || bd.Rows != ld.Rows || mb.Calibration() == nil || ml.Calibration() == nil {
			t.Fatalf("%q: falkon-ooc-beam: %d iterations (best %d), decision %+v; falkon-ooc: %d (best %d), %+v (or the centres differ)",
				flags, bt.Iterations, bt.BestIteration, bd, lt.Iterations, lt.BestIteration, ld)
		}
		if lh, bh := lt.Handoff, bt.Handoff; (lh == nil) != (bh == nil) || lh != nil && (lh.Lambda != bh.Lambda || lh.Sigma != bh.Sigma) {
			t.Fatalf("%q: hand-off %+v from falkon-ooc-beam, %+v from falkon-ooc", flags, bh, lh)
		}
		near("threshold", bd.Threshold, ld.Threshold)
		near("Platt's A", mb.Calibration().A, ml.Calibration().A)
		near("Platt's B", mb.Calibration().B, ml.Calibration().B)
		x := make([]float64, 0, 2*300)
		for i := range 300 {
			x = append(x, float64(i%20)/5-2, float64(i/20)/4-2)
		}
		sl, sb, pl, pb := make([]float64, 300), make([]float64, 300), make([]float64, 600), make([]float64, 600)
		ml.PredictTo(sl, x, 300)
		mb.PredictTo(sb, x, 300)
		ml.ProbaTo(pl, sl, 300)
		mb.ProbaTo(pb, sb, 300)
		for i := range pl {
			near("probability", pb[i], pl[i])
		}
	}
}
