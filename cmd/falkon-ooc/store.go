package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
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
