package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

func init() {
	register(&command{
		Name:  "tune",
		Short: "search σ × λ for the best model, every candidate sharing each pass",
		Usage: "--out MODEL [--sigma LIST] [--lambda LIST|RANGE] [--centers M] [flags] STORE",
		Long: `
Tune fits a grid of kernel length scales σ and regularisations λ on a
chunk store and writes the candidate with the best validation metric (RMSE,
or error rate for classification) to MODEL, a model file that 'predict'
reads. The candidates share everything they can: one set of centres, per σ
one kernel matrix and factor T, and each conjugate-gradient iteration is one
pass over the data for all of them — every chunk is read and standardised
once, its kernel block computed once per σ and multiplied by all the λ at
once. The validation rows (--val-fraction of the store, or --val) are scored
in the same passes. A candidate whose validation metric stops improving for
--patience iterations leaves the pass, as do the worse half at each
--halving step; each keeps its best iteration.

LIST is comma-separated (0.5,1,2); RANGE is LO:HI:COUNT, COUNT values
spaced evenly in log scale from LO to HI (1e-8:1e-3:6). Defaults: σ = √d ×
{1/4, 1/2, 1, 2, 4} (features are standardised), λ = 1e-8:1e-3:6.

The table of candidates goes to stdout (--json: one document with every
candidate's validation curve); progress to stderr.`,
		Flags: tuneFlags,
	})
}

type tuneOpts struct {
	fit fitOpts
}

func tuneFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &tuneOpts{}
	o.fit.register(fs, cliflags.Tune)
	return func(ctx context.Context, e *env, args []string) error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		return runTune(ctx, e, o, set, args)
	}
}

// tuneJSON is the --json document of tune.
type tuneJSON struct {
	Version string `json:"version"`
	Store   string `json:"store"`
	Model   string `json:"model"`
	D       int    `json:"d"`
	*ooc.TuneResult
	Config    ooc.Config `json:"config"`
	Precision string     `json:"precision"`
}

func runTune(ctx context.Context, e *env, o *tuneOpts, set map[string]bool, args []string) error {
	fo := &o.fit
	var tc ooc.TuneConfig
	// check builds the search from the flags (cliflags) and has
	// ooc.ValidateTune check it before any input is read; --plot is
	// falkon-ooc's.
	check := func(base ooc.Config) error {
		var err error
		if tc, err = fo.TuneConfig(base, set); err != nil {
			return err
		}
		if fo.plot != "" && !strings.HasSuffix(strings.ToLower(fo.plot), ".png") {
			return usagef("--plot %s: the name must end in .png", fo.plot)
		}
		return fo.ValidateTune(tc)
	}
	base, r, storePath, err := fo.openTraining(ctx, set, args, check, newProgress(e.stderr, fo.Quiet))
	if err != nil {
		return err
	}
	defer r.Close()
	if err := prepareOut(e, "--out", fo.Out, false, inputPaths(storePath, fo.Val)...); err != nil {
		return err
	}
	run := ooc.RunOptions{Workers: fo.Workers, MaxMemory: fo.MaxMemoryBytes}
	pr := newProgress(e.stderr, fo.Quiet)
	if fo.Val != "" {
		vs, cleanup, err := openValidation(ctx, fo.Val, fo.Workers, r, pr)
		if err != nil {
			return err
		}
		defer cleanup()
		run.Validation = vs
	}
	if plan, err := ooc.Plan(r, base, ooc.RunOptions{}); err == nil {
		taskNote(pr, "tune", base.Task, plan)
	}
	var passStart time.Time
	run.SearchProgress = tuneProgress(pr, "tune", r.Dim(), &passStart)
	ns := max(len(tc.SigmaGrid(r.Dim())), 1)
	pr.printf("tune: %d σ × %d λ = %d candidates on %s%s", ns, len(tc.Lambdas), ns*len(tc.Lambdas), storePath,
		budgetNote(tc, base, run.Validation != nil))
	res, err := ooc.Tune(ctx, r, tc, run)
	if err != nil {
		return flagErr(err)
	}
	pr.printf("tune: %d passes over the data, %.2f s; memory estimate %s", res.Passes, res.Seconds, res.Memory)
	edgeNote(pr, "tune", res)
	if a := res.ARD; a != nil {
		pr.printf("tune: --ard: hold-out MSE on the subsample %.4g → %.4g; σ = %v, λ = %.3g there", a.Start, a.Loss, a.Sigmas, a.Lambda)
	}
	m := res.Model()
	// The preconditioner and its precision as the search chose them.
	base.Preconditioner, base.PrecondPrecision = m.Config().Preconditioner, m.Config().PrecondPrecision
	if m.Task() != ooc.TaskRegression {
		// Calibrate the probabilities on the validation rows: --val, or
		// the rows Tune held out (stream.Holdout with the same seed).
		val := run.Validation
		if val == nil {
			frac := tc.ValFraction
			if frac == 0 {
				frac = ooc.DefaultValFraction
			}
			if _, val, err = ooc.HoldOut(r, frac, base.Seed); err != nil {
				return flagErr(err)
			}
		}
		if m, err = ooc.Calibrate(ctx, m, val, ooc.PredictOptions{Workers: fo.Workers}); err != nil {
			return err
		}
		pr.printf("tune: probabilities: %s", calibrationLine(m))
	}
	if err := saveModel(m, fo.Out); err != nil {
		return err
	}
	if fo.plot != "" {
		title := fmt.Sprintf("tune on %s: M = %d", filepath.Base(storePath), res.M)
		if err := writePlotFile(fo.plot, func(w io.Writer) error { return writeTunePlot(w, res, title) }); err != nil {
			return err
		}
	}
	if fo.JSON {
		return writeJSON(e.stdout, tuneJSON{Version: version, Store: storePath, Model: fo.Out, D: m.D(), TuneResult: res,
			Config: base, Precision: m.Precision().String()})
	}
	writeTuneTable(e.stdout, res)
	best := res.Candidates[res.Best]
	fmt.Fprintf(e.stdout, "\nbest       candidate %d: %s, λ = %g, validation %s %.6g after %d iterations\n",
		res.Best+1, best.Kernel, best.Lambda, res.Metric, best.BestMetric, best.BestIteration)
	if l := pickLine(res); l != "" {
		fmt.Fprintln(e.stdout, l)
	}
	if l := searchCapLine(res); l != "" {
		fmt.Fprintln(e.stdout, l)
	}
	for _, l := range failedLines(res) {
		fmt.Fprintln(e.stdout, l)
	}
	fmt.Fprintf(e.stdout, "model      %s (summary in %s.json)\n", fo.Out, fo.Out)
	fmt.Fprintf(e.stdout, "data       n = %d training, %d validation rows, d = %d, M = %d centres\n", res.N, res.ValRows, m.D(), res.M)
	fmt.Fprintf(e.stdout, "time       %.2f s, %d passes over the data\n", res.Seconds, res.Passes)
	if l := decisionLine(m); l != "" {
		fmt.Fprintf(e.stdout, "decision   %s\n", l)
	}
	return nil
}

