package ooc

import (
	"cmp"
	"errors"
	"math"

	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
)

// stoppingMetric is the validation metric the stopping rules watch, in a
// fit (Config.Patience) as in each candidate of a search
// (TuneConfig.Patience): the RMSE for regression, 1 − AUC for
// classification, the error rate when no AUC could be computed. The
// error rate moves in steps of one row and stalls for several iterations
// while the scores still improve: a search whose candidates stopped by
// it picked a σ with 4 × skin's test error (bench/TUNE.md, "Stopping").
// A search still picks among its candidates by the error rate at each
// one's best iterate (TuneCandidate.BestMetric).
func stoppingMetric(t Task, m *Metrics) float64 {
	if t != TaskRegression && m.AUC != nil && !math.IsNaN(*m.AUC) {
		return 1 - *m.AUC
	}
	return selectionMetric(t, m)
}

// stopRule is the engine's stopping rule of a fit or search: patience
// (resolved: 0 is never, as the caller's default is applied before) and
// minImp (0: DefaultMinImprovement).
func stopRule(patience int, minImp float64) engine.Rule {
	return engine.Rule{Patience: patience, MinImprovement: cmp.Or(minImp, DefaultMinImprovement)}
}

// errPatience stops conjugateGradient when the validation metric stops
// improving (Config.Patience); solveCG turns it into StatusPatience.
var errPatience = errors.New("patience")
