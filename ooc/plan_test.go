package ooc_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestPlanMemory checks the memory plan of a Config that leaves the
// preconditioner and its precision to choose: the exact preconditioner
// (Cholesky, float64) when it fits RunOptions.MaxMemory; when only
// float32 fits, float32 at λ ≥ 10ε₃₂ and the float64 factors on disk
// below; float32 when the disk cannot take them (RunOptions.TempDir
// missing); below that the Nyström preconditioner of the largest rank
// that fits; and an explicit preconditioner that does not fit fails with
// ErrMemory, naming Config fields.
func TestPlanMemory(t *testing.T) {
	x, y := synth(3000, 3, 7)
	src := stream.NewMemSource(x, 3, y, 1, 500)
	const m = 1500
	cfg := ooc.Config{Centers: m, Patience: -1} // no stopping rule: TestPlanNystromStops
	est := func(c ooc.Config) int64 {
		p, err := ooc.Plan(src, c, ooc.RunOptions{Workers: 2, MaxMemory: -1})
		if err != nil {
			t.Fatal(err)
		}
		return p.Memory.Total
	}
	e64 := est(ooc.Config{Centers: m, Preconditioner: precond.MethodCholesky, PrecondPrecision: precond.Float64})
	e32 := est(ooc.Config{Centers: m, Preconditioner: precond.MethodCholesky, PrecondPrecision: precond.Float32})
	noDisk := filepath.Join(t.TempDir(), "missing")
	plan := func(limit int64) *ooc.FitPlan {
		t.Helper()
		p, err := ooc.Plan(src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: limit, TempDir: noDisk})
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		return p
	}

	// No bound, and a bound the exact preconditioner fits.
	for _, limit := range []int64{-1, e64} {
		p := plan(limit)
		c, mp := p.Config, p.MemoryPlan
		if c.Preconditioner != precond.MethodCholesky || c.PrecondPrecision != precond.Float64 || mp == nil || mp.Reduced || mp.Note != "" {
			t.Errorf("limit %d: %s %s, plan %+v; want cholesky float64, not reduced", limit, c.Preconditioner, c.PrecondPrecision, mp)
		}
	}
	// float32 when only it fits and no disk can take the factors.
	p := plan(e32)
	if c := p.Config; c.Preconditioner != precond.MethodCholesky || c.PrecondPrecision != precond.Float32 ||
		!p.MemoryPlan.Reduced || p.MemoryPlan.Exact != e64 || !strings.Contains(p.MemoryPlan.Note, "storing it in float32") {
		t.Errorf("limit %d (float32's): %s %s, plan %+v", e32, c.Preconditioner, c.PrecondPrecision, p.MemoryPlan)
	}
	// With a disk: float64 on disk at the default λ, float32 in memory
	// at λ = 10⁻³.
	dir := t.TempDir()
	for _, lambda := range []float64{0, 1e-3} {
		c := cfg
		c.Lambda = lambda
		p, err := ooc.Plan(src, c, ooc.RunOptions{Workers: 2, MaxMemory: e32, TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		mp := p.MemoryPlan
		switch {
		case lambda == 0 && (p.Config.PrecondPrecision != precond.Float64 || !mp.OutOfCore || mp.Dir != dir || mp.DiskBytes <= 0 ||
			p.Memory.Disk != mp.DiskBytes || p.Memory.Total > e32 || !strings.Contains(mp.Note, "with its factors on disk")):
			t.Errorf("λ default, limit %d: %s, memory %+v, plan %+v", e32, p.Config.PrecondPrecision, p.Memory, mp)
		case lambda != 0 && (p.Config.PrecondPrecision != precond.Float32 || mp.OutOfCore):
			t.Errorf("λ %g, limit %d: %s, plan %+v", lambda, e32, p.Config.PrecondPrecision, mp)
		}
	}
	// Below float32: the Nyström preconditioner of the largest rank that fits.
	limit := e32 - 1
	p = plan(limit)
	c := p.Config
	if c.Preconditioner != precond.MethodNystrom || c.PrecondPrecision != precond.Float64 || p.Memory.Total > limit ||
		!p.MemoryPlan.Reduced || p.MemoryPlan.PrecondRank != c.PrecondRank {
		t.Fatalf("limit %d: %s %s rank %d, %d bytes; plan %+v", limit, c.Preconditioner, c.PrecondPrecision, c.PrecondRank, p.Memory.Total, p.MemoryPlan)
	}
	if c.PrecondRank < 1 || c.PrecondRank >= m {
		t.Errorf("rank %d of M = %d", c.PrecondRank, m)
	}
	larger := c
	larger.PrecondRank++
	if e := est(larger); e <= limit {
		t.Errorf("rank %d fits too (%d ≤ %d bytes): not the largest", larger.PrecondRank, e, limit)
	}
	if !strings.Contains(p.MemoryPlan.Note, "the Nyström preconditioner of rank") {
		t.Errorf("note %q", p.MemoryPlan.Note)
	}
	// An explicit preconditioner and precision are kept, and fail when
	// they do not fit.
	_, err := ooc.Plan(src, ooc.Config{Centers: m, Preconditioner: precond.MethodCholesky, PrecondPrecision: precond.Float64},
		ooc.RunOptions{Workers: 2, MaxMemory: e32})
	if !errors.Is(err, ooc.ErrMemory) || !strings.Contains(err.Error(), "(RunOptions.MaxMemory): at most M = ") ||
		!strings.Contains(err.Error(), "with Config.PrecondPrecision float32, more with Config.Preconditioner nystrom") {
		t.Errorf("explicit cholesky float64 over the limit: %v", err)
	}
	_, err = ooc.Plan(src, ooc.Config{Centers: m, Preconditioner: precond.MethodNystrom, PrecondRank: m},
		ooc.RunOptions{Workers: 2, MaxMemory: e32})
	if !errors.Is(err, ooc.ErrMemory) || !strings.Contains(err.Error(), "lower Config.PrecondRank or Config.Centers") {
		t.Errorf("explicit nystrom over the limit: %v", err)
	}
}

// TestPlanNystromStops: a fit that the memory plan gives a Nyström
// preconditioner stops by its validation rows when Patience is 0: it
// holds out DefaultValFraction of the data when it has none (Sources),
// sets Patience to DefaultPatience and, with Iterations 0, caps CG at
// DefaultNystromIterations; an explicit Iterations is kept as the cap, an
// explicit validation source used, and a negative Patience keeps none.
func TestPlanNystromStops(t *testing.T) {
	x, y := synth(3000, 3, 7)
	src := stream.NewMemSource(x, 3, y, 1, 500)
	cfg := ooc.Config{Centers: 1500}
	full, err := ooc.Plan(src, ooc.Config{Centers: 1500, Preconditioner: precond.MethodCholesky}, ooc.RunOptions{Workers: 2, MaxMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	limit := full.MemoryWith(precond.Float32).Total - 1
	noDisk := filepath.Join(t.TempDir(), "missing") // else the factors go to disk
	run := ooc.RunOptions{Workers: 2, MaxMemory: limit, TempDir: noDisk}
	p, err := ooc.Plan(src, cfg, run)
	if err != nil {
		t.Fatal(err)
	}
	train, opts := p.Sources(src, run)
	held := stream.Rows(opts.Validation)
	if c := p.Config; c.Preconditioner != precond.MethodNystrom || c.Patience != ooc.DefaultPatience || c.Iterations != ooc.DefaultNystromIterations ||
		held < 200 || held > 400 || stream.Rows(train)+held != 3000 || p.N != stream.Rows(train) {
		t.Errorf("%s, patience %d, %d iterations; %d rows held out of 3000, n = %d", c.Preconditioner, c.Patience, c.Iterations, held, p.N)
	}
	// An explicit cap and validation source.
	val := stream.NewMemSource(x[:300], 3, y[:100], 1, 100)
	cfg.Iterations = 7
	p, err = ooc.Plan(src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: limit, Validation: val, TempDir: noDisk})
	if err != nil {
		t.Fatal(err)
	}
	if s, o := p.Sources(src, ooc.RunOptions{Validation: val}); s != src || o.Validation != val || p.Config.Iterations != 7 || p.Config.Patience != ooc.DefaultPatience {
		t.Errorf("explicit validation: sources changed, or %d iterations, patience %d", p.Config.Iterations, p.Config.Patience)
	}
	// Patience -1: no stopping rule, no hold-out.
	cfg.Patience = -1
	p, err = ooc.Plan(src, cfg, run)
	if err != nil {
		t.Fatal(err)
	}
	if s, o := p.Sources(src, run); s != src || o.Validation != nil || p.Config.Patience != -1 || p.Config.Preconditioner != precond.MethodNystrom {
		t.Errorf("Patience -1: a hold-out, or patience %d (%s)", p.Config.Patience, p.Config.Preconditioner)
	}
}

// TestFitMemoryPlan: a fit whose exact preconditioner does not fit
// RunOptions.MaxMemory runs with the plan's Nyström preconditioner; the
// model's Config records it, and its Training says what was given up.
func TestFitMemoryPlan(t *testing.T) {
	x, y := synth(4000, 3, 11)
	src := stream.NewMemSource(x, 3, y, 1, 500)
	cfg := ooc.Config{Centers: 3000, Iterations: 3}
	p, err := ooc.Plan(src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	limit := p.MemoryWith(precond.Float32).Total - 1
	m, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: limit, TempDir: filepath.Join(t.TempDir(), "missing")})
	if err != nil {
		t.Fatal(err)
	}
	tr, got := m.Training(), m.Config()
	if got.Preconditioner != precond.MethodNystrom || got.PrecondRank == 0 || tr.NystromRank != got.PrecondRank {
		t.Errorf("model's preconditioner %s rank %d (trained at rank %d)", got.Preconditioner, got.PrecondRank, tr.NystromRank)
	}
	if tr.MemoryPlan == nil || !tr.MemoryPlan.Reduced || tr.MemoryPlan.Limit != limit {
		t.Errorf("Training.MemoryPlan = %+v", tr.MemoryPlan)
	}
	// Without the bound nothing is given up, and nothing is recorded.
	m, err = ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	if tr := m.Training(); tr.MemoryPlan != nil || m.Config().Preconditioner != precond.MethodCholesky {
		t.Errorf("unbounded: %s, plan %+v", m.Config().Preconditioner, tr.MemoryPlan)
	}
}

// TestFitOutOfCore: a fit whose exact preconditioner fits
// RunOptions.MaxMemory only with its factors on disk gives the
// predictions of the same fit in memory, leaves nothing in
// RunOptions.TempDir during or after the fit, and its Training says where
// the factors went. The factorisations sum in another order
// (precond.TestOutOfCoreMatchesInMemory), and B = T⁻¹A⁻¹ and CG amplify
// that rounding by the condition of K_MM + εMI: with ε = 10⁻⁶ (M = 1000,
// λ = 10⁻⁵, 5 iterations) the predictions agree within 1e-10 relative
// (measured 1.1e-12); with the default ε = 10⁻¹³ they differed by 8e-9.
func TestFitOutOfCore(t *testing.T) {
	x, y := synth(4000, 3, 11)
	src := stream.NewMemSource(x, 3, y, 1, 500)
	cfg := ooc.Config{Centers: 1000, Iterations: 5, Lambda: 1e-5, Jitter: 1e-6, Patience: -1}
	mem, err := ooc.Fit(context.Background(), src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ooc.Plan(src, cfg, ooc.RunOptions{Workers: 2, MaxMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	limit := p.MemoryWith(precond.Float32).Total - 1
	dir := t.TempDir()
	var names []string
	run := ooc.RunOptions{Workers: 2, MaxMemory: limit, TempDir: dir, Progress: func(ooc.Progress) {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			names = append(names, ents[0].Name())
		}
	}}
	disk, err := ooc.Fit(context.Background(), src, cfg, run)
	if err != nil {
		t.Fatal(err)
	}
	tr := disk.Training()
	if mp := tr.MemoryPlan; mp == nil || !mp.OutOfCore || mp.Dir != dir || disk.Config().Preconditioner != precond.MethodCholesky ||
		disk.Config().PrecondPrecision != precond.Float64 {
		t.Fatalf("%s %s, plan %+v", disk.Config().Preconditioner, disk.Config().PrecondPrecision, mp)
	}
	if len(names) > 0 {
		t.Errorf("%s seen in the temporary directory during the fit", names[0])
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d names left in the temporary directory", len(ents))
	}
	a, b := make([]float64, 100), make([]float64, 100)
	mem.PredictTo(a, x[:300], 100)
	disk.PredictTo(b, x[:300], 100)
	var d, s float64
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
		s = max(s, math.Abs(a[i]))
	}
	if d > 1e-10*s {
		t.Errorf("predictions differ by %.3g relative", d/s)
	}
}

// TestDefaultMaxMemory: where /proc/meminfo gives the machine's memory,
// the default bound is at most 80 % of it, and not 0.
func TestDefaultMaxMemory(t *testing.T) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo")
	}
	var kb int64
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if d := ooc.DefaultMaxMemory(); d <= 0 || d > (kb<<10)/10*8 {
		t.Errorf("DefaultMaxMemory() = %d with MemTotal %d kB", d, kb)
	}
}