// writeTuneTable prints one line per candidate.
func writeTuneTable(w io.Writer, res *ooc.TuneResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	extra := tuneExtra(res)
	head := ""
	for _, x := range extra {
		head += x.name + "\t"
	}
	fmt.Fprintf(tw, "candidate\tsigma\tlambda\tbest %s\t± se\t%sbest iteration\titerations\tstop\tseconds\tpick\t\n", res.Metric, head)
	for i, c := range res.Candidates {
		mark := " "
		if i == res.Best {
			mark = "*"
		}
		se := "-"
		if c.BestSE > 0 {
			se = strconv.FormatFloat(c.BestSE, 'f', 6, 64)
		}
		sigma := "-"
		if c.Sigma > 0 {
			sigma = strconv.FormatFloat(c.Sigma, 'g', 4, 64)
		}
		metric := "-"
		if !math.IsInf(c.BestMetric, 0) {
			metric = strconv.FormatFloat(c.BestMetric, 'f', 6, 64)
		}
		cells := ""
		for _, x := range extra {
			cells += bestValue(c, x.get) + "\t"
		}
		fmt.Fprintf(tw, "%s%d\t%s\t%g\t%s\t%s\t%s%d\t%d\t%s\t%.2f\t%s\t\n", mark, i+1, sigma, c.Lambda, metric, se, cells,
			c.BestIteration, c.Iterations, c.Stop, c.Seconds, pickCell(res, i))
	}
	tw.Flush()
}

// pickCell names the pick rules that take candidate i: "best" (the lowest
// validation metric), "1se" (the one-standard-error rule), "tol" (the
// largest λ within the tolerance), several or "". A search saved before
// the rules were recorded names only its pick.
func pickCell(res *ooc.TuneResult, i int) string {
	if res.Pick == "" {
		if i == res.Best {
			return "best"
		}
		return ""
	}
	var rules []string
	for _, r := range pickRules(res) {
		if r.i == i {
			rules = append(rules, string(r.rule))
		}
	}
	return strings.Join(rules, ",")
}

// rulePick is a pick rule and the candidate it takes.
type rulePick struct {
	rule ooc.PickRule
	i    int
}

