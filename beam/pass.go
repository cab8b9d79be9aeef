package beam

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"reflect"
	"sync"
	"time"

	sdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // paths without a scheme
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs" // memfs://, for tests
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism" // the in-process runner

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

func init() {
	register.DoFn3x1[context.Context, int, func(int, []byte), error](&rangeFn{})
	register.Emitter2[int, []byte]()
	register.DoFn3x1[context.Context, int, func(*[]byte) bool, error](&reduceFn{})
	register.Iter1[[]byte]()
	sdk.RegisterType(reflect.TypeOf((*rangeFn)(nil)).Elem())
	sdk.RegisterType(reflect.TypeOf((*reduceFn)(nil)).Elem())
}

// adder computes one chunk's contribution to a pass's result.
type adder interface {
	// AddRows adds the contribution of rows rows (x: rows × d features,
	// y: rows × k targets, both row-major; first: the number of the
	// chunk's first row in the store) to dst, the pass's sums, and
	// appends its per-row values to placed, which it returns.
	AddRows(dst []float64, first int64, x, y, w []float64, rows int, placed []float64) ([]float64, error)
}

// jobKind decodes a pass's serialised description on a worker: the number
// of its summed values, whether it reads the targets and the row
// weights, and a constructor of per-goroutine adders.
type jobKind func(job []byte) (sumLen int, targets, weights bool, newAdder func() (adder, error), err error)

// jobKinds are the pass descriptions a worker understands, by name.
var jobKinds = map[string]jobKind{}

// rangeHook, when set (by tests, in the process that runs the workers),
// runs before each range is computed; an error fails that bundle.
var rangeHook func(rangeIndex int) error

// rangeBounds returns the chunks [lo, hi) of range i out of parts over n
// chunks.
func rangeBounds(i, parts, n int) (lo, hi int) {
	return i * n / parts, (i + 1) * n / parts
}

// rangeSource is the chunks [lo, hi) of a store as a stream.Source.
type rangeSource struct {
	r      *chunkstore.Reader
	lo, hi int
}

func (s rangeSource) NumChunks() int      { return s.hi - s.lo }
func (s rangeSource) Dim() int            { return s.r.Dim() }
func (s rangeSource) NumTargets() int     { return s.r.NumTargets() }
func (s rangeSource) ChunkRows(i int) int { return s.r.ChunkRows(s.lo + i) }
func (s rangeSource) ReadChunk(ctx context.Context, i int, x, y []float64) error {
	return s.r.ReadChunk(ctx, s.lo+i, x, y)
}

// WeightColumn and ReadWeights implement stream.Weighter.
func (s rangeSource) WeightColumn() string { return stream.WeightColumn(s.r) }
func (s rangeSource) ReadWeights(ctx context.Context, i int, w []float64) error {
	return s.r.ReadWeights(ctx, s.lo+i, w)
}

// stores caches open stores per worker process: every DoFn instance of a
// process shares one Reader per location and store ID (a Reader is safe
// for concurrent use), and it stays open for the life of the process.
var stores struct {
	sync.Mutex
	m map[[2]string]*chunkstore.Reader
}

// cachedStore returns the store at loc, opened once per process. When id
// is not "" and the cached store has another ID (the store at loc was
// replaced), it opens loc again.
func cachedStore(ctx context.Context, loc, id string) (*chunkstore.Reader, error) {
	stores.Lock()
	defer stores.Unlock()
	if r, ok := stores.m[[2]string{loc, id}]; ok {
		return r, nil
	}
	r, err := openStore(ctx, loc)
	if err != nil {
		return nil, err
	}
	if stores.m == nil {
		stores.m = map[[2]string]*chunkstore.Reader{}
	}
	stores.m[[2]string{loc, r.StoreID()}] = r
	return r, nil
}

// rangeFn computes one chunk range's partial result: the sum, in chunk
// order, of the contributions of its chunks, followed by the per-row
// values its chunks append, in chunk order. It emits (0, part) so that a
// single GroupByKey brings every part to the reduction. A retried bundle
// recomputes its part from nothing, so a part is never half-counted.
type rangeFn struct {
	Store   string // path or URL of the store
	StoreID string // the store's fingerprint, checked on the worker
	Kind    string // key in jobKinds
	Job     []byte // the pass description (JSON), or nil to read JobFile
	JobFile string // path or URL of the pass description when Job is nil
	Parts   int    // number of ranges
	Workers int    // goroutines per range; 0: GOMAXPROCS

	r        *chunkstore.Reader
	first    []int64 // the number of each chunk's first row
	sumLen   int
	targets  bool
	weights  bool
	newAdder func() (adder, error)
}

