package serve

import (
	"fmt"
	"math"

	"golang.org/x/sync/semaphore"
)

// rowBuf collects a request's rows, row-major in the model's feature
// order, in a buffer reused from request to request. Its growth is
// charged to the server's memory budget, so the decoded rows of all
// requests in flight stay within Options.MaxMemory.
type rowBuf struct {
	d       int
	n       int       // rows so far
	x       []float64 // n × d used
	maxRows int
	budget  *semaphore.Weighted
	held    int64 // bytes charged to budget
}

func (rb *rowBuf) reset(d, maxRows int, budget *semaphore.Weighted) {
	rb.d, rb.n, rb.maxRows, rb.budget = d, 0, maxRows, budget
	rb.x = rb.x[:0]
}

// charge takes bytes more from the budget.
func (rb *rowBuf) charge(bytes int64) error {
	if rb.budget == nil || bytes <= 0 {
		return nil
	}
	if !rb.budget.TryAcquire(bytes) {
		return &RequestError{Status: 503, Row: -1, Msg: "server busy: the rows of the requests in flight fill its memory budget (--max-memory); retry later"}
	}
	rb.held += bytes
	return nil
}

// release returns the budget rb holds.
func (rb *rowBuf) release() {
	if rb.held > 0 {
		rb.budget.Release(rb.held)
		rb.held = 0
	}
}

// grow returns buf with length n, reallocated (and the growth charged to
// the budget) when its capacity is below n.
func (rb *rowBuf) grow(buf []float64, n int) ([]float64, error) {
	if n <= cap(buf) {
		return buf[:n], nil
	}
	if err := rb.charge(int64(n-cap(buf)) * 8); err != nil {
		return buf, err
	}
	return make([]float64, n), nil
}

// addRow appends a row and returns its values (garbage until written).
func (rb *rowBuf) addRow() ([]float64, error) {
	if rb.n >= rb.maxRows {
		return nil, &RequestError{Status: 413, Row: -1, Msg: fmt.Sprintf("the request holds more than %d rows (--max-rows); split it", rb.maxRows)}
	}
	need := (rb.n + 1) * rb.d
	if need > cap(rb.x) {
		c := max(2*cap(rb.x), 64*rb.d, need)
		if lim := rb.maxRows * rb.d; c > lim {
			c = lim
		}
		if err := rb.charge(int64(c-cap(rb.x)) * 8); err != nil {
			return nil, err
		}
		x := make([]float64, len(rb.x), c)
		copy(x, rb.x)
		rb.x = x
	}
	rb.x = rb.x[:need]
	rb.n++
	return rb.x[need-rb.d : need], nil
}

// nullPolicy is how a missing or non-finite value of a request's column
// reads (--nulls): fill[j] for column j, or an error when fill is nil.
type nullPolicy struct {
	name string    // error, mean or zero
	fill []float64 // nil: error
}

// newNullPolicy returns the policy name ("": as the model's training
// data) for the request columns inputs of the model info. Under mean,
// each column reads the training mean of the feature of its name (a
// time column's is its days), or 0 when no feature has its name, as
// falkon-ooc predict fills them.
func newNullPolicy(name string, info *Info, inputs []string) (nullPolicy, error) {
	if name == "" {
		name = "error"
		if info.Nulls == "mean" {
			name = "mean"
		}
	}
	switch name {
	case "error":
		return nullPolicy{name: "error"}, nil
	case "zero":
		return nullPolicy{name: name, fill: make([]float64, len(inputs))}, nil
	case "mean":
		if info.FeatureMean == nil {
			return nullPolicy{}, fmt.Errorf("nulls mean: the model was fitted without standardisation and keeps no feature means; use zero or error")
		}
		at := make(map[string]int, len(info.Features))
		for j, f := range info.Features {
			at[f] = j
		}
		fill := make([]float64, len(inputs))
		for k, c := range inputs {
			if j, ok := at[c]; ok {
				fill[k] = info.FeatureMean[j]
			}
		}
		return nullPolicy{name: name, fill: fill}, nil
	}
	return nullPolicy{}, fmt.Errorf("nulls must be error, mean or zero, not %q (a server answers every row, so there is no drop)", name)
}

// value returns v, or the fill of feature j for a NaN or infinite v.
func (p *nullPolicy) value(v float64, row, j int, features []string) (float64, error) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		return v, nil
	}
	if p.fill == nil {
		return 0, badRow(row, features[j], "value %v is not a finite number (the server runs with --nulls error; mean or zero read it as a value)", v)
	}
	return p.fill[j], nil
}

// null returns the fill of feature j for a missing value.
func (p *nullPolicy) null(row, j int, features []string) (float64, error) {
	if p.fill == nil {
		return 0, badRow(row, features[j], "null (the server runs with --nulls error; mean or zero read it as a value)")
	}
	return p.fill[j], nil
}
