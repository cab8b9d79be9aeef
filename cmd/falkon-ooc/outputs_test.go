package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestIngestSizeLine: the summary says how much smaller the store is
// than its values as float64 only when it is; it said "1.00× smaller"
// of values that do not compress.
func TestIngestSizeLine(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var few, noise strings.Builder
	few.WriteString("x1,x2,y\n")
	noise.WriteString("x1,x2,y\n")
	for i := range 5000 {
		fmt.Fprintf(&few, "%d,0.5,%d\n", i%3, i%2)
		fmt.Fprintf(&noise, "%v,%v,%v\n", rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
	}
	for _, tc := range []struct {
		name, csv, codec string
		want             *regexp.Regexp
	}{
		{"few values, zstd", few.String(), "zstd", regexp.MustCompile(`(?m)^bytes .* written, \d+\.\d× smaller than the values as float64$`)},
		{"noise, no codec", noise.String(), "none", regexp.MustCompile(`(?m)^bytes +[0-9.]+ [kMG]?B read, [0-9.]+ [kMG]?B written$`)},
	} {
		in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "")+".csv")
		if err := os.WriteFile(in, []byte(tc.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI("ingest", "--quiet", "--out", in+".store", "--target", "y", "--codec", tc.codec, in)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		if !tc.want.MatchString(out) {
			t.Errorf("%s: the bytes line does not match %s:\n%s", tc.name, tc.want, out)
		}
	}
}

// TestProgramName: under another name (os.Args[0]'s base), the messages
// and the command an interrupted fit prints name it, not falkon-ooc.
func TestProgramName(t *testing.T) {
	for arg0, want := range map[string]string{
		"/usr/local/bin/fo": "fo", `fo.exe`: "fo", "": "falkon-ooc", "falkon-ooc": "falkon-ooc",
	} {
		if got := programName(arg0); got != want {
			t.Errorf("programName(%q) = %q, want %q", arg0, got, want)
		}
	}
	dir := t.TempDir()
	train := makeStore(t, dir, 2000, 3, "y")
	model := filepath.Join(dir, "m.falkon")
	defer func(old string) { progName = old }(progName)
	progName = "fo"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelWriter{marker: "iteration 1/9: done", cancel: cancel}
	if code := run(ctx, []string{"fit", "--out", model, "--centers", "100", "--iters", "9", train}, &bytes.Buffer{}, stderr); code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, stderr.buf.String())
	}
	msg := stderr.buf.String()
	for _, want := range []string{"Continue with:\n  fo fit --resume --out " + model + " " + train + "\n", "\nfo fit: interrupted\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the interrupted fit's message lacks %q:\n%s", want, msg)
		}
	}
	if code, _, errOut := runCLI("fit", "--lambda", "-1"); code != exitUsage || !strings.HasPrefix(errOut, "fo fit: ") || !strings.Contains(errOut, "run 'fo fit --help' for usage") {
		t.Errorf("usage error: exit %d, %q; want 2, naming fo", code, errOut)
	}
}

// TestInspectClasses: inspect on a store with a classification target
// gives the class names and their rows (and weights), not the mean of
// the class codes; a regression target keeps its statistics.
func TestInspectClasses(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,w,kind\n")
	names := []string{"cat", "dog", "emu"}
	for i := range 40 {
		k := 0 // 20 cats (weight 1), 15 dogs (weight 2), 5 emus (weight 1)
		if i >= 20 {
			k = 1
		}
		if i >= 35 {
			k = 2
		}
		fmt.Fprintf(&b, "%d,%d,%s\n", i, 1+k%2, names[k])
	}
	in := filepath.Join(dir, "pets.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "pets.store")
	if code, _, errOut := runCLI("ingest", "--quiet", "--out", store, "--target", "kind", "--weight", "w", "--features", "x", in); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI("inspect", store)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	want := `target "kind": 3 classes (fit --task auto: multiclass)
class  rows   share  weight   share
cat      20  50.0 %      20  36.4 %
dog      15  37.5 %      30  54.5 %
emu       5  12.5 %       5   9.1 %
`
	if !strings.Contains(out, want) {
		t.Errorf("inspect does not list the classes as\n%s\ngot:\n%s", want, out)
	}
	if !regexp.MustCompile(`(?m)^kind +target +string +- +- +- +- +yes +3$`).MatchString(out) {
		t.Errorf("the target's row shows statistics of the class codes:\n%s", out)
	}
	code, out, _ = runCLI("inspect", "--json", store)
	if code != 0 || !strings.Contains(out, `"classes": {
    "target": "kind",
    "task": "multiclass",
    "classes": [
      {
        "name": "cat",
        "value": 0,
        "rows": 20,
        "weight": 20
      },`) {
		t.Errorf("inspect --json: exit %d, no classes with rows and weights:\n%s", code, out)
	}
	// A regression target: statistics, no classes.
	reg := makeStore(t, dir, 300, 1, "y")
	if _, out, _ := runCLI("inspect", reg); strings.Contains(out, "classes") || !regexp.MustCompile(`(?m)^y +target +float64 +[0-9.]+ `).MatchString(out) {
		t.Errorf("inspect of a regression store:\n%s", out)
	}
}

// TestLogisticPasses: fit's start line gives the logistic loss's passes
// over the data, and the fit makes that many (each pass prints its
// progress line: "rhs" for a gradient pass, "iteration" for a CG one).
func TestLogisticPasses(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 1500, 2, "label")
	code, _, errOut := runCLI("fit", "--out", filepath.Join(dir, "m.falkon"), "--loss", "logistic", "--centers", "100", "--iters", "4", "--newton-steps", "3", "--val-fraction", "0", train)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "fit: logistic loss: up to 18 passes over the data (3 Newton steps, each a gradient pass, 4 CG iterations and, when its line search shortens it or it is the last, one more pass), against 5 for the squared loss\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("no start line %q:\n%s", want, errOut)
	}
	// 3 × (1 + 4) + 1 when every step is taken whole, up to 18.
	passes := len(regexp.MustCompile(`(?m)^(rhs: |iteration \d+/\d+: done)`).FindAllString(errOut, -1))
	if passes < 16 || passes > 18 {
		t.Errorf("the fit made %d passes, the start line says up to 18:\n%s", passes, errOut)
	}
}

