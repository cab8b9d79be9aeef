package precond

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"

	"github.com/falkon-ooc/falkon-ooc/internal/dense"
)

// OutOfCore asks Build for the Cholesky preconditioner with its factors
// on disk: T and A are computed in row panels that fit MaxBytes, written
// to files in Dir, and each solve streams them, one read of the factor
// per solve. The factors are stored in float64 whatever
// Options.Precision says: a float32 factorisation needs the jitter
// ε = DefaultJitter32, which at λ below 10ε changes the fit (see
// Float32), and the disk, not the arithmetic, bounds the solves.
type OutOfCore struct {
	// Dir is the directory of the factor files; "" means os.TempDir().
	// The files are removed from the directory as soon as they are open
	// (on systems that allow it; else by Close), so nothing is left under
	// any name when the process ends, by Close, a crash or a kill.
	Dir string
	// MaxBytes bounds the memory of the panels (DiskPanelRows).
	MaxBytes int64
}

// diskPanels is the number of h × M float64 panels the out-of-core
// factorisation holds at once: the panel being factorised, the panel of T
// that A's panel is formed from, and the panel being read.
const diskPanels = 3

// minDiskRows is the fewest rows of a panel: fewer would read the factors
// M/h times over while they are built.
const minDiskRows = 32

// DiskPanelRows is the height h of the row panels of an out-of-core
// preconditioner of m centres whose panels may hold maxBytes
// (DiskMemoryBytes(m, h) ≤ maxBytes): a multiple of 4 (the solves'
// blocking), at most m; 0 when not even minDiskRows rows (or m, if
// fewer) fit.
func DiskPanelRows(m int, maxBytes int64) int {
	if m <= 0 {
		return 0
	}
	rest := maxBytes - 3*8*int64(m)
	h := int(min(int64(m), max(0, rest/(diskPanels*8*int64(m)))))
	if h < m {
		h -= h % 4
	}
	if h < min(m, minDiskRows) {
		return 0
	}
	return h
}

// DiskMemoryBytes is the memory an out-of-core preconditioner of m
// centres with panels of h rows holds while it is built (three h × M
// float64 panels and three length-M vectors); after the build it holds
// one panel.
func DiskMemoryBytes(m, h int) int64 {
	M := int64(m)
	return diskPanels*8*int64(h)*M + 3*8*M
}

// DiskBytes is the disk space the factors of an out-of-core
// preconditioner of m centres with panels of h rows take: T and A, each
// the upper triangle of M × M in float64 rounded up to whole panel rows.
func DiskBytes(m, h int) int64 { return 2 * triangleBytes(m, h) }

func triangleBytes(m, h int) int64 {
	var n int64
	for r0 := 0; r0 < m; r0 += h {
		n += int64(min(h, m-r0)) * int64(m-r0) * 8
	}
	return n
}

// store is the panel buffer and the error of the out-of-core factors that
// share it (T and every A built on it).
type store struct {
	mu   sync.Mutex
	m    int
	h    int
	dir  string
	buf  []float64   // one panel, h × M; the solves read into it
	xs   []float64   // the transposed right-hand sides of a solve, k × M
	cols [][]float64 // the right-hand sides as vectors (vectors)
	xv   [][]float64 // their rows from a panel's first on
	err  error       // the first read error of a solve; sticky
}

// diskFile is one factor (T or A) on disk, in row panels of st.h rows:
// panel i holds rows i·h … of U, columns i·h … M−1, h × (M − i·h)
// row-major, at off[i].
type diskFile struct {
	st   *store
	f    *os.File
	path string // the name it was created under (removed already, or by close)
	keep bool   // the name could not be removed yet: close removes it
	off  []int64
	what string // "T" or "A", for errors
}

func (s *store) panels() int { return (s.m + s.h - 1) / s.h }

// rows is the first row and the height of panel i.
func (s *store) rows(i int) (r0, h int) {
	r0 = i * s.h
	return r0, min(s.h, s.m-r0)
}

// newFile creates the file of factor what in the store's directory and
// removes its name at once.
func (s *store) newFile(what string) (*diskFile, error) {
	f, err := os.CreateTemp(s.dir, "falkon-precond-"+what+"-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("precond: creating the out-of-core factor %s in %s (OutOfCore.Dir): %w", what, s.dir, err)
	}
	df := &diskFile{st: s, f: f, path: f.Name(), what: what}
	if os.Remove(df.path) != nil {
		df.keep = true
	}
	var at int64
	for i := range s.panels() {
		df.off = append(df.off, at)
		r0, h := s.rows(i)
		at += int64(h) * int64(s.m-r0) * 8
	}
	return df, nil
}

