package cliflags

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
)

// Command is the command whose flags Add declares.
type Command int

const (
	// Fit is fit: one model, or with --tune the whole job.
	Fit Command = iota
	// Tune is tune: a search over --sigma × --lambda.
	Tune
)

// SearchMinImprovement is the TuneConfig.MinImprovement of tune and of
// fit --tune's search: a candidate's pass at a search's small M is cheap,
// so smaller gains than a fit's (ooc.DefaultMinImprovement) keep it.
const SearchMinImprovement = 1e-4

// DefaultTunedIters is fit --tune's --iters when not given: a cap, since
// the search's candidates and the fit stop by --patience.
const DefaultTunedIters = 50

// UsageError is a mistake on the command line (exit code 2). Msg names
// the flag.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// Flags are the values of the flags that fit and tune share in both
// programs. A field holds its flag's value as typed; Config, TuneConfig
// and FitTunedConfig check and convert them.
type Flags struct {
	cmd Command

	Out                    string
	Centers                int
	Kernel                 string
	Sigma, Lambda          Grid
	Sigmas                 string // per-feature length scales (fit)
	Degree                 int
	Gamma, Coef0           float64
	Iters                  int
	Tol, Jitter            float64
	Precision, Task        string
	ClassWeight, Threshold string
	Loss                   string
	NewtonSteps            int
	Precond                string
	PrecondRank            int
	PrecondPrecision       string
	MaxMemory              string
	MaxMemoryBytes         int64 // --max-memory as ooc.RunOptions.MaxMemory (0: ooc's default), set by Config
	Workers                int
	Seed                   uint64
	Sampling               string
	Candidates             int
	Val                    string
	ValFraction            float64
	ValEvery               int
	Uncertainty            bool
	UncertaintyMethod      string
	UncertaintyRank        int
	Resume, NoCheckpoint   bool
	JSON, Quiet, Force     bool

	// The search's: tune's, and fit's with --tune.
	Tune              bool
	TuneRows          int64
	TuneCenters       int
	Handoff           string
	Patience          int
	MinImprovement    float64
	Halving           int
	SigmaHalving      string
	ARD               bool
	ARDRows, ARDSteps int
	Extend            int
	Pick              string
	MaxPasses         int
}