func (f *rangeFn) Setup(ctx context.Context) error {
	kind, ok := jobKinds[f.Kind]
	if !ok {
		return fmt.Errorf("falkon-ooc beam worker: unknown pass kind %q", f.Kind)
	}
	job := f.Job
	if job == nil {
		var err error
		if job, err = readFile(ctx, f.JobFile, maxJobBytes); err != nil {
			return fmt.Errorf("falkon-ooc beam worker: the pass description: %w", err)
		}
	}
	var err error
	if f.sumLen, f.targets, f.weights, f.newAdder, err = kind(job); err != nil {
		return fmt.Errorf("falkon-ooc beam worker: %s pass: %w", f.Kind, err)
	}
	if f.r, err = cachedStore(ctx, f.Store, f.StoreID); err != nil {
		return fmt.Errorf("falkon-ooc beam worker: %w", err)
	}
	if f.StoreID != "" && f.r.StoreID() != f.StoreID {
		return fmt.Errorf("falkon-ooc beam worker: store %s has id %s, the driver read %s (a different store at the same location?)",
			f.Store, f.r.StoreID(), f.StoreID)
	}
	f.first = make([]int64, f.r.NumChunks())
	var rows int64
	for i := range f.first {
		f.first[i] = rows
		rows += int64(f.r.ChunkRows(i))
	}
	return nil
}

func (f *rangeFn) ProcessElement(ctx context.Context, idx int, emit func(int, []byte)) error {
	if h := rangeHook; h != nil {
		if err := h(idx); err != nil {
			return err
		}
	}
	lo, hi := rangeBounds(idx, f.Parts, f.r.NumChunks())
	sum := make([]float64, f.sumLen) // then the chunks' per-row values
	var rows int64
	type part struct{ sum, placed []float64 }
	err := stream.Run(ctx, rangeSource{f.r, lo, hi}, stream.Options{Workers: f.Workers}, stream.Job[*part]{
		Targets:    f.targets,
		Weights:    f.weights,
		NewPartial: func() *part { return &part{sum: make([]float64, f.sumLen)} },
		NewWorker: func() func(context.Context, stream.Chunk, *part) error {
			a, err := f.newAdder()
			return func(_ context.Context, c stream.Chunk, p *part) error {
				if err != nil {
					return err
				}
				clear(p.sum)
				p.placed, err = a.AddRows(p.sum, f.first[lo+c.Index], c.X, c.Y, c.W, c.Rows, p.placed[:0])
				return err
			}
		},
		Reduce: func(chunk int, p *part) error {
			for i, v := range p.sum {
				sum[i] += v
			}
			sum = append(sum, p.placed...)
			rows += int64(f.r.ChunkRows(lo + chunk))
			return nil
		},
	})
	if err != nil {
		return fmt.Errorf("range %d (chunks %d–%d): %w", idx, lo, hi-1, err)
	}
	emit(0, encodePart(idx, rows, sum))
	return nil
}

// A part on the wire: range index (uint64), rows (uint64), then the
// float64 values (the sums, then the range's per-row values),
// little-endian.
func encodePart(idx int, rows int64, v []float64) []byte {
	b := make([]byte, 16+8*len(v))
	binary.LittleEndian.PutUint64(b, uint64(idx))
	binary.LittleEndian.PutUint64(b[8:], uint64(rows))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[16+8*i:], math.Float64bits(x))
	}
	return b
}

// reduceFn sums the parts' first SumLen values in range order, follows
// them with the parts' per-row values in range order, and writes the
// result (OutLen values) to Out. A part delivered twice (which Beam's
// exactly-once output commit rules out) is checked to be bit-identical
// to the first and counted once.
type reduceFn struct {
	Out    string // file (path or URL) for the result
	Parts  int
	OutLen int
	SumLen int
}

func (f *reduceFn) ProcessElement(ctx context.Context, _ int, parts func(*[]byte) bool) error {
	got := make([][]byte, f.Parts)
	var b []byte
	for parts(&b) {
		if len(b) < 16+8*f.SumLen || len(b) > 16+8*f.OutLen || len(b)%8 != 0 {
			return fmt.Errorf("falkon-ooc beam reduce: a part of %d bytes, want %d to %d", len(b), 16+8*f.SumLen, 16+8*f.OutLen)
		}
		idx := binary.LittleEndian.Uint64(b)
		if idx >= uint64(f.Parts) {
			return fmt.Errorf("falkon-ooc beam reduce: part for range %d of %d", idx, f.Parts)
		}
		if got[idx] != nil {
			if !bytes.Equal(got[idx], b) {
				return fmt.Errorf("falkon-ooc beam reduce: range %d delivered twice with different values", idx)
			}
			continue
		}
		got[idx] = b
	}
	out := make([]float64, f.SumLen, f.OutLen)
	var rows int64
	for i, p := range got {
		if p == nil {
			return fmt.Errorf("falkon-ooc beam reduce: no part for range %d of %d", i, f.Parts)
		}
		rows += int64(binary.LittleEndian.Uint64(p[8:]))
		for j := range f.SumLen {
			out[j] += math.Float64frombits(binary.LittleEndian.Uint64(p[16+8*j:]))
		}
		for o := 16 + 8*f.SumLen; o < len(p); o += 8 {
			if len(out) == f.OutLen {
				return fmt.Errorf("falkon-ooc beam reduce: the ranges give more than %d values", f.OutLen)
			}
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(p[o:])))
		}
	}
	if len(out) != f.OutLen {
		return fmt.Errorf("falkon-ooc beam reduce: the ranges give %d values, want %d", len(out), f.OutLen)
	}
	return writeResult(ctx, f.Out, rows, out)
}

