package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/model/predictfile"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

func init() {
	register(&command{
		Name:  "fit",
		Short: "train a FALKON model on a chunk store, Parquet or CSV files",
		Usage: "--out MODEL [flags] STORE | --out MODEL --target COL [flags] INPUT…",
		Long: `
Fit trains kernel ridge regression with FALKON (Rudi, Carratino, Rosasco,
NIPS 2017) on a chunk store made by 'falkon-ooc ingest --target COL', or
on Parquet and CSV/TSV inputs (files, directories, Hive-partitioned
folders, globs) with --target: they are ingested first into a store kept
beside the model (MODEL.store) or in --cache DIR, and a later fit or tune
on the same files (same paths, sizes and modification times, same
--target, --features, --exclude, --nulls) reuses it without reading them
again. The data is streamed from disk: one pass for the right-hand side and one per
conjugate-gradient iteration, with memory of O(M²) (less when the
preconditioner's factors go to disk under --max-memory; O(M·r) with
--precond nystrom) plus a few chunk buffers, printed before the fit starts.

Features are standardised with the store's statistics. Defaults that work
on standardised data: M = 10√n clamped to [1000, 10000], a Gaussian kernel
with sigma = √d, lambda = 1e-6, 20 iterations. A checkpoint is written
next to the model after every iteration (MODEL.ckpt) and kept: --resume
continues an interrupted fit from it, or extends a finished one with a
larger --iters; with no checkpoint, --resume starts from the beginning.
The checkpoint records the fit's flags, so 'fit --resume --out MODEL
INPUT' needs no other; a flag that contradicts it is refused. An
interrupted fit prints that command.

--tune is the whole job in one command: it holds out validation rows
(--val-fraction, default 0.1, or --val), searches --sigma × --lambda (LISTs
or LO:HI:COUNT ranges, as tune reads them) on a subsample of --tune-rows
training rows at M = --tune-centers, every candidate sharing each pass, then
fits all the training rows at --centers with the best σ and λ (λ carried by
--handoff), stopping when the validation metric stops improving
(--patience, default 3; --iters is then a cap, default 50) and keeping the
best iteration. The search's table is printed, and kept in the model.`,
		Flags: fitFlags,
	})
}

type fitOpts struct {
	cliflags.Flags
	plot       string
	input      inputOptions
	settings   map[string]string // the flags a checkpoint records
	resumeFrom *ooc.Checkpoint   // read by --resume
}

func fitFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &fitOpts{}
	o.register(fs, cliflags.Fit)
	return func(ctx context.Context, e *env, args []string) error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if o.Resume && o.Out != "" {
			// The checkpoint's settings first: a contradiction is refused
			// before any input is read.
			c, err := readResume(o.Out + ".ckpt")
			if err != nil {
				return err
			}
			if c != nil && c.Settings != nil {
				if err := restoreSettings(fs, set, c.Settings, o.Out+".ckpt"); err != nil {
					return err
				}
			}
			o.resumeFrom = c
		}
		o.settings = fitSettings(fs)
		return runFit(ctx, e, o, set, args)
	}
}

// register declares the flags of fit or tune on fs: the flags both
// programs share (cliflags), then falkon-ooc's own: --plot and those of
// Parquet/CSV inputs.
func (o *fitOpts) register(fs *flag.FlagSet, cmd cliflags.Command) {
	o.Add(fs, cmd)
	if cmd == cliflags.Fit {
		fs.StringVar(&o.plot, "plot", "", "draw the residual and validation metric by iteration into this PNG `file`")
	} else {
		fs.StringVar(&o.plot, "plot", "", "draw the validation curves and the σ × λ surface into this PNG `file`")
	}
	fs.StringVar(&o.input.target, "target", "", "Parquet/CSV inputs: the target `column`s, comma-separated")
	fs.StringVar(&o.input.features, "features", "", "Parquet/CSV inputs: the feature `column`s (default: as ingest chooses them)")
	fs.StringVar(&o.input.exclude, "exclude", "", "Parquet/CSV inputs: `column`s that are not features")
	fs.StringVar(&o.input.weight, "weight", "", "Parquet/CSV inputs: a `column` of row weights (finite, ≥ 0), as ingest --weight; a STORE carries its own")
	fs.StringVar(&o.input.nulls, "nulls", "error", "Parquet/CSV inputs: what a NULL, NaN or ±Inf does: error, drop (the row) or mean (a feature's mean over its other values; a row with a bad target is dropped)")
	fs.StringVar(&o.input.cache, "cache", "", "Parquet/CSV inputs: keep their store in this `directory` (default: MODEL.store beside the model)")
	o.input.tables.Add(fs, "Parquet/CSV inputs: ")
}

