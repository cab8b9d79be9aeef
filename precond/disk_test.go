package precond_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// symRows is the Rows of a symmetric matrix.
func symRows(ref *mat.SymDense) precond.Rows {
	m := ref.SymmetricDim()
	return func(dst []float64, lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range m {
				dst[(i-lo)*m+j] = ref.At(i, j)
			}
		}
	}
}

// relDiff is max |a − b| / max |b|.
func relDiff(a, b []float64) float64 {
	var d, s float64
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
		s = max(s, math.Abs(b[i]))
	}
	return d / s
}

// TestOutOfCoreMatchesInMemory checks the out-of-core Cholesky
// preconditioner against the in-memory one on the same K_MM, for panel
// heights from 32 rows to all of M, weighted and not, one and three
// right-hand sides. The factorisations sum in another order (left looking
// by panels against right looking by blocks of 256, S by GEMMs of panels
// against UUtPacked), so the factors agree to rounding, not to the bit.
// B = T⁻¹A⁻¹ amplifies that rounding by its condition, here up to about
// 10⁴ (ε = 10⁻⁶ puts K_MM + εMI's smallest eigenvalue near 3·10⁻⁴, λ =
// 10⁻³), so B x agrees within 5e-11 relative (measured: at most 8e-12),
// about 10⁵ times float64's unit roundoff. (At ε = 10⁻¹⁰ the same code
// agrees within 3e-8: the condition, not the panels.) The solves
// themselves are bit-identical to the in-memory ones on the same factor
// (dense.TestSolvePanel).
func TestOutOfCoreMatchesInMemory(t *testing.T) {
	const m, lambda, tol = 300, 1e-3, 5e-11
	ref := gaussKMM(m, 11)
	for _, weighted := range []bool{false, true} {
		var w []float64
		if weighted {
			w = make([]float64, m)
			for i := range w {
				w[i] = 0.5 + float64(i%7)/7
			}
		}
		opt := precond.Options{Jitter: 1e-6, Weights: w}
		mem, err := precond.Build(context.Background(), m, symRows(ref), lambda, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int{32, 100, 152, m} {
			for _, k := range []int{1, 3} {
				dir := t.TempDir()
				o := opt
				o.OutOfCore = &precond.OutOfCore{Dir: dir, MaxBytes: precond.DiskMemoryBytes(m, rows)}
				if h := precond.DiskPanelRows(m, o.OutOfCore.MaxBytes); h != rows {
					t.Fatalf("DiskPanelRows = %d, want %d", h, rows)
				}
				var fractions []float64
				o.Progress = func(f float64) { fractions = append(fractions, f) }
				dk, err := precond.Build(context.Background(), m, symRows(ref), lambda, o)
				if err != nil {
					t.Fatal(err)
				}
				if on, b := dk.OnDisk(); !on || b != precond.DiskBytes(m, rows) {
					t.Fatalf("OnDisk = %v, %d; want true, %d", on, b, precond.DiskBytes(m, rows))
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Fatalf("%d names left in the directory while the factors are open: %v", len(ents), ents)
				}
				if fractions[len(fractions)-1] != 1 {
					t.Fatalf("progress ends at %v", fractions[len(fractions)-1])
				}
				x := make([]float64, m*k)
				for i := range x {
					x[i] = math.Sin(float64(i) + 0.3)
				}
				y1, y2 := make([]float64, m*k), make([]float64, m*k)
				mem.ApplyBTo(y1, x, k)
				dk.ApplyBTo(y2, x, k)
				if d := relDiff(y2, y1); d > tol {
					t.Errorf("weighted %v, %d rows, k %d: B x differs by %.3g relative", weighted, rows, k, d)
				}
				mem.ApplyBTTo(y1, x, k)
				dk.ApplyBTTo(y2, x, k)
				if d := relDiff(y2, y1); d > tol {
					t.Errorf("weighted %v, %d rows, k %d: Bᵀ x differs by %.3g relative", weighted, rows, k, d)
				}
				// A new A (weights in A, another λ) on the same T.
				h := make([]float64, m)
				for i := range h {
					h[i] = 1 + float64(i%5)/5
				}
				cw1, err := mem.WithCenterWeights(h, 2*lambda)
				if err != nil {
					t.Fatal(err)
				}
				cw2, err := dk.WithCenterWeights(h, 2*lambda)
				if err != nil {
					t.Fatal(err)
				}
				cw1.ApplyBTo(y1, x, k)
				cw2.ApplyBTo(y2, x, k)
				if d := relDiff(y2, y1); d > tol {
					t.Errorf("weighted %v, %d rows, k %d: WithCenterWeights' B x differs by %.3g relative", weighted, rows, k, d)
				}
				if dk.Err() != nil {
					t.Fatal(dk.Err())
				}
				cw2.Close()
				dk.Close()
			}
		}
	}
}

// TestSolvePanelsAllocate checks that the solves of an out-of-core
// preconditioner allocate nothing once their scratch is grown.
func TestSolvePanelsAllocate(t *testing.T) {
	const m = 200
	ref := gaussKMM(m, 12)
	p, err := precond.Build(context.Background(), m, symRows(ref), 1e-3,
		precond.Options{Jitter: 1e-10, OutOfCore: &precond.OutOfCore{Dir: t.TempDir(), MaxBytes: precond.DiskMemoryBytes(m, 64)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, k := range []int{1, 2} {
		x, y := make([]float64, m*k), make([]float64, m*k)
		for i := range x {
			x[i] = 1
		}
		p.ApplyBTTo(y, x, k)
		if n := testing.AllocsPerRun(5, func() {
			p.SolveA(y, k)
			p.SolveTTo(y, y, k)
			p.SolveTTTo(y, y, k)
			p.SolveAT(y, k)
		}); n != 0 {
			t.Errorf("k = %d: %v allocations per iteration's four solves", k, n)
		}
	}
}

// TestOutOfCoreErrors checks the messages a user sees when the factors
// cannot go to disk: a directory that does not exist or is not writable,
// a budget that holds not one panel, and a method that cannot go out of
// core.
func TestOutOfCoreErrors(t *testing.T) {
	const m = 100
	ref := gaussKMM(m, 13)
	build := func(o *precond.OutOfCore, meth precond.Method) error {
		_, err := precond.Build(context.Background(), m, symRows(ref), 1e-3, precond.Options{Jitter: 1e-10, Method: meth, OutOfCore: o})
		return err
	}
	missing := filepath.Join(t.TempDir(), "no", "such")
	err := build(&precond.OutOfCore{Dir: missing, MaxBytes: 1 << 20}, "")
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "OutOfCore.Dir") {
		t.Errorf("missing directory: %v", err)
	}
	// A path that is a file, not a directory: unwritable even for root.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = build(&precond.OutOfCore{Dir: file, MaxBytes: 1 << 20}, "")
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "OutOfCore.Dir") {
		t.Errorf("a file as the directory: %v", err)
	}
	if os.Getuid() != 0 { // root writes into a read-only directory
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		err = build(&precond.OutOfCore{Dir: ro, MaxBytes: 1 << 20}, "")
		if err == nil || !strings.Contains(err.Error(), ro) || !errors.Is(err, os.ErrPermission) {
			t.Errorf("read-only directory: %v", err)
		}
	}
	err = build(&precond.OutOfCore{Dir: t.TempDir(), MaxBytes: precond.DiskMemoryBytes(m, 31)}, "")
	if err == nil || !strings.Contains(err.Error(), "OutOfCore.MaxBytes") || !strings.Contains(err.Error(), "not even one panel") {
		t.Errorf("tiny budget: %v", err)
	}
	err = build(&precond.OutOfCore{Dir: t.TempDir(), MaxBytes: 1 << 20}, precond.MethodEigen)
	if err == nil || !strings.Contains(err.Error(), "Options.Method") {
		t.Errorf("eigen out of core: %v", err)
	}
	// Not positive definite: duplicated centres and no jitter to speak of.
	dup := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			dup.SetSym(i, j, ref.At(i%50, j%50))
		}
	}
	_, err = precond.Build(context.Background(), m, symRows(dup), 1e-3,
		precond.Options{Jitter: 1e-300, OutOfCore: &precond.OutOfCore{Dir: t.TempDir(), MaxBytes: precond.DiskMemoryBytes(m, 32)}})
	if !errors.Is(err, precond.ErrNotPD) {
		t.Errorf("duplicated centres: %v, want ErrNotPD", err)
	}
}
