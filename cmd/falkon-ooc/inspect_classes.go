package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// targetClasses is, in inspect's --json document, a classification
// target's classes: what 'fit --task auto' would fit as binary or
// multiclass, with each class's rows.
type targetClasses struct {
	Target  string       `json:"target"`
	Task    ooc.Task     `json:"task"`
	Classes []classCount `json:"classes"`
}

// classCount is one class of a target: its name (the label, or the
// value as fit names it), its stored value, its rows and, in a store
// with row weights, their weights' sum.
type classCount struct {
	Name   string   `json:"name"`
	Value  float64  `json:"value"`
	Rows   int64    `json:"rows"`
	Weight *float64 `json:"weight,omitempty"`
}

// countClasses counts the rows of each class of a store's target when
// the store has one target with the values of a classification task
// (ooc.AutoTask): one read of the target column (and of the weights),
// not of the features. Nil for a regression target.
func countClasses(ctx context.Context, r *chunkstore.Reader) (*targetClasses, error) {
	m := r.Manifest()
	if len(m.Targets) != 1 {
		return nil, nil
	}
	col := m.Targets[0]
	task := ooc.AutoTask(1, col.Distinct)
	if task != ooc.TaskBinary && task != ooc.TaskMulticlass {
		return nil, nil
	}
	tc := &targetClasses{Target: col.Name, Task: task}
	weighted := r.WeightColumn() != ""
	wsum := make([]float64, len(col.Distinct))
	for _, v := range col.Distinct {
		tc.Classes = append(tc.Classes, classCount{Name: className(col, v), Value: v})
	}
	var y, w []float64
	dst := [][]float64{nil}
	for i := range r.NumChunks() {
		n := r.ChunkRows(i)
		y = slices.Grow(y[:0], n)[:n]
		dst[0] = y
		if err := r.ReadColumns(ctx, i, []int{len(m.Features)}, dst); err != nil {
			return nil, err
		}
		if weighted {
			w = slices.Grow(w[:0], n)[:n]
			if err := r.ReadWeights(ctx, i, w); err != nil {
				return nil, err
			}
		}
		for j, v := range y {
			k, ok := slices.BinarySearch(col.Distinct, v)
			if !ok {
				return nil, fmt.Errorf("chunk %d, row %d: target %q holds %v, not one of the manifest's distinct values %v", i, j, col.Name, v, col.Distinct)
			}
			tc.Classes[k].Rows++
			if weighted {
				wsum[k] += w[j]
			}
		}
	}
	if weighted {
		for k := range tc.Classes {
			tc.Classes[k].Weight = &wsum[k]
		}
	}
	return tc, nil
}

// className is the name fit gives the class of stored value v: the
// label of a string target, false/true for a bool, else the number.
func className(c chunkstore.Column, v float64) string {
	if k := int(v); c.Labels != nil && float64(k) == v && k >= 0 && k < len(c.Labels) {
		return c.Labels[k]
	}
	if c.Type == "bool" {
		return strconv.FormatBool(v != 0)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// printClasses prints a classification target's classes: name, rows,
// share of the rows (and weights with their share).
func printClasses(w io.Writer, tc *targetClasses) {
	var n int64
	var wt float64
	weighted := false
	for _, c := range tc.Classes {
		n += c.Rows
		if c.Weight != nil {
			weighted = true
			wt += *c.Weight
		}
	}
	fmt.Fprintf(w, "target %q: %d classes (fit --task auto: %s)\n", tc.Target, len(tc.Classes), tc.Task)
	head := []string{"class", "rows", "share"}
	if weighted {
		head = append(head, "weight", "share")
	}
	rows := [][]string{head}
	for _, c := range tc.Classes {
		r := []string{c.Name, group(c.Rows), percent(float64(c.Rows), float64(n))}
		if weighted {
			r = append(r, num(*c.Weight), percent(*c.Weight, wt))
		}
		rows = append(rows, r)
	}
	printTable(w, rows, 1)
}

// percent is part/whole as a percentage with one decimal, "-" for no
// whole.
func percent(part, whole float64) string {
	if !(whole > 0) || math.IsInf(whole, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 1, 64) + " %"
}