// imbalanced writes a CSV of n rows, about 6 % of class "yes", whose
// probability rises with x1.
func imbalanced(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var b strings.Builder
	b.WriteString("x1,x2,x3,y\n")
	for range n {
		x1, x2, x3 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		z := 1.6*x1 + 0.8*x2*x3 - 3.6
		y := "no"
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y = "yes"
		}
		fmt.Fprintf(&b, "%.5f,%.5f,%.5f,%s\n", x1, x2, x3, y)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDecisionOutputs: with balanced class weights and Platt
// calibration, no predicted label disagrees with the probability printed
// beside it (1368 of 20 000 rows did); fit says what the weights did to
// the decision; predict's summary has precision, recall and F1 per class,
// the confusion matrix and the decision; --threshold f1 is chosen on the
// validation rows and stored; bad thresholds are usage errors.
func TestDecisionOutputs(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	imbalanced(t, train, 6000, 1)
	imbalanced(t, test, 3000, 2)
	for _, tc := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"balanced", []string{"--class-weight", "balanced"}, []string{
			"\ndecision   yes when p(yes) ≥ 0.5 (the default), else no\n",
			"\nweights    the balanced class weights drew the scores' boundary (score 0) at p(yes) = ",
			"so the weights shaped the scores but not the threshold: --threshold balanced chooses equal recall of both classes\n",
		}},
		{"f1", []string{"--threshold", "f1"}, []string{"(--threshold f1, chosen on 1226 validation rows), else no\n"}},
	} {
		model := filepath.Join(dir, tc.name+".falkon")
		code, out, errOut := runCLI(append([]string{"fit", "--quiet", "--out", model, "--target", "y", "--centers", "200", "--val-fraction", "0.2", train}, tc.flags...)...)
		if code != 0 {
			t.Fatalf("%s: fit: exit %d: %s", tc.name, code, errOut)
		}
		for _, w := range append(tc.want, "\nclasses    class  rows  precision  recall      F1\n", "\nconfusion  true \\ label ") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: fit's summary lacks %q:\n%s", tc.name, w, out)
			}
		}
		// inspect MODEL says the same, and scores the saved model.
		code, out, _ = runCLI("inspect", model)
		if code != 0 || !regexp.MustCompile(`\ndecision +yes when p\(yes\) ≥ [0-9.]+ \(`).MatchString(out) ||
			!strings.Contains(out, "\nthe saved model on the validation rows:\nmetrics    error_rate ") || !strings.Contains(out, "\nconfusion  true \\ label ") {
			t.Errorf("%s: inspect lacks the decision or the saved model's metrics:\n%s", tc.name, out)
		}
		pred := filepath.Join(dir, tc.name+".csv")
		code, out, errOut = runCLI("predict", "--model", model, "--proba", "--out", pred, test)
		if code != 0 {
			t.Fatalf("%s: predict: exit %d: %s", tc.name, code, errOut)
		}
		m := regexp.MustCompile(`\ndecision   yes when p\(yes\) ≥ ([0-9.]+) `).FindStringSubmatch(out)
		if m == nil || !regexp.MustCompile(`(?m)^metrics    .*balanced_accuracy [0-9.]+, auc [0-9.]+, pr_auc [0-9.]+, log_loss [0-9.]+, ece [0-9.]+$`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^           yes +\d+ +[0-9.]+ +[0-9.]+ +[0-9.]+$`).MatchString(out) {
			t.Fatalf("%s: predict's summary lacks the decision, a metric or the class lines:\n%s", tc.name, out)
		}
		th, _ := strconv.ParseFloat(m[1], 64)
		// --json: the decision and the per-class metrics beside the
		// class names.
		code, js, errOut := runCLI("predict", "--quiet", "--model", model, "--json", test)
		var doc struct {
			Classes  []string `json:"classes"`
			Decision struct {
				Threshold float64 `json:"threshold"`
				Rule      string  `json:"rule"`
			} `json:"decision"`
			PerClass []struct {
				Class     string   `json:"class"`
				Precision *float64 `json:"precision"`
				Recall    *float64 `json:"recall"`
				F1        *float64 `json:"f1"`
			} `json:"per_class"`
			Confusion [][]float64 `json:"confusion"`
			PRAUC     *float64    `json:"pr_auc"`
			ECE       *float64    `json:"ece"`
		}
		if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
			t.Fatalf("%s: predict --json: exit %d, %v: %s", tc.name, code, err, errOut)
		}
		if len(doc.PerClass) != 2 || doc.PerClass[1].Class != "yes" || doc.PerClass[1].Recall == nil || len(doc.Confusion) != 2 ||
			doc.PRAUC == nil || doc.ECE == nil || strings.Join(doc.Classes, ",") != "no,yes" || math.Abs(doc.Decision.Threshold-th) > 1e-4 ||
			(tc.name == "f1") != (doc.Decision.Rule == "f1") {
			t.Errorf("%s: predict --json: %+v", tc.name, doc)
		}
		b, err := os.ReadFile(pred)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if lines[0] != "y_pred,p_no,p_yes" {
			t.Fatalf("%s: header %q", tc.name, lines[0])
		}
		disagree, yes := 0, 0
		for _, l := range lines[1:] {
			f := strings.Split(l, ",")
			p, _ := strconv.ParseFloat(f[2], 64)
			// The summary rounds the threshold to 4 digits: rows within
			// its rounding are not counted.
			if math.Abs(p-th) > 1e-4 && (f[0] == "yes") != (p >= th) {
				disagree++
			}
			if f[0] == "yes" {
				yes++
			}
		}
		if disagree != 0 || yes == 0 {
			t.Errorf("%s: %d of %d rows are labelled against p(yes) ≥ %v (%d labelled yes)", tc.name, disagree, len(lines)-1, th, yes)
		}
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--threshold", "1.5"}, "--threshold: threshold 1.5: a number must be in (0, 1)"},
		{[]string{"--threshold", "f1", "--val-fraction", "0"}, "--threshold f1 chooses the threshold on validation rows: --val-fraction 0 leaves none"},
		{[]string{"--threshold", "0.3", "--task", "regression"}, "--threshold: a decision threshold is for binary classification, not regression"},
	} {
		code, _, errOut := runCLI(append([]string{"fit", "--quiet", "--out", filepath.Join(dir, "bad.falkon"), "--target", "y", train}, tc.flags...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.flags, code, errOut, tc.want)
		}
	}
}

// TestRegressionMetricsLine: predict's summary gives R² and MAE beside
// RMSE (it gave rel_error, which is 1 − R², and no MAE).
func TestRegressionMetricsLine(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 1200, 3, "y")
	model := filepath.Join(dir, "m.falkon")
	if code, _, errOut := runCLI("fit", "--quiet", "--out", model, "--centers", "100", train); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI("predict", "--quiet", "--model", model, "--out", filepath.Join(dir, "p.csv"), train)
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`(?m)^metrics    rmse ([0-9.e-]+), mae ([0-9.e-]+), r2 ([0-9.e-]+), mse [0-9.e-]+, rel_error ([0-9.e-]+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no rmse, mae, r2 in:\n%s", out)
	}
	rmse, _ := strconv.ParseFloat(m[1], 64)
	mae, _ := strconv.ParseFloat(m[2], 64)
	r2, _ := strconv.ParseFloat(m[3], 64)
	rel, _ := strconv.ParseFloat(m[4], 64)
	if !(mae > 0 && mae <= rmse) || math.Abs(r2-(1-rel)) > 1e-5 || !(r2 > 0.5 && r2 < 1) {
		t.Errorf("rmse %v, mae %v, r2 %v, rel_error %v: want 0 < mae ≤ rmse and r2 = 1 − rel_error", rmse, mae, r2, rel)
	}
}

