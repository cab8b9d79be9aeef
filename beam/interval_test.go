package beam

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// TestPredictIntervalMethod: Predict's IntervalMethod means falkon-ooc
// predict --interval-method: each output file is, byte for byte, what
// falkon-ooc predict writes with the same --interval and
// --interval-method; the result says the method and the multiplier; and
// each mistake is refused, before any task, with the message a user
// reads.
func TestPredictIntervalMethod(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var ins []string
	row := 0
	for f, n := range []int{500, 300} {
		var b strings.Builder
		b.WriteString("x1,x2,y\n")
		for range n {
			row++
			x1, x2 := float64(row%17)/4, float64((row*7)%23)/5
			fmt.Fprintf(&b, "%g,%g,%g\n", x1, x2, x1*x2-x1+float64((row*13)%11)/20)
		}
		in := filepath.Join(dir, fmt.Sprintf("part-%d.csv", f))
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	store := filepath.Join(t.TempDir(), "s.store")
	if _, err := ingest.Run(ctx, ins, ingest.Config{Out: store, Targets: []string{"y"}}); err != nil {
		t.Fatal(err)
	}
	r, err := chunkstore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	train, val, err := ooc.HoldOut(r, 0.25, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ooc.Fit(ctx, train, ooc.Config{Centers: 40, Lambda: 1e-4, Iterations: 10, Seed: 1, Uncertainty: ooc.UncertaintyPrecond,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{Validation: val})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	mfile := filepath.Join(t.TempDir(), "m.falkon")
	if err := m.Save(mfile); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		used   model.IntervalMethod
	}{{"", model.IntervalConformal}, {"conformal", model.IntervalConformal}, {"gaussian", model.IntervalGaussian}} {
		out := t.TempDir()
		res, err := Predict(ctx, PredictConfig{Out: out, Model: mfile, Inputs: ins, Interval: 0.9, IntervalMethod: c.method}, Options{})
		if err != nil {
			t.Fatalf("method %q: %v", c.method, err)
		}
		z, used, err := m.IntervalMultipliers(0.9, model.IntervalMethod(c.method))
		if err != nil || used != c.used || res.IntervalMethod != used || res.IntervalZ != z[0] || res.IntervalZOutputs != nil {
			t.Fatalf("method %q: the result says %s × %v, the model %s × %v (%v)", c.method, res.IntervalMethod, res.IntervalZ, used, z, err)
		}
		for _, in := range ins {
			want := filepath.Join(t.TempDir(), "local.parquet")
			topt, err := predictfile.TableOptions(m.Model, mfile, predictfile.Input{Nulls: "error"})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := tabular.Open([]string{in}, topt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := predictfile.New(m.Model, predictfile.Options{Std: true, Interval: 0.9, IntervalMethod: model.IntervalMethod(c.method)})
			if err != nil {
				t.Fatal(err)
			}
			err = fileutil.WriteFile(want, 0o644, func(w io.Writer) error { return p.Files(ctx, tr, w, tabular.Parquet) })
			tr.Close()
			if err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(want)
			b, err := os.ReadFile(filepath.Join(out, strings.TrimSuffix(filepath.Base(in), ".csv")+DefaultPredictSuffix))
			if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
				t.Fatalf("method %q, %s: %d bytes against falkon-ooc predict's %d (%v)", c.method, in, len(b), len(a), err)
			}
		}
	}
	top := m.Conformal().Levels
	for _, c := range []struct {
		cfg  PredictConfig
		want string
	}{
		{PredictConfig{Interval: 0.9, IntervalMethod: "student"}, `--interval-method: unknown interval method "student" (want gaussian or conformal)`},
		{PredictConfig{IntervalMethod: "gaussian"}, `--interval-method gaussian needs --interval`},
		{PredictConfig{Interval: 0.999, IntervalMethod: "conformal"}, fmt.Sprintf("--interval-method conformal: model %s: the model has no conformal calibration at this level (its %d validation rows reach %v); fit it again with --uncertainty and more validation rows, or use --interval-method gaussian",
			mfile, m.Conformal().Rows, top[len(top)-1])},
	} {
		c.cfg.Out, c.cfg.Model, c.cfg.Inputs = t.TempDir(), mfile, ins
		if _, err := Predict(ctx, c.cfg, Options{}); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v\nwant %s", c.cfg, err, c.want)
		}
	}
}
