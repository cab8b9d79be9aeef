package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// selectColumns returns a source whose features are the named features
// and whose targets are the named targets when the store has all of them
// (withTargets), by name (chunkstore's Reader.Select). A missing feature
// is an error naming it.
func selectColumns(r *chunkstore.Reader, path string, features, targets []string) (src stream.Source, withTargets bool, err error) {
	have := append(r.FeatureNames(), r.TargetNames()...)
	withTargets = true
	for _, t := range targets {
		withTargets = withTargets && slices.Contains(have, t)
	}
	if !withTargets {
		targets = nil
	}
	v, err := r.Select(features, targets)
	if mc := (*chunkstore.MissingColumnsError)(nil); errors.As(err, &mc) {
		return nil, false, fmt.Errorf("%s: the model's feature column(s) %q are missing; its columns are %q", path, mc.Missing, mc.Have)
	}
	if err != nil {
		return nil, false, err
	}
	return v, withTargets, nil
}

// inputOpts are the options of reading Parquet/CSV input for validation
// (fit --val).
type inputOpts struct {
	tmpDir   string
	noHeader bool
	workers  int
	// weight names the training store's weight column: read as the
	// weights when the files have it (with the targets), so that the
	// validation is weighted as the training is.
	weight string
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
		if o.weight != "" && slices.Contains(names, o.weight) {
			icfg.Weight = o.weight
		}
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
	res, err := ingest.Run(ctx, args, icfg)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	noteSkipped(pr.w, res.Skipped)
	return icfg.Out, cleanup, nil
}