// weightLines describes a model's row weights, class weights and loss,
// for fit's summary and inspect: label and text per line (none for an
// unweighted squared-loss fit).
func weightLines(m *ooc.Model) [][2]string {
	tr, cfg := m.Training(), m.Config()
	var out [][2]string
	if tr.Weight != "" {
		out = append(out, [2]string{"weights", fmt.Sprintf("column %q, summing to %g (the n of λ·n)", tr.Weight, tr.WeightSum)})
	}
	if cw := tr.ClassWeights; cw != nil {
		parts := make([]string, len(cw))
		for i, v := range cw {
			parts[i] = fmt.Sprintf("%.4g", v)
		}
		out = append(out, [2]string{"classes", "balanced weights " + strings.Join(parts, ", ")})
	}
	if cfg.Loss == ooc.LossLogistic {
		l := fmt.Sprintf("logistic, %d Newton steps", len(tr.NewtonSteps))
		if n := len(tr.NewtonSteps); n > 0 && tr.NewtonSteps[n-1].After > 0 {
			l += fmt.Sprintf(", objective %.6g → %.6g", tr.NewtonSteps[0].Objective, tr.NewtonSteps[n-1].After)
		} else if n > 0 { // a model from before the line search
			l += fmt.Sprintf(", objective %.6g → %.6g at the last step's start", tr.NewtonSteps[0].Objective, tr.NewtonSteps[n-1].Objective)
		}
		out = append(out, [2]string{"loss", l})
	}
	return out
}

// precondName describes the preconditioner of cfg for the progress line.
func precondName(cfg ooc.Config) string {
	switch cfg.Preconditioner {
	case precond.MethodEigen:
		return "eigendecomposition"
	case precond.MethodPivoted:
		return "pivoted Cholesky"
	case precond.MethodNystrom:
		return fmt.Sprintf("Nyström, rank %d", cmp.Or(cfg.PrecondRank, precond.DefaultNystromRank(cfg.Centers)))
	}
	p := cfg.PrecondPrecision
	if p == "" {
		p = precond.Float64
	}
	return fmt.Sprintf("Cholesky, %s", p)
}

// fitResult is the --json document of fit.
type fitResult struct {
	Version             string         `json:"version"`
	Store               string         `json:"store"`
	Model               string         `json:"model"`
	N                   int64          `json:"n"`
	D                   int            `json:"d"`
	K                   int            `json:"k"`
	Task                ooc.Task       `json:"task"`
	Centers             int            `json:"centers"`
	Iterations          int            `json:"iterations"`
	Status              ooc.Status     `json:"status"`
	Residual            float64        `json:"residual"`
	Seconds             float64        `json:"seconds"`
	SecondsPerIteration float64        `json:"seconds_per_iteration"`
	MemoryEstimate      ooc.Memory     `json:"memory_estimate"`
	Validation          []ooc.ValPoint `json:"validation,omitempty"`
	Config              ooc.Config     `json:"config"`
	Precision           string         `json:"precision"`
	// LambdaLeverage is the λ of the leverage scores (leverage sampling).
	LambdaLeverage float64 `json:"lambda_leverage,omitempty"`
	// Classes names the classes of a classification model; Calibration
	// is its calibration on the validation rows (nil without them).
	Classes     []string         `json:"classes,omitempty"`
	Calibration *ooc.Calibration `json:"calibration,omitempty"`
	// BestIteration is the iteration of the model with --patience.
	BestIteration int `json:"best_iteration,omitempty"`
	// Phases are the wall and CPU seconds of each phase and PeakRSS the
	// process's peak resident memory (bytes).
	Phases  []ooc.Phase `json:"phases"`
	PeakRSS int64       `json:"peak_rss_bytes"`
	// Search and Handoff are fit --tune's search and what it carried.
	Search  *ooc.TuneResult `json:"search,omitempty"`
	Handoff *ooc.Handoff    `json:"handoff,omitempty"`
	// Uncertainty is how predictive standard deviations are computed
	// and how they did on the validation rows (--uncertainty).
	Uncertainty *ooc.Uncertainty `json:"uncertainty,omitempty"`
	// MemoryPlan is what the memory limit made the fit give up (the
	// preconditioner chosen in its place), absent when nothing.
	MemoryPlan *ooc.MemoryPlan `json:"memory_plan,omitempty"`
	// StoppedAtCap is, when the fit ran all --iters (fit --tune: all its
	// budget of passes) while validating, its last improvement of the
	// validation metric (ooc.StoppedAtCap).
	StoppedAtCap *ooc.Improvement `json:"stopped_at_cap,omitempty"`
}