// TestUncertaintyWords: the std lines say what the rank keeps (never
// above 100 %: the old line said "within 1.8e+08 % of full rank") and
// whether the per-row deviations beat a constant band on the validation
// rows, and what to try when they do not.
func TestUncertaintyWords(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 1500, 11, "y")
	model := filepath.Join(dir, "m.falkon")
	code, out, errOut := runCLI("fit", "--out", model, "--centers", "80", "--iters", "6", "--uncertainty", "--uncertainty-rank", "8", "--quiet", train)
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`\nstd        precond, rank 8 of M = 80: keeps ([0-9.]+) % of the variance the data explains at full rank; on 150 validation rows the 90 % interval covers [0-9.]+ %`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no std line with the share the rank keeps:\n%s", out)
	}
	if kept, _ := strconv.ParseFloat(m[1], 64); !(kept > 0 && kept <= 100) {
		t.Errorf("the rank keeps %v %%: want a share in (0, 100]", kept)
	}
	if !regexp.MustCompile(`\n           per-row deviations (beat a constant band \(± [0-9.]+ for 90 %\) on those rows: NLPD [-0-9.]+ against [-0-9.]+, [0-9.e-]+ nats a row better|do no better than a constant band .*or use the constant band)\n`).MatchString(out) {
		t.Errorf("no line on per-row deviations against a constant band:\n%s", out)
	}

	u := &ooc.Uncertainty{Method: ooc.UncertaintyPrecond, Rank: 16, Rows: 2000, RankKept: 0.998, Coverage50: 0.5, Coverage90: 0.9175, Coverage95: 0.95,
		ResidualVar: []float64{1.5129}, NLPD: 1.612, NLPDConstant: 1.609}
	got := uncertaintyLines(u, 1000)
	want := []string{
		"precond, rank 16 of M = 1000: keeps 99.8 % of the variance the data explains at full rank; on 2000 validation rows the 90 % interval covers 91.8 % (50 %: 50.0 %, 95 %: 95.0 %)",
		"per-row deviations do no better than a constant band (± 2.023 for 90 %) on those rows: NLPD 1.612 against 1.609; try a larger --uncertainty-rank, --uncertainty-method exact, or use the constant band",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines\n%q\nwant\n%q", got, want)
	}
	u.NLPD = 1.2
	if got := uncertaintyLines(u, 1000)[1]; got != "per-row deviations beat a constant band (± 2.023 for 90 %) on those rows: NLPD 1.2 against 1.609, 0.409 nats a row better" {
		t.Errorf("beating the band: %q", got)
	}
}