func (d *diskFile) close() {
	d.f.Close()
	if d.keep {
		os.Remove(d.path)
	}
}

func bytesOf(x []float64) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*8)
}

// read reads panel i into dst (its h × w elements, stride w).
func (d *diskFile) read(i int, dst []float64) ([]float64, error) {
	r0, h := d.st.rows(i)
	n := h * (d.st.m - r0)
	if _, err := d.f.ReadAt(bytesOf(dst[:n]), d.off[i]); err != nil {
		return nil, fmt.Errorf("precond: reading panel %d of the out-of-core factor %s (%s): %w", i, d.what, d.path, err)
	}
	return dst[:n], nil
}

// write writes panel i from p (h × w, stride w).
func (d *diskFile) write(i int, p []float64) error {
	if _, err := d.f.WriteAt(bytesOf(p), d.off[i]); err != nil {
		return fmt.Errorf("precond: writing panel %d of the out-of-core factor %s to %s (OutOfCore.Dir; %s needed): %w",
			i, d.what, d.st.dir, humanBytes(DiskBytes(d.st.m, d.st.h)), err)
	}
	return nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}

// disk is the factors of the out-of-core Cholesky preconditioner.
type disk struct {
	st    *store
	t, a  *diskFile
	ownsT bool // t is closed with this factor (the original, not a WithLambda copy)
}

// buildDisk is Build's Cholesky method out of core.
func (p *Preconditioner) buildDisk(ctx context.Context, rows Rows, opt Options) error {
	m := p.m
	h := DiskPanelRows(m, opt.OutOfCore.MaxBytes)
	if h == 0 {
		return fmt.Errorf("precond: %s of memory (OutOfCore.MaxBytes) holds not even one panel of the out-of-core factors: "+
			"M = %d needs at least %s", humanBytes(opt.OutOfCore.MaxBytes), m, humanBytes(DiskMemoryBytes(m, min(m, minDiskRows))))
	}
	dir := opt.OutOfCore.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	if free, err := DiskFree(dir); err != nil {
		return fmt.Errorf("precond: the out-of-core factors cannot go to %s (OutOfCore.Dir): %w", dir, err)
	} else if free >= 0 && free < DiskBytes(m, h) {
		return fmt.Errorf("precond: the out-of-core factors of M = %d centres need %s of disk in %s (OutOfCore.Dir), which has %s free",
			m, humanBytes(DiskBytes(m, h)), dir, humanBytes(free))
	}
	reclaim(DiskMemoryBytes(m, h))
	st := &store{m: m, h: h, dir: dir}
	t, err := st.newFile("T")
	if err != nil {
		return err
	}
	b := &diskBuild{st: st, ctx: ctx, workers: p.workers, progress: opt.Progress,
		k: make([]float64, h*m), t: make([]float64, h*m), r: make([]float64, h*m)}
	if err := b.factoriseT(t, rows, p.d, p.jitter, p.lambda); err != nil {
		t.close()
		return err
	}
	a, err := b.factoriseA(t, nil, p.lambda, p.jitter, 1)
	if err != nil {
		t.close()
		return err
	}
	st.buf = b.r
	p.f, p.prec = &disk{st: st, t: t, a: a, ownsT: true}, Float64
	return nil
}

// diskBuild is the state of an out-of-core factorisation: three panel
// buffers (k the panel being factorised, t a panel of T, r the one read).
type diskBuild struct {
	st       *store
	ctx      context.Context
	workers  int
	progress func(float64)
	k, t, r  []float64
}

func (b *diskBuild) report(phase, done float64) {
	if b.progress != nil {
		b.progress((phase + done) / 3)
	}
}

// factoriseT computes T = chol(D K_MM D + εMI) panel by panel, left
// looking: panel i is K_MM's rows, less the products of the panels above
// (each read once), then its diagonal block is factorised and the rest of
// the panel solved against it.
func (b *diskBuild) factoriseT(t *diskFile, rows Rows, d []float64, eps, lambda float64) error {
	st, m := b.st, b.st.m
	for i := range st.panels() {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		r0, h := st.rows(i)
		w := m - r0
		// K_MM's rows r0 … r0+h−1, whole, then moved down to stride w.
		full := b.k[:h*m]
		fillPanel(full, r0, h, m, b.workers, rows)
		p := b.k[:h*w]
		for r := range h {
			copy(p[r*w:r*w+w], full[r*m+r0:r*m+m])
		}
		for r := range h {
			row := p[r*w : r*w+w]
			if d != nil {
				for j := r; j < w; j++ {
					row[j] *= d[r0+r] * d[r0+j]
				}
			}
			row[r] += eps * float64(m)
		}
		if err := b.update(t, i, p); err != nil {
			return err
		}
		if ok, col := dense.Cholesky(p, h, w, b.workers); !ok {
			return &NotPDError{Matrix: matT, Column: r0 + col, Jitter: eps, Lambda: lambda}
		}
		finishPanel(p, h, w, b.workers)
		if err := t.write(i, p); err != nil {
			return err
		}
		b.report(0, float64(r0+h)/float64(m))
	}
	return nil
}