// pickRules lists each pick rule with its candidate in res (tol only when
// the search recorded it).
func pickRules(res *ooc.TuneResult) []rulePick {
	rs := []rulePick{{ooc.PickBest, res.Lowest}, {ooc.PickOneSE, res.OneSE}}
	if res.TolMetric != "" {
		rs = append(rs, rulePick{ooc.PickTol, res.Tol})
	}
	return rs
}

// pickLine says which rule picked the model, why when it is tol, and
// what the other rules take: "" when all take the same candidate (or the
// search predates the rules).
func pickLine(res *ooc.TuneResult) string {
	if res.Pick == "" {
		return ""
	}
	var others []string
	for _, r := range pickRules(res) {
		if r.rule == res.Pick || r.i == res.Best {
			continue
		}
		c := res.Candidates[r.i]
		others = append(others, fmt.Sprintf("--pick %s would take candidate %d (%s, λ = %g, validation %s %.6g)",
			r.rule, r.i+1, c.Kernel, c.Lambda, res.Metric, c.BestMetric))
	}
	if len(others) == 0 {
		return ""
	}
	lo := res.Candidates[res.Lowest]
	why := ""
	if res.Pick == ooc.PickTol {
		why = fmt.Sprintf(" (the largest λ whose %s is within %.2g %% of the lowest)", res.TolMetric, 100*res.Tolerance)
	}
	return fmt.Sprintf("pick       --pick %s took candidate %d%s; %s; the lowest %s is %.6g ± %.2g (candidate %d)",
		res.Pick, res.Best+1, why, strings.Join(others, "; "), res.Metric, lo.BestMetric, lo.BestSE, res.Lowest+1)
}

// tuneColumn is a metric of the tune table beside the selection metric.
type tuneColumn struct {
	name string
	get  func(*ooc.Metrics) *float64
}

// tuneExtra are the tune table's metric columns beside the selection
// metric: R² and MAE for regression; balanced accuracy for
// classification, and PR-AUC for binary.
func tuneExtra(res *ooc.TuneResult) []tuneColumn {
	var task ooc.Task
	for _, c := range res.Candidates {
		if len(c.Validation) > 0 {
			m := c.Validation[0].Metrics
			switch {
			case m.R2 != nil || m.MAE != nil:
				task = ooc.TaskRegression
			case m.PRAUC != nil:
				task = ooc.TaskBinary
			case m.BalancedAccuracy != nil:
				task = ooc.TaskMulticlass
			}
			break
		}
	}
	switch task {
	case ooc.TaskRegression:
		return []tuneColumn{{"R²", func(m *ooc.Metrics) *float64 { return m.R2 }}, {"MAE", func(m *ooc.Metrics) *float64 { return m.MAE }}}
	case ooc.TaskBinary:
		return []tuneColumn{{"balanced acc.", func(m *ooc.Metrics) *float64 { return m.BalancedAccuracy }}, {"PR-AUC", func(m *ooc.Metrics) *float64 { return m.PRAUC }}}
	case ooc.TaskMulticlass:
		return []tuneColumn{{"balanced acc.", func(m *ooc.Metrics) *float64 { return m.BalancedAccuracy }}}
	}
	return nil
}

// bestValue is a metric of a candidate at its best iteration, "-" when
// it was not measured there.
func bestValue(c ooc.TuneCandidate, get func(*ooc.Metrics) *float64) string {
	for i := range c.Validation {
		if c.Validation[i].Iteration == c.BestIteration {
			if v := get(&c.Validation[i].Metrics); v != nil {
				return strconv.FormatFloat(*v, 'f', 4, 64)
			}
		}
	}
	return "-"
}

// openValidation opens --val (a store, Parquet or CSV file) with the
// training store's columns; it must carry the targets.
func openValidation(ctx context.Context, val string, workers int, r *chunkstore.Reader, pr *progress) (stream.Source, func(), error) {
	vpath, cleanup, err := openInput(ctx, inputOpts{workers: workers, weight: r.WeightColumn()}, r.FeatureNames(), r.TargetNames(), []string{val}, pr)
	if err != nil {
		return nil, nil, fmt.Errorf("--val: %w", err)
	}
	vr, err := chunkstore.Open(vpath)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("--val: %w", err)
	}
	done := func() { vr.Close(); cleanup() }
	vs, withTargets, err := selectColumns(vr, val, r.FeatureNames(), r.TargetNames())
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("--val: %w", err)
	}
	if !withTargets {
		done()
		return nil, nil, fmt.Errorf("--val %s: it lacks the target column(s) %q", val, r.TargetNames())
	}
	return vs, done, nil
}

