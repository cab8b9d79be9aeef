package ooc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/pass"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// Defaults of FitTunedConfig, documented on its fields.
const (
	DefaultTuneRows    = 100_000
	DefaultTuneCenters = 2000
)

// HandoffRule is how FitTuned carries the λ chosen by the search on a
// subsample of n_s rows with a small M to the fit of n rows with the
// requested M. σ (or the per-feature σⱼ) carries unchanged: the features
// are standardised with the statistics of all rows in both steps.
type HandoffRule string

// Hand-off rules (bench/PAPER.md, "Hand-off" has the measurements that
// chose the default).
const (
	// HandoffKeep uses the search's λ as it is.
	HandoffKeep HandoffRule = "keep"
	// HandoffSqrt scales λ by √(n_s/n), the rate of the optimal λ in n
	// for the hardest problems of FALKON's analysis (λ ∝ n^-1/2).
	HandoffSqrt HandoffRule = "sqrt"
	// HandoffLinear scales λ by n_s/n (λ·n, the weight of the penalty
	// against the summed loss, is kept).
	HandoffLinear HandoffRule = "linear"
	// HandoffSlope measures how λ moves with n at the search's scale and
	// carries it that far: a λ-only search (σ as chosen, the search's λ
	// grid, fewer centres) on a quarter of the search's rows gives the
	// largest λ that the validation rows tolerate there (within one
	// standard error of the lowest metric); with the search's own, the
	// exponent α = log(λ_probe/λ_search)/log 4 within [0, 1], and the
	// fit's λ is the search's λ·(n_s/n)^α (Handoff.Slope). Where more rows
	// no longer change the tolerated λ (the search already sees the
	// function) it keeps λ nearer the search's; where they do, it follows
	// them, as linear does. With fewer than 4·10⁴ search rows it does not
	// measure and scales λ as linear does.
	HandoffSlope HandoffRule = "slope"
	// DefaultHandoff is the rule that measured best (bench/PAPER.md,
	// "Hand-off"): slope. With the search on an eighth of the rows of the
	// UCI sets it measured α = 1 and gave linear's λ, which was 0.1–33 %
	// above the best of the grid at the final M in test RMSE where keep
	// was 2.1–92 % above; on the msd shape it gave linear's λ too; on the
	// susy shape, whose search on 10⁵ of 4·10⁶ rows already sees the
	// function, it measured α < 1 and kept a larger λ than linear's, which
	// took more CG iterations for the same AUC.
	DefaultHandoff = HandoffSlope
)

// FitTunedConfig configures FitTuned: a search over σ × λ on a row
// subsample at a small M, then one fit of all the rows at the requested M
// with what the search chose. The zero value of every field means the
// default stated in its comment.
type FitTunedConfig struct {
	// Fit is the final fit. Its Kernel's Sigma or Sigmas and its Lambda
	// are replaced by the search's choice. Its Patience means what it
	// means in every fit with validation rows (Config.Patience: 0 is
	// DefaultPatience, a negative value never stops, and the final fit
	// then runs Iterations): FitTuned stops the final fit by its validation
	// metric, within the search's budget of passes (Search.MaxPasses, or
	// DefaultMaxPasses of Iterations): past Iterations it continues while
	// its validation improves, as the search's candidates do. The model's
	// Config().Iterations is the cap that budget gives (the logistic loss
	// runs its Newton steps of Iterations each).
	Fit Config
	// Search is the search: Sigmas (nil: TuneConfig.SigmaGrid of Fit's
	// kernel), Lambdas (nil: TuneConfig.LambdaGrid of Fit's Lambda), ARD,
	// Patience, Halving and SigmaSteps as Tune reads them
	// (RunOptions.MaxMemory bounds the search and the fit). Its Base must
	// be zero: the search's base is Fit with the search's Centers (a
	// non-zero Base is refused). ValFraction is the fraction of all rows
	// held out (by Fit.Seed) from both steps when RunOptions.Validation is
	// nil (0: DefaultValFraction).
	Search TuneConfig
	// Rows is the number of training rows the search runs on, drawn
	// uniformly without replacement (by Fit.Seed) and held in memory.
	// 0 means min(n, DefaultTuneRows).
	Rows int64
	// Centers is the search's M. 0 means min(DefaultTuneCenters, the
	// final M, Rows/10) (at least 1).
	Centers int
	// ValRows is the number of validation rows the search scores (a
	// uniform sample of the validation rows, held in memory). 0 means
	// Rows·f/(1−f) for a held-out fraction f (Rows/9 with an explicit
	// validation source), at least 1000, at most all of them.
	ValRows int64
	// Handoff is how λ carries to the final fit. "" means
	// DefaultHandoff.
	Handoff HandoffRule
}

