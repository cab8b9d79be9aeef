// Command largem benchmarks FALKON at large M (issue #14): the one-buffer
// preconditioner in float64 and float32, test error against M, and the
// pivoted Cholesky against the eigendecomposition on a rank-deficient
// K_MM. It is not part of the test suite; bench/RESULTS.md ("Large M")
// records its figures with the commands.
//
// gen writes a train store of -n rows and a test store of -ntest rows of
// a synthetic target with fine detail in d = 5 (features uniform with unit
// variance, so that no standardisation is needed; train targets carry
// N(0, 0.1²) noise, test targets none):
//
//	go run ./bench/largem -mode gen -dir /tmp/largem-data -n 1000000
//
// sweep fits in-process for each M of -centers and each -precisions on the
// first min(n, -rows-per-center·M) rows and prints M, n, precision, the
// preconditioner's bytes and seconds, s/iteration, the CG iterations to
// relative residuals 1e-3 / 1e-5 and the test RMSE; nystrom:R in
// -precisions runs the Nyström preconditioner of rank R on the same
// centres (issue #23's route decision):
//
//	go run ./bench/largem -mode sweep -dir /tmp/largem-data -centers 1000,2000,5000 -precisions float64,float32
//	go run ./bench/largem -mode sweep -dir /tmp/largem-data -centers 10000 -precisions float32,nystrom:500,nystrom:2000
//
// pivot times the preconditioner of a K_MM of rank M/4 (every centre
// repeated four times) with --precond pivoted and --precond eigen:
//
//	go run ./bench/largem -mode pivot -centers 2000,4000,20000 -methods pivoted,eigen
//
// setup times the preconditioner's set-up as a fit runs it, K_MM filled
// row block by row block straight into the one buffer (kernel.Centers,
// Gaussian, σ = -sigma, on M random 5-D points) and T, T Tᵀ and A
// factorised (precond.Build, λ = -lambda), for each -precisions, and prints
// the seconds of each phase; nystrom:R times the Nyström preconditioner's
// set-up of rank R on the same centres (pivots, Cholesky QR, μ, core):
//
//	go run ./bench/largem -mode setup -centers 20000 -precisions float32
//	go run ./bench/largem -mode setup -centers 50000 -precisions float32,nystrom:4000,nystrom:8000
//
// The fit at M = 5·10⁴ itself runs through the CLI (falkon-ooc fit) in a
// cgroup: see bench/RESULTS.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

const d = 5

func main() {
	mode := flag.String("mode", "sweep", "gen, sweep, pivot or setup")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "largem"), "work `directory` for the stores (not the repository)")
	n := flag.Int("n", 1000000, "gen: train rows")
	ntest := flag.Int("ntest", 20000, "gen: test rows")
	centers := flag.String("centers", "1000,2000,5000", "M values, comma-separated")
	precisions := flag.String("precisions", "float64", "sweep, setup: preconditioner precisions, comma-separated; sweep also takes nystrom:R, the Nyström preconditioner of rank R")
	methods := flag.String("methods", "pivoted,eigen", "pivot: preconditioner methods, comma-separated")
	perCenter := flag.Int("rows-per-center", 20, "sweep: rows used per centre (the whole store at most)")
	iters := flag.Int("iters", 30, "sweep: CG iterations")
	sigma := flag.Float64("sigma", 0.5, "sweep, setup: Gaussian kernel σ")
	lambda := flag.Float64("lambda", 1e-7, "sweep, setup: λ")
	muPrec := flag.String("mu-precision", "float32", "setup: the kernel precision of K_MM·x in nystrom:R's power steps for μ (float32 as ooc's fit; float64 as before round 8)")
	flag.Parse()
	ms, err := ints(*centers)
	if err != nil {
		fail(err)
	}
	switch *mode {
	case "gen":
		err = gen(*dir, *n, *ntest)
	case "sweep":
		err = sweep(*dir, ms, strings.Split(*precisions, ","), *perCenter, *iters, *sigma, *lambda)
	case "pivot":
		err = pivot(ms, strings.Split(*methods, ","))
	case "setup":
		muPrecision = *muPrec
		err = setup(ms, strings.Split(*precisions, ","), *sigma, *lambda)
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "largem:", err)
	os.Exit(1)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// target is the synthetic function: products and sums of sinusoids of
// several frequencies, so that finer centres keep paying off.
func target(x []float64) float64 {
	return math.Sin(2*x[0])*math.Sin(2*x[1]) + math.Sin(2.5*x[2]+1.5*x[3]) +
		0.7*math.Cos(3*(x[0]-x[4])) + 0.5*math.Sin(1.5*x[1]*x[3]) + 0.3*math.Sin(4.5*x[2])*math.Cos(3.5*x[4])
}

