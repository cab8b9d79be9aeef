package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestPredictStd fits with --uncertainty and predicts with --std and
// --interval: the columns are the model's PredictStdTo values, the
// interval is the prediction ± z·std, and the summary scores them.
func TestPredictStd(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 1500, 11, "y")
	model := filepath.Join(dir, "m.falkon")
	code, out, e := runCLI("fit", "--out", model, "--centers", "80", "--iters", "6", "--uncertainty", train)
	if code != 0 {
		t.Fatalf("fit: %s", e)
	}
	// --uncertainty holds out 10 % of the rows without --val.
	if !strings.Contains(e, "fit: 150 rows held out for validation") {
		t.Errorf("fit's stderr does not say it held out rows:\n%s", e)
	}
	if !strings.Contains(e, "fit: predictive standard deviations (precond): a rank-16 factor, fitted on the validation rows") {
		t.Errorf("no uncertainty stage line:\n%s", e)
	}
	if !strings.Contains(out, "std        precond, rank 16 of M = 80: keeps ") || !strings.Contains(out, "on 150 validation rows the 90 % interval covers") ||
		!strings.Contains(out, "\n           per-row deviations ") {
		t.Errorf("fit's summary has no std line:\n%s", out)
	}
	// 150 validation rows: 99.5 % is not calibrated, 90 % and above
	// have fewer than 20/(1 − q) rows.
	if !strings.Contains(out, "conformal  intervals calibrated on 150 validation residuals; coverage there, conformal (Gaussian): 50 %: ") ||
		!strings.Contains(out, "80 %: ") || strings.Contains(out, "80 %: not") ||
		!strings.Contains(out, " [too few rows: fewer than 200]") || !strings.Contains(out, " [too few rows: fewer than 2000]") ||
		strings.Contains(out, "fewer than 100]") {
		t.Errorf("fit's summary has no conformal line:\n%s", out)
	}
	m, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	_, _, csvPath, rows := predictFixture(t, 300)
	code, out, e = runCLI("predict", "--model", model, "--std", "--interval", "0.8", "--keep", "id", "--out", "-", csvPath)
	if code != 0 {
		t.Fatalf("predict: %s", e)
	}
	recs := readCSV(t, out)
	if got := strings.Join(recs[0], ","); got != "id,y_pred,y_std,y_lower,y_upper" {
		t.Fatalf("columns %s", got)
	}
	x := make([]float64, 0, len(rows)*3)
	for _, r := range rows {
		for j := range 3 {
			v, _ := strconv.ParseFloat(r[2+j], 64)
			x = append(x, v)
		}
	}
	pred, std := make([]float64, len(rows)), make([]float64, len(rows))
	m.PredictStdTo(pred, std, x, len(rows))
	z, used, err := oneOutput(m.IntervalMultipliers(0.8, ooc.IntervalAuto))
	if err != nil || used != ooc.IntervalConformal || z == ooc.IntervalZ(0.8) {
		t.Fatalf("multiplier %v %v %v: want the conformal one", z, used, err)
	}
	if want := fmt.Sprintf("interval   80 %% conformal: prediction ± %.4g std\n", z); !strings.Contains(e, want) {
		t.Errorf("summary without %q:\n%s", want, e)
	}
	for i, rec := range recs[1:] {
		v := make([]float64, 4)
		for j := range v {
			v[j], _ = strconv.ParseFloat(rec[1+j], 64)
		}
		if !near(v[0], pred[i]) || !near(v[1], std[i]) || !near(v[2], pred[i]-z*std[i]) || !near(v[3], pred[i]+z*std[i]) {
			t.Fatalf("row %d: %v, want %v ± %v·%v", i, v, pred[i], z, std[i])
		}
	}
	// --interval-method gaussian: ± z·std of a normal.
	code, out, e = runCLI("predict", "--model", model, "--interval", "0.8", "--interval-method", "gaussian", "--out", "-", csvPath)
	if code != 0 {
		t.Fatalf("predict --interval-method gaussian: %s", e)
	}
	zg := ooc.IntervalZ(0.8)
	for i, rec := range readCSV(t, out)[1:] {
		lo, _ := strconv.ParseFloat(rec[len(rec)-2], 64)
		if !near(lo, pred[i]-zg*std[i]) {
			t.Fatalf("row %d: gaussian lower bound %v, want %v", i, lo, pred[i]-zg*std[i])
		}
	}
	if !strings.Contains(e, "interval   80 % gaussian: prediction ± 1.282 std") || !strings.Contains(e, "50 % covers") || strings.Contains(e, "(conformal)") {
		t.Errorf("gaussian summary:\n%s", e)
	}
	// The summary (on stderr with --out -) scores the intervals.
	if !strings.Contains(e, "intervals  50 % covers") || !strings.Contains(e, "80 % covers") || !strings.Contains(e, "NLPD") {
		t.Errorf("summary without the intervals line:\n%s", e)
	}
	// --json carries the report.
	code, out, e = runCLI("predict", "--model", model, "--interval", "0.9", "--json", csvPath)
	if code != 0 {
		t.Fatalf("predict --json: %s", e)
	}
	var res struct {
		Interval    float64 `json:"interval"`
		Uncertainty struct {
			Rows   int64 `json:"rows"`
			Levels []struct {
				Level, Coverage float64
			} `json:"levels"`
			NLPD float64 `json:"nlpd"`
		} `json:"uncertainty"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Interval != 0.9 || res.Uncertainty.Rows != 300 || len(res.Uncertainty.Levels) != 3 || math.IsNaN(res.Uncertainty.NLPD) {
		t.Errorf("JSON %+v", res)
	}
	// inspect shows it.
	if code, out, _ := runCLI("inspect", model); code != 0 || !strings.Contains(out, "std") || !strings.Contains(out, "precond, rank 16") {
		t.Errorf("inspect:\n%s", out)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestUncertaintyErrorMessages(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 600, 3, "y")
	plain := filepath.Join(dir, "p.falkon")
	if code, _, e := runCLI("fit", "--out", plain, "--centers", "40", "--iters", "3", "--quiet", train); code != 0 {
		t.Fatalf("fit: %s", e)
	}
	v2 := filepath.Join("..", "..", "ooc", "testdata", "model_v2_regression_std.fkom") // no conformal calibration
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--model", plain, "--std", train},
			"--std: model " + plain + " has no predictive standard deviations: it was fitted without --uncertainty; refit with fit --uncertainty"},
		{[]string{"predict", "--model", plain, "--interval", "1.5", train}, "--interval must be a level in (0, 1) such as 0.9, got 1.5"},
		{[]string{"predict", "--model", plain, "--interval", "0.9", "--interval-method", "student", train},
			`--interval-method: unknown interval method "student" (want gaussian or conformal)`},
		{[]string{"predict", "--model", plain, "--interval-method", "gaussian", train}, "--interval-method gaussian needs --interval"},
		{[]string{"predict", "--model", v2, "--interval", "0.9", "--interval-method", "conformal", train},
			"--interval-method conformal: model " + v2 + ": the model has no conformal calibration at this level; fit it again with --uncertainty and more validation rows, or use --interval-method gaussian"},
		{[]string{"fit", "--out", filepath.Join(dir, "x.falkon"), "--uncertainty", "--val-fraction", "0", train},
			"--uncertainty fits the standard deviations on validation rows: --val-fraction 0 leaves none (give --val INPUT or a fraction such as 0.1)"},
		{[]string{"fit", "--out", filepath.Join(dir, "x.falkon"), "--uncertainty-rank", "10", train},
			"--uncertainty-method and --uncertainty-rank need --uncertainty"},
		{[]string{"fit", "--out", filepath.Join(dir, "x.falkon"), "--uncertainty", "--uncertainty-method", "bayes", train},
			`unknown uncertainty method "bayes" (want precond or exact)`},
		{[]string{"fit", "--out", filepath.Join(dir, "x.falkon"), "--uncertainty", "--kernel", "linear", train},
			"predictive standard deviations need a distance kernel (gaussian, laplacian, matern12/32/52), not linear"},
	}
	for _, c := range cases {
		code, _, e := runCLI(c.args...)
		if code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %q", c.args, code, e, c.want)
		}
	}
}

// oneOutput is IntervalMultipliers' result for a model of one output.
func oneOutput(z []float64, used ooc.IntervalMethod, err error) (float64, ooc.IntervalMethod, error) {
	if len(z) == 0 {
		return 0, used, err
	}
	return z[0], used, err
}