// edgeNote says when the pick lies on an edge of the grid, and how to
// look beyond it.
func edgeNote(pr *progress, who string, res *ooc.TuneResult) {
	if res.Extended > 0 {
		pr.printf("%s: the grid was widened %d time(s) (--extend): the pick lay on its edge", who, res.Extended)
	}
	if len(res.Edges) == 0 {
		return
	}
	best := res.Candidates[res.Best]
	pr.printf("%s: the pick (σ = %g, λ = %g) is the %s of the grid: the best may lie beyond it; widen --sigma or --lambda, or add --extend 2",
		who, best.Sigma, best.Lambda, strings.Join(res.Edges, " and the "))
}

// budgetNote is the start line's statement of the search's budget of
// passes: "" for the logistic loss, whose candidates run their Newton
// steps.
func budgetNote(tc ooc.TuneConfig, base ooc.Config, valSource bool) string {
	if base.Loss == ooc.LossLogistic {
		return ""
	}
	iters := cmp.Or(base.Iterations, ooc.DefaultIterations)
	budget := tc.MaxPasses
	if budget == 0 {
		budget = ooc.DefaultMaxPasses(iters, tc.Patience, !valSource)
	}
	if tc.Patience <= 0 {
		return fmt.Sprintf("; at most %d passes over the data", budget)
	}
	return fmt.Sprintf("; at most %d passes over the data (--max-passes): past --iters %d a candidate continues while its validation improves (--patience %d)",
		budget, iters, tc.Patience)
}

// searchCapLine says which of the search's candidates stopped at the cap
// while their validation still improved, with the last improvement of
// each (at most three named): "" when none did.
func searchCapLine(res *ooc.TuneResult) string {
	var still []string
	n := 0
	metric := res.Metric // the stopping rules watch 1 − AUC where the pick watches the error rate
	if metric != "rmse" {
		metric = "1 − AUC"
	}
	for i, c := range res.Candidates {
		if li := c.LastImprovement; li != nil && li.Still {
			n++
			if len(still) < 3 {
				still = append(still, fmt.Sprintf("candidate %d %s %.6g → %.6g at iteration %d", i+1, metric, li.From, li.To, li.Iteration))
			}
		}
	}
	if n == 0 {
		return ""
	}
	more := ""
	if n > len(still) {
		more = fmt.Sprintf(", and %d more", n-len(still))
	}
	return fmt.Sprintf("cap        %d candidate(s) stopped at the cap with the validation still improving: %s%s; a larger --max-passes (or --iters) lets them run on",
		n, strings.Join(still, "; "), more)
}

// failedLines say which candidates failed and why, one line per error
// (the candidates of a σ whose K_MM could not be factorised share one):
// none when no candidate failed.
func failedLines(res *ooc.TuneResult) []string {
	var errs []string
	who := map[string][]string{}
	for i, c := range res.Candidates {
		if c.Stop != ooc.StopFailed {
			continue
		}
		if _, ok := who[c.Err]; !ok {
			errs = append(errs, c.Err)
		}
		who[c.Err] = append(who[c.Err], strconv.Itoa(i+1))
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = fmt.Sprintf("failed     candidate(s) %s: %s", strings.Join(who[e], ", "), e)
	}
	return lines
}

// capLine says that the fit of model m stopped at its cap, with its last
// improvement of the validation metric (RMSE, or 1 − AUC for
// classification; ooc.StoppedAtCap): its --iters, or for fit --tune's
// final fit the budget of passes (--max-passes). "" when it did not stop
// there.
func capLine(m *ooc.Model) string {
	li := ooc.StoppedAtCap(m)
	if li == nil {
		return ""
	}
	metric := "RMSE"
	if m.Task() != ooc.TaskRegression {
		metric = "1 − AUC"
	}
	limit, flag := fmt.Sprintf("--iters %d", m.Config().Iterations), "--iters"
	ran := "ran all " + limit
	if ho := m.Training().Handoff; ho != nil && ho.MaxPasses > 0 {
		limit, flag = fmt.Sprintf("its budget of %d passes (--max-passes; %d iterations)", ho.MaxPasses, m.Config().Iterations), "--max-passes"
		ran = "used " + limit
	}
	if li.Still {
		return fmt.Sprintf("stopped at %s with the validation %s still improving (%.6g → %.6g at iteration %d): a larger %s may give a better model",
			limit, metric, li.From, li.To, li.Iteration, flag)
	}
	return fmt.Sprintf("%s; the validation %s last improved at iteration %d (%.6g → %.6g)", ran, metric, li.Iteration, li.From, li.To)
}
