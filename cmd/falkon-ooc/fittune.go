package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// fitTuneOpts are fit's flags of the whole job, fit --tune: a search on
// a row subsample at a small M, then the fit at --centers with its pick.
type fitTuneOpts struct {
	on                  bool
	rows                int64
	centers             int
	handoff             string
	patience            int
	minImprovement      float64
	ard                 bool
	ardRows, ardSteps   int
	sigmaGrid, lamGrid  gridValue
	sigmaHalving        string
	sigmaSet, lambdaSet bool
	extend              int
	pick                string
}

// defaultTunedIters is fit --tune's --iters when not given: a cap, since
// the search's candidates and the fit stop by --patience.
const defaultTunedIters = 50

// gridValue is a --sigma or --lambda: one number, or with --tune a LIST
// or a LO:HI:COUNT RANGE (parseGrid), as tune reads them.
type gridValue struct {
	name   string
	text   string
	values []float64
	one    *float64 // the single value, for a plain fit
}

func (g *gridValue) String() string {
	if g == nil || g.one == nil {
		return ""
	}
	if g.text != "" {
		return g.text
	}
	if *g.one == 0 {
		return "0"
	}
	return strconv.FormatFloat(*g.one, 'g', -1, 64)
}

func (g *gridValue) Set(s string) error {
	if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		// One number, checked by fit's config as before (--lambda 0 is
		// a usage error there, with its own message).
		g.text, g.values, *g.one = s, []float64{v}, v
		return nil
	}
	vals, err := parseGrid(g.name, s)
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "--"+g.name+" "))
	}
	g.text, g.values, *g.one = s, vals, vals[0]
	return nil
}

// register declares the flags of fit --tune on fs.
func (t *fitTuneOpts) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.on, "tune", false, "the whole job: search --sigma × --lambda (LISTs or LO:HI:COUNT; default √d × {1/4, 1/2, 1, 2, 4} × 1e-8:1e-3:6) on a subsample of --tune-rows rows at M = --tune-centers, every candidate sharing each pass, then fit all rows at --centers with the pick, stopped by --patience on the validation rows (--val-fraction, default 0.1, or --val), with --iters a cap (default 50)")
	fs.Int64Var(&t.rows, "tune-rows", 0, fmt.Sprintf("with --tune: training rows of the search's subsample (0: min(n, %d))", ooc.DefaultTuneRows))
	fs.IntVar(&t.centers, "tune-centers", 0, fmt.Sprintf("with --tune: the search's M (0: min(%d, --centers, rows/10))", ooc.DefaultTuneCenters))
	fs.StringVar(&t.handoff, "handoff", string(ooc.DefaultHandoff), "with --tune: how λ carries from the search's n_s rows to the fit's n: keep, sqrt (λ·√(n_s/n)) or linear (λ·n_s/n); σ carries unchanged")
	fs.IntVar(&t.patience, "patience", 0, "stop when the validation metric has not improved for N validations and keep the best iteration (0: run all --iters; with --tune the default is 3, and it also stops the search's candidates)")
	fs.Float64Var(&t.minImprovement, "min-improvement", ooc.DefaultMinImprovement, "with --patience: the relative improvement of the validation metric (RMSE, or 1 − AUC for classification) that counts as one")
	fs.BoolVar(&t.ard, "ard", false, "with --tune: also learn one length scale per feature on a row subsample (Gaussian kernel); the learned scales compete with the --sigma grid on the same validation rows")
	fs.IntVar(&t.ardRows, "ard-rows", 0, "with --ard: rows of the subsample (0: min(n, 5000), or 20000 from 100000 rows on)")
	fs.IntVar(&t.ardSteps, "ard-steps", 0, "with --ard: gradient steps (0: 80)")
	fs.IntVar(&t.extend, "extend", 0, "with --tune: when the pick lies on an edge of the --sigma or --lambda grid, add two values beyond it and search again, up to N times")
	fs.StringVar(&t.pick, "pick", string(ooc.DefaultPick), "with --tune: how the search picks σ and λ: best (the lowest validation metric) or 1se (the largest λ, then σ, within one standard error of the lowest)")
	fs.StringVar(&t.sigmaHalving, "sigma-halving", joinInts(ooc.DefaultSigmaSteps()), "with --tune: successive halving over whole σ after each iteration in `LIST` (0: off)")
}

