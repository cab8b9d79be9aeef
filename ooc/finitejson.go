package ooc

import (
	"encoding/json"
	"math"
)

// JSON has no NaN or infinity, and encoding/json refuses to write them.
// A search's record holds such values for what it could not measure: a
// failed candidate's BestMetric is +Inf, and a candidate whose CG broke
// down has NaN residuals and validation metrics. They are written as
// null (or, for a validation metric, left out) and read back as +Inf
// (BestMetric) and NaN (residuals), so that tune --json, fit --tune's
// model (whose Training holds the search) and its summary can always be
// written.

// MarshalJSON writes c with a BestMetric that is not finite as null, a
// BestSE that is not finite as absent and residuals that are not
// finite as null.
func (c TuneCandidate) MarshalJSON() ([]byte, error) {
	type plain TuneCandidate
	return json.Marshal(struct {
		plain
		BestMetric *float64    `json:"best_metric"`
		BestSE     *float64    `json:"best_se,omitempty"`
		Residuals  finiteSlice `json:"residuals"`
	}{plain(c), finitePtr(c.BestMetric), positivePtr(c.BestSE), c.Residuals})
}

// UnmarshalJSON reads what MarshalJSON writes: a null BestMetric as
// +Inf and null residuals as NaN.
func (c *TuneCandidate) UnmarshalJSON(b []byte) error {
	type plain TuneCandidate
	aux := struct {
		*plain
		BestMetric *float64    `json:"best_metric"`
		BestSE     *float64    `json:"best_se,omitempty"`
		Residuals  finiteSlice `json:"residuals"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.BestMetric, c.BestSE, c.Residuals = math.Inf(1), 0, aux.Residuals
	if aux.BestMetric != nil {
		c.BestMetric = *aux.BestMetric
	}
	if aux.BestSE != nil {
		c.BestSE = *aux.BestSE
	}
	return nil
}

// MarshalJSON writes p without its metrics that are not finite (the
// scores of a CG iterate that broke down).
func (p ValPoint) MarshalJSON() ([]byte, error) {
	type plain ValPoint
	q := plain(p)
	for _, f := range metricFields(&q.Metrics) {
		if *f != nil && !finite(**f) {
			*f = nil
		}
	}
	return json.Marshal(q)
}

// metricFields are the addresses of m's scalar metrics.
func metricFields(m *Metrics) []**float64 {
	return []**float64{&m.MSE, &m.RMSE, &m.MAE, &m.R2, &m.RelErr, &m.ErrorRate, &m.Accuracy, &m.AUC,
		&m.LogLoss, &m.ECE, &m.BalancedAccuracy, &m.PRAUC}
}

// finiteSlice is a []float64 whose values that are not finite are
// written as null and read back as NaN.
type finiteSlice []float64

func (s finiteSlice) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	ps := make([]*float64, len(s))
	for i := range s {
		ps[i] = finitePtr(s[i])
	}
	return json.Marshal(ps)
}

func (s *finiteSlice) UnmarshalJSON(b []byte) error {
	var ps []*float64
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	if ps == nil {
		*s = nil
		return nil
	}
	*s = make(finiteSlice, len(ps))
	for i, p := range ps {
		(*s)[i] = math.NaN()
		if p != nil {
			(*s)[i] = *p
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// finitePtr is &v, or nil when v is not finite.
func finitePtr(v float64) *float64 {
	if !finite(v) {
		return nil
	}
	return &v
}

// positivePtr is &v, or nil unless v is finite and positive (a field
// written with omitempty).
func positivePtr(v float64) *float64 {
	if !(v > 0) || math.IsInf(v, 1) {
		return nil
	}
	return &v
}