// Add declares on fs the shared flags of cmd, with their defaults.
func (f *Flags) Add(fs *flag.FlagSet, cmd Command) {
	f.cmd = cmd
	fit := cmd == Fit
	fs.StringVar(&f.Out, "out", "", "write the model to this `file` (required)")
	fs.IntVar(&f.Centers, "centers", 0, "number of Nyström centres `M` (0: 10√n clamped to [1000, 10000])")
	fs.StringVar(&f.Kernel, "kernel", "gaussian", "kernel: gaussian, laplacian, matern12, matern32, matern52, linear, polynomial")
	fs.IntVar(&f.Degree, "degree", 2, "polynomial degree")
	fs.Float64Var(&f.Gamma, "gamma", 0, "scale of x·c in linear and polynomial kernels (0: 1)")
	fs.Float64Var(&f.Coef0, "coef0", 0, "offset in linear and polynomial kernels")
	f.Sigma = Grid{name: "sigma"}
	f.Lambda = Grid{name: "lambda"}
	if fit {
		fs.Var(&f.Sigma, "sigma", "kernel length scale (default √d, on standardised features); with --tune a `LIST` or LO:HI:COUNT to search")
		fs.StringVar(&f.Sigmas, "sigmas", "", "per-feature length scales, comma-separated (distance kernels)")
		f.Lambda.One = ooc.DefaultLambda
		fs.Var(&f.Lambda, "lambda", fmt.Sprintf("ridge regularisation λ > 0 (default %v; with --tune a `LIST` or LO:HI:COUNT to search, default 1e-8:1e-3:6)", ooc.DefaultLambda))
	} else {
		fs.Var(&f.Sigma, "sigma", "kernel length scales to try: a `LIST` or LO:HI:COUNT (default √d × {1/4, 1/2, 1, 2, 4})")
		f.Lambda.Set("1e-8:1e-3:6")
		fs.Var(&f.Lambda, "lambda", "ridge regularisations λ > 0 to try: a `LIST` or LO:HI:COUNT")
	}
	fs.IntVar(&f.Iters, "iters", ooc.DefaultIterations, "conjugate-gradient iterations (one pass over the data each)")
	fs.Float64Var(&f.Tol, "tol", 0, "stop early when the relative CG residual falls below this (0: run all iterations)")
	fs.StringVar(&f.Precision, "precision", "float64", "arithmetic of the kernel blocks: float64, float32, or bf16 (float32 with the distances' cross term on the AMX unit of CPUs that have AMX-BF16, else float32)")
	fs.StringVar(&f.ClassWeight, "class-weight", "none", "none, or balanced: classification rows of class c weigh n/(C·n_c), every class the same in the loss (times the row weights, if any)")
	threshold := "binary classification: label a row with the second class when its probability is ≥ this number (default 0.5), or a rule that chooses the threshold on the validation rows, stored in the model: f1 (the best F1 of the second class), balanced (equal recall of both classes) or cost:FP:FN (the least cost, e.g. cost:1:5 when a missed positive costs 5 false alarms)"
	if fit {
		threshold += "; a rule holds out --val-fraction 0.1 unless --val or --val-fraction is given"
	}
	fs.StringVar(&f.Threshold, "threshold", "", threshold)
	fs.StringVar(&f.Loss, "loss", "squared", "squared (FALKON), or logistic: classification (multiclass: one class against the rest) by Newton steps on a decreasing λ path, each a gradient pass and --iters CG iterations, ended by a line search in the next gradient pass (one more pass when it shortens the step, and after the last step): at most --newton-steps·(--iters + 2) passes over the data, 96 at the defaults (--iters 10 per Newton step unless given) against 21 for squared (fewer with --tol); predict --proba then gives the model's own probabilities")
	fs.IntVar(&f.NewtonSteps, "newton-steps", 0, fmt.Sprintf("with --loss logistic: Newton steps (0: %d; the first three at λ·1000, λ·100, λ·10)", ooc.DefaultNewtonSteps))
	fs.StringVar(&f.Task, "task", "auto", "auto, regression, binary or multiclass (auto: binary for two distinct target values, multiclass for 3–100 integer or string values, else regression)")
	fs.StringVar(&f.Precond, "precond", "auto", "preconditioner: cholesky (with --jitter; 4–8·M² bytes, its factors on disk in $TMPDIR when they do not fit --max-memory), nystrom (a rank-r basis of K_MM, 8·M·r bytes; more iterations when r is small), auto (cholesky in memory or on disk, whichever fits --max-memory first, else nystrom at the largest rank that fits), or for a rank-deficient K_MM (duplicate centres, linear kernels) pivoted (pivoted Cholesky, scales like cholesky) or eigen (small M)")
	if fit {
		fs.IntVar(&f.PrecondRank, "precond-rank", 0, fmt.Sprintf("with --precond nystrom (or auto, when it picks nystrom): the basis's rank r (0: min(M, %d) with nystrom; with auto, the largest rank that fits --max-memory)", precond.DefaultNystromRank(1<<30)))
	}
	fs.Float64Var(&f.Jitter, "jitter", 0, "ε added as εM to K_MM's diagonal before its Cholesky factorisation (0: 1e-13, or 1e-5 with a float32 preconditioner)")
	fs.StringVar(&f.PrecondPrecision, "precond-precision", "auto", "storage of the M × M preconditioner: float64, float32 (half the memory), or auto (float32 only when float64 does not fit --max-memory)")
	fs.StringVar(&f.MaxMemory, "max-memory", "", "the `bytes` a fit may use (e.g. 12GiB, 800MB; default: 80 % of physical memory or of the cgroup's limit): the preconditioner goes to float32, to disk or to nystrom where those are left to choose, and a fit that still needs more fails before any pass")
	fs.IntVar(&f.Workers, "workers", 0, "worker goroutines of each pass (0: one per CPU of the machine that runs it)")
	fs.Uint64Var(&f.Seed, "seed", 0, "seed for centre sampling and the held-out rows")
	fs.StringVar(&f.Sampling, "centers-sampling", "uniform", "how centres are drawn: uniform, or leverage (approximate ridge leverage scores, weighted)")
	fs.IntVar(&f.Candidates, "candidates", 0, "with leverage sampling: rows scored before drawing the centres (0: 10 M)")
	fs.StringVar(&f.Val, "val", "", "validate on this store, Parquet or CSV `input` (same columns as the training store)")
	fs.BoolVar(&f.JSON, "json", false, "print one JSON object with the result on stdout")
	fs.BoolVar(&f.Quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&f.SigmaHalving, "sigma-halving", JoinInts(ooc.DefaultSigmaSteps()), map[bool]string{
		true:  "with --tune: successive halving over whole σ after each iteration in `LIST` (0: off)",
		false: "successive halving over whole σ: after each iteration in `LIST` the σ in the worse half stop, all their λ, and their kernel blocks leave the pass (0: off)"}[fit])
	fs.IntVar(&f.ARDRows, "ard-rows", 0, "with --ard: rows of the subsample (0: min(n, 5000), or 20000 from 100000 rows on)")
	fs.IntVar(&f.ARDSteps, "ard-steps", 0, "with --ard: gradient steps (0: 80)")
	if fit {
		fs.BoolVar(&f.Force, "force", false, "replace MODEL, MODEL.json, MODEL.ckpt(.basis), MODEL.store(.key) and --plot even when they are not files fit wrote")
		fs.BoolVar(&f.Resume, "resume", false, "continue an interrupted fit (or extend a finished one to --iters) from MODEL.ckpt")
		fs.BoolVar(&f.NoCheckpoint, "no-checkpoint", false, "do not write MODEL.ckpt after each iteration")
		fs.Float64Var(&f.ValFraction, "val-fraction", 0, "hold out this fraction of the rows (chosen by --seed) for validation")
		fs.IntVar(&f.ValEvery, "val-every", 1, "report the validation metric every N iterations")
		fs.BoolVar(&f.Uncertainty, "uncertainty", false, "keep what predict --std and --interval need: predictive standard deviations, fitted on the validation rows (regression; implies --val-fraction 0.1 without --val)")
		fs.StringVar(&f.UncertaintyMethod, "uncertainty-method", "precond", "with --uncertainty: precond (from FALKON's preconditioner, no extra pass) or exact (one more pass: n·M² flops, (3 + workers)·8M² bytes)")
		fs.IntVar(&f.UncertaintyRank, "uncertainty-rank", 0, "with --uncertainty: rank r of the variance's factor, M·r more flops per predicted row (0: 2d, within [16, 64])")
		fs.BoolVar(&f.Tune, "tune", false, "the whole job: search --sigma × --lambda (LISTs or LO:HI:COUNT; default √d × {1/4, 1/2, 1, 2, 4} × 1e-8:1e-3:6) on a subsample of --tune-rows rows at M = --tune-centers, every candidate sharing each pass, then fit all rows at --centers with the pick, stopped by --patience on the validation rows (--val-fraction, default 0.1, or --val): past --iters (default 50) while the validation improves, within --max-passes")
		fs.Int64Var(&f.TuneRows, "tune-rows", 0, fmt.Sprintf("with --tune: training rows of the search's subsample (0: min(n, %d))", ooc.DefaultTuneRows))
		fs.IntVar(&f.TuneCenters, "tune-centers", 0, fmt.Sprintf("with --tune: the search's M (0: min(%d, --centers, rows/10))", ooc.DefaultTuneCenters))
		fs.StringVar(&f.Handoff, "handoff", string(ooc.DefaultHandoff), "with --tune: how λ carries from the search's n_s rows to the fit's n: keep, sqrt (λ·√(n_s/n)), linear (λ·n_s/n) or slope (λ·(n_s/n)^α, α in [0, 1] measured by a λ-only search on n_s/4 rows; linear below 40000 search rows); σ carries unchanged")
		fs.IntVar(&f.Patience, "patience", 0, "stop when the validation metric has not improved for N validations and keep the best iteration (default 3 wherever there are validation rows, --val-fraction or --val; with --tune it also stops the search's candidates; 0: run all --iters)")
		fs.Float64Var(&f.MinImprovement, "min-improvement", ooc.DefaultMinImprovement, "with --patience: the relative improvement of the validation metric (RMSE, or 1 − AUC for classification) that counts as one")
		fs.BoolVar(&f.ARD, "ard", false, "with --tune: also learn one length scale per feature on a row subsample (Gaussian kernel); the learned scales compete with the --sigma grid on the same validation rows")
		fs.IntVar(&f.Extend, "extend", 0, "with --tune: when the pick lies on an edge of the --sigma or --lambda grid, add two values beyond it and search again, up to N times")
		fs.StringVar(&f.Pick, "pick", string(ooc.DefaultPick), "with --tune: how the search picks σ and λ: tol (the largest λ whose validation RMSE, or 1 − AUC for classification, is within --min-improvement of the lowest: a smaller λ costs the fit CG iterations), best (the lowest validation metric: RMSE or error rate) or 1se (the largest λ, then σ, within one standard error of the lowest)")
		fs.IntVar(&f.MaxPasses, "max-passes", 0, "with --tune: the budget of passes over the data of each of the search's candidates and of the final fit: with --patience, past --iters each continues while its validation improves, until the budget runs out (0: 3 + 2 × --iters)")
		return
	}
	fs.BoolVar(&f.Force, "force", false, "replace MODEL, MODEL.json, MODEL.store(.key) and --plot even when they are not files tune wrote")
	fs.Float64Var(&f.ValFraction, "val-fraction", ooc.DefaultValFraction, "hold out this fraction of the rows (chosen by --seed) for validation, scored in the same passes")
	fs.IntVar(&f.Patience, "patience", ooc.DefaultPatience, "a candidate stops after this many iterations without improving its validation metric (0: never)")
	fs.IntVar(&f.Halving, "halving", 0, "successive halving: after iterations N, 2N, 4N, … the worse half of the candidates stops (0: off)")
	fs.BoolVar(&f.ARD, "ard", false, "also learn one length scale per feature on a row subsample (gradient steps on a hold-out error; Gaussian kernel) and search --lambda with them beside the --sigma grid, on the same validation rows")
	fs.IntVar(&f.Extend, "extend", 0, "when the pick lies on an edge of the --sigma or --lambda grid, add two values beyond it and search again, up to N times")
	fs.IntVar(&f.MaxPasses, "max-passes", 0, "the search's budget of passes over the data: with --patience a candidate still improving at --iters continues while its validation improves, until the budget runs out (0: 3 + 2 × --iters, or 3 + --iters with --patience 0)")
	fs.StringVar(&f.Pick, "pick", string(ooc.DefaultPick), "how the model is picked: tol (the largest λ whose validation RMSE, or 1 − AUC for classification, is within 0.1 % of the lowest: a smaller λ costs a fit CG iterations), best (the lowest validation metric: RMSE or error rate) or 1se (the largest λ, then σ, within one standard error of the lowest)")
}