func runFit(ctx context.Context, e *env, o *fitOpts, set map[string]bool, args []string) error {
	// CLI rules: fit's hold-out (--val-fraction) is the CLI's, not a
	// setting of ooc.Fit; --plot is the CLI's.
	check := func(ooc.Config) error {
		if err := o.CheckFit(set); err != nil {
			return err
		}
		if o.plot != "" && !strings.HasSuffix(strings.ToLower(o.plot), ".png") {
			return usagef("--plot %s: the name must end in .png", o.plot)
		}
		return nil
	}
	if err := o.Holdout(set); err != nil {
		return err
	}
	cfg, r, storePath, err := o.openTraining(ctx, set, args, check, newProgress(e.stderr, o.Quiet))
	if err != nil {
		return err
	}
	defer r.Close()
	if err := prepareOut(e, "--out", o.Out, false, inputPaths(storePath, o.Val)...); err != nil {
		return err
	}
	if err := checkTargets(r, storePath); err != nil {
		return err
	}
	run := o.RunOptions()
	pr := newProgress(e.stderr, o.Quiet)
	var train stream.Source = r
	n := r.Manifest().Rows
	if o.ValFraction > 0 {
		rest, held, err := ooc.HoldOut(r, o.ValFraction, o.Seed)
		if err != nil {
			return flagErr(err)
		}
		train, run.Validation = rest, held
		n = stream.Rows(rest)
		pr.printf("fit: %d rows held out for validation", r.Manifest().Rows-n)
	}
	if o.Val != "" {
		vs, cleanup, err := openValidation(ctx, o.Val, o.Workers, r, pr)
		if err != nil {
			return err
		}
		defer cleanup()
		run.Validation = vs
	}
	o.SetPatience(&cfg, set)
	// Plan validates the configuration against the data and resolves it
	// (defaults, n, d, M, the memory plan): the CLI only renders it.
	plan, err := ooc.Plan(train, cfg, run)
	if err != nil {
		return flagErr(err)
	}
	// Fit plans again from the settings as asked, so that what the memory
	// plan chose is recorded in the model's Training; cfg is the plan's,
	// for the progress lines.
	asked := cfg
	asked.Centers = plan.Config.Centers
	cfg = plan.Config
	mem := plan.Memory
	if mp := plan.MemoryPlan; mp != nil && mp.Reduced {
		pr.printf("fit: %s", flagText(mp.Note))
	}
	if _, r2 := plan.Sources(train, run); run.Validation == nil && r2.Validation != nil {
		pr.printf("fit: %d rows held out for validation: CG stops when they stop improving (patience %d, at most %d iterations)",
			stream.Rows(r2.Validation), cfg.Patience, cfg.Iterations)
	}
	taskNote(pr, "fit", cfg.Task, plan)
	pr.printf("fit: n = %d rows, d = %d features, M = %d centres; memory needed ≈ %s", plan.N, plan.D, cfg.Centers, mem)
	if cfg.Loss == ooc.LossLogistic {
		sq := cfg
		sq.Loss = ooc.LossSquared
		pr.printf("fit: logistic loss: up to %d passes over the data (%d Newton steps, each a gradient pass, %d CG iterations and, when its line search shortens it or it is the last, one more pass), against %d for the squared loss",
			cfg.MaxPasses(), cmp.Or(cfg.NewtonSteps, ooc.DefaultNewtonSteps), cfg.Iterations, sq.MaxPasses())
	}
	softMemoryLimit(mem)

	ckpt := o.Out + ".ckpt"
	if o.Resume {
		if c := o.resumeFrom; c == nil {
			// A crash before the first iteration leaves no checkpoint:
			// start from the beginning rather than fail.
			fmt.Fprintf(e.stderr, "fit: --resume: no checkpoint %s; starting from the beginning\n", ckpt)
		} else {
			run.Resume = c
			pr.printf("fit: resuming after iteration %d from %s", c.Iteration, ckpt)
		}
	}
	lastCkpt := 0
	if !o.NoCheckpoint {
		run.Checkpoint = func(c *ooc.Checkpoint) error {
			c.Settings = o.settings
			if err := c.WriteFile(ckpt); err != nil {
				return err
			}
			lastCkpt = c.Iteration
			return nil
		}
	}
	defer func() {
		if ctx.Err() != nil && lastCkpt > 0 {
			fmt.Fprintf(e.stderr, "fit: interrupted; %s holds iteration %d. Continue with:\n  %s\n", ckpt, lastCkpt, resumeCommand(o.Out, args))
		}
	}()
	var passStart, precondStart, kmmStart time.Time
	kmmIter := 0
	run.Progress = func(p ooc.Progress) {
		if p.Note != "" {
			pr.printf("fit: %s", flagText(p.Note))
			return
		}
		switch p.Stage {
		case ooc.StageIterate, ooc.StageRHS, ooc.StageSample:
			if p.Stage == ooc.StageSample && p.Centers > 0 {
				lower := *plan
				lower.Config.Centers = p.Centers
				centresNote(pr, "fit", p, cfg.Centers, lower.MemoryWith(cfg.PrecondPrecision))
				return
			}
			step := string(p.Stage)
			if p.Stage == ooc.StageIterate {
				step = fmt.Sprintf("iteration %d/%d", p.Iteration, p.Iterations)
			}
			if p.Chunks > 0 {
				passUpdate(pr, step, p.Chunk, p.Chunks, &passStart)
				return
			}
			if p.Stage == ooc.StageIterate && p.Iteration > 0 {
				msg := fmt.Sprintf("done, residual %.3g, %s elapsed", p.Residual, p.Elapsed.Round(time.Millisecond))
				if p.Val != nil {
					msg += ", validation " + metricsLine(&p.Val.Metrics)
				}
				pr.update(fmt.Sprintf("iteration %d/%d", p.Iteration, p.Iterations), msg, true)
			}
		case ooc.StageValidate:
			// The held-out rows are scored in the next iteration's pass
			// (the last iterate's in a pass of their own).
			switch {
			case p.Chunks > 0:
				passUpdate(pr, "validation", p.Chunk, p.Chunks, &passStart)
			case p.Val != nil:
				pr.update(fmt.Sprintf("iteration %d/%d", p.Iteration, p.Iterations), "validation "+metricsLine(&p.Val.Metrics), true)
			}
		case ooc.StageKMM:
			// The Nyström preconditioner's λ·K_MM·u after each pass.
			if p.Iteration != kmmIter {
				kmmIter, kmmStart = p.Iteration, time.Now()
			}
			pr.update(fmt.Sprintf("iteration %d/%d", p.Iteration, p.Iterations),
				"λ·K_MM·u "+bar(p.Fraction)+eta(p.Fraction, 1, time.Since(kmmStart)), false)
		case ooc.StageUncertainty:
			switch {
			case p.Chunks > 0:
				passUpdate(pr, "uncertainty pass", p.Chunk, p.Chunks, &passStart)
			case p.Fraction == 0:
				r := cfg.UncertaintyRank
				if r == 0 {
					r = ooc.DefaultUncertaintyRank(plan.D)
				}
				pr.printf("fit: predictive standard deviations (%s): a rank-%d factor, fitted on the validation rows", cfg.Uncertainty, min(r, cfg.Centers))
			}
		case ooc.StageKernel:
			if cfg.Preconditioner == precond.MethodNystrom {
				r := min(cmp.Or(cfg.PrecondRank, precond.DefaultNystromRank(cfg.Centers)), cfg.Centers)
				pr.printf("fit: computing K_MM's rows at %d randomly pivoted centres (%d × %d), never K_MM whole", r, r, cfg.Centers)
			} else {
				pr.printf("fit: computing K_MM (%d × %d)", cfg.Centers, cfg.Centers)
			}
		case ooc.StagePrecond:
			if precondStart.IsZero() { // one line per stage, then the bar
				precondStart = time.Now()
				pr.printf("fit: factorising the preconditioner (%s)", precondName(cfg))
			}
			pr.update("preconditioner", bar(p.Fraction)+eta(p.Fraction, 1, time.Since(precondStart)), p.Fraction == 1)
		}
	}
	if !o.NoCheckpoint && cfg.Preconditioner == precond.MethodNystrom {
		// A resumed fit reads the basis instead of building it again.
		run.PrecondCache = o.Out + ".ckpt.basis"
		r := int64(min(cmp.Or(cfg.PrecondRank, precond.DefaultNystromRank(cfg.Centers)), cfg.Centers))
		pr.printf("fit: the Nyström basis goes to %s for --resume: ≈ %s on disk (--no-checkpoint: none)",
			run.PrecondCache, ooc.FormatBytes(8*r*(int64(cfg.Centers)+r)))
	}
	var m *ooc.Model
	if o.Tune {
		m, err = runTuned(ctx, o, asked, set, train, run, pr, r.Dim())
	} else {
		m, err = ooc.Fit(ctx, train, asked, run)
	}
	if errors.Is(err, ooc.ErrCheckpointMismatch) {
		return fmt.Errorf("--resume: %w", flagNames(err))
	}
	if err != nil {
		return flagNames(err)
	}
	if err := saveModel(m, o.Out); err != nil {
		return err
	}
	if o.plot != "" {
		title := fmt.Sprintf("FALKON on %s: M = %d, %s", filepath.Base(storePath), m.M(), m.Kernel())
		if err := writePlotFile(o.plot, func(w io.Writer) error { return writePlot(w, m.Training(), title) }); err != nil {
			return err
		}
	}
	tr := m.Training()
	if tr.PrecondCache != "" {
		pr.printf("fit: Nyström basis (rank %d, missing %.2g of tr K_MM): %s; kept in %s for --resume (delete it when done)",
			tr.NystromRank, tr.NystromResidual, tr.PrecondCache, run.PrecondCache)
	}
	res := fitResult{
		Version: version, Store: storePath, Model: o.Out, N: tr.N, D: m.D(), K: m.K(), Task: m.Task(),
		Centers: m.M(), Iterations: tr.Iterations, Status: tr.Status, Seconds: tr.Seconds,
		SecondsPerIteration: tr.SecondsPerIteration, MemoryEstimate: mem, Validation: tr.Validation,
		Config: m.Config(), Precision: m.Precision().String(), LambdaLeverage: tr.LambdaLeverage,
		Classes: m.ClassNames(), Calibration: m.Calibration(), BestIteration: tr.BestIteration, StoppedAtCap: ooc.StoppedAtCap(m),
		Phases: tr.Phases, PeakRSS: tr.PeakRSS, Search: tr.Search, Handoff: tr.Handoff, Uncertainty: m.Uncertainty(),
		MemoryPlan: tr.MemoryPlan,
	}
	if len(tr.Residuals) > 0 {
		res.Residual = tr.Residuals[len(tr.Residuals)-1]
	}
	if tr.Search != nil {
		edgeNote(pr, "fit --tune", tr.Search)
	}
	if o.JSON {
		return writeJSON(e.stdout, res)
	}
	if tr.Search != nil {
		writeTuneTable(e.stdout, tr.Search)
		fmt.Fprintln(e.stdout)
		writeHandoff(e.stdout, tr.Search, tr.Handoff)
	}
	fmt.Fprintf(e.stdout, "model      %s (summary in %s.json)\n", o.Out, o.Out)
	fmt.Fprintf(e.stdout, "task       %s, %d output(s)\n", m.Task(), m.K())
	fmt.Fprintf(e.stdout, "data       n = %d, d = %d\n", tr.N, m.D())
	for _, l := range weightLines(m) {
		fmt.Fprintf(e.stdout, "%-10s %s\n", l[0], l[1])
	}
	fmt.Fprintf(e.stdout, "kernel     %s, M = %d centres, λ = %g, %s\n", m.Kernel(), m.M(), m.Config().Lambda, m.Precision())
	fmt.Fprintf(e.stdout, "solver     %d iterations (%s), residual %.3g\n", tr.Iterations, tr.Status, res.Residual)
	if tr.Status == ooc.StatusPatience {
		fmt.Fprintf(e.stdout, "patience   the model is iteration %d's, the best on the validation rows\n", tr.BestIteration)
	}
	if l := capLine(m); l != "" {
		fmt.Fprintf(e.stdout, "cap        %s\n", l)
	}
	if l := memoryPlanLine(tr); l != "" {
		fmt.Fprintf(e.stdout, "memory     %s\n", l)
	}
	fmt.Fprintf(e.stdout, "time       %.2f s, %.3f s per iteration; peak memory %s\n", tr.Seconds, tr.SecondsPerIteration, ooc.FormatBytes(tr.PeakRSS))
	if nv := len(tr.Validation); nv > 0 {
		vp := tr.Validation[nv-1]
		if tr.Status == ooc.StatusPatience {
			for _, p := range tr.Validation {
				if p.Iteration == tr.BestIteration {
					vp = p
				}
			}
		}
		if fm := tr.ValidationFinal; fm != nil {
			fmt.Fprintf(e.stdout, "validation %s (the saved model, after iteration %d)\n", metricsLine(fm), vp.Iteration)
		} else {
			fmt.Fprintf(e.stdout, "validation %s (after iteration %d)\n", metricsLine(&vp.Metrics), vp.Iteration)
		}
	}
	if m.Task() != ooc.TaskRegression {
		fmt.Fprintf(e.stdout, "proba      %s\n", calibrationLine(m))
	}
	if l := decisionLine(m); l != "" {
		fmt.Fprintf(e.stdout, "decision   %s\n", l)
	}
	if l := classWeightLine(m); l != "" {
		fmt.Fprintf(e.stdout, "weights    %s\n", l)
	}
	if fm := tr.ValidationFinal; fm != nil {
		writeClassReport(e.stdout, fm)
	}
	if u := m.Uncertainty(); u != nil {
		for i, l := range uncertaintyLines(u, m.M()) {
			fmt.Fprintf(e.stdout, "%-10s %s\n", []string{"std", ""}[min(i, 1)], l)
		}
	}
	if c := m.Conformal(); c != nil {
		fmt.Fprintf(e.stdout, "%-10s %s\n", "conformal", conformalLine(c))
	}
	return nil
}