// check applies fit --tune's CLI rules: the grids only with --tune, the
// tune-only flags only with it, and its defaults.
func (t *fitTuneOpts) check(o *fitOpts, set map[string]bool) error {
	t.sigmaSet, t.lambdaSet = set["sigma"], set["lambda"]
	if !t.on {
		for _, f := range []string{"tune-rows", "tune-centers", "handoff", "ard", "ard-rows", "ard-steps", "sigma-halving", "extend", "pick"} {
			if set[f] {
				return usagef("--%s goes with --tune", f)
			}
		}
		for _, g := range []*gridValue{&t.sigmaGrid, &t.lamGrid} {
			if len(g.values) > 1 {
				return usagef("--%s %s gives %d values: a search over them needs --tune (or the tune command)", g.name, g.text, len(g.values))
			}
		}
		if t.patience < 0 {
			return usagef("--patience must be ≥ 0, got %d", t.patience)
		}
		if !(t.minImprovement >= 0 && t.minImprovement < 1) {
			return usagef("--min-improvement must be in [0, 1), got %g", t.minImprovement)
		}
		if t.patience > 0 && o.val == "" && o.valFraction == 0 {
			return usagef("--patience stops by the validation metric: give --val-fraction or --val")
		}
		return nil
	}
	if !(t.minImprovement >= 0 && t.minImprovement < 1) {
		return usagef("--min-improvement must be in [0, 1), got %g", t.minImprovement)
	}
	if t.rows < 0 || t.centers < 0 || t.patience < 0 || t.ardRows < 0 || t.ardSteps < 0 || t.extend < 0 {
		return usagef("--tune-rows, --tune-centers, --patience, --ard-rows, --ard-steps and --extend must be ≥ 0")
	}
	switch ooc.HandoffRule(t.handoff) {
	case ooc.HandoffKeep, ooc.HandoffSqrt, ooc.HandoffLinear:
	default:
		return usagef("--handoff must be keep, sqrt or linear, got %q", t.handoff)
	}
	if _, err := ooc.ParsePickRule(t.pick); err != nil {
		return usagef("--pick: %v", err)
	}
	if t.ard && o.sigmas != "" {
		return usagef("--ard learns the per-feature length scales: give no --sigmas")
	}
	return nil
}

// config returns the FitTuned settings of the flags; cfg is fit's.
func (t *fitTuneOpts) config(cfg ooc.Config, set map[string]bool) (ooc.TunedConfig, error) {
	cfg.MinImprovement = t.minImprovement
	tc := ooc.TunedConfig{Fit: cfg, Rows: t.rows, Centers: t.centers, Handoff: ooc.HandoffRule(t.handoff)}
	s := &tc.Search
	s.Extend, s.Pick, s.MinImprovement = t.extend, ooc.PickRule(t.pick), searchMinImprovement
	switch {
	case cfg.Loss == ooc.LossLogistic && t.patience > 0:
		return tc, usagef("--patience stops CG when the validation metric stops improving, which the logistic loss does not do: " +
			"it runs its --newton-steps, each of --iters CG iterations; leave --patience out")
	case cfg.Loss == ooc.LossLogistic:
		tc.Fit.Patience, s.Patience = 0, -1
	case !set["patience"]:
		tc.Fit.Patience, s.Patience = ooc.DefaultPatience, ooc.DefaultPatience
	case t.patience == 0:
		tc.Fit.Patience, s.Patience = 0, -1
	default:
		tc.Fit.Patience, s.Patience = t.patience, t.patience
	}
	if t.sigmaSet {
		s.Sigmas = t.sigmaGrid.values
	}
	if t.lambdaSet {
		s.Lambdas = t.lamGrid.values
	}
	if strings.TrimSpace(t.sigmaHalving) == "0" {
		s.SigmaHalving = -1
	} else {
		s.SigmaSteps = []int{}
		for _, f := range strings.Split(t.sigmaHalving, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v < 1 {
				return tc, usagef("--sigma-halving: %q is not an iteration ≥ 1 (give a LIST such as 2,4,10, or 0 for off)", strings.TrimSpace(f))
			}
			s.SigmaSteps = append(s.SigmaSteps, v)
		}
	}
	if t.ard {
		s.ARD = &ooc.ARDConfig{Rows: t.ardRows, Steps: t.ardSteps}
	}
	return tc, nil
}

// runTuned runs fit --tune's search and fit, reporting both.
func runTuned(ctx context.Context, o *fitOpts, cfg ooc.Config, set map[string]bool, train stream.Source, run ooc.RunOptions,
	pr *progress, dim int) (*ooc.Model, error) {
	t := &o.tuneFit
	tc, err := t.config(cfg, set)
	if err != nil {
		return nil, err
	}
	if tc.ValRows == 0 && o.valFraction > 0 {
		rows := min(int64(ooc.DefaultTuneRows), stream.Rows(train))
		if t.rows > 0 {
			rows = min(t.rows, stream.Rows(train))
		}
		tc.ValRows = max(int64(float64(rows)*o.valFraction/(1-o.valFraction)+0.5), 1000)
	}
	var subStart time.Time
	tc.Search.Progress = tuneProgress(pr, "fit --tune: search", dim, &subStart)
	pr.printf("fit --tune: searching σ × λ on a row subsample, then fitting all %d training rows at M = %d", stream.Rows(train), cfg.Centers)
	return ooc.FitTuned(ctx, train, tc, run)
}