// Command returns the command Add declared the flags of.
func (f *Flags) Command() Command { return f.cmd }

// RunOptions returns the run options the flags set.
func (f *Flags) RunOptions() ooc.RunOptions {
	return ooc.RunOptions{Workers: f.Workers, ValEvery: f.ValEvery, MaxMemory: f.MaxMemoryBytes}
}

// Config turns the flags into an ooc.Config (tune: the Config every
// candidate shares), rejecting bad values with a *UsageError that names
// the flag. set holds the names of the flags given. ooc.Validate checks
// the rest before any input is read.
func (f *Flags) Config(set map[string]bool) (ooc.Config, error) {
	var cfg ooc.Config
	kind, err := kernel.ParseKind(f.Kernel)
	if err != nil {
		return cfg, Usagef("--kernel: %v", err)
	}
	cfg.Kernel = kernel.Kernel{Kind: kind, Gamma: f.Gamma, Coef0: f.Coef0}
	if kind == kernel.Polynomial {
		cfg.Kernel.Degree = f.Degree
	}
	lambda := ooc.DefaultLambda
	if f.cmd == Fit {
		cfg.Kernel.Sigma, lambda = f.Sigma.One, f.Lambda.One
		if set["sigma"] && !(f.Sigma.One > 0) {
			return cfg, Usagef("--sigma must be > 0, got %g", f.Sigma.One)
		}
	}
	if f.Sigmas != "" {
		for _, s := range strings.Split(f.Sigmas, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(v > 0) {
				return cfg, Usagef("--sigmas: %q is not a length scale > 0", s)
			}
			cfg.Kernel.Sigmas = append(cfg.Kernel.Sigmas, v)
		}
	}
	// CLI rules, which ooc does not make: 0 asks ooc for its default,
	// while on the command line the default is the flag's, so --lambda 0,
	// --iters 0 and --val-every 0 are mistakes. ooc.Validate checks the
	// rest before any input is read.
	if lambda == 0 {
		return cfg, Usagef("--lambda must be > 0, got 0")
	}
	if f.Iters == 0 {
		return cfg, Usagef("--iters must be ≥ 1, got 0")
	}
	if f.cmd == Fit && f.ValEvery == 0 {
		return cfg, Usagef("--val-every must be ≥ 1, got 0")
	}
	cfg.Lambda, cfg.Centers, cfg.Iterations, cfg.Tolerance, cfg.Jitter = lambda, f.Centers, f.Iters, f.Tol, f.Jitter
	if !set["iters"] && !f.Tune {
		// ooc's default: DefaultIterations (the flag's), or a cap when
		// ooc's memory plan gives the fit a Nyström preconditioner that
		// its validation rows stop.
		cfg.Iterations = 0
	}
	if cfg.Precision, err = kernel.ParsePrecision(f.Precision); err != nil {
		return cfg, Usagef("--precision must be float64 or float32, got %q", f.Precision)
	}
	if cfg.Task, err = ooc.ParseTask(f.Task); err != nil {
		return cfg, Usagef("--task: %v", err)
	}
	if f.ClassWeight != "none" {
		cfg.ClassWeight = ooc.ClassWeight(f.ClassWeight)
	}
	cfg.Threshold = f.Threshold
	if f.Loss != "squared" {
		cfg.Loss = ooc.Loss(f.Loss)
	}
	cfg.NewtonSteps = f.NewtonSteps
	if f.Precond != "auto" { // auto: ooc's memory plan picks nystrom when cholesky does not fit
		cfg.Preconditioner = precond.Method(f.Precond)
	}
	if f.PrecondRank != 0 && f.Precond != "auto" && f.Precond != string(precond.MethodNystrom) {
		return cfg, Usagef("--precond-rank is for --precond nystrom (or auto), not %s", f.Precond)
	}
	if cfg.Preconditioner == "" || cfg.Preconditioner == precond.MethodNystrom {
		cfg.PrecondRank = f.PrecondRank
	}
	f.MaxMemoryBytes = 0
	if f.MaxMemory != "" {
		if f.MaxMemoryBytes, err = ParseBytes(f.MaxMemory); err != nil {
			return cfg, Usagef("--max-memory: %v", err)
		}
	}
	switch f.PrecondPrecision {
	case "auto":
	case "float64", "float32":
		cfg.PrecondPrecision = precond.Precision(f.PrecondPrecision)
	default:
		return cfg, Usagef("--precond-precision must be float64, float32 or auto, got %q", f.PrecondPrecision)
	}
	cfg.Seed = f.Seed
	if cfg.Sampling, err = ooc.ParseSampling(f.Sampling); err != nil {
		return cfg, Usagef("--centers-sampling: %v", err)
	}
	cfg.Candidates = f.Candidates
	switch {
	case f.Uncertainty:
		cfg.Uncertainty, cfg.UncertaintyRank = ooc.UncertaintyMethod(f.UncertaintyMethod), f.UncertaintyRank
	case set["uncertainty-method"] || set["uncertainty-rank"]:
		return cfg, Usagef("--uncertainty-method and --uncertainty-rank need --uncertainty")
	}
	return cfg, FlagErr(ooc.Validate(cfg, f.RunOptions()))
}