// memoryPlanLine says what the memory limit made a fit give up, for its
// summary (shown with --quiet too): "" when nothing.
func memoryPlanLine(tr ooc.Training) string {
	mp := tr.MemoryPlan
	if mp == nil {
		return ""
	}
	l := fmt.Sprintf("under the limit of %s (--max-memory): ", ooc.FormatBytes(mp.Limit))
	switch {
	case mp.OutOfCore:
		l += fmt.Sprintf("exact Cholesky preconditioner with its factors on disk (%s in %s, read twice per iteration) in place of memory (≈ %s)",
			ooc.FormatBytes(mp.DiskBytes), mp.Dir, ooc.FormatBytes(mp.Exact))
	case mp.Preconditioner == precond.MethodNystrom:
		l += fmt.Sprintf("Nyström preconditioner of rank %d in place of Cholesky (≈ %s), missing %.2g of tr K_MM",
			tr.NystromRank, ooc.FormatBytes(mp.Exact), tr.NystromResidual)
		if tr.Status == ooc.StatusPatience {
			l += fmt.Sprintf("; CG stopped by the validation rows after %d iterations", tr.Iterations)
		} else {
			l += fmt.Sprintf("; CG ran %d iterations (%s), not stopped by validation rows: the model may be short of the exact preconditioner's", tr.Iterations, tr.Status)
		}
	default:
		l += fmt.Sprintf("preconditioner stored in %s in place of float64 (≈ %s)", mp.PrecondPrecision, ooc.FormatBytes(mp.Exact))
	}
	return l
}

