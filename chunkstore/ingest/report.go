package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// idExactLimit bounds the values kept to check that a column named like
// an identifier holds distinct values: beyond it, distinct among the first
// idExactLimit values counts as distinct (8 bytes and map overhead each:
// about 40 MB at the limit).
const idExactLimit = 1 << 20

// idMinRows is the fewest rows for which a strictly monotone integer
// column counts as an identifier without being named like one.
const idMinRows = 100

// autoCheck tracks, for a column chosen as a feature by default, whether it
// is constant or looks like a row identifier. Batches are summarised by
// their reader (colSum, in parallel) and merged here in input order.
type autoCheck struct {
	name    string
	named   bool // named like an identifier: id, *_id, *Id, *ID
	boolean bool // bool columns are never identifiers

	n         int64
	first     float64
	last      float64
	min, max  float64
	inc, dec  bool // strictly increasing, decreasing so far
	integral  bool
	seen      map[float64]struct{} // named columns: values so far, up to idExactLimit
	dup       bool                 // named columns: a repeated value seen
	truncated bool                 // seen reached idExactLimit
}

// colSum summarises one column of one batch.
type colSum struct {
	n           int
	first, last float64
	min, max    float64
	inc, dec    bool
	integral    bool
}

// summarise computes the summary of vals (len > 0).
func summarise(vals []float64) colSum {
	s := colSum{n: len(vals), first: vals[0], last: vals[len(vals)-1], min: vals[0], max: vals[0], inc: true, dec: true, integral: true}
	prev := vals[0]
	for i, v := range vals {
		if i > 0 {
			s.inc = s.inc && v > prev
			s.dec = s.dec && v < prev
		}
		s.min = min(s.min, v)
		s.max = max(s.max, v)
		s.integral = s.integral && v == math.Trunc(v)
		prev = v
	}
	return s
}

// add merges the summary of the next batch in input order.
func (c *autoCheck) add(s colSum, vals []float64) {
	if s.n == 0 {
		return
	}
	if c.n == 0 {
		c.first, c.min, c.max, c.inc, c.dec, c.integral = s.first, s.min, s.max, true, true, true
	} else {
		c.inc = c.inc && s.first > c.last
		c.dec = c.dec && s.first < c.last
	}
	c.inc = c.inc && s.inc
	c.dec = c.dec && s.dec
	c.integral = c.integral && s.integral
	c.min, c.max, c.last = min(c.min, s.min), max(c.max, s.max), s.last
	c.n += int64(s.n)
	if c.named && !c.dup && !c.truncated && c.integral {
		if c.seen == nil {
			c.seen = make(map[float64]struct{}, min(len(vals)*4, idExactLimit))
		}
		for _, v := range vals {
			if len(c.seen) == idExactLimit {
				c.truncated = true
				break
			}
			if _, ok := c.seen[v]; ok {
				c.dup = true
				break
			}
			c.seen[v] = struct{}{}
		}
		if c.dup || c.truncated {
			c.seen = nil
		}
	}
}

// verdict returns the skip reason and its note, or "" to keep the column.
func (c *autoCheck) verdict() (reason, note string) {
	if c.n >= 2 && c.min == c.max {
		return chunkstore.SkipConstant, fmt.Sprintf("every value is %s; dropped", fmtNum(c.min))
	}
	if c.n < 3 || c.boolean || !c.integral {
		return "", ""
	}
	order := ""
	switch {
	case c.n < idMinRows:
		// Few rows: a monotone column may be a feature by chance; only
		// the name rule applies.
	case c.inc:
		order = "increasing"
	case c.dec:
		order = "decreasing"
	}
	switch {
	case order != "":
		return chunkstore.SkipIdentifier, fmt.Sprintf("looks like a row identifier: integer, all %d values distinct, %s; name it in --features to keep it", c.n, order)
	case c.named && !c.dup && !c.truncated:
		return chunkstore.SkipIdentifier, fmt.Sprintf("looks like a row identifier: named like one, integer, all %d values distinct; name it in --features to keep it", c.n)
	case c.named && !c.dup:
		return chunkstore.SkipIdentifier, fmt.Sprintf("looks like a row identifier: named like one, integer, the first %d values distinct; name it in --features to keep it", idExactLimit)
	}
	return "", ""
}