// TestTuneThreshold: tune --threshold stores the decision in the model it
// writes, as fit does: a rule chosen on the held-out rows, or a number;
// a bad one is a usage error before any work.
func TestTuneThreshold(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.csv")
	imbalanced(t, train, 4000, 1)
	for _, tc := range []struct {
		threshold, want, rule string
	}{
		{"f1", "(--threshold f1, chosen on ", "f1"},
		{"0.3", "yes when p(yes) ≥ 0.3 (--threshold), else no\n", ""},
	} {
		model := filepath.Join(dir, "m"+tc.threshold+".falkon")
		code, out, errOut := runCLI("tune", "--quiet", "--out", model, "--target", "y", "--centers", "100", "--iters", "4",
			"--sigma", "2,4", "--lambda", "1e-6,1e-4", "--threshold", tc.threshold, train)
		if code != 0 {
			t.Fatalf("--threshold %s: exit %d: %s", tc.threshold, code, errOut)
		}
		if !strings.Contains(out, "\ndecision   yes when p(yes) ≥ ") || !strings.Contains(out, tc.want) {
			t.Errorf("--threshold %s: tune's summary lacks the decision %q:\n%s", tc.threshold, tc.want, out)
		}
		m, err := ooc.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := m.Decision()
		if !ok || d.Rule != tc.rule || (tc.rule == "" && d.Threshold != 0.3) || m.Config().Threshold != tc.threshold {
			t.Errorf("--threshold %s: the model's decision %+v (stored: %v), config threshold %q", tc.threshold, d, ok, m.Config().Threshold)
		}
	}
	code, _, errOut := runCLI("tune", "--quiet", "--out", filepath.Join(dir, "bad.falkon"), "--target", "y", "--threshold", "1.5", train)
	if want := "falkon-ooc tune: --threshold: threshold 1.5: a number must be in (0, 1), the probability of the second class from which rows are labelled with it\n"; code != exitUsage || !strings.HasPrefix(errOut, want) {
		t.Errorf("--threshold 1.5: exit %d, %q; want 2 and %q", code, errOut, want)
	}
}