// writeHandoff prints the search's pick and what fit --tune carried.
func writeHandoff(w io.Writer, res *ooc.TuneResult, ho *ooc.Handoff) {
	best := res.Candidates[res.Best]
	fmt.Fprintf(w, "search     candidate %d: %s, λ = %g, validation %s %.6g; %d rows, %d validation rows, M = %d, %.2f s (+ %.2f s to draw the rows)\n",
		res.Best+1, best.Kernel, best.Lambda, res.Metric, best.BestMetric, ho.SearchRows, ho.SearchValRows, ho.SearchCenters,
		ho.SearchSeconds, ho.SubsampleSeconds)
	if l := pickLine(res); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := searchCapLine(res); l != "" {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "handoff    λ = %g (--handoff %s), σ as chosen\n", ho.Lambda, ho.Rule)
}

// tuneProgress prints a search's progress (tune, and fit --tune's
// search) under the name who.
func tuneProgress(pr *progress, who string, dim int, passStart *time.Time) func(ooc.TuneProgress) {
	var precondStart, ardStart time.Time
	asked := 0
	return func(p ooc.TuneProgress) {
		if p.Memory != nil {
			asked = p.M
			mem := *p.Memory
			budget := ""
			if p.MaxPasses > 0 {
				budget = fmt.Sprintf("; at most %d passes", p.MaxPasses)
			}
			pr.printf("%s: n = %d training rows, %d validation rows, d = %d, M = %d centres; memory needed ≈ %s%s",
				who, p.N, p.ValRows, dim, p.M, mem, budget)
			softMemoryLimit(mem)
			return
		}
		if p.Note != "" {
			pr.printf("%s: %s", who, flagText(p.Note))
			return
		}
		switch p.Stage {
		case ooc.StageSubsample, ooc.StageSample, ooc.StageRHS, ooc.StageIterate, ooc.StageValidate:
			if p.Stage == ooc.StageSample && p.Centers > 0 {
				centresNote(pr, who, p.Progress, asked, ooc.Memory{})
				return
			}
			step := string(p.Stage)
			if p.Stage == ooc.StageIterate || p.Stage == ooc.StageValidate {
				step = fmt.Sprintf("iteration %d/%d (%d candidates)", p.Iteration, p.Iterations, p.Live)
			}
			if p.Chunks > 0 {
				passUpdate(pr, step, p.Chunk, p.Chunks, passStart)
				return
			}
			if len(p.Stopped) > 0 {
				pr.printf("%s: after iteration %d, %d candidate(s) stopped, %d still in the pass", who, p.Iteration, len(p.Stopped), p.Live)
			}
		case ooc.StagePrecond:
			// Reported at 0 before the right-hand side's pass (the
			// factorisations run beside it), then by σ done, then 1.
			if precondStart.IsZero() {
				precondStart = time.Now()
				pr.printf("%s: factorising the preconditioners (K_MM and T per σ, A per candidate) beside the right-hand side's pass", who)
				return
			}
			pr.update("preconditioners", bar(p.Fraction)+eta(p.Fraction, 1, time.Since(precondStart)), p.Fraction == 1)
		case ooc.StageARD:
			if ardStart.IsZero() {
				ardStart = time.Now()
				pr.printf("%s: learning one length scale per feature on a subsample (--ard), %d gradient steps", who, p.Iterations)
				return
			}
			frac := float64(p.Iteration) / float64(max(p.Iterations, 1))
			pr.update("ard", fmt.Sprintf("%s step %d/%d%s", bar(frac), p.Iteration, p.Iterations,
				eta(float64(p.Iteration), float64(p.Iterations), time.Since(ardStart))), p.Iteration == p.Iterations)
		}
	}
}

// centresNote says, once sampling is done, when rows drawn as centres
// repeated others: replaced by other rows, or, when the data holds too
// few distinct rows, M lowered (with the memory at the lower M when mem
// is known). asked is the M asked for (0: unknown, said as "M").
func centresNote(pr *progress, who string, p ooc.Progress, asked int, mem ooc.Memory) {
	if p.Duplicates == 0 {
		return
	}
	if asked == 0 || p.Centers >= asked {
		pr.printf("%s: %d of the rows drawn as centres repeated another row and were replaced by other rows: %d distinct centres", who, p.Duplicates, p.Centers)
		return
	}
	line := fmt.Sprintf("%s: the data repeats rows: only %d distinct rows could be drawn as centres (%d draws repeated another), so M = %d, not %d",
		who, p.Centers, p.Duplicates, p.Centers, asked)
	if mem.Total > 0 {
		line += "; memory needed ≈ " + ooc.FormatBytes(mem.Total)
	}
	pr.printf("%s", line)
}