// Holdout applies fit's rules of the validation rows before any input is
// read: a --threshold rule, --uncertainty and --tune need validation rows,
// and hold out --val-fraction 0.1 when neither --val nor --val-fraction
// is given; --tune makes --iters a cap of 50 when not given.
func (f *Flags) Holdout(set map[string]bool) error {
	if f.cmd != Fit {
		return nil
	}
	if f.Tune && f.Val == "" && !set["val-fraction"] {
		f.ValFraction = ooc.DefaultValFraction
	}
	if _, rule, err := model.ParseThreshold(f.Threshold); f.Threshold != "" && err == nil && rule != nil && f.Val == "" {
		if set["val-fraction"] && f.ValFraction == 0 {
			return Usagef("--threshold %s chooses the threshold on validation rows: --val-fraction 0 leaves none (give --val INPUT or a fraction such as 0.1)", f.Threshold)
		}
		if !set["val-fraction"] {
			f.ValFraction = ooc.DefaultValFraction
		}
	}
	if f.Uncertainty && f.Val == "" {
		if set["val-fraction"] && f.ValFraction == 0 {
			return Usagef("--uncertainty fits the standard deviations on validation rows: --val-fraction 0 leaves none (give --val INPUT or a fraction such as 0.1)")
		}
		if !set["val-fraction"] {
			f.ValFraction = ooc.DefaultValFraction
		}
	}
	if f.Tune && !set["iters"] {
		if f.Loss != string(ooc.LossLogistic) {
			f.Iters = DefaultTunedIters // a cap: --patience stops the fit
		} else {
			f.Iters = ooc.DefaultLogisticIterations // per Newton step (the logistic loss runs all its steps)
		}
	}
	return nil
}

