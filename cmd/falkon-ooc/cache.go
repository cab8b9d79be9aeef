package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
)

// inputOptions are the flags of fit and tune that say how Parquet/CSV
// inputs become the training store.
type inputOptions struct {
	target, features, exclude, nulls, cache, weight string
	tables                                          cliflags.Tables
}

// cacheKey identifies a training store: the inputs (absolute path, size,
// modification time of every file) and what was taken from them.
type cacheKey struct {
	Files    []cacheFile `json:"files"`
	Targets  []string    `json:"targets"`
	Features []string    `json:"features"`
	Exclude  []string    `json:"exclude"`
	Nulls    string      `json:"nulls"`
	Weight   string      `json:"weight,omitempty"`
	// The encoding of categorical and time columns (cliflags.Tables).
	Categorical    []string `json:"categorical,omitempty"`
	TimeFeatures   []string `json:"time_features,omitempty"`
	MaxLevels      int      `json:"max_levels,omitempty"`
	AboveMaxLevels string   `json:"above_max_levels,omitempty"`
}

type cacheFile struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

// trainingStore returns a chunk store holding the Parquet/CSV inputs
// (files, directories, globs), for fit and tune. The store is kept: beside
// the model (MODEL.store, its key in MODEL.store.key) or under --cache DIR
// (named by its key), and reused while the inputs are unchanged: same
// paths, sizes and modification times, same target and columns. Else they
// are ingested again, with the ingest's progress. It reports on stderr
// which it did.
func trainingStore(ctx context.Context, o *inputOptions, model string, args []string, workers int, pr *progress) (string, error) {
	files, err := ingest.Files(args)
	if err != nil {
		return "", err
	}
	if o.target == "" {
		return "", usagef("--target COL is required with Parquet or CSV inputs (a STORE names its targets)")
	}
	switch o.nulls {
	case "", "error", "drop", "mean":
	default:
		return "", usagef("--nulls must be error, drop or mean, not %q", o.nulls)
	}
	var tc ingest.Config
	if err := o.tables.Apply(&tc); err != nil {
		return "", err
	}
	key := cacheKey{Targets: cliflags.SplitList(o.target), Features: cliflags.SplitList(o.features), Exclude: cliflags.SplitList(o.exclude), Nulls: o.nulls,
		Weight: strings.TrimSpace(o.weight), Categorical: tc.Categorical, TimeFeatures: tc.TimeFeatures, MaxLevels: tc.MaxLevels}
	if tc.AboveMaxLevels != "target" { // the default, absent from keys made before the flag
		key.AboveMaxLevels = tc.AboveMaxLevels
	}
	if tc.MaxLevels == ingest.DefaultMaxLevels {
		key.MaxLevels = 0
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", err
		}
		key.Files = append(key.Files, cacheFile{Path: abs, Size: st.Size(), ModTime: st.ModTime().UnixNano()})
	}
	kb, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(kb)
	hash := hex.EncodeToString(sum[:8])
	store, keyFile := model+".store", model+".store.key"
	if o.cache != "" {
		if err := os.MkdirAll(o.cache, 0o755); err != nil {
			return "", fmt.Errorf("--cache: %w", err)
		}
		store, keyFile = filepath.Join(o.cache, hash+".store"), ""
	}
	if reusable(store, keyFile, hash) {
		pr.printf("ingest: reusing %s: the inputs are unchanged (%s)", store, plural(len(files), "file"))
		return store, nil
	}
	if keyFile != "" {
		// A stale store beside the model: replaced.
		if err := os.Remove(keyFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, err := os.Stat(filepath.Join(store, chunkstore.ManifestName)); err == nil {
			if err := os.RemoveAll(store); err != nil {
				return "", err
			}
		} else if _, err := os.Stat(store); err == nil {
			return "", fmt.Errorf("%s exists and is not a store made by fit: move it away", store)
		}
	}
	pr.printf("ingest: %d input files into %s", len(files), store)
	cfg := ingest.Config{Out: store, Targets: key.Targets, Features: key.Features, Exclude: key.Exclude, Nulls: o.nulls, Weight: key.Weight,
		Workers: workers, Categorical: tc.Categorical, TimeFeatures: tc.TimeFeatures, MaxLevels: tc.MaxLevels, AboveMaxLevels: tc.AboveMaxLevels}
	cfg.Progress = func(p ingest.Progress) { pr.update("ingest", progressLine(p), false) }
	res, err := ingest.Run(ctx, args, cfg)
	if err != nil {
		return "", nullsHint(err)
	}
	pr.update("ingest", fmt.Sprintf("%d rows, %s in %.1fs; features %s%s", res.Rows, mb(res.BytesIn), res.Seconds, featureList(res.Features, res.Columns), nullsNote(res)), true)
	noteSkipped(pr.w, res.Skipped)
	if keyFile != "" {
		if err := writeFileAtomic(keyFile, []byte(hash+"\n")); err != nil {
			return "", err
		}
	}
	return store, nil
}

// reusable reports whether store is a complete store for key hash.
func reusable(store, keyFile, hash string) bool {
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil || strings.TrimSpace(string(b)) != hash {
			return false
		}
	}
	r, err := chunkstore.Open(store)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// plural writes n and the noun, with an s unless n is 1: "1 file", "3 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