// Handoff records what FitTuned carried from the search to the fit.
type Handoff struct {
	Rule          HandoffRule `json:"rule"`
	SearchRows    int64       `json:"search_rows"`
	SearchValRows int64       `json:"search_val_rows"`
	SearchCenters int         `json:"search_centers"`
	SearchLambda  float64     `json:"search_lambda"`
	// Lambda is the final fit's λ: SearchLambda after the rule.
	Lambda float64 `json:"lambda"`
	// MaxPasses is the final fit's budget of passes over the data (the
	// search's), which stops it past FitTunedConfig.Fit.Iterations; 0 for
	// the logistic loss.
	MaxPasses int `json:"max_passes,omitempty"`
	// Sigma or Sigmas is the length scale carried.
	Sigma  float64   `json:"sigma,omitempty"`
	Sigmas []float64 `json:"sigmas,omitempty"`
	// Slope is what the slope rule measured (nil for the other rules and
	// when the search ran on all the rows).
	Slope *HandoffSlopeResult `json:"slope,omitempty"`
	// SubsampleSeconds is the time to draw the subsamples (one read of
	// the data), SearchSeconds the search's.
	SubsampleSeconds float64 `json:"subsample_seconds"`
	SearchSeconds    float64 `json:"search_seconds"`
}

// StageSubsample is the stage of FitTuned that reads its row subsamples
// (reported through RunOptions.SearchProgress).
const StageSubsample Stage = "subsample"