func fmtNum(v float64) string { return fmt.Sprint(v) }

// idName reports whether a column name reads like a row identifier: "id",
// "ID", or ending in "_id", "-id", " id", or camel-case "Id"/"ID" after a
// lower-case letter ("userId", "rowID").
func idName(name string) bool {
	lower := strings.ToLower(name)
	if lower == "id" || strings.HasSuffix(lower, "_id") || strings.HasSuffix(lower, "-id") || strings.HasSuffix(lower, " id") {
		return true
	}
	r := []rune(name)
	if n := len(r); n >= 3 && (string(r[n-2:]) == "Id" || string(r[n-2:]) == "ID") && unicode.IsLower(r[n-3]) {
		return true
	}
	return false
}

// skipReason is the reason a column of class c is not a default feature.
func skipReason(c class) string {
	switch c {
	case classString:
		return chunkstore.SkipString
	case classNested:
		return chunkstore.SkipNested
	case classTemporal:
		return chunkstore.SkipDate
	default:
		return chunkstore.SkipType
	}
}

// skipNote explains skipReason.
func skipNote(reason string) string {
	switch reason {
	case chunkstore.SkipString:
		return "binary values are features (categorical) only when named in --features"
	case chunkstore.SkipNested:
		return "nested columns cannot be stored"
	case chunkstore.SkipDate:
		return "dates and timestamps are stored only when named in --features or --target"
	case chunkstore.SkipType:
		return "this type cannot be stored"
	case chunkstore.SkipExcluded:
		return "named in --exclude"
	case chunkstore.SkipPartition:
		return "a partition key whose values are not all numbers"
	case chunkstore.SkipNotNamed:
		return "--features does not name it"
	}
	return ""
}

// decide turns the checks of the default features into skips, after the
// pass. It returns the store columns (indices over features then targets)
// to keep, and an error when no feature is left.
func (s *session) decide() ([]int, error) {
	var keep []int
	var dropped []string
	for j := range s.names {
		c := s.checks[j]
		if c == nil {
			if note := s.levelsIdentifier(j); note != "" {
				r := &s.report[s.reportAt[j]]
				r.Role, r.Reason, r.Note = chunkstore.RoleSkipped, chunkstore.SkipIdentifier, note
				dropped = append(dropped, fmt.Sprintf("%q (%s)", clip(s.names[j]), chunkstore.SkipIdentifier))
				continue
			}
			keep = append(keep, j)
			continue
		}
		reason, note := c.verdict()
		if reason == "" {
			keep = append(keep, j)
			continue
		}
		r := &s.report[s.reportAt[j]]
		r.Role, r.Reason, r.Note = chunkstore.RoleSkipped, reason, note
		dropped = append(dropped, fmt.Sprintf("%q (%s)", clip(s.names[j]), reason))
	}
	for _, j := range keep {
		if j < s.nfeat {
			return keep, nil
		}
	}
	return nil, fmt.Errorf("no feature columns left: %s; name columns in --features to keep them", strings.Join(dropped, ", "))
}

