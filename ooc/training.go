package ooc

import (
	"math"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// Training records how a model was fitted.
type Training struct {
	N int64 `json:"n"`
	// Weight names the column of row weights of a weighted fit and
	// WeightSum is their sum, the n of λ·n (absent when unweighted).
	Weight    string  `json:"weight,omitempty"`
	WeightSum float64 `json:"weight_sum,omitempty"`
	// ClassWeights are the classes' weights of Config.ClassWeight
	// "balanced", in the order of the classes.
	ClassWeights []float64 `json:"class_weights,omitempty"`
	// NewtonSteps are the logistic loss's Newton steps (Config.Loss).
	NewtonSteps []NewtonStep `json:"newton_steps,omitempty"`
	Iterations  int          `json:"iterations"`
	Status      Status       `json:"status"`
	// BestIteration is the iteration with the best validation metric
	// (0 without validation). With Config.Patience the model is that
	// iteration's; without, the last iteration's.
	BestIteration int        `json:"best_iteration,omitempty"`
	Residuals     []float64  `json:"residuals"`
	Validation    []ValPoint `json:"validation,omitempty"`
	// ValidationFinal is the returned model's metrics on the validation
	// rows: calibrated and labelled by its decision (model.Decision), with
	// the per-class metrics and the confusion matrix, which the points of
	// Validation (the CG iterates, before calibration) leave out. Absent
	// without validation rows and from models written before it existed.
	ValidationFinal     *Metrics `json:"validation_final,omitempty"`
	Seconds             float64  `json:"seconds"`
	SecondsPerIteration float64  `json:"seconds_per_iteration"`
	PrecondBytes        int64    `json:"precond_bytes"`
	// PrecondSeconds is the time to compute K_MM and factorise the
	// preconditioner (O(M³): minutes at M = 5·10⁴).
	PrecondSeconds float64 `json:"precond_seconds"`
	// Rank is the dimension of the preconditioned system: M, or fewer
	// with the eigen preconditioner on a rank-deficient K_MM.
	Rank   int     `json:"rank"`
	Jitter float64 `json:"jitter"`
	// NystromRank is the Nyström preconditioner's rank (0 for the
	// others), NystromResidual the fraction of tr(K_MM) its basis misses,
	// and PrecondCache what became of RunOptions.PrecondCache: "read",
	// "written", or why the file was not used, then "; written".
	NystromRank     int     `json:"nystrom_rank,omitempty"`
	NystromResidual float64 `json:"nystrom_residual,omitempty"`
	PrecondCache    string  `json:"precond_cache,omitempty"`
	// MemoryPlan is what the memory plan gave up under
	// RunOptions.MaxMemory (FitPlan.MemoryPlan, when Reduced); nil when the
	// fit has the preconditioner it would have without the bound.
	MemoryPlan *MemoryPlan `json:"memory_plan,omitempty"`
	// DuplicateCenters counts centres drawn twice (uniform: equal rows;
	// leverage draws distinct rows and counts only equal candidate rows).
	DuplicateCenters int `json:"duplicate_centers,omitempty"`
	// LambdaLeverage is, for leverage sampling, the λ at which the
	// leverage scores were computed: the one whose effective dimension
	// d_eff(λ) is M (0 for uniform sampling).
	LambdaLeverage float64 `json:"lambda_leverage,omitempty"`
	// Phases are the wall and CPU seconds of each phase of the fit, in
	// order, and PeakRSS the process's peak resident memory in bytes at
	// its end (both absent from models written before they existed).
	Phases  []Phase `json:"phases,omitempty"`
	PeakRSS int64   `json:"peak_rss_bytes,omitempty"`
	// Search is the search that chose σ and λ (FitTuned), without its
	// candidates' models.
	Search *TuneResult `json:"search,omitempty"`
	// Handoff is what FitTuned carried from the search to the fit.
	Handoff *Handoff `json:"handoff,omitempty"`
}

// setUp records what every model's Training says of its set-up, the same
// for a fit (squared or logistic) and a search's candidate: the rows and
// their weights (weightSum the passes' Σ w in plan.WeightExp's scale,
// classWeights the balanced class weights, nil for none), the
// preconditioner pre (its size, rank, jitter and Nyström basis), the
// centres' sample and the memory plan when it reduced the fit. The
// caller records how the solve went.
func (tr *Training) setUp(plan *FitPlan, cs *centreSample, pre *precond.Preconditioner, weightSum float64, classWeights []float64) {
	tr.N = plan.N
	if plan.Weight != "" || classWeights != nil {
		tr.Weight, tr.WeightSum, tr.ClassWeights = plan.Weight, math.Ldexp(weightSum, -plan.WeightExp), classWeights
	}
	tr.PrecondBytes, tr.Rank, tr.Jitter = pre.Bytes(), pre.Rank(), pre.Jitter()
	tr.NystromRank, tr.NystromResidual = pre.NystromRank(), pre.NystromResidual()
	if mp := plan.MemoryPlan; mp != nil && mp.Reduced {
		tr.MemoryPlan = mp
	}
	tr.DuplicateCenters, tr.LambdaLeverage = cs.dropped, cs.lambdaLeverage
}