// CheckFit applies fit's rules that ooc does not make: --val-fraction's
// range, --val against --val-fraction, the search's flags only with
// --tune, and theirs.
func (f *Flags) CheckFit(set map[string]bool) error {
	if !(f.ValFraction >= 0 && f.ValFraction < 1) { // NaN too
		return Usagef("--val-fraction must be in [0, 1), got %g", f.ValFraction)
	}
	if f.ValFraction > 0 && f.Val != "" {
		return Usagef("--val and --val-fraction exclude each other")
	}
	if !(f.MinImprovement >= 0 && f.MinImprovement < 1) {
		return Usagef("--min-improvement must be in [0, 1), got %g", f.MinImprovement)
	}
	if !f.Tune {
		for _, name := range []string{"tune-rows", "tune-centers", "handoff", "ard", "ard-rows", "ard-steps", "sigma-halving", "extend", "pick", "max-passes"} {
			if set[name] {
				return Usagef("--%s goes with --tune", name)
			}
		}
		for _, g := range []*Grid{&f.Sigma, &f.Lambda} {
			if len(g.Values) > 1 {
				return Usagef("--%s %s gives %d values: a search over them needs --tune (or the tune command)", g.name, g.Text, len(g.Values))
			}
		}
		if f.Patience < 0 {
			return Usagef("--patience must be ≥ 0, got %d", f.Patience)
		}
		if f.Patience > 0 && f.Val == "" && f.ValFraction == 0 {
			return Usagef("--patience stops by the validation metric: give --val-fraction or --val")
		}
		return nil
	}
	if f.TuneRows < 0 || f.TuneCenters < 0 || f.Patience < 0 || f.ARDRows < 0 || f.ARDSteps < 0 || f.Extend < 0 {
		return Usagef("--tune-rows, --tune-centers, --patience, --ard-rows, --ard-steps and --extend must be ≥ 0")
	}
	if _, err := ooc.ParseHandoffRule(f.Handoff); err != nil || f.Handoff == "" {
		return Usagef("--handoff must be keep, sqrt, linear or slope, got %q", f.Handoff)
	}
	if f.ARD && f.Sigmas != "" {
		return Usagef("--ard learns the per-feature length scales: give no --sigmas")
	}
	if _, err := ooc.ParsePickRule(f.Pick); err != nil {
		return Usagef("--pick: %v", err)
	}
	return nil
}

