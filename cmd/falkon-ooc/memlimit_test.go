package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
)

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"123", 123}, {"12GiB", 12 << 30}, {"12G", 12 << 30}, {"12gb", 12e9}, {"800MB", 800e6},
		{"1.5 MiB", 3 << 19}, {"4k", 4096}, {"2TB", 2e12},
	} {
		if got, err := parseBytes(c.in); err != nil || got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "0", "-1G", "12X", "GiB", "NaN", "1e30TB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) gave no error", in)
		}
	}
}

// No --max-memory leaves the bound to ooc (RunOptions.MaxMemory 0:
// ooc.DefaultMaxMemory).
func TestDefaultMemoryLimit(t *testing.T) {
	if limit, err := memoryLimit(""); err != nil || limit != 0 {
		t.Errorf("memoryLimit(\"\") = %d, %v; want 0 (ooc's default)", limit, err)
	}
}

// With a limit between the float32 and the float64 estimates and no
// temporary directory for the factors ($TMPDIR missing), auto picks
// float32 and says so; with a limit below both, fit fails before any pass
// and names the largest M for each precision.
func TestFitMaxMemory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	train := makeStore(t, dir, 3000, 1, "y")
	const M = 2000
	// makeStore: d = 3, k = 1, chunks of 700 rows; workers as fit's default.
	r, err := chunkstore.Open(train)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ooc.Plan(r, ooc.Config{Centers: M}, ooc.RunOptions{})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	e64 := plan.MemoryWith(precond.Float64).Total
	e32 := plan.MemoryWith(precond.Float32).Total
	limit := (e64 + e32) / 2
	model := filepath.Join(dir, "m.falkon")
	args := []string{"fit", "--out", model, "--centers", fmt.Sprint(M), "--iters", "2", "--max-memory", fmt.Sprint(limit)}
	code, out, errOut := runCLI(append(args, "--json", train)...)
	if code != 0 {
		t.Fatalf("fit exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "with a float64 preconditioner, over the memory limit of") ||
		!strings.Contains(errOut, "storing it in float32") {
		t.Errorf("no message about float32 on stderr:\n%s", errOut)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Config.PrecondPrecision != precond.Float32 || res.MemoryEstimate.Total != e32 {
		t.Errorf("precond precision %q, estimate %d (want float32, %d)", res.Config.PrecondPrecision, res.MemoryEstimate.Total, e32)
	}
	// Asking for float64 explicitly under the same limit fails at once.
	code, _, errOut = runCLI(append(args, "--precond-precision", "float64", train)...)
	m64 := plan.MaxCenters(limit, precond.Float64)
	m32 := plan.MaxCenters(limit, precond.Float32)
	want := fmt.Sprintf("falkon-ooc fit: M = %d centres need ≈ %s, over the memory limit of %s (--max-memory): at most M = %d fit with a float64 preconditioner, M = %d with --precond-precision float32, more with --precond nystrom\n",
		M, ooc.FormatBytes(e64), ooc.FormatBytes(limit), m64, m32)
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr\n%q\nwant\n%q", code, errOut, want)
	}
	if !(m64 < M && M <= m32) {
		t.Errorf("largest M: %d (float64), %d (float32), around M = %d", m64, m32, M)
	}
	if code, _, errOut := runCLI("fit", "--out", model, "--max-memory", "12X", train); code != 2 || !strings.Contains(errOut, "--max-memory") {
		t.Errorf("bad --max-memory: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runCLI("fit", "--out", model, "--precond-precision", "half", train); code != 2 || !strings.Contains(errOut, "--precond-precision must be") {
		t.Errorf("bad --precond-precision: exit %d, %s", code, errOut)
	}
}

// TestFitMemoryPlanSummary: when not even a float32 Cholesky
// preconditioner fits --max-memory and its factors cannot go to disk
// ($TMPDIR missing), fit (--precond auto) uses the Nyström
// preconditioner of the largest rank that fits, and says what it gave up
// in its summary and its --json even with --quiet.
func TestFitMemoryPlanSummary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	train := makeStore(t, dir, 3000, 1, "y")
	const M = 2000
	r, err := chunkstore.Open(train)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ooc.Plan(r, ooc.Config{Centers: M}, ooc.RunOptions{MaxMemory: -1})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	limit := plan.MemoryWith(precond.Float32).Total - 1
	model := filepath.Join(dir, "m.falkon")
	args := []string{"fit", "--out", model, "--centers", fmt.Sprint(M), "--iters", "2", "--no-checkpoint", "--quiet",
		"--max-memory", fmt.Sprint(limit)}
	code, out, errOut := runCLI(append(args, train)...)
	if code != 0 {
		t.Fatalf("fit exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("--quiet printed on stderr: %s", errOut)
	}
	want := fmt.Sprintf("memory     under the limit of %s (--max-memory): Nyström preconditioner of rank ", ooc.FormatBytes(limit))
	if !strings.Contains(out, want) || !strings.Contains(out, "not stopped by validation rows") {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
	code, out, errOut = runCLI(append(args, "--json", "--force", train)...)
	if code != 0 {
		t.Fatalf("fit --json exit %d: %s", code, errOut)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	mp := res.MemoryPlan
	if mp == nil || !mp.Reduced || mp.Preconditioner != precond.MethodNystrom || mp.Limit != limit ||
		mp.PrecondRank != res.Config.PrecondRank || res.Config.Preconditioner != precond.MethodNystrom || res.MemoryEstimate.Total > limit {
		t.Errorf("--json: memory_plan %+v, config %s rank %d, estimate %d (limit %d)", mp, res.Config.Preconditioner,
			res.Config.PrecondRank, res.MemoryEstimate.Total, limit)
	}
}

// TestFitOutOfCoreSummary: when the exact preconditioner does not fit
// --max-memory in memory, fit keeps its factors on disk in $TMPDIR, says
// so in its summary and its --json even with --quiet, and leaves nothing
// there.
func TestFitOutOfCoreSummary(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	train := makeStore(t, dir, 3000, 1, "y")
	const M = 2000
	r, err := chunkstore.Open(train)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ooc.Plan(r, ooc.Config{Centers: M}, ooc.RunOptions{MaxMemory: -1})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	limit := plan.MemoryWith(precond.Float32).Total - 1
	model := filepath.Join(dir, "m.falkon")
	args := []string{"fit", "--out", model, "--centers", fmt.Sprint(M), "--iters", "2", "--no-checkpoint", "--quiet",
		"--max-memory", fmt.Sprint(limit)}
	code, out, errOut := runCLI(append(args, train)...)
	if code != 0 {
		t.Fatalf("fit exit %d: %s", code, errOut)
	}
	want := fmt.Sprintf("memory     under the limit of %s (--max-memory): exact Cholesky preconditioner with its factors on disk (", ooc.FormatBytes(limit))
	if !strings.Contains(out, want) || !strings.Contains(out, " in "+tmp+", read twice per iteration)") {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
	code, out, errOut = runCLI(append(args, "--json", "--force", train)...)
	if code != 0 {
		t.Fatalf("fit --json exit %d: %s", code, errOut)
	}
	var res fitResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	mp := res.MemoryPlan
	if mp == nil || !mp.Reduced || !mp.OutOfCore || mp.Dir != tmp || mp.DiskBytes <= 0 || mp.Preconditioner != precond.MethodCholesky ||
		res.Config.PrecondPrecision != precond.Float64 || res.MemoryEstimate.Total > limit || res.MemoryEstimate.Disk != mp.DiskBytes {
		t.Errorf("--json: memory_plan %+v, config %s %s, estimate %+v (limit %d)", mp, res.Config.Preconditioner,
			res.Config.PrecondPrecision, res.MemoryEstimate, limit)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("%d names left in $TMPDIR", len(ents))
	}
}