// FitTuned is the whole job in one call: it holds out validation rows
// (RunOptions.Validation, or FitTunedConfig.Search.ValFraction of src),
// draws a row subsample of the training rows and of the validation rows
// into memory, searches σ × λ there with Tune at a small M (the
// candidates sharing every pass), and fits all the training rows with the
// requested M, σ as chosen and λ carried by FitTunedConfig.Handoff,
// validating every iteration on all the validation rows and stopping when
// that stops improving (Config.Patience). The model's Training().Search
// holds the search's table and Training().Handoff what was carried.
//
// It reads src 3 + t times in full for t CG iterations (the subsample,
// the right-hand side, the iterations, which also score the held-out
// validation rows, and the last iterate's validation), plus a part for
// the centres; an explicit validation source is read once per
// iteration.
func FitTuned(ctx context.Context, src stream.Source, tc FitTunedConfig, opts RunOptions) (*Model, error) {
	start := time.Now()
	search := tc.Search
	if !isZero(search.Base) {
		return nil, configErr("FitTunedConfig.Search.Base", "the search's base is FitTunedConfig.Fit with the search's Centers: leave Search.Base zero")
	}
	if search.ValFraction != 0 && opts.Validation != nil {
		return nil, configErr("FitTunedConfig.Search.ValFraction", "a validation fraction and a validation source exclude each other")
	}
	if tc.Rows < 0 || tc.Centers < 0 || tc.ValRows < 0 {
		return nil, configErr("FitTunedConfig.Rows", "rows, centres and validation rows must be ≥ 0 (0: the default)")
	}
	rule, err := ParseHandoffRule(string(tc.Handoff))
	if err != nil {
		return nil, configErr("FitTunedConfig.Handoff", "%v", err)
	}
	tc.Handoff = rule
	fitCfg := tc.Fit
	train, val := src, opts.Validation
	frac := 0.0
	if val == nil {
		frac = search.ValFraction
		if frac == 0 {
			frac = DefaultValFraction
		}
		var err error
		if train, val, err = holdOut(src, frac, fitCfg.Seed, "FitTunedConfig.Search.ValFraction"); err != nil {
			return nil, err
		}
	} else {
		var err error
		if val, err = AlignLabels(src, val); err != nil {
			return nil, err
		}
	}
	// The final fit's plan first: a bad Config fails before any pass.
	po := opts
	po.Validation = val
	plan, err := Plan(train, fitCfg, po)
	if err != nil {
		return nil, err
	}
	n, nv := plan.N, stream.Rows(val)
	rows := tc.Rows
	if rows == 0 {
		rows = DefaultTuneRows
	}
	rows = min(rows, n)
	vrows := tc.ValRows
	if vrows == 0 {
		if frac > 0 {
			vrows = int64(math.Ceil(float64(rows) * frac / (1 - frac)))
		} else {
			vrows = rows / 9
		}
		vrows = max(vrows, 1000)
	}
	vrows = min(vrows, nv)
	m := tc.Centers
	if m == 0 {
		m = min(DefaultTuneCenters, plan.Config.Centers, int(max(rows/10, 1)))
	}
	if int64(m) > rows {
		return nil, configErr("FitTunedConfig.Centers", "the search's centres (M = %d) must not exceed its rows (%d)", m, rows)
	}
	search.Base = fitCfg
	search.Base.Centers = m
	search.Base.Patience = 0
	if search.Base.Preconditioner == precond.MethodNystrom { // the search's small M fits in memory
		search.Base.Preconditioner, search.Base.PrecondRank = precond.MethodCholesky, 0
	}
	search.Base.Uncertainty, search.Base.UncertaintyRank = "", 0 // the final fit's alone
	search.ValFraction = 0
	if err := ValidateTune(search, RunOptions{Workers: opts.Workers, Validation: val}); err != nil {
		return nil, err
	}

	// One read of the data draws both subsamples.
	_, _, _, heldOut := stream.HoldoutPair(train, val)
	sub := func(s stream.Source, k int64, salt uint64, what string) (stream.Source, error) {
		report := func(done, chunks int) {
			if opts.SearchProgress != nil {
				opts.SearchProgress(TuneProgress{Progress: Progress{Stage: StageSubsample, Chunk: done, Chunks: chunks,
					Elapsed: time.Since(start)}})
			}
		}
		idx := sampleIndices(stream.Rows(s), int(k), fitCfg.Seed^salt)
		// Rows of the data (the training rows, or validation rows held
		// out of it) are read where the data is, through the executor.
		rr := pass.TargetRowReader(nil)
		if s == train || heldOut {
			rr = targetRowReader(opts.Executor)
		}
		x, y, w, err := readSample(ctx, s, idx, rr, report)
		if err != nil {
			return nil, fmt.Errorf("%s subsample: %w", what, err)
		}
		mem := stream.NewMemSource(x, s.Dim(), y, s.NumTargets(), 4096)
		if name := stream.WeightColumn(s); name != "" {
			mem = mem.WithWeights(w, name) // the search minimises the weighted loss too
		}
		return &sampleSource{MemSource: mem, meta: s}, nil
	}
	st, err := sub(train, rows, 0x73656172636874, "search") // "searcht"
	if err != nil {
		return nil, err
	}
	sv, err := sub(val, vrows, 0x73656172636876, "validation") // "searchv"
	if err != nil {
		return nil, err
	}
	subSeconds := time.Since(start).Seconds()
	res, err := Tune(ctx, st, search, RunOptions{Workers: opts.Workers, Validation: sv, MaxMemory: opts.MaxMemory, SearchProgress: opts.SearchProgress})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	best := res.Candidates[res.Best]
	ho := &Handoff{Rule: tc.Handoff, SearchRows: rows, SearchValRows: vrows, SearchCenters: res.M,
		SearchLambda: best.Lambda, SubsampleSeconds: subSeconds, SearchSeconds: res.Seconds}
	if tc.Handoff == HandoffSlope && rows < n {
		if ho.Slope, err = handoffSlope(ctx, st, sv, search, res, best, n, plan.Config.Centers, sub, opts); err != nil {
			return nil, err
		}
	}
	ho.Lambda = handoffLambda(tc.Handoff, best.Lambda, rows, n, ho.Slope)
	if opts.SearchProgress != nil {
		note := fmt.Sprintf("hand-off: λ = %g for the fit, from the search's %g by FitTunedConfig.Handoff %s", ho.Lambda, best.Lambda, tc.Handoff)
		if sl := ho.Slope; sl != nil && sl.Rows > 0 {
			note += fmt.Sprintf(" (the λ tolerated within one standard error: %.3g on %d rows, %.3g on %d: α = %.2f)",
				sl.Tolerated, rows, sl.ProbeTolerated, sl.Rows, sl.Exponent)
		}
		opts.SearchProgress(TuneProgress{Progress: Progress{Note: note, Elapsed: time.Since(start)}})
	}
	fitCfg.Lambda = ho.Lambda
	fitCfg.Kernel = best.Kernel
	ho.Sigma, ho.Sigmas = best.Kernel.Sigma, slices.Clone(best.Kernel.Sigmas)
	// The final fit stops by patience within the search's budget.
	if fitCfg.Loss != LossLogistic {
		// heldOut: its validation is scored in its passes.
		// Config.Patience as Plan resolved it (0: DefaultPatience).
		ho.MaxPasses, fitCfg.Iterations = finalBudget(cmp.Or(fitCfg.Iterations, DefaultIterations), plan.Config.Patience, search.MaxPasses, heldOut)
	}
	for i := range res.Candidates {
		res.Candidates[i].model = nil
	}
	// The search's candidates (an M × M factor each, 1 GiB for 30 at
	// M = 2000) are garbage now: precond.Build (or BuildNystrom) collects
	// them before it allocates the fit's preconditioner, which then reuses
	// their memory.
	opts.Validation = val
	mdl, err := Fit(ctx, train, fitCfg, opts)
	if err != nil {
		return nil, err
	}
	mdl.training.Search, mdl.training.Handoff = res, ho
	mdl.training.Seconds = time.Since(start).Seconds()
	return mdl, nil
}