// SetPatience gives a plain fit's cfg (not fit --tune's: FitTunedConfig
// has its own) --patience and --min-improvement: an explicit --patience 0
// is never, even where ooc's default stops by validation.
func (f *Flags) SetPatience(cfg *ooc.Config, set map[string]bool) {
	if f.Tune {
		return
	}
	cfg.Patience, cfg.MinImprovement = f.Patience, f.MinImprovement
	if set["patience"] && f.Patience == 0 {
		cfg.Patience = -1
	}
}

// FitTunedConfig returns fit --tune's settings; cfg is the final fit's
// Config (Flags.Config).
func (f *Flags) FitTunedConfig(cfg ooc.Config, set map[string]bool) (ooc.FitTunedConfig, error) {
	cfg.MinImprovement = f.MinImprovement
	tc := ooc.FitTunedConfig{Fit: cfg, Rows: f.TuneRows, Centers: f.TuneCenters, Handoff: ooc.HandoffRule(f.Handoff)}
	s := &tc.Search
	s.Extend, s.Pick, s.MinImprovement, s.MaxPasses = f.Extend, ooc.PickRule(f.Pick), SearchMinImprovement, f.MaxPasses
	switch {
	case !set["patience"]:
		tc.Fit.Patience, s.Patience = ooc.DefaultPatience, ooc.DefaultPatience
	case f.Patience == 0: // never, in the fit as in the search (0 is ooc's default)
		tc.Fit.Patience, s.Patience = -1, -1
	default:
		tc.Fit.Patience, s.Patience = f.Patience, f.Patience
	}
	if set["sigma"] {
		s.Sigmas = f.Sigma.Values
	}
	if set["lambda"] {
		s.Lambdas = f.Lambda.Values
	} else {
		// The search's default grid (TuneConfig.LambdaGrid): the search
		// replaces the fit's λ anyway.
		tc.Fit.Lambda = 0
	}
	steps, off, err := parseSteps(f.SigmaHalving)
	if err != nil {
		return tc, err
	}
	if off {
		s.SigmaHalving = -1
	} else {
		s.SigmaSteps = steps
	}
	if f.ARD {
		s.ARD = &ooc.ARDConfig{Rows: f.ARDRows, Steps: f.ARDSteps}
	}
	return tc, nil
}