func gen(dir string, n, ntest int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range []struct {
		name  string
		rows  int
		noise float64
		seed  uint64
	}{{"train.store", n, 0.1, 1}, {"test.store", ntest, 0, 2}} {
		path := filepath.Join(dir, s.name)
		if _, err := os.Stat(path); err == nil {
			fmt.Printf("%s exists: kept\n", path)
			continue
		}
		var feats []chunkstore.ColumnSpec
		for j := range d {
			feats = append(feats, chunkstore.ColumnSpec{Name: fmt.Sprintf("x%d", j), Type: "float64"})
		}
		w, err := chunkstore.Create(path, feats, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}},
			chunkstore.Options{ChunkRows: 10000, Codec: "none"})
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(s.seed, 14))
		const batch = 100000
		x := make([]float64, d)
		for lo := 0; lo < s.rows; lo += batch {
			rows := min(batch, s.rows-lo)
			cols := make([][]float64, d+1)
			for range rows {
				for j := range d {
					x[j] = (2*rng.Float64() - 1) * math.Sqrt(3) // unit variance
					cols[j] = append(cols[j], x[j])
				}
				cols[d] = append(cols[d], target(x)+s.noise*rng.NormFloat64())
			}
			if err := w.Append(cols); err != nil {
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%d rows)\n", path, s.rows)
	}
	return nil
}

// prefix is the first k chunks of a source.
type prefix struct {
	stream.Source
	k int
}

func (p prefix) NumChunks() int { return p.k }

