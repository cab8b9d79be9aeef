package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// columnsOf describes a store's columns for ooc.Fit from its manifest, so
// that the fit needs no pass for statistics.
func columnsOf(r *chunkstore.Reader) *ooc.Columns {
	m := r.Manifest()
	c := &ooc.Columns{}
	for _, f := range m.Features {
		c.Features = append(c.Features, f.Name)
		c.FeatureMean = append(c.FeatureMean, f.Mean)
		c.FeatureStd = append(c.FeatureStd, f.Std)
	}
	for _, t := range m.Targets {
		c.Targets = append(c.Targets, t.Name)
		c.TargetDistinct = append(c.TargetDistinct, t.Distinct)
	}
	return c
}

// selected is a stream.Source over chosen columns of a store, by index
// over the store's features then targets: it lets predict match the
// model's features by name whatever the store's column order.
type selected struct {
	r        *chunkstore.Reader
	feat, tg []int
	pool     sync.Pool // *[][]float64 column scratch
}

// selectColumns returns a source whose features are the named features
// and whose targets are the named targets when the store has all of them
// (withTargets), looked up by name. A missing feature is an error naming
// it.
func selectColumns(r *chunkstore.Reader, path string, features, targets []string) (src stream.Source, withTargets bool, err error) {
	names := append(r.FeatureNames(), r.TargetNames()...)
	index := func(name string) int { return slices.Index(names, name) }
	s := &selected{r: r}
	var missing []string
	for _, f := range features {
		i := index(f)
		if i < 0 {
			missing = append(missing, f)
		}
		s.feat = append(s.feat, i)
	}
	if len(missing) > 0 {
		return nil, false, fmt.Errorf("%s: the model's feature column(s) %q are missing; its columns are %q", path, missing, names)
	}
	withTargets = true
	for _, t := range targets {
		i := index(t)
		if i < 0 {
			withTargets = false
			break
		}
		s.tg = append(s.tg, i)
	}
	if !withTargets {
		s.tg = nil
	}
	if slices.Equal(features, r.FeatureNames()) && (!withTargets || slices.Equal(targets, r.TargetNames())) {
		// The store's own layout: read it directly.
		if withTargets || r.NumTargets() == 0 {
			return r, withTargets, nil
		}
	}
	return s, withTargets, nil
}

func (s *selected) NumChunks() int      { return s.r.NumChunks() }
func (s *selected) Dim() int            { return len(s.feat) }
func (s *selected) NumTargets() int     { return len(s.tg) }
func (s *selected) ChunkRows(i int) int { return s.r.ChunkRows(i) }

func (s *selected) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	rows := s.r.ChunkRows(i)
	cols := s.feat
	if y != nil {
		cols = append(slices.Clip(s.feat), s.tg...)
	}
	p, _ := s.pool.Get().(*[][]float64)
	if p == nil {
		p = new([][]float64)
	}
	defer s.pool.Put(p)
	buf := *p
	for len(buf) < len(cols) {
		buf = append(buf, nil)
	}
	for j := range cols {
		buf[j] = slices.Grow(buf[j][:0], rows)[:rows]
	}
	*p = buf
	if err := s.r.ReadColumns(ctx, i, cols, buf[:len(cols)]); err != nil {
		return err
	}
	d := len(s.feat)
	for j := range d {
		col := buf[j]
		for r := range rows {
			x[r*d+j] = col[r]
		}
	}
	if y != nil {
		k := len(s.tg)
		for j := range k {
			col := buf[d+j]
			for r := range rows {
				y[r*k+j] = col[r]
			}
		}
	}
	return nil
}

// inputOpts are the options of reading Parquet/CSV input for validation
// (fit --val).
type inputOpts struct {
	tmpDir   string
	noHeader bool
	workers  int
}

// openInput returns a chunk store holding INPUT: the input itself when it
// is one store, else a temporary store ingested from the files, with the
// given features (checked first, naming any that are missing) and the
// targets when the files have them all. cleanup removes the temporary
// store.
func openInput(ctx context.Context, o inputOpts, features, targets []string, args []string, pr *progress) (path string, cleanup func(), err error) {
	if len(args) == 1 {
		if _, err := os.Stat(filepath.Join(args[0], chunkstore.ManifestName)); err == nil {
			return args[0], func() {}, nil
		}
	}
	icfg := ingest.Config{NoHeader: o.noHeader, Workers: o.workers}
	names, err := ingest.ColumnNames(args, icfg)
	if err != nil {
		return "", nil, err
	}
	var missing []string
	for _, f := range features {
		if !slices.Contains(names, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return "", nil, fmt.Errorf("%s: the model's feature column(s) %q are missing; its columns are %q", args[0], missing, names)
	}
	icfg.Features = features
	hasTargets := true
	for _, t := range targets {
		hasTargets = hasTargets && slices.Contains(names, t)
	}
	if hasTargets {
		icfg.Targets = targets
	}
	dir, err := os.MkdirTemp(o.tmpDir, "falkon-ooc-input-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	icfg.Out = filepath.Join(dir, "store")
	icfg.Progress = func(p ingest.Progress) {
		pr.update("read input", fmt.Sprintf("%d rows", p.Rows), false)
	}
	if _, err := ingest.Run(ctx, args, icfg); err != nil {
		cleanup()
		return "", nil, err
	}
	return icfg.Out, cleanup, nil
}
