package predictfile_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

func load(t *testing.T, path string) *model.Model {
	t.Helper()
	m, err := model.Load(filepath.Join("../..", path))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFilesMatchPredictor: the predictions written for a CSV are the
// model.Predictor's, bit for bit (as %v text), for one worker and for
// several, with standard deviations and intervals.
func TestFilesMatchPredictor(t *testing.T) {
	m := load(t, "ooc/testdata/model_v2_regression_std.fkom")
	const rows = 500
	var b strings.Builder
	b.WriteString(strings.Join(m.Features(), ",") + "\n")
	x := make([]float64, 0, rows*m.D())
	for i := range rows {
		row := make([]string, m.D())
		for j := range row {
			v := 3 + math.Sin(float64(i*(j+1)))*2
			x = append(x, v)
			row[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var want model.Prediction
	if err := m.NewPredictor().PredictTo(&want, x, rows, model.WantStd); err != nil {
		t.Fatal(err)
	}
	z := model.IntervalZ(0.9)
	for _, workers := range []int{1, 3} {
		topt, err := predictfile.TableOptions(m, "m", predictfile.Input{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := tabular.Open([]string{in}, topt)
		if err != nil {
			t.Fatal(err)
		}
		p, err := predictfile.New(m, predictfile.Options{Workers: workers, Std: true, ShowStd: true, Z: z})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := p.Files(context.Background(), r, &out, tabular.CSV); err != nil {
			t.Fatal(err)
		}
		r.Close()
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		k := m.K()
		if len(recs) != rows+1 || len(recs[0]) != 4*k {
			t.Fatalf("%d records of %d columns", len(recs), len(recs[0]))
		}
		for i, rec := range recs[1:] {
			for j := range k {
				s, sd := want.Scores[i*k+j], want.Std[i*k+j]
				wantRow := []float64{s, sd, s - z*sd, s + z*sd}
				for c, w := range []string{rec[j], rec[k+j], rec[2*k+2*j], rec[2*k+2*j+1]} {
					got, err := strconv.ParseFloat(w, 64)
					if err != nil || got != wantRow[c] {
						t.Fatalf("workers %d, row %d, output %d, column %d: %s, want %v", workers, i, j, c, w, wantRow[c])
					}
				}
			}
		}
	}
}

// TestNewRefuses: New says what cannot be written.
func TestNewRefuses(t *testing.T) {
	reg := load(t, "cmd/falkon-ooc/testdata/model_v1.falkon")
	bin := load(t, "cmd/falkon-ooc/testdata/model_v1_binary.falkon")
	target, binTarget := reg.Targets()[0], bin.Targets()[0]
	for _, c := range []struct {
		m    *model.Model
		opt  predictfile.Options
		want string
	}{
		{reg, predictfile.Options{Proba: true}, "a regression model has no class probabilities"},
		{reg, predictfile.Options{Std: true}, model.ErrNoUncertainty.Error()},
		{reg, predictfile.Options{Keep: []string{"id", target + "_pred"}}, fmt.Sprintf(
			"--keep: the input column %q has the name of an output column of predict; the output would have two columns %q (leave it out of --keep, or rename it in the input)", target+"_pred", target+"_pred")},
		{bin, predictfile.Options{Keep: []string{"score"}}, `--keep: the input column "score" has the name of an output column of predict; the output would have two columns "score" (leave it out of --keep, or rename it in the input)`},
		{bin, predictfile.Options{Keep: []string{binTarget + "_pred"}, Proba: true}, fmt.Sprintf(
			"--keep: the input column %q has the name of an output column of predict; the output would have two columns %q (leave it out of --keep, or rename it in the input)", binTarget+"_pred", binTarget+"_pred")},
		{bin, predictfile.Options{Keep: []string{"p_" + bin.ClassNames()[1]}, Proba: true}, fmt.Sprintf(
			"--keep: the input column %q has the name of an output column of predict; the output would have two columns %q (leave it out of --keep, or rename it in the input)", "p_"+bin.ClassNames()[1], "p_"+bin.ClassNames()[1])},
		{reg, predictfile.Options{Keep: []string{"a", "b", "a"}}, `--keep: the column "a" is named twice`},
	} {
		_, err := predictfile.New(c.m, c.opt)
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
	if _, err := predictfile.New(bin, predictfile.Options{Keep: []string{"score"}, Proba: true}); err != nil {
		t.Errorf("score kept beside probabilities: %v", err)
	}
}

// TestStdReportNoneInside: a level that no target falls inside (one
// residual outside the 50 % interval, a tiny level, shifted targets) has
// coverage 0 and constant width 0; the others are as computed.
func TestStdReportNoneInside(t *testing.T) {
	m := load(t, "ooc/testdata/model_v2_regression_std.fkom")
	report := func(e, sd []float64, interval float64) *predictfile.StdReport {
		p, err := predictfile.New(m, predictfile.Options{Std: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range e {
			for range m.K() {
				p.Std.Add(e[i], sd[i])
			}
		}
		return p.Std.Report(interval)
	}
	// One row, 0.8 standard deviations off: outside the 50 % interval
	// (z = 0.674), inside 90 and 95 %.
	r := report([]float64{0.8}, []float64{1}, 0)
	if r.Rows != 1 || len(r.Levels) != 3 || r.Levels[0].Coverage != 0 || r.Levels[0].ConstantWidth != 0 ||
		r.Levels[1].Coverage != 1 || r.Levels[1].ConstantWidth != 1.6 {
		t.Errorf("one row: %+v", r.Levels)
	}
	// A tiny level covers nothing of residuals that are not 0.
	r = report([]float64{0.3, -0.2, 0.5}, []float64{1, 1, 1}, 0.001)
	if r.Levels[0].Level != 0.001 || r.Levels[0].Coverage != 0 || r.Levels[0].ConstantWidth != 0 {
		t.Errorf("tiny level: %+v", r.Levels[0])
	}
	// Shifted targets: nothing inside anywhere.
	r = report([]float64{100, 101, 102}, []float64{1, 1, 1}, 0.9)
	for _, l := range r.Levels {
		if l.Coverage != 0 || l.ConstantWidth != 0 || !(l.MeanWidth > 0) {
			t.Errorf("shifted: %+v", l)
		}
	}
	if !strings.HasPrefix(r.Line(), "50 % covers 0.0 %, 90 % covers 0.0 %, 95 % covers 0.0 %; 90 % width") {
		t.Errorf("line %q", r.Line())
	}
	// Two of four inside the 90 % interval: the constant width is twice
	// the second smallest |residual|.
	r = report([]float64{0.5, -1, 3, -4}, []float64{1, 1, 1, 1}, 0)
	if l := r.Levels[1]; l.Coverage != 0.5 || l.ConstantWidth != 2 {
		t.Errorf("half inside: %+v", l)
	}
}
