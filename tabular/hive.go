package tabular

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// hiveFile adds to the batches of a file's own reader the chosen columns
// whose values come from the file's directory names (Hive partition keys,
// table.HiveKeys), as chunkstore/ingest adds them: a key whose value is a
// number is that number in every row; a kept key is its text.
type hiveFile struct {
	fileReader
	num  map[int]float64 // batch column → its value
	keep map[int]string  // Keep column → its value
	mem  memory.Allocator
}

// fromPath returns the file's columns (its own, names, then the keys of
// its path, as table.Columns lists them) and, when a chosen or kept column
// is a key, a hiveFile to wrap the file's reader in; else nil. It checks
// the columns with choose.
func (r *Reader) fromPath(path string, names []string) (all []string, h *hiveFile, err error) {
	all, keys, err := table.Columns(path, names)
	if err != nil {
		return nil, nil, err
	}
	if err := r.choose(path, all); err != nil {
		return nil, nil, err
	}
	key := func(c string) (table.HiveKey, bool) {
		i := slices.Index(all, c)
		if i < len(names) {
			return table.HiveKey{}, false
		}
		return keys[i-len(names)], true
	}
	nnum := len(r.opt.Numeric)
	for j, c := range r.columns() {
		k, ok := key(c)
		if !ok {
			continue
		}
		if h == nil {
			h = &hiveFile{num: map[int]float64{}, keep: map[int]string{}, mem: r.mem}
		}
		switch {
		case k.IsNumber:
			h.num[j] = k.Number
		case j < nnum:
			return nil, nil, fmt.Errorf("%s: column %q comes from the folder name %s=%s in its path, which is not a number", path, clip(c), clip(k.Key), clip(k.Value))
		default:
			h.num[j] = math.NaN() // an Optional column: not scored
		}
	}
	for j, c := range r.opt.Keep {
		k, ok := key(c)
		if !ok {
			continue
		}
		if h == nil {
			h = &hiveFile{num: map[int]float64{}, keep: map[int]string{}, mem: r.mem}
		}
		h.keep[j] = k.Value
	}
	return all, h, nil
}

// ownColumn reports whether the file's reader reads column c itself: it
// is one of the file's own columns, names, not a key of its path.
func ownColumn(names []string, c string) bool { return slices.Contains(names, c) }

func (h *hiveFile) read(ctx context.Context, n int, cols [][]float64, bads []bad) ([]arrow.Array, int, error) {
	keep, rows, err := h.fileReader.read(ctx, n, cols, bads)
	if err != nil || rows == 0 {
		return keep, rows, err
	}
	for j, v := range h.num {
		col := cols[j][:rows]
		for i := range col {
			col[i] = v
		}
	}
	for j, v := range h.keep {
		b := array.NewStringBuilder(h.mem)
		b.Reserve(rows)
		for range rows {
			b.Append(v)
		}
		keep[j] = b.NewArray()
		b.Release()
	}
	return keep, rows, nil
}