// handoffLambda carries λ from a search on ns rows to a fit on n rows
// (sl: the slope rule's measurement; nil with all rows searched).
func handoffLambda(rule HandoffRule, lambda float64, ns, n int64, sl *HandoffSlopeResult) float64 {
	r := float64(ns) / float64(n)
	switch rule {
	case HandoffSlope:
		if sl != nil {
			return lambda * math.Pow(r, sl.Exponent)
		}
	case HandoffSqrt:
		return lambda * math.Sqrt(r)
	case HandoffLinear:
		return lambda * r
	}
	return lambda
}

// readRows reads rows of src (row numbers idx, sorted) with all their
// targets, reading only the chunks that hold one, and calls report after
// each chunk (nil: no reports).
func readRows(ctx context.Context, src stream.Source, idx []int64, report func(done, chunks int)) (x, y []float64, err error) {
	d, kt := src.Dim(), src.NumTargets()
	x, y = make([]float64, 0, len(idx)*d), make([]float64, 0, len(idx)*kt)
	var bx, by []float64
	var lo int64
	p := 0
	chunks := src.NumChunks()
	for c := 0; c < chunks && p < len(idx); c++ {
		rows := src.ChunkRows(c)
		hi := lo + int64(rows)
		if idx[p] < hi {
			bx = slices.Grow(bx[:0], rows*d)[:rows*d]
			by = slices.Grow(by[:0], rows*kt)[:rows*kt]
			if err := src.ReadChunk(ctx, c, bx, by); err != nil {
				return nil, nil, fmt.Errorf("read chunk %d: %w", c, err)
			}
			for ; p < len(idx) && idx[p] < hi; p++ {
				r := int(idx[p] - lo)
				x = append(x, bx[r*d:(r+1)*d]...)
				y = append(y, by[r*kt:(r+1)*kt]...)
			}
		}
		lo = hi
		if report != nil {
			report(c+1, chunks)
		}
	}
	return x, y, nil
}

// readWeights reads the row weights of rows idx (sorted) of src, a
// stream.Weighter, reading only the chunks that hold one.
func readWeights(ctx context.Context, src stream.Source, idx []int64) ([]float64, error) {
	out := make([]float64, 0, len(idx))
	var buf []float64
	var lo int64
	p := 0
	for c := 0; c < src.NumChunks() && p < len(idx); c++ {
		rows := src.ChunkRows(c)
		hi := lo + int64(rows)
		if idx[p] < hi {
			buf = slices.Grow(buf[:0], rows)[:rows]
			if err := src.(stream.Weighter).ReadWeights(ctx, c, buf); err != nil {
				return nil, fmt.Errorf("read the weights of chunk %d: %w", c, err)
			}
			for ; p < len(idx) && idx[p] < hi; p++ {
				out = append(out, buf[idx[p]-lo])
			}
		}
		lo = hi
	}
	return out, nil
}

// sampleSource is a subsample held in memory that reports its parent's
// column names, encoding, statistics (those of all the parent's rows, so that a
// search on it standardises as the fit of the parent does), target
// values and labels.
type sampleSource struct {
	*stream.MemSource
	meta stream.Source
}

func (s *sampleSource) Columns() (features, targets []string) { return stream.ColumnsOf(s.meta) }

func (s *sampleSource) FeatureStats() (mean, std []float64) {
	if st, ok := s.meta.(stream.Statser); ok {
		return st.FeatureStats()
	}
	return nil, nil
}

func (s *sampleSource) TargetDistinct() [][]float64 {
	if tv, ok := s.meta.(stream.TargetValuer); ok {
		return tv.TargetDistinct()
	}
	return nil
}

// Encoding reports the parent's encoding of categorical and time columns
// (stream.Encoded): the search's ARD shares a length scale within each
// encoded column's features (ardGroups).
func (s *sampleSource) Encoding() *featenc.Spec { return stream.EncodingOf(s.meta) }

func (s *sampleSource) TargetLabels() [][]string {
	if l, ok := s.meta.(stream.Labeler); ok {
		return l.TargetLabels()
	}
	return nil
}

// finalBudget returns FitTuned's budget of passes for its final fit of
// iters iterations and the resolved patience (maxPasses, the search's
// TuneConfig.MaxPasses; 0: DefaultMaxPasses of them) and the CG
// iterations it allows after the centre sampling and the right-hand
// side, keeping one pass for the final validation of held-out rows
// (heldOut): the fit's Iterations, which its patience stops earlier.
func finalBudget(iters, patience, maxPasses int, heldOut bool) (passes, limit int) {
	if maxPasses == 0 {
		maxPasses = DefaultMaxPasses(iters, patience, heldOut)
	}
	limit = maxPasses - 2
	if heldOut {
		limit--
	}
	return maxPasses, max(limit, 1)
}
