// Package ooc is the FALKON solver over streamed data: kernel ridge
// regression by Nyström centres, a Cholesky-based preconditioner and
// conjugate gradient, reading the training data one chunk at a time.
//
// FALKON: Rudi, Carratino, Rosasco, "FALKON: An Optimal Large Scale
// Kernel Method", NIPS 2017; Meanti, Carratino, Rosasco, Rudi, "Kernel
// methods through the roof", NeurIPS 2020.
//
// # Overview
//
// Fit(ctx, src, cfg, opts) takes any stream.Source — a chunk store,
// stream.MemSource, or a type of the caller's — a Config and RunOptions:
//
//   - Config is what determines the estimator (kernel, λ, M, iterations,
//     precision, sampling, seed, task, …); zero fields mean documented
//     defaults, and the model persists the resolved Config.
//   - RunOptions is how this run executes (workers, progress, checkpoint,
//     resume, validation source, Executor); it never changes the model
//     and is not persisted.
//
// Plan(src, cfg, opts) resolves a fit without reading data — the Config
// with defaults filled in, n, d, the task and outputs, the column names
// and the memory estimate (FitPlan) — or returns the validation error;
// Fit calls it first. Validate(cfg, opts) and ValidateTune(tc, opts)
// check what needs no data, so that a program can reject bad settings
// before expensive work such as converting its input. Every invalid
// setting is a *ConfigError whose Field names it ("Config.Lambda",
// "RunOptions.Workers", "TuneConfig.Halving") and which matches
// ErrConfig: a command line maps Field to its flag.
//
// Fit draws M centres — uniformly without replacement (seeded), or by
// approximate ridge leverage scores (Config.Sampling) — builds K_MM and
// the preconditioner (package precond), makes one pass for the
// right-hand side and one pass per CG iteration, each computing the
// kernel blocks K(X_b, C) on the fly (package kernel): K_nM is never
// stored. With Config.Preconditioner nystrom (for M beyond RAM) neither
// is K_MM: the preconditioner keeps a rank-r basis from r of its rows,
// each iteration adds λ·K_MM·u by the kernel on the driver, and
// RunOptions.PrecondCache keeps the basis for a resumed fit. Those
// passes go through a pass.Executor (RunOptions.Executor): nil means the
// local pipeline (pass.LocalExecutor); a distributed one (package beam's)
// receives each pass as a self-contained pass.Job in its versioned
// encoding and runs pass.Worker.AddRows on every chunk. The sampling pass
// runs locally (or through a pass.RowReader: an executor that reads
// given rows where the data is), and so do Fit's validations on a source
// of their own; validation rows held out of the training data
// (RunOptions.Validation and the training source the two sides of one
// stream.Holdout) are scored in the CG passes themselves
// (pass.GroupKernelProduct), with no pass of their own but one for the
// last iterate; a classifier's calibration on them is a pass too
// (pass.Scores), and FitTuned draws its search's row subsample through
// an executor that is a pass.TargetRowReader. Tune's passes are jobs too (pass.GroupTargetProduct,
// pass.GroupKernelProduct: every σ and λ of the search in one pass, which
// also scores the held-out rows), and so are the Newton steps of the
// logistic loss (Config.Loss: pass.LogisticGradient,
// pass.LogisticHessianProduct), so the same executors run them. A Newton
// step is ended by a line search folded into the next gradient pass
// (pass.Job.Line): the objective never rises, and a candidate whose
// objective cannot fall stops (StatusNoDescent, with Progress.Note).
//
// Row weights come from the optional stream.Weighter: every pass weighs
// its rows, and the fit solves (K_nMᵀ W K_nM + λ·n·K_MM) α = K_nMᵀ W (y − μ)
// with n the sum of the weights and μ the weighted target mean;
// Config.ClassWeight "balanced" weighs the classes from the right-hand
// side's own sums.
//
// Fit returns a complete, immutable Model: a *model.Model (package
// model, which holds the fitted model on its own, with no training code)
// together with the Config and Training it was fitted with. It predicts
// rows (PredictTo, or a model.Predictor without allocation), whole
// sources in chunk order (Predict), evaluates metrics (Evaluate), and is
// saved and loaded in a versioned, checksummed binary format (Save,
// Load; docs/MODEL_FORMAT.md). A program that only predicts imports
// package model alone.
//
// Column metadata comes from the source, through stream's optional
// interfaces: names (stream.Columner), feature statistics
// (stream.Statser) and target values (stream.TargetValuer), all of which
// *chunkstore.Reader implements from its manifest. Features are
// standardised with the source's statistics, or with statistics computed
// in the sampling pass (which then reads every chunk) by the module's one
// statistics routine. Regression targets are centred; binary targets (two
// distinct values) are encoded ±1; multiclass targets one-vs-all.
//
// Classification. Config.Task = TaskAuto picks the task from the
// target's distinct values (AutoTask): binary for two, multiclass for 3
// to MaxAutoClasses integer or string-label values, regression otherwise.
// A string target is stored as label codes; the source reports the names
// (stream.Labeler), the model keeps them (Model.ClassNames), and a
// validation source that numbers its labels otherwise is mapped to the
// training codes (AlignLabels, Model.Relabel). With RunOptions.Validation,
// Fit also calibrates the model's probabilities (Model.ProbaTo) on the
// validation rows, reusing the scores of the last validation pass:
// Platt scaling σ(A·s + B) for binary models, a softmax temperature
// softmax(s / T) for multiclass ones, each fitted by minimising the
// log-loss (Newton's method; the problems are convex); the Calibration
// records the log-loss and the expected calibration error before and
// after. Evaluate reports accuracy, AUC (one-vs-rest macro for
// multiclass), log-loss and ECE for classification. Class names and the
// calibration are optional keys of the model file's metadata (format
// version 1): older files load without them.
//
// Standardisation rides on the kernel's tile loading
// (kernel.Centers.WithInputMap): a chunk is read once per pass and never
// rewritten. A NaN or infinite value in the data is an error, a
// *stream.ValueError naming the chunk, the row and the column, found as
// the kernel loads the rows (kernel.Workspace.NonFinite), with no pass of
// its own.
//
// A long fit can be checkpointed after every iteration
// (RunOptions.Checkpoint) and resumed (RunOptions.Resume) with any worker
// count, or extended with more Iterations: the resumed fit ends with the
// same model, bit for bit, as an uninterrupted one.
//
// # Concurrency
//
// Fit runs RunOptions.Workers goroutines and waits for them; progress is
// reported through RunOptions.Progress on the calling goroutine, and the
// package never prints. A Model returned by Fit or Load is immutable and
// safe for concurrent use.
//
// # Invariants
//
// Partial results are reduced in chunk order, so a fit gives bit-identical
// models for any number of workers. Memory is O(M²) plus a bounded number
// of chunk buffers (FitPlan.Memory), independent of the number of rows.
// Reaching the iteration limit is a Status, not an error.
package ooc