// finishPanel completes a panel (h × w) whose diagonal block has been
// factorised: the rest of its rows solved against that block, and the
// block's strict lower triangle (still the matrix's) cleared, so that a
// panel's rows are rows of the factor (S's panels are products of them).
func finishPanel(p []float64, h, w, workers int) {
	if w > h {
		dense.SolveUpperT(p, h, w, p[h:], w-h, w, workers)
	}
	for r := 1; r < h; r++ {
		clear(p[r*w : r*w+r])
	}
}

// fillPanel writes rows r0 … r0+h−1 of K_MM (h × m) into dst from rows,
// in blocks of 32 rows on workers goroutines.
func fillPanel(dst []float64, r0, h, m, workers int, rows Rows) {
	const block = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range min(workers, (h+block-1)/block) {
		wg.Go(func() {
			for {
				mu.Lock()
				lo := next
				next += block
				mu.Unlock()
				if lo >= h {
					return
				}
				hi := min(h, lo+block)
				rows(dst[lo*m:hi*m], r0+lo, r0+hi)
			}
		})
	}
	wg.Wait()
}

// update subtracts from panel i of a factor being built (p, h × w) the
// products of its panels above, read from f: p −= U_jᵀ U_j restricted to
// p's columns, for each panel j < i.
func (b *diskBuild) update(f *diskFile, i int, p []float64) error {
	st, m := b.st, b.st.m
	r0, h := st.rows(i)
	w := m - r0
	for j := range i {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		q0, hj := st.rows(j)
		wj := m - q0
		u, err := f.read(j, b.r)
		if err != nil {
			return err
		}
		dense.Gemm(true, false, h, w, hj, -1, u[r0-q0:], wj, u[r0-q0:], wj, p, w, b.workers)
	}
	return nil
}

// factoriseA computes A = chol(T H Tᵀ/M + λI) (H = diag(hw); nil: I) into
// a new file, panel by panel: panel i of S from panel i of T and every
// panel of T below it, then as factoriseT. phase is the progress third.
func (b *diskBuild) factoriseA(t *diskFile, hw []float64, lambda, eps float64, phase float64) (*diskFile, error) {
	st, m := b.st, b.st.m
	a, err := st.newFile("A")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*diskFile, error) {
		a.close()
		return nil, err
	}
	for i := range st.panels() {
		if err := b.ctx.Err(); err != nil {
			return fail(err)
		}
		r0, h := st.rows(i)
		w := m - r0
		ti, err := t.read(i, b.t)
		if err != nil {
			return fail(err)
		}
		if hw != nil {
			for r := range h {
				row := ti[r*w : r*w+w]
				for j := r; j < w; j++ {
					row[j] *= hw[r0+j]
				}
			}
		}
		// S's panel: its columns of panel j are T_i T_jᵀ/M over the
		// columns of T from panel j's first row on (T_j is 0 left of it).
		p := b.k[:h*w]
		clear(p)
		for j := i; j < st.panels(); j++ {
			q0, hj := st.rows(j)
			wj := m - q0
			u, err := t.read(j, b.r)
			if err != nil {
				return fail(err)
			}
			dense.Gemm(false, true, h, hj, wj, 1/float64(m), ti[q0-r0:], w, u, wj, p[q0-r0:], w, b.workers)
		}
		for r := range h {
			p[r*w+r] += lambda
		}
		b.report(phase, (2*float64(r0)+float64(h))/float64(m))
		if err := b.update(a, i, p); err != nil {
			return fail(err)
		}
		if ok, col := dense.Cholesky(p, h, w, b.workers); !ok {
			if err := b.ctx.Err(); err != nil {
				return fail(err)
			}
			return fail(&NotPDError{Matrix: matA, Column: r0 + col, Jitter: eps, Lambda: lambda})
		}
		finishPanel(p, h, w, b.workers)
		if err := a.write(i, p); err != nil {
			return fail(err)
		}
		b.report(phase, 2*float64(r0+h)/float64(m))
	}
	return a, nil
}