// SearchValRows sets fit --tune's ValRows for a hold-out of --val-fraction
// (the command's, train the rows left to fit): the search scores as many
// of the held-out rows as the fraction gives its subsample, at least
// 1000.
func (f *Flags) SearchValRows(tc *ooc.FitTunedConfig, train int64) {
	if tc.ValRows != 0 || f.ValFraction <= 0 {
		return
	}
	rows := min(int64(ooc.DefaultTuneRows), train)
	if f.TuneRows > 0 {
		rows = min(f.TuneRows, train)
	}
	tc.ValRows = max(int64(float64(rows)*f.ValFraction/(1-f.ValFraction)+0.5), 1000)
}

// TuneConfig returns tune's search over the flags' grids; base is the
// Config every candidate shares (Flags.Config). ValidateTune checks the
// result.
func (f *Flags) TuneConfig(base ooc.Config, set map[string]bool) (ooc.TuneConfig, error) {
	tc := ooc.TuneConfig{Base: base, Patience: f.Patience, Halving: f.Halving, Extend: f.Extend, Lambdas: f.Lambda.Values, Pick: ooc.PickRule(f.Pick), MaxPasses: f.MaxPasses,
		MinImprovement: SearchMinImprovement}
	// CLI rules, which ooc does not make: --patience 0 and
	// --sigma-halving 0 mean never here (a negative value in ooc); --val
	// with an explicit --val-fraction (tune's default fraction is not 0).
	if f.Patience == 0 {
		tc.Patience = -1
	} else if f.Patience < 0 {
		return tc, Usagef("--patience must be ≥ 0, got %d", f.Patience)
	}
	steps, off, err := parseSteps(f.SigmaHalving)
	if err != nil {
		return tc, err
	}
	if off {
		tc.SigmaHalving = -1
	} else {
		tc.SigmaSteps = steps
	}
	if f.ARD {
		if f.ARDRows < 0 || f.ARDSteps < 0 {
			return tc, Usagef("--ard-rows and --ard-steps must be ≥ 0")
		}
		tc.ARD = &ooc.ARDConfig{Rows: f.ARDRows, Steps: f.ARDSteps}
	}
	if set["sigma"] {
		tc.Sigmas = f.Sigma.Values
	}
	if set["val-fraction"] && f.Val != "" {
		return tc, Usagef("--val and --val-fraction exclude each other")
	}
	if f.Val == "" {
		tc.ValFraction = f.ValFraction
	}
	if f.Extend < 0 {
		return tc, Usagef("--extend must be ≥ 0, got %d", f.Extend)
	}
	if _, err := ooc.ParsePickRule(f.Pick); err != nil {
		return tc, Usagef("--pick: %v", err)
	}
	return tc, nil
}

// ValidateTune is ooc.ValidateTune with its errors naming the flags.
func (f *Flags) ValidateTune(tc ooc.TuneConfig) error {
	return FlagErr(ooc.ValidateTune(tc, ooc.RunOptions{Workers: f.Workers}))
}

