package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// colSum is a test pass: the column sums of the features and targets, and
// the row count, in one vector.
type colSum struct{ D, K int }

func (c colSum) AddRows(dst []float64, _ int64, x, y, _ []float64, rows int, placed []float64) ([]float64, error) {
	for r := range rows {
		for j := range c.D {
			dst[j] += x[r*c.D+j]
		}
		for j := range c.K {
			dst[c.D+j] += y[r*c.K+j]
		}
	}
	dst[c.D+c.K] += float64(rows)
	return placed, nil
}

func init() {
	jobKinds["colsum"] = func(job []byte) (int, bool, bool, func() (adder, error), error) {
		var c colSum
		if err := json.Unmarshal(job, &c); err != nil {
			return 0, false, false, nil, err
		}
		return c.D + c.K + 1, true, false, func() (adder, error) { return c, nil }, nil
	}
}

// writeStore writes a store of n rows (d features, one target) with
// chunks of chunkRows rows into dir and returns its columns.
func writeStore(t testing.TB, dir string, n, d, chunkRows int, seed uint64) [][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	cols := make([][]float64, d+1)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range n {
		s := 0.0
		for j := range d {
			v := rng.NormFloat64()
			cols[j][i] = v
			s += math.Sin(v * float64(j+1))
		}
		cols[d][i] = s + 0.1*rng.NormFloat64()
	}
	var feats []chunkstore.ColumnSpec
	for j := range d {
		feats = append(feats, chunkstore.ColumnSpec{Name: fmt.Sprintf("x%d", j), Type: "float64"})
	}
	w, err := chunkstore.Create(dir, feats, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}},
		chunkstore.Options{ChunkRows: chunkRows, Codec: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return cols
}

func colSumPass(t *testing.T, store string, d, parts int) (int64, []float64, error) {
	t.Helper()
	job, _ := json.Marshal(colSum{D: d, K: 1})
	return runPass(context.Background(), passSpec{
		Runner: "prism", Store: store, Kind: "colsum", Job: job, OutLen: d + 2, SumLen: d + 2, Parts: parts,
		Out: uniqueName(t.TempDir(), "colsum"),
	})
}

// TestPassColumnSums sums a real store's columns on Prism over several
// partitionings and compares with the sums computed here.
func TestPassColumnSums(t *testing.T) {
	const n, d = 10_000, 3
	store := filepath.Join(t.TempDir(), "s.store")
	cols := writeStore(t, store, n, d, 700, 1)
	want := make([]float64, d+2)
	for j, c := range cols {
		for _, v := range c {
			want[j] += v
		}
	}
	want[d+1] = n
	for _, parts := range []int{1, 4, 15} {
		rows, got, err := colSumPass(t, store, d, parts)
		if err != nil {
			t.Fatalf("%d parts: %v", parts, err)
		}
		if rows != n {
			t.Errorf("%d parts: %d rows, want %d", parts, rows, n)
		}
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-9*(1+math.Abs(want[j])) {
				t.Errorf("%d parts: sum %d = %v, want %v", parts, j, got[j], want[j])
			}
		}
	}
}

// TestPassMemfs reads the store through Beam's filesystem package
// (memfs://), the route of gs:// and s3:// stores.
func TestPassMemfs(t *testing.T) {
	const n, d = 3000, 2
	dir := filepath.Join(t.TempDir(), "s.store")
	writeStore(t, dir, n, d, 256, 2)
	local, _, err := colSumPass(t, dir, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fs, err := filesystem.New(ctx, "memfs://")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	url := "memfs://stores/s.store"
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := fs.OpenWrite(ctx, url+"/"+e.Name())
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_, want, _ := colSumPass(t, dir, d, 3)
	rows, got, err := colSumPass(t, url, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rows != local {
		t.Errorf("memfs: %d rows, want %d", rows, local)
	}
	for j := range want {
		if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
			t.Errorf("memfs: sum %d = %v, want %v bit for bit", j, got[j], want[j])
		}
	}
}

// TestPassFailure: a range that fails makes the job fail with its error.
func TestPassFailure(t *testing.T) {
	const n, d = 2000, 2
	store := filepath.Join(t.TempDir(), "s.store")
	writeStore(t, store, n, d, 256, 3)
	var calls atomic.Int32
	rangeHook = func(i int) error {
		if i == 1 {
			calls.Add(1)
			return errors.New("injected failure")
		}
		return nil
	}
	defer func() { rangeHook = nil }()
	_, _, err := colSumPass(t, store, d, 4)
	if err == nil {
		t.Fatal("no error")
	}
	t.Logf("error: %v (range 1 ran %d times)", err, calls.Load())
}

// TestResultFile: the driver reads back what the reduction wrote, and
// refuses a result that is truncated or altered.
func TestResultFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	name := filepath.Join(dir, "r.bin")
	want := []float64{1.5, -2, math.Pi}
	if err := writeResult(ctx, name, 42, want); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	rows, got, err := readResult(ctx, name, 3)
	if err != nil || rows != 42 || len(got) != 3 || got[2] != math.Pi {
		t.Fatalf("read back %d rows %v, %v", rows, got, err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("the result file is still there: %v", err)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", b[:len(b)-5], fmt.Sprintf("the pass's result %s is corrupt or incomplete (%d bytes)", name, len(b)-5)},
		{"altered", append(append([]byte{}, b[:30]...), append([]byte{b[30] ^ 1}, b[31:]...)...), fmt.Sprintf("the pass's result %s is corrupt or incomplete (%d bytes)", name, len(b))},
		{"too long", append(append([]byte{}, b...), 0), fmt.Sprintf("the pass's result: read %s: more than %d bytes", name, len(b))},
	} {
		os.WriteFile(name, c.b, 0o644)
		_, _, err := readResult(ctx, name, 3)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