// solve solves U x = b (trans false) or Uᵀ x = b in place for x M × k,
// reading f's panels once, bottom up or top down. A read error is kept
// (Err) and x is set to NaN.
func (s *store) solve(f *diskFile, trans bool, x []float64, k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	if s.err != nil {
		fillNaN(x)
		return
	}
	xv := s.vectors(x, k)
	np := s.panels()
	for n := range np {
		i := np - 1 - n
		if trans {
			i = n
		}
		r0, h := s.rows(i)
		w := m - r0
		u, err := f.read(i, s.buf)
		if err != nil {
			s.err = err
			fillNaN(x)
			return
		}
		for c := range xv {
			s.xv[c] = xv[c][r0:]
		}
		dense.SolvePanel(u, h, w, w, trans, s.xv[:len(xv)])
	}
	if k > 1 {
		for i := range m {
			for c := range k {
				x[i*k+c] = xv[c][i]
			}
		}
	}
}

// vectors returns the k columns of x (M × k) as vectors: x itself when
// k = 1, else copies in the store's scratch (grown on first use only).
func (s *store) vectors(x []float64, k int) [][]float64 {
	m := s.m
	if len(s.cols) < k {
		s.cols, s.xv = make([][]float64, k), make([][]float64, k)
	}
	cols := s.cols[:k]
	if k == 1 {
		cols[0] = x[:m]
		return cols
	}
	if len(s.xs) < k*m {
		s.xs = make([]float64, k*m)
	}
	for c := range k {
		cols[c] = s.xs[c*m : c*m+m]
	}
	for i := range m {
		for c := range k {
			cols[c][i] = x[i*k+c]
		}
	}
	return cols
}

func fillNaN(x []float64) {
	for i := range x {
		x[i] = math.NaN()
	}
}

func (f *disk) solveT(trans bool, x []float64, k, workers int) { f.st.solve(f.t, trans, x, k) }

func (f *disk) solveA(trans bool, x []float64, k, workers int) { f.st.solve(f.a, trans, x, k) }

func (f *disk) bytes() int64 {
	return int64(len(f.st.buf)+len(f.st.xs)) * 8
}

// withA is the factors sharing f's T with a new A = chol(T H Tᵀ/M + λI).
func (f *disk) withA(hw []float64, lambda, eps float64, workers int) (factors, error) {
	st, m := f.st, f.st.m
	st.mu.Lock()
	defer st.mu.Unlock()
	b := &diskBuild{st: st, ctx: context.Background(), workers: workers,
		k: make([]float64, st.h*m), t: make([]float64, st.h*m), r: st.buf}
	a, err := b.factoriseA(f.t, hw, lambda, eps, 0)
	if err != nil {
		return nil, err
	}
	return &disk{st: st, t: f.t, a: a}, nil
}

func (f *disk) withLambda(lambda, eps float64, workers int) (factors, error) {
	return f.withA(nil, lambda, eps, workers)
}

func (f *disk) withLambdas(lambdas []float64, eps float64, workers int) ([]factors, []error) {
	out, errs := make([]factors, len(lambdas)), make([]error, len(lambdas))
	for i, l := range lambdas {
		out[i], errs[i] = f.withA(nil, l, eps, workers)
	}
	return out, errs
}

func (f *disk) withWeights(h []float64, lambda, eps float64, workers int) (factors, error) {
	return f.withA(h, lambda, eps, workers)
}

func (f *disk) close() {
	f.a.close()
	if f.ownsT {
		f.t.close()
	}
}

// OnDisk reports whether the factors are on disk (OutOfCore) and the
// bytes they take there.
func (p *Preconditioner) OnDisk() (bool, int64) {
	f, ok := p.f.(*disk)
	if !ok {
		return false, 0
	}
	return true, DiskBytes(f.st.m, f.st.h)
}

// Err reports the first error of reading the factors of an out-of-core
// preconditioner in a solve (the solve then set its result to NaN); nil
// for the others.
func (p *Preconditioner) Err() error {
	f, ok := p.f.(*disk)
	if !ok {
		return nil
	}
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	return f.st.err
}

// Close releases the files of an out-of-core preconditioner (those of
// T only when p is the one Build returned, not a WithLambda copy that
// shares them); it does nothing for the others. p must not be used
// afterwards.
func (p *Preconditioner) Close() error {
	if f, ok := p.f.(*disk); ok {
		f.close()
	}
	return nil
}

// errDiskMethod is Build's error for OutOfCore with a method other than
// MethodCholesky.
var errDiskMethod = errors.New("precond: Options.OutOfCore needs the Cholesky method (Options.Method)")