// conformalLine describes a model's conformal calibration for people:
// the validation coverage of the conformal and the Gaussian intervals at
// each reported level, and the levels with too few validation rows.
func conformalLine(c *model.Conformal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "intervals calibrated on %d validation residuals; coverage there, conformal (Gaussian):", c.Rows)
	for i, cv := range c.Coverage {
		sep := ","
		if i == 0 {
			sep = ""
		}
		l := 100 * cv.Level
		if _, ok := c.Multiplier(cv.Level); !ok {
			fmt.Fprintf(&b, "%s %g %%: not calibrated (%.1f %%)", sep, l, 100*cv.Gaussian)
		} else {
			fmt.Fprintf(&b, "%s %g %%: %.1f %% (%.1f %%)", sep, l, 100*cv.Conformal, 100*cv.Gaussian)
		}
		if cv.TooFew {
			fmt.Fprintf(&b, " [too few rows: fewer than %.0f]", 20/(1-cv.Level))
		}
	}
	return b.String()
}

// nlpdMargin is how much lower (in nats a row) the per-row deviations'
// NLPD must be than a constant band's for the summary to say they beat
// it.
const nlpdMargin = 0.01

// uncertaintyLines describes a model's predictive standard deviations
// for people: what the rank keeps, the intervals' coverage on the
// validation rows, and whether the per-row deviations beat a constant
// band there, by how much, and what to try when they do not.
func uncertaintyLines(u *ooc.Uncertainty, m int) []string {
	first := fmt.Sprintf("%s, rank %d of M = %d", u.Method, u.Rank, m)
	switch {
	case u.Rank >= m:
		first += ": full rank"
	case u.RankKept > 0:
		first += fmt.Sprintf(": keeps %.1f %% of the variance the data explains at full rank", 100*u.RankKept)
	}
	first += fmt.Sprintf("; on %d validation rows the 90 %% interval covers %.1f %% (50 %%: %.1f %%, 95 %%: %.1f %%)",
		u.Rows, 100*u.Coverage90, 100*u.Coverage50, 100*u.Coverage95)
	var rv float64
	for _, v := range u.ResidualVar {
		rv += v / float64(len(u.ResidualVar))
	}
	band := ooc.IntervalZ(0.9) * math.Sqrt(rv)
	var second string
	if gain := u.NLPDConstant - u.NLPD; gain > nlpdMargin {
		second = fmt.Sprintf("per-row deviations beat a constant band (± %.4g for 90 %%) on those rows: NLPD %.4g against %.4g, %.3g nats a row better",
			band, u.NLPD, u.NLPDConstant, gain)
	} else {
		second = fmt.Sprintf("per-row deviations do no better than a constant band (± %.4g for 90 %%) on those rows: NLPD %.4g against %.4g; try a larger --uncertainty-rank", band, u.NLPD, u.NLPDConstant)
		if u.Method != ooc.UncertaintyExact {
			second += ", --uncertainty-method exact"
		}
		second += ", or use the constant band"
	}
	return []string{first, second}
}

func metricsLine(m *ooc.Metrics) string { return predictfile.MetricsLine(m) }

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeFileAtomic replaces path with data: the old file or the new one,
// never a partial file.
func writeFileAtomic(path string, data []byte) error {
	return fileutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
