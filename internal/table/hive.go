package table

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/internal/textlimit"
)

// HiveKey is one key=value element of a file's directory path: a column
// of a Hive-partitioned data set, constant within the file
// (sales/year=2024/month=3/part-0.parquet has the keys year and month).
type HiveKey struct {
	Key   string
	Value string // %XX escapes undone, as Hive writes special characters
	// Number is Value read as ParseNumber reads a text field, when
	// IsNumber: a finite number.
	Number   float64
	IsNumber bool
}

// HiveKeys returns the key=value elements of the directory part of path,
// outermost first. An element with an empty key or a second "=" is not a
// key.
func HiveKeys(path string) []HiveKey {
	var keys []HiveKey
	for _, e := range strings.Split(filepath.ToSlash(filepath.Dir(path)), "/") {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" || strings.Contains(v, "=") {
			continue
		}
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		hk := HiveKey{Key: k, Value: v}
		if x, err := ParseNumber(v); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
			hk.Number, hk.IsNumber = x, true
		}
		keys = append(keys, hk)
	}
	return keys
}

// Columns returns the columns of the file at path: its own, names (from
// its header or schema), then the Hive keys of its path (HiveKeys), whose
// values come from the directory names. A key that is also a column of
// the file, and a name that appears twice, are errors naming the file:
// chunkstore/ingest and tabular read a file's columns only through it.
func Columns(path string, names []string) (all []string, keys []HiveKey, err error) {
	keys = HiveKeys(path)
	all = make([]string, 0, len(names)+len(keys))
	all = append(all, names...)
	seen := make(map[string]bool, len(names)+len(keys))
	for _, n := range names {
		if seen[n] {
			return nil, nil, fmt.Errorf("%s: column name %q appears twice", path, textlimit.Clip(n))
		}
		seen[n] = true
	}
	for _, k := range keys {
		if seen[k.Key] {
			if len(all) > len(names) && containsKey(keys, k.Key, len(all)-len(names)) {
				return nil, nil, fmt.Errorf("%s: the partition key %q appears twice in its path", path, textlimit.Clip(k.Key))
			}
			return nil, nil, fmt.Errorf("%s: %q is both a column of the file and a partition key (%s=%s) in its path", path, textlimit.Clip(k.Key), textlimit.Clip(k.Key), textlimit.Clip(k.Value))
		}
		seen[k.Key] = true
		all = append(all, k.Key)
	}
	return all, keys, nil
}

// containsKey reports whether one of the first n keys is named key.
func containsKey(keys []HiveKey, key string, n int) bool {
	for _, k := range keys[:n] {
		if k.Key == key {
			return true
		}
	}
	return false
}