// FlagOf maps the fields of ooc's configuration (ooc.ConfigError.Field,
// and the field names ooc's errors and notes quote) to the flags of fit
// and tune that set them. ooc validates the values and names its fields;
// the commands only name the flag.
var FlagOf = map[string]string{
	"Config.Lambda":                     "--lambda",
	"Config.Centers":                    "--centers",
	"Config.Iterations":                 "--iters",
	"Config.Tolerance":                  "--tol",
	"Config.Patience":                   "--patience",
	"Config.MinImprovement":             "--min-improvement",
	"Config.Jitter":                     "--jitter",
	"Config.Kernel":                     "--kernel",
	"Config.Preconditioner":             "--precond",
	"Config.PrecondPrecision":           "--precond-precision",
	"Config.PrecondRank":                "--precond-rank",
	"Config.Sampling":                   "--centers-sampling",
	"Config.Candidates":                 "--candidates",
	"Config.Task":                       "--task",
	"Config.ClassWeight":                "--class-weight",
	"Config.Threshold":                  "--threshold",
	"Config.Loss":                       "--loss",
	"Config.NewtonSteps":                "--newton-steps",
	"Config.Precision":                  "--precision",
	"Config.Uncertainty":                "--uncertainty",
	"Config.UncertaintyRank":            "--uncertainty-rank",
	"RunOptions.Workers":                "--workers",
	"RunOptions.ValEvery":               "--val-every",
	"RunOptions.Validation":             "--val",
	"RunOptions.MaxMemory":              "--max-memory",
	"TuneConfig.Lambdas":                "--lambda",
	"TuneConfig.Sigmas":                 "--sigma",
	"TuneConfig.ValFraction":            "--val-fraction",
	"TuneConfig.Patience":               "--patience",
	"TuneConfig.Halving":                "--halving",
	"TuneConfig.SigmaSteps":             "--sigma-halving",
	"TuneConfig.ARD":                    "--ard",
	"TuneConfig.MaxPasses":              "--max-passes",
	"TuneConfig.Pick":                   "--pick",
	"TuneConfig.Extend":                 "--extend",
	"FitTunedConfig.Rows":               "--tune-rows",
	"FitTunedConfig.Centers":            "--tune-centers",
	"FitTunedConfig.Handoff":            "--handoff",
	"FitTunedConfig.Search.ValFraction": "--val-fraction",
	"ValFraction":                       "--val-fraction", // ooc.HoldOut's
}

// nameOf maps the other names of ooc's API that its messages quote to
// what the command line calls them (in text only: an error naming them
// is not a usage error).
var nameOf = map[string]string{
	"RunOptions.Resume": "--resume",
	"Model.ProbaTo":     "predict --proba",
	"FitTuned":          "fit --tune",
}

// fieldName matches the Go path of a field of ooc's configuration in a
// message (Config.Lambda, RunOptions.MaxMemory,
// FitTunedConfig.Search.ValFraction) and the names of nameOf.
var fieldName = regexp.MustCompile(`\b(?:(?:FitTunedConfig\.Search\.|FitTunedConfig\.|TuneConfig\.|Config\.|RunOptions\.|Model\.)[A-Z][A-Za-z]*|FitTuned)\b`)

// FlagText replaces the field names of ooc's configuration in s (an
// error's or a note's text) with the flags that set them.
func FlagText(s string) string {
	return fieldName.ReplaceAllStringFunc(s, func(f string) string {
		if fl, ok := FlagOf[f]; ok {
			return fl
		}
		if n, ok := nameOf[f]; ok {
			return n
		}
		return f
	})
}

// flagError is an error of ooc whose text names flags in place of the
// fields of ooc's configuration; it unwraps to the error.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// FlagErr renders an error of ooc for the command line. An
// *ooc.ConfigError about a value a flag sets becomes a *UsageError
// naming the flag: "--lambda: lambda must be > 0, got -1". In any other
// error (those about the data, or ooc.ErrMemory) the fields its text
// names become the flags that set them (FlagNames).
func FlagErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *ooc.ConfigError
	if errors.As(err, &ce) {
		if f, ok := FlagOf[ce.Field]; ok {
			return Usagef("%s: %s", f, FlagText(ce.Msg))
		}
	}
	return FlagNames(err)
}

// FlagNames returns err with the fields of ooc's configuration that its
// text names replaced by the flags that set them, for an error of a run
// (after the flags were accepted: an error about the data keeps its exit
// status 1).
func FlagNames(err error) error {
	if err == nil {
		return nil
	}
	if msg := FlagText(err.Error()); msg != err.Error() {
		return &flagError{msg: msg, err: err}
	}
	return err
}

// ParseBytes reads a size such as 12GiB, 12G, 800MB, 800M or 123456 (a
// plain number is bytes; K, M, G, T are powers of 1024 with or without
// "iB", and of 1000 when written "KB", "MB", "GB", "TB").
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToUpper(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size > 0 (e.g. 12GiB, 800MB)", s)
	}
	mult := map[string]float64{
		"": 1, "B": 1,
		"K": 1 << 10, "KIB": 1 << 10, "KB": 1e3,
		"M": 1 << 20, "MIB": 1 << 20, "MB": 1e6,
		"G": 1 << 30, "GIB": 1 << 30, "GB": 1e9,
		"T": 1 << 40, "TIB": 1 << 40, "TB": 1e12,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, unit)
	}
	if v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v * mult), nil
}
