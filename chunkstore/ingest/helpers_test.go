package ingest

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// store is a whole store read back, column-major: features then targets.
type store struct {
	names []string
	cols  [][]float64
	m     *chunkstore.Manifest
}

func (s *store) col(t *testing.T, name string) []float64 {
	t.Helper()
	for j, n := range s.names {
		if n == name {
			return s.cols[j]
		}
	}
	t.Fatalf("store has no column %q (has %v)", name, s.names)
	return nil
}

func readStore(t *testing.T, dir string) *store {
	t.Helper()
	r, err := chunkstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d, k := r.Dim(), r.NumTargets()
	s := &store{names: append(r.FeatureNames(), r.TargetNames()...), cols: make([][]float64, d+k), m: r.Manifest()}
	for i := range r.NumChunks() {
		n := r.ChunkRows(i)
		x := make([]float64, n*d)
		y := make([]float64, n*k)
		if err := r.ReadChunk(context.Background(), i, x, y); err != nil {
			t.Fatal(err)
		}
		for row := range n {
			for j := range d {
				s.cols[j] = append(s.cols[j], x[row*d+j])
			}
			for j := range k {
				s.cols[d+j] = append(s.cols[d+j], y[row*k+j])
			}
		}
	}
	return s
}

// checked runs ingest with a checked allocator and asserts that every byte
// Arrow allocated was freed (STYLE.md 6), except the buffers that arrow-go's
// DELTA_BINARY_PACKED decoder allocates and never frees (arrow-go v18.8.0,
// parquet/internal/encoding/delta_bit_packing.go: deltaBitWidths; harmless
// with Go's allocator, which collects them). Those are tracked by their
// allocation site and allowed; anything else is a leak.
func checked(t *testing.T, inputs []string, cfg Config) (*Result, error) {
	t.Helper()
	mem := &upstreamLeaks{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), known: map[*byte]int{}}
	defer func() {
		n := mem.knownBytes()
		if mem.CurrentAlloc() != n {
			mem.AssertSize(t, n) // lists every live allocation
		}
		if n > 0 {
			t.Logf("allowed %d bytes kept by arrow-go's DELTA_BINARY_PACKED decoder", n)
		}
	}()
	return run(context.Background(), inputs, cfg, mem)
}

// upstreamLeaks is a checked allocator that remembers the live buffers
// allocated by arrow-go's deltaBitPackDecoder.
type upstreamLeaks struct {
	*memory.CheckedAllocator
	mu    sync.Mutex
	known map[*byte]int
}

func fromDeltaDecoder() bool {
	pc := make([]uintptr, 24)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "deltaBitPackDecoder") {
			return true
		}
		if !more {
			return false
		}
	}
}

func (a *upstreamLeaks) track(b []byte) {
	if cap(b) > 0 && fromDeltaDecoder() {
		a.mu.Lock()
		a.known[unsafe.SliceData(b)] = len(b)
		a.mu.Unlock()
	}
}

func (a *upstreamLeaks) forget(b []byte) {
	if cap(b) > 0 {
		a.mu.Lock()
		delete(a.known, unsafe.SliceData(b))
		a.mu.Unlock()
	}
}

func (a *upstreamLeaks) Allocate(size int) []byte {
	b := a.CheckedAllocator.Allocate(size)
	a.track(b)
	return b
}

func (a *upstreamLeaks) Reallocate(size int, old []byte) []byte {
	a.forget(old)
	b := a.CheckedAllocator.Reallocate(size, old)
	a.track(b)
	return b
}

func (a *upstreamLeaks) Free(b []byte) {
	a.forget(b)
	a.CheckedAllocator.Free(b)
}

func (a *upstreamLeaks) knownBytes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, sz := range a.known {
		n += sz
	}
	return n
}

func mustIngest(t *testing.T, inputs []string, cfg Config) (*Result, *store) {
	t.Helper()
	if cfg.Out == "" {
		cfg.Out = filepath.Join(t.TempDir(), "store")
	}
	res, err := checked(t, inputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res, readStore(t, cfg.Out)
}

// writeParquet writes tbl with pqarrow, storing the Arrow schema.
func writeParquet(t *testing.T, path string, tbl arrow.Table, rowGroup int64, opts ...parquet.WriterProperty) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(opts...)
	if err := pqarrow.WriteTable(tbl, f, rowGroup, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		t.Fatal(err)
	}
}

// expected is the interop table as DuckDB printed it: expected.csv.gz.
type expected struct {
	names []string
	text  map[string][]string // column -> DuckDB's text of each value, "" for NULL
}

func loadExpected(t *testing.T) *expected {
	t.Helper()
	f, err := os.Open("../../testdata/interop/expected.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	e := &expected{names: recs[0], text: map[string][]string{}}
	for _, rec := range recs[1:] {
		for j, n := range e.names {
			e.text[n] = append(e.text[n], rec[j])
		}
	}
	return e
}

// value parses DuckDB's text of a value of the given DuckDB column: float32
// columns read as float32 (DuckDB prints the shortest float32 text), bools
// as 0/1.
func (e *expected) value(t *testing.T, col string, row int) (v float64, null bool) {
	t.Helper()
	s := e.text[col][row]
	switch {
	case s == "":
		return 0, true
	case s == "true":
		return 1, false
	case s == "false":
		return 0, false
	case col == "f32":
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			t.Fatal(err)
		}
		return float64(float32(f)), false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f, false
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func newGzip(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }
