package ooc

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/precond"
)

// Memory is the predicted peak memory of a fit, by part, in bytes.
type Memory struct {
	Precond    int64 `json:"precond"`    // T and A in one M × M buffer: precond.Bytes (twice when A sees row, class or Hessian weights), or the Nyström basis (precond.NystromBytes)
	Centers    int64 `json:"centers"`    // centres and their prepared copies
	Chunks     int64 `json:"chunks"`     // decoded chunk buffers and the source's read scratch, per worker
	Workspaces int64 `json:"workspaces"` // kernel tiles, one per worker
	Partials   int64 `json:"partials"`   // per-chunk partial M-vectors in flight
	Vectors    int64 `json:"vectors"`    // CG state and operator scratch
	// Packing is the dense algebra's packing buffers while the
	// preconditioner is built (precond.PackBytes).
	Packing int64 `json:"packing"`
	// Uncertainty is what Config.Uncertainty adds after CG, beside the
	// preconditioner: the variance's factor and its construction
	// (uncertaintyBytes).
	Uncertainty int64 `json:"uncertainty,omitempty"`
	// Runtime is the process's fixed cost: the program's text and the Go
	// runtime (measured: about 31 MiB for falkon-ooc), plus heap slack.
	Runtime int64 `json:"runtime"`
	Total   int64 `json:"total"`
	// Disk is the disk space the preconditioner's factors take when the
	// memory plan keeps them there (MemoryPlan.OutOfCore; not in Total):
	// Precond is then its panels in memory.
	Disk int64 `json:"disk,omitempty"`
}

// runtimeBytes is the fixed part of Memory.Runtime, measured with
// bench/fit (maxrss of "falkon-ooc fit --help" is 31 MB; the heap carries
// 10–20 MiB more than the counted buffers during the first passes).
const runtimeBytes = 40 << 20

// estimateMemory predicts the peak memory of a fit with the resolved
// cfg, d features, kt target columns, k outputs, the worker count,
// chunks of at most chunkRows rows and scratch bytes of the source's own
// per reading goroutine. The buffer sizes come from their owners: precond
// for its one M × M buffer (precond.Bytes; K_MM is computed into it in
// row blocks no larger than the kernel tiles counted in Workspaces, which
// are not yet allocated then), kernel for the tiles and prepared centres,
// the source for its read scratch (stream.ScratchSizer). The data itself
// is not held: it is streamed. bench/fit measures the estimate against
// the peak RSS of real fits.
func estimateMemory(cfg Config, d, kt, k, workers, chunkRows int, scratch int64, weighted bool) Memory {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	m := cfg.Centers
	M, D, KT, K, W, R := int64(m), int64(d), int64(kt), int64(k), int64(workers), int64(chunkRows)
	centres := 8*M*D + kernel.CentersBytes(m, d, cfg.Kernel, kernel.Float64)
	if cfg.Precision != kernel.Float64 {
		centres += kernel.CentersBytes(m, d, cfg.Kernel, cfg.Precision)
	}
	prec := cfg.PrecondPrecision
	if prec == "" {
		prec = precond.Float64
	}
	pb, pk := precond.Bytes(m, prec), precond.PackBytes(m, workers)
	if cfg.Preconditioner == precond.MethodNystrom {
		// Its products have up to m rows (packed A) and run up to one
		// per worker, each with its own packing.
		r := cmp.Or(cfg.PrecondRank, precond.DefaultNystromRank(m))
		pb, pk = precond.NystromBytes(m, r), int64(max(workers, 1))*precond.PackBytes(m, 1)
	}
	mem := Memory{
		Precond: pb,
		Centers: centres,
		// Decoded rows and targets, the encoded targets with the ones
		// column, and the source's read scratch.
		Chunks:      W * (8*R*(D+KT+K+1) + scratch),
		Workspaces:  W * kernel.WorkspaceBytes(m, d, k+1, cfg.Precision),
		Partials:    2 * W * 8 * (M*(K+1) + K),
		Vectors:     10 * 8 * M * K,
		Packing:     pk,
		Runtime:     runtimeBytes,
		Uncertainty: uncertaintyBytes(cfg, d, workers),
	}
	if cfg.Preconditioner == precond.MethodNystrom {
		if cfg.Loss == LossLogistic {
			// Each Newton step's Hessian-weighted core: QᵀHQ, its
			// product with S and the core itself, r × r each; the basis
			// is shared.
			r := int64(min(cmp.Or(cfg.PrecondRank, precond.DefaultNystromRank(m)), m))
			mem.Precond += 3 * 8 * r * r
		}
	} else if cfg.Loss == LossLogistic || (weighted || cfg.ClassWeight == ClassWeightBalanced) &&
		(cfg.Preconditioner == "" || cfg.Preconditioner == precond.MethodCholesky) {
		// A preconditioner that sees the weights (or a Newton step's
		// Hessian weights) factorises its A in a buffer of its own beside
		// T's (precond.WithCenterWeights).
		mem.Precond *= 2
	}
	mem.Total = mem.Precond + mem.Centers + mem.Chunks + mem.Workspaces + mem.Partials + mem.Vectors + mem.Packing + mem.Runtime + mem.Uncertainty
	return mem
}

// EstimateMemory is EstimateMemoryFor with a float64 preconditioner.
func EstimateMemory(m, d, k, workers, chunkRows int) Memory {
	return EstimateMemoryFor(m, d, k, workers, chunkRows, precond.Float64)
}

// EstimateMemoryFor predicts the peak memory of a fit with M centres, d
// features, k outputs (one target column each), the given worker count
// (0 = GOMAXPROCS), chunks of at most chunkRows rows and a preconditioner
// stored in precision p, for a source that holds no read scratch of its
// own. Plan gives the estimate for an actual source and Config, which
// counts the source's scratch: prefer it.
func EstimateMemoryFor(m, d, k, workers, chunkRows int, p precond.Precision) Memory {
	return estimateMemory(Config{Centers: m, PrecondPrecision: p}, d, k, k, workers, chunkRows, 0, false)
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
	fmt.Fprintf(&b, "%s (preconditioner %s, its packing %s, chunk buffers %s, kernel tiles %s, vectors %s, runtime %s)",
		FormatBytes(m.Total), FormatBytes(m.Precond), FormatBytes(m.Packing), FormatBytes(m.Chunks),
		FormatBytes(m.Workspaces), FormatBytes(m.Partials+m.Vectors+m.Centers), FormatBytes(m.Runtime))
	if m.Uncertainty > 0 {
		s := b.String()
		b.Reset()
		b.WriteString(s[:len(s)-1] + ", uncertainty " + FormatBytes(m.Uncertainty) + ")")
	}
	if m.Disk > 0 {
		b.WriteString(", and " + FormatBytes(m.Disk) + " of disk for the preconditioner's factors")
	}
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

// uncertaintyBytes is Memory.Uncertainty: for UncertaintyExact the
// factors of K_MM and H and one M × M partial per worker; for a factor of
// rank at least half of M (or M ≤ 600) four M × M matrices (C formed
// whole and its eigendecomposition); otherwise the sketch, about six
// M × ℓ matrices with ℓ = 1.5 r + 10; plus W and [α | W] in the model,
// and for M ≤ 12 000 the rank check's M × M factor.
func uncertaintyBytes(cfg Config, d, workers int) int64 {
	if cfg.Uncertainty == "" {
		return 0
	}
	M := int64(cfg.Centers)
	r := int64(cfg.UncertaintyRank)
	if r == 0 {
		r = int64(DefaultUncertaintyRank(d))
	}
	r = min(r, M)
	b := 8 * M * (2*r + 1)
	switch {
	case 2*r >= M || M <= 600:
		b += 4 * 8 * M * M
	default:
		b += 6 * 8 * M * min(M, r+r/2+10)
	}
	if M <= maxRankCheck { // the rank check's M × M factor at the variance's λ
		b += 8 * M * M
	}
	if cfg.Uncertainty == UncertaintyExact {
		b += (2 + int64(workers)) * 8 * M * M
	}
	return b
}

// DefaultMaxMemory is RunOptions.MaxMemory's default: 80 % of the smaller
// of the machine's physical memory and this process's cgroup memory limit
// (v2 memory.max or v1 memory.limit_in_bytes); 0, no bound, where neither
// can be read.
func DefaultMaxMemory() int64 {
	total := physicalMemory()
	if c := cgroupLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return total / 10 * 8
}

// memoryLimit is opts.MaxMemory resolved: the bound in bytes, 0 for none.
func (o RunOptions) memoryLimit() int64 {
	switch {
	case o.MaxMemory > 0:
		return o.MaxMemory
	case o.MaxMemory < 0:
		return 0
	}
	return DefaultMaxMemory()
}

// physicalMemory reads MemTotal from /proc/meminfo (0 if unavailable).
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads the memory limit of this process's cgroup: memory.max
// (v2) or memory.limit_in_bytes (v1). It is 0 if there is none or it is
// unlimited ("max", or v1's huge page-aligned number, which the caller's
// minimum with physical memory absorbs).
func cgroupLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = "/sys/fs/cgroup" + parts[2] + "/memory.max"
		case parts[1] == "memory":
			file = "/sys/fs/cgroup/memory" + parts[2] + "/memory.limit_in_bytes"
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
