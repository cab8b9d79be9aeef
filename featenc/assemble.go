package featenc

import (
	"fmt"
	"slices"
)

// Assembler builds a model's feature rows from the input columns a file
// holds: the model's numeric features as they are, and the features of
// encoded columns expanded from their raw values. Build it with
// NewAssembler; it is not safe for concurrent use (it keeps scratch
// buffers).
type Assembler struct {
	enc *Encoder
	// Columns are the input columns to read, in order: the model's
	// features that no encoding makes, then the source of each encoded
	// column the model uses.
	Columns []string
	// Categorical are the columns among Columns read as level codes
	// (Code, NullCode for NULL) rather than numbers.
	Categorical []string

	d       int
	numeric []int   // per Columns entry before the encoded ones: the feature
	src     []int   // per encoded column used: its index in Columns
	spec    []int   // per encoded column used: its index in the Spec
	at      [][]int // per encoded column used, per feature: its index in the model's features, or -1
	scratch [][][]float64
	unseen  []int64
}

// NewAssembler returns the Assembler of a model whose features are
// features (in order) and whose encoding is spec (nil: none).
func NewAssembler(spec *Spec, features []string) (*Assembler, error) {
	var enc *Encoder
	if spec != nil {
		var err error
		if enc, err = NewEncoder(spec); err != nil {
			return nil, err
		}
	}
	a := &Assembler{enc: enc, d: len(features)}
	owner := map[string][2]int{} // feature -> encoded column, position
	if spec != nil {
		for c, col := range spec.Columns {
			for k, f := range col.Features {
				owner[f] = [2]int{c, k}
			}
		}
	}
	used := map[int]int{} // spec column -> index among the used ones
	for j, f := range features {
		o, ok := owner[f]
		if !ok {
			a.numeric = append(a.numeric, j)
			a.Columns = append(a.Columns, f)
			continue
		}
		u, seen := used[o[0]]
		if !seen {
			u = len(a.spec)
			used[o[0]] = u
			a.spec = append(a.spec, o[0])
			at := make([]int, len(spec.Columns[o[0]].Features))
			for k := range at {
				at[k] = -1
			}
			a.at = append(a.at, at)
		}
		a.at[u][o[1]] = j
	}
	for _, c := range a.spec {
		col := spec.Columns[c]
		if slices.Contains(a.Columns, col.Source) {
			return nil, fmt.Errorf("encoding: column %q is both a feature and the source of encoded features", col.Source)
		}
		a.src = append(a.src, len(a.Columns))
		a.Columns = append(a.Columns, col.Source)
		if col.Kind == OneHot || col.Kind == Target {
			a.Categorical = append(a.Categorical, col.Source)
		}
	}
	a.scratch = make([][][]float64, len(a.spec))
	a.unseen = make([]int64, len(a.spec))
	return a, nil
}

// Encoded reports whether the model has encoded features.
func (a *Assembler) Encoded() bool { return len(a.spec) > 0 }

// Assemble writes rows feature rows into x (rows × D, row-major) from
// cols, the input columns in the order of Columns (each of at least rows
// values), and counts the rows whose level the encoding does not know
// (Unseen).
func (a *Assembler) Assemble(x []float64, cols [][]float64, rows int) {
	d := a.d
	for k, j := range a.numeric {
		for i, v := range cols[k][:rows] {
			x[i*d+j] = v
		}
	}
	for u, c := range a.spec {
		w := a.enc.Width(c)
		sc := a.scratch[u]
		if len(sc) != w || cap(sc[0]) < rows {
			sc = make([][]float64, w)
			for k := range sc {
				sc[k] = make([]float64, rows)
			}
			a.scratch[u] = sc
		}
		for k := range sc {
			sc[k] = sc[k][:rows]
		}
		a.unseen[u] += int64(a.enc.Expand(c, cols[a.src[u]][:rows], sc))
		for k, j := range a.at[u] {
			if j < 0 {
				continue
			}
			for i, v := range sc[k] {
				x[i*d+j] = v
			}
		}
	}
}

// Unseen is a count of values whose level a model's encoding does not
// know.
type Unseen struct {
	Column string // the input column
	Count  int64
	// To names the feature they count as ("column=(other)"; a
	// target-encoded column's: "column:target_mean 3.5, the training
	// mean"), or "" when the column has none (all its features 0).
	To string
}

// Unseen returns, per encoded categorical column with any, the values
// assembled so far whose level was not among the encoding's.
func (a *Assembler) Unseen() []Unseen {
	var out []Unseen
	for u, c := range a.spec {
		if a.unseen[u] == 0 {
			continue
		}
		col := a.enc.spec.Columns[c]
		to := ""
		switch {
		case col.Kind == Target:
			to = fmt.Sprintf("%s %.6g, the training mean", col.Features[0], col.Prior)
		case col.Other:
			to = col.Source + "=" + OtherLevel
		}
		out = append(out, Unseen{Column: col.Source, Count: a.unseen[u], To: to})
	}
	return out
}

// ResetUnseen sets the counts of Unseen back to 0, so that a caller
// assembling one request at a time counts each request's unseen levels
// on their own.
func (a *Assembler) ResetUnseen() { clear(a.unseen) }
