package ooc

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// Memory is the predicted peak memory of a fit, by part, in bytes.
type Memory struct {
	Precond    int64 `json:"precond"`    // T and A in one M × M buffer: precond.Bytes
	Centers    int64 `json:"centers"`    // centres and their prepared copies
	Chunks     int64 `json:"chunks"`     // decoded chunk buffers, one per worker
	Workspaces int64 `json:"workspaces"` // kernel tiles, one per worker
	Partials   int64 `json:"partials"`   // per-chunk partial M-vectors in flight
	Vectors    int64 `json:"vectors"`    // CG state and operator scratch
	// Runtime is the process's fixed cost: the program's text and the Go
	// runtime (measured: about 31 MiB for falkon-ooc), plus heap slack.
	Runtime int64 `json:"runtime"`
	Total   int64 `json:"total"`
}

// runtimeBytes is the fixed part of Memory.Runtime, measured with
// bench/fit (maxrss of "falkon-ooc fit --help" is 31 MB; the heap carries
// 10–20 MiB more than the counted buffers during the first passes).
const runtimeBytes = 40 << 20

// EstimateMemory predicts the peak memory of a fit with M centres, d
// features, k outputs, the given worker count (0 = GOMAXPROCS) and
// largest chunk, with a float64 preconditioner. The data itself is not
// held: it is streamed. bench/fit measures it against the peak RSS of
// real fits.
func EstimateMemory(m, d, k, workers, chunkRows int) Memory {
	return EstimateMemoryFor(m, d, k, workers, chunkRows, precond.Float64)
}

// EstimateMemoryFor is EstimateMemory for a preconditioner stored in
// precision p (Config.PrecondPrecision): T and A share one M × M buffer,
// precond.Bytes(M, p). K_MM is computed into that buffer in row blocks no
// larger than the kernel tiles counted in Workspaces, which are not yet
// allocated then.
func EstimateMemoryFor(m, d, k, workers, chunkRows int, p precond.Precision) Memory {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	M, D, K, W, R := int64(m), int64(d), int64(k), int64(workers), int64(chunkRows)
	const tileRows = 64
	mem := Memory{
		Precond: precond.Bytes(m, p),
		Centers: 3 * 8 * M * D, // raw, float64 prepared, float32 prepared
		// Decoded rows and targets, the encoded targets, and the chunk
		// store reader's decode scratch (up to 9 columns at a time).
		Chunks:     W * 8 * R * (D + K + K + 1 + 9),
		Workspaces: W * 8 * (tileRows*M + tileRows*(D+K+1)),
		Partials:   2 * W * 8 * M * (K + 1),
		Vectors:    10 * 8 * M * K,
		Runtime:    runtimeBytes,
	}
	mem.Total = mem.Precond + mem.Centers + mem.Chunks + mem.Workspaces + mem.Partials + mem.Vectors + mem.Runtime
	return mem
}

// MaxCenters is the largest M whose EstimateMemoryFor(M, …, p).Total is
// at most limit bytes (0 when not even one centre fits).
func MaxCenters(limit int64, d, k, workers, chunkRows int, p precond.Precision) int {
	fits := func(m int) bool { return EstimateMemoryFor(m, d, k, workers, chunkRows, p).Total <= limit }
	if !fits(1) {
		return 0
	}
	lo, hi := 1, 2
	for fits(hi) {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 { // fits(lo), !fits(hi)
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// String formats the estimate for people.
func (m Memory) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (preconditioner %s, chunk buffers %s, kernel tiles %s, vectors %s, runtime %s)",
		FormatBytes(m.Total), FormatBytes(m.Precond), FormatBytes(m.Chunks),
		FormatBytes(m.Workspaces), FormatBytes(m.Partials+m.Vectors+m.Centers), FormatBytes(m.Runtime))
	return b.String()
}

// FormatBytes formats a byte count with a binary unit.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for x := n / unit; x >= unit; x /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