// install moves the first pass's store at tmp to s.cfg.Out, keeping only
// the columns keep (indices over features then targets, features first):
// a rename when it keeps them all and changes no value, else a copy, chunk by chunk, into a new
// store (stored bytes are re-encoded; statistics recomputed by the
// writer).
//
// fill, when not nil, holds the value of each feature whose bad values
// (Nulls "mean") the mask store at maskPath marks; the copy puts it there.
func (s *session) install(ctx context.Context, tmp string, keep []int, remap [][]float64, fill []float64, maskPath string, opt chunkstore.Options) error {
	if len(keep) == len(s.names) && !slices.ContainsFunc(remap, func(r []float64) bool { return r != nil }) && fill == nil && s.enc == nil {
		return s.place(tmp)
	}
	r, err := chunkstore.Open(tmp)
	if err != nil {
		return fmt.Errorf("reopen the first pass's store: %w", err)
	}
	defer r.Close()
	var fl *filler
	if fill != nil {
		if fl, err = newFiller(maskPath, keep, fill, r.Manifest().ChunkRows); err != nil {
			return err
		}
		defer fl.Close()
	}
	var feats, targs []chunkstore.ColumnSpec
	m := r.Manifest()
	for _, j := range keep {
		switch {
		case j < s.nfeat && s.encCol[j] >= 0:
			col := s.spec.Columns[s.encCol[j]]
			for _, f := range col.Features {
				feats = append(feats, chunkstore.ColumnSpec{Name: f, Type: storedType(&col)})
			}
		case j < s.nfeat:
			feats = append(feats, chunkstore.ColumnSpec{Name: m.Features[j].Name, Type: m.Features[j].Type})
		case s.isWeight(j):
			targs = append(targs, chunkstore.ColumnSpec{Name: m.Weight.Name, Type: m.Weight.Type})
		default:
			c := m.Targets[j-s.nfeat]
			targs = append(targs, chunkstore.ColumnSpec{Name: c.Name, Type: c.Type})
		}
	}
	opt.InputColumns = s.report
	// The copy is built beside the first pass's store, in the same
	// temporary directory, then placed like it: the caller holds the lock
	// on s.cfg.Out.
	kept := tmp + ".kept"
	w, err := chunkstore.Create(kept, feats, targs, opt)
	if err != nil {
		return err
	}
	for _, c := range m.Targets {
		if c.Labels != nil {
			if err := w.SetLabels(c.Name, c.Labels); err != nil {
				return errors.Join(err, w.Abort())
			}
		}
	}
	cols := make([][]float64, len(keep))
	buf := make([]float64, len(keep)*m.ChunkRows)
	// out holds the stored columns: the read ones, with each categorical
	// one replaced by its one-hot features (in ebuf).
	out := make([][]float64, 0, len(feats)+len(targs))
	wide := 0
	for _, j := range keep {
		if c := s.encCol[j]; j < s.nfeat && c >= 0 {
			wide += s.enc.Width(c)
		}
	}
	ebuf := make([]float64, wide*m.ChunkRows)
	for i := range r.NumChunks() {
		n := r.ChunkRows(i)
		for k := range cols {
			cols[k] = buf[k*m.ChunkRows : k*m.ChunkRows+n]
		}
		out, e := out[:0], 0
		for k, j := range keep {
			if c := s.encCol[j]; j < s.nfeat && c >= 0 {
				for range s.enc.Width(c) {
					out = append(out, ebuf[e*m.ChunkRows:e*m.ChunkRows+n])
					e++
				}
				continue
			}
			out = append(out, cols[k])
		}
		if err := r.ReadColumns(ctx, i, keep, cols); err != nil {
			return errors.Join(err, w.Abort())
		}
		if fl != nil {
			if err := fl.apply(ctx, i, cols); err != nil {
				return errors.Join(err, w.Abort())
			}
		}
		at := 0
		for k, j := range keep {
			if m := remap[j]; m != nil {
				for i, c := range cols[k] {
					cols[k][i] = m[int(c)]
				}
			}
			if c := s.encCol[j]; j < s.nfeat && c >= 0 {
				width := s.enc.Width(c)
				s.expandStored(c, cols[k], int64(i)*int64(m.ChunkRows), out[at:at+width])
				at += width - 1
			}
			at++
		}
		if err := w.Append(out); err != nil {
			return errors.Join(err, w.Abort())
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return s.place(kept)
}

// place moves the finished store at built to s.cfg.Out: never over
// anything that exists there, unless Force and it is a store.
func (s *session) place(built string) error {
	install := chunkstore.Install
	if s.cfg.Force {
		install = chunkstore.Replace
	}
	err := install(built, s.cfg.Out)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; remove it or choose another --out", s.cfg.Out)
	}
	return err
}