func sweep(dir string, ms []int, precs []string, perCenter, iters int, sigma, lambda float64) error {
	train, err := chunkstore.Open(filepath.Join(dir, "train.store"))
	if err != nil {
		return err
	}
	defer train.Close()
	test, err := chunkstore.Open(filepath.Join(dir, "test.store"))
	if err != nil {
		return err
	}
	defer test.Close()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# load before: %s", load)
	fmt.Println("| M | n | precond precision | precond bytes | precond s | s/iteration | iterations to 1e-3 / 1e-5 | final residual | test RMSE |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, m := range ms {
		rows, k := 0, 0
		for k < train.NumChunks() && rows < perCenter*m {
			rows += train.ChunkRows(k)
			k++
		}
		for _, p := range precs {
			cfg := ooc.Config{
				Centers: m, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}, Lambda: lambda,
				Iterations: iters, Seed: 1, NoStandardize: true,
			}
			if r, ok := strings.CutPrefix(p, "nystrom:"); ok { // the Nyström preconditioner of rank r
				cfg.Preconditioner = precond.MethodNystrom
				if cfg.PrecondRank, err = strconv.Atoi(r); err != nil {
					return fmt.Errorf("-precisions %s: %w", p, err)
				}
			} else {
				cfg.PrecondPrecision = precond.Precision(p)
			}
			mdl, err := ooc.Fit(context.Background(), prefix{train, k}, cfg, ooc.RunOptions{})
			if err != nil {
				return fmt.Errorf("M = %d, %s: %w", m, p, err)
			}
			ev, err := mdl.Evaluate(context.Background(), test, ooc.PredictOptions{})
			if err != nil {
				return err
			}
			tr := mdl.Training()
			fmt.Printf("| %d | %d | %s | %s | %.1f | %.2f | %s / %s | %.2g | %.4f |\n", m, rows, p,
				ooc.FormatBytes(tr.PrecondBytes), tr.PrecondSeconds, tr.SecondsPerIteration,
				itersTo(tr.Residuals, 1e-3), itersTo(tr.Residuals, 1e-5), tr.Residuals[len(tr.Residuals)-1], *ev.RMSE)
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("# load after: %s", load)
	return nil
}

// itersTo is the first iteration whose residual is at most r ("—" if none).
func itersTo(res []float64, r float64) string {
	for i, v := range res {
		if v <= r {
			return strconv.Itoa(i + 1)
		}
	}
	return "—"
}

// pivot times Build on a K_MM of rank M/4: M/4 random points in 5-D, each
// repeated four times, Gaussian kernel σ = 1.
func pivot(ms []int, methods []string) error {
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# load before: %s", load)
	fmt.Println("| M | method | rank | seconds |")
	fmt.Println("|---|---|---|---|")
	for _, m := range ms {
		r := m / 4
		rng := rand.New(rand.NewPCG(uint64(m), 3))
		pts := make([]float64, r*d)
		for i := range pts {
			pts[i] = rng.NormFloat64()
		}
		rows := func(dst []float64, lo, hi int) {
			for i := lo; i < hi; i++ {
				a := pts[(i%r)*d : (i%r)*d+d]
				for j := range m {
					b := pts[(j%r)*d : (j%r)*d+d]
					s := 0.0
					for l := range d {
						t := a[l] - b[l]
						s += t * t
					}
					dst[(i-lo)*m+j] = math.Exp(-s / 2)
				}
			}
		}
		for _, meth := range methods {
			t0 := time.Now()
			p, err := precond.Build(context.Background(), m, rows, 1e-6, precond.Options{Method: precond.Method(meth)})
			if err != nil {
				return fmt.Errorf("M = %d, %s: %w", m, meth, err)
			}
			fmt.Printf("| %d | %s | %d | %.2f |\n", m, meth, p.Rank(), time.Since(t0).Seconds())
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("# load after: %s", load)
	return nil
}

// setup times precond.Build as a fit calls it (ooc's kmmRows): K_MM by
// kernel.Centers into the buffer, then the three factorisations, whose
// boundaries the progress callback marks (thirds of its range). A
// precision nystrom:R times precond.BuildNystrom of rank R as a fit calls
// it instead; its columns are then the pivots (kernel rows included),
// the Cholesky QR, μ (power steps with K_MM·x by the kernel) and the
// core.
func setup(ms []int, precs []string, sigma, lambda float64) error {
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# load before: %s", load)
	fmt.Println("| M | precision | K_MM s (nystrom: pivots) | T s (QR) | T Tᵀ s (μ) | A s (core) | total s |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, m := range ms {
		rng := rand.New(rand.NewPCG(uint64(m), 4))
		pts := make([]float64, m*d)
		for i := range pts {
			pts[i] = rng.NormFloat64()
		}
		kern := kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}
		c := kernel.NewCenters(kern, pts, m, d, kernel.Float64)
		var mu sync.Mutex
		var wss []*kernel.Workspace
		rows := func(dst []float64, lo, hi int) {
			mu.Lock()
			var ws *kernel.Workspace
			if n := len(wss); n > 0 {
				ws, wss = wss[n-1], wss[:n-1]
			} else {
				ws = c.NewWorkspace()
			}
			mu.Unlock()
			c.BlockTo(ws, dst, pts[lo*d:hi*d], hi-lo)
			mu.Lock()
			wss = append(wss, ws)
			mu.Unlock()
		}
		for _, prec := range precs {
			var marks [4]time.Duration // K_MM done, T done, T Tᵀ done, A done
			t0 := time.Now()
			phase := 0
			// precond.Build's phases end at thirds of its progress;
			// BuildNystrom's (pivots, Cholesky QR, μ, core) at 0.3, 0.9
			// and 0.95.
			ends := [3]float64{0, 1.0 / 3, 2.0 / 3}
			var err error
			if r, ok := strings.CutPrefix(prec, "nystrom:"); ok {
				ends = [3]float64{0.3, 0.9, 0.95}
				opt := precond.Options{Method: precond.MethodNystrom, Seed: 1}
				if opt.Rank, err = strconv.Atoi(r); err != nil {
					return fmt.Errorf("-precisions %s: %w", prec, err)
				}
				opt.Progress = func(done float64) {
					for phase < 3 && done >= ends[phase] {
						marks[phase] = time.Since(t0)
						phase++
					}
				}
				kp := kernel.Float32
				if muPrecision == "float64" { // as ooc's fit before round 8
					kp = kernel.Float64
				}
				c32 := kernel.NewCenters(kern, pts, m, d, kp)
				opt.KMul = func(dst, src []float64, k int) { // K_MM·src by the kernel, as ooc's fit
					parallel(m, func(lo, hi int) {
						c32.KvTo(c32.NewWorkspace(), dst[lo*k:hi*k], pts[lo*d:hi*d], hi-lo, src, k)
					})
				}
				pick := func(dst []float64, idx []int) { // as ooc's kmmPick
					x := make([]float64, 0, len(idx)*d)
					for _, i := range idx {
						x = append(x, pts[i*d:(i+1)*d]...)
					}
					parallel(len(idx), func(lo, hi int) {
						c.BlockTo(c.NewWorkspace(), dst[lo*m:hi*m], x[lo*d:hi*d], hi-lo)
					})
				}
				diag := make([]float64, m)
				for i := range diag {
					diag[i] = kern.Eval(pts[i*d:(i+1)*d], pts[i*d:(i+1)*d])
				}
				_, err = precond.BuildNystrom(context.Background(), m, diag, pick, lambda, opt)
			} else {
				progress := func(done float64) {
					for phase < 3 && done >= ends[phase] {
						marks[phase] = time.Since(t0)
						phase++
					}
				}
				_, err = precond.Build(context.Background(), m, rows, lambda, precond.Options{Precision: precond.Precision(prec), Progress: progress})
			}
			if err != nil {
				return fmt.Errorf("M = %d, %s: %w", m, prec, err)
			}
			marks[3] = time.Since(t0)
			s := func(i int) float64 {
				if i == 0 {
					return marks[0].Seconds()
				}
				return (marks[i] - marks[i-1]).Seconds()
			}
			fmt.Printf("| %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", m, prec, s(0), s(1), s(2), s(3), marks[3].Seconds())
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("# load after: %s", load)
	return nil
}

// muPrecision is -mu-precision.
var muPrecision string

// parallel runs f over [0, n) split in GOMAXPROCS row ranges.
func parallel(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(n, 1))
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}