// The result file: "FKBR", version 1 (uint32), rows (uint64), count
// (uint64), the float64 values, then a CRC-32C of everything before it;
// little-endian.
const resultMagic = "FKBR"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func writeResult(ctx context.Context, out string, rows int64, v []float64) error {
	b := make([]byte, 0, 24+8*len(v)+4)
	b = append(b, resultMagic...)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint64(b, uint64(rows))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if err := writeFile(ctx, out, b); err != nil {
		return fmt.Errorf("falkon-ooc beam reduce: %w", err)
	}
	return nil
}

// writeFile writes b to name (path or URL) through Beam's filesystem.
func writeFile(ctx context.Context, name string, b []byte) error {
	fs, err := openFS(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// readFile reads name (path or URL) through Beam's filesystem, refusing
// more than limit bytes.
func readFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	fs, err := openFS(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("read %s: more than %d bytes", name, limit)
	}
	return b, nil
}

// removeFile removes name if its filesystem can; errors are ignored (the
// file is in a temporary directory).
func removeFile(ctx context.Context, name string) {
	if fs, err := openFS(ctx, name); err == nil {
		if rm, ok := fs.(filesystem.Remover); ok {
			_ = rm.Remove(ctx, name)
		}
		fs.Close()
	}
}

// readResult reads and removes a result file written by reduceFn.
func readResult(ctx context.Context, out string, outLen int) (rows int64, v []float64, err error) {
	b, err := readFile(ctx, out, int64(28+8*outLen))
	if err != nil {
		return 0, nil, fmt.Errorf("the pass's result: %w", err)
	}
	removeFile(ctx, out)
	if len(b) != 28+8*outLen || string(b[:4]) != resultMagic || binary.LittleEndian.Uint32(b[4:]) != 1 ||
		binary.LittleEndian.Uint64(b[16:]) != uint64(outLen) ||
		crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, nil, fmt.Errorf("the pass's result %s is corrupt or incomplete (%d bytes)", out, len(b))
	}
	rows = int64(binary.LittleEndian.Uint64(b[8:]))
	v = make([]float64, outLen)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[24+8*i:]))
	}
	return rows, v, nil
}

// passSpec is one pass as the driver launches it.
type passSpec struct {
	Runner  string
	Store   string
	StoreID string
	Kind    string
	Job     []byte
	JobFile string // where Job is, when it is too large to inline
	OutLen  int
	SumLen  int
	Parts   int
	Workers int
	Out     string // result file of this attempt
}

// maxInlineJob is the largest pass description carried in the pipeline
// itself (as a DoFn field, which Beam encodes as base64 in JSON in the
// pipeline proto, 1.8× its size, sent to the job service and to every
// worker). A larger one — the centres and the vector of a CG pass at
// M·d ≳ 10³ — is written to a file under Options.Temp that each worker
// process reads once per pass.
var maxInlineJob = 16 << 10

// maxJobBytes bounds a pass description read from a file.
const maxJobBytes = 1 << 31

// buildPass returns the pipeline of one pass: the range indices,
// reshuffled so that a runner may spread them over workers, rangeFn on
// each, every part grouped under one key, and reduceFn.
func buildPass(ps passSpec) *sdk.Pipeline {
	p, s := sdk.NewPipelineWithRoot()
	idx := make([]int, ps.Parts)
	for i := range idx {
		idx[i] = i
	}
	ranges := sdk.Reshuffle(s, sdk.CreateList(s, idx))
	fn := &rangeFn{Store: ps.Store, StoreID: ps.StoreID, Kind: ps.Kind, Job: ps.Job,
		Parts: ps.Parts, Workers: ps.Workers}
	if ps.JobFile != "" {
		fn.Job, fn.JobFile = nil, ps.JobFile
	}
	parts := sdk.ParDo(s, fn, ranges)
	sdk.ParDo0(s, &reduceFn{Out: ps.Out, Parts: ps.Parts, OutLen: ps.OutLen, SumLen: ps.SumLen}, sdk.GroupByKey(s, parts))
	return p
}

// runPass runs one pass as a Beam job and reads its result back.
func runPass(ctx context.Context, ps passSpec) (rows int64, v []float64, err error) {
	if !sdk.Initialized() {
		sdk.Init() // a program launched as a remote worker has called it in main
	}
	if _, err := sdk.Run(ctx, ps.Runner, buildPass(ps)); err != nil {
		return 0, nil, err
	}
	return readResult(ctx, ps.Out, ps.OutLen)
}

// uniqueName returns a name no other attempt uses.
func uniqueName(dir, prefix string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return joinURL(dir, fmt.Sprintf("%s-%d-%s.bin", prefix, time.Now().UnixNano(), hex.EncodeToString(r[:])))
}

var errNoParts = errors.New("at least one partition is needed")

// partitions clamps the number of ranges to the number of chunks.
func partitions(want, chunks int) (int, error) {
	if want < 1 {
		return 0, errNoParts
	}
	return max(1, min(want, chunks)), nil
}
