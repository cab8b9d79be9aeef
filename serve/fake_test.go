package serve

import (
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"
)

// linModel is a model for tests: score_k = bias_k + Σ_j w[k][j]·x_j, a
// regression or, with classes, a binary classifier (score > 0 means the
// second class; probability the logistic of the score).
type linModel struct {
	features []string
	w        [][]float64
	bias     []float64
	classes  []string
	labeled  bool
	std      bool
	maxRows  atomic.Int64 // the largest block scored
	// intervalZ is Info.IntervalZ (nil: the package's Gaussian).
	intervalZ func(z []float64, level float64, method string) (string, error)
}

func (m *linModel) Info() Info {
	in := Info{Features: m.features, K: len(m.w), Std: m.std, Summary: json.RawMessage(`{"centers": 7, "task": "x"}`), IntervalZ: m.intervalZ}
	for k := range m.w {
		in.Targets = append(in.Targets, "y"+strconv.Itoa(k))
	}
	in.Task = "regression"
	if m.classes != nil {
		in.Task, in.Targets, in.ClassNames, in.Labeled = "binary", []string{"y"}, m.classes, m.labeled
		in.Classes = []float64{0, 1}
	}
	in.FeatureMean = make([]float64, len(m.features))
	for j := range in.FeatureMean {
		in.FeatureMean[j] = float64(j) + 0.5
	}
	return in
}

func (m *linModel) NewScorer() Scorer { return linScorer{m} }

type linScorer struct{ m *linModel }

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

func (s linScorer) Score(dst *Result, x []float64, rows int, std bool) error {
	m := s.m
	for {
		old := m.maxRows.Load()
		if int64(rows) <= old || m.maxRows.CompareAndSwap(old, int64(rows)) {
			break
		}
	}
	d, k := len(m.features), len(m.w)
	dst.Scores = grow(dst.Scores, rows*k)
	for i := range rows {
		for o := range k {
			v := m.bias[o]
			for j := range d {
				v += m.w[o][j] * x[i*d+j]
			}
			dst.Scores[i*k+o] = v
		}
	}
	dst.Std = dst.Std[:0]
	if std {
		dst.Std = grow(dst.Std, rows*k)
		for i := range dst.Std {
			dst.Std[i] = 0.25 + math.Abs(dst.Scores[i])/100
		}
	}
	dst.Class, dst.Proba = dst.Class[:0], dst.Proba[:0]
	if m.classes != nil {
		dst.Class = grow(dst.Class, rows)
		dst.Proba = grow(dst.Proba, 2*rows)
		for i := range rows {
			dst.Class[i] = 0
			if dst.Scores[i] > 0 {
				dst.Class[i] = 1
			}
			p := 1 / (1 + math.Exp(-dst.Scores[i]))
			dst.Proba[2*i], dst.Proba[2*i+1] = 1-p, p
		}
	}
	return nil
}

// want is the fake's score of one row.
func (m *linModel) want(x []float64, o int) float64 {
	v := m.bias[o]
	for j, xj := range x {
		v += m.w[o][j] * xj
	}
	return v
}

func newLin(features []string, w []float64, bias float64) *linModel {
	return &linModel{features: features, w: [][]float64{w}, bias: []float64{bias}}
}
