package beam

import (
	"context"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/pass"
)

// TestValidationScoresOnBeam: a classifier whose validation rows are held
// out of the store (fit --val-fraction) is calibrated, given its decision
// threshold by a rule (or not), and given its final validation metrics
// on scores a pass.Scores job computes: the driver reads no chunk of the
// store. Those scores are the model's own, bit for bit: calibrating the
// Beam model on the held-out rows read locally gives its calibration, and
// evaluating it gives its final validation. The model is the local fit's
// to rounding.
func TestValidationScoresOnBeam(t *testing.T) {
	ctx := context.Background()
	const n, d, chunk = 6000, 3, 512
	dir := filepath.Join(t.TempDir(), "class.store")
	classStore(t, dir, n, d, chunk)
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const frac, seed = 0.2, 5
	for _, c := range []struct {
		name string
		cfg  ooc.Config
	}{
		{"squared", ooc.Config{Centers: 40, Iterations: 8, Seed: 4, Task: ooc.TaskBinary, Threshold: "f1"}},
		{"platt", ooc.Config{Centers: 40, Iterations: 8, Seed: 4, Task: ooc.TaskBinary}},
	} {
		t.Run(c.name, func(t *testing.T) {
			train, held, err := ooc.HoldOut(r, frac, seed)
			if err != nil {
				t.Fatal(err)
			}
			local, err := ooc.Fit(ctx, train, c.cfg, ooc.RunOptions{Validation: held})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			e, err := NewExecutor(ctx, Options{Store: dir, Partitions: 3, Temp: t.TempDir(),
				OnJob: func(s JobStats) { kinds = append(kinds, s.Kind) }})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var reads atomic.Int64
			btrain, bheld, err := ooc.HoldOut(countingStore{e.Source(), &reads}, frac, seed)
			if err != nil {
				t.Fatal(err)
			}
			remote, err := ooc.Fit(ctx, btrain, c.cfg, ooc.RunOptions{Executor: e, Validation: bheld})
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() != 0 || len(kinds) < 3 || kinds[len(kinds)-1] != string(pass.Scores) {
				t.Fatalf("the driver read %d chunks of the store; jobs %v", reads.Load(), kinds)
			}

			// The job's scores are the model's: its calibration and
			// validation are those of the held-out rows read here.
			ev, err := remote.Model.Evaluate(ctx, held, model.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tr := remote.Training()
			again, err := model.Calibrate(ctx, remote.Model, held, model.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := *remote.Calibration(), *again.Calibration(); got != want {
				t.Fatalf("calibration on Beam %+v; on the held-out rows read here %+v", got, want)
			}
			if *tr.ValidationFinal.LogLoss != *ev.LogLoss || *tr.ValidationFinal.AUC != *ev.AUC {
				t.Fatalf("final validation log-loss %v, AUC %v on Beam; %v, %v on the rows read here", *tr.ValidationFinal.LogLoss,
					*tr.ValidationFinal.AUC, *ev.LogLoss, *ev.AUC)
			}

			// Against the local fit: 3 partitions group the sums otherwise
			// than the local passes do, which CG carries to 1.3e-9 of a
			// probability at most (measured): the bound is 1e-8.
			near := func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-8*max(1, math.Abs(want)) {
					t.Errorf("%s: %.15g on Beam, %.15g locally", what, got, want)
				}
			}
			if lc, rc := local.Calibration(), remote.Calibration(); (lc == nil) != (rc == nil) {
				t.Fatalf("calibration %v on Beam, %v locally", rc, lc)
			} else if lc != nil {
				near("Platt's A", rc.A, lc.A)
				near("Platt's B", rc.B, lc.B)
			}
			ld, _ := local.Decision()
			rd, _ := remote.Decision()
			near("threshold", rd.Threshold, ld.Threshold)
			near("validation log-loss", *tr.ValidationFinal.LogLoss, *local.Training().ValidationFinal.LogLoss)
			x := make([]float64, 0, 100*d)
			for i := range 100 * d {
				x = append(x, float64(i%17)/8-1)
			}
			sl, sr, pl, pr := make([]float64, 100), make([]float64, 100), make([]float64, 200), make([]float64, 200)
			local.PredictTo(sl, x, 100)
			remote.PredictTo(sr, x, 100)
			local.ProbaTo(pl, sl, 100)
			remote.ProbaTo(pr, sr, 100)
			worst := 0.0
			for i := range pl {
				worst = max(worst, math.Abs(pr[i]-pl[i]))
				near("probability", pr[i], pl[i])
			}
			t.Logf("largest probability difference from the local fit: %.3g", worst)
		})
	}
}
