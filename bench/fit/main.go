// Command fit benchmarks `falkon-ooc fit`: its peak memory against the
// estimate it prints (issue #3), and its speed and accuracy against peers on
// the same data (issue #4). It is not part of the test suite.
//
// Memory mode writes deterministic stores of d = 20 float64 features and
// one target at each -ns (10⁵ and 10⁷ rows by default; 10⁷ is 1.7 GB raw),
// runs fit on each as a child process with the same M and prints each
// child's peak RSS (rusage maxrss), the ratio between the sizes and the
// ratio to the "memory needed" estimate fit printed:
//
//	go run ./bench/fit -mode memory -dir /tmp/falkon-bench-fit
//
// Speed mode writes a train set of -n rows and a test set of -ntest rows
// (a smooth target plus noise) as stores and as .npy files, then runs fit
// and predict (float64 and float32) and the peers in bench/peers — a
// numpy/scipy FALKON and scikit-learn's Nystroem + Ridge — with the same
// M, σ = √d, λ and t, and prints s/iteration, training time, test RMSE and
// peak RSS of each, with ratios to the numpy reference of the same run:
//
//	go run ./bench/fit -mode speed -n 100000 -m 2000 -iters 20
//
// Pinned mode is the speed comparison of record (issue #16): falkon-ooc
// fit and the numpy FALKON of bench/peers on the same data and centres,
// interleaved (each repetition runs every setup once, one after the
// other), pinned with taskset to one core (-cpus 0) and to both (0,1),
// float64 and float32, keeping the minimum s/iteration of each over -reps
// repetitions. It also measures the kernel alone (KtKvAdd on 4096-row
// chunks, as `go test ./kernel -bench KtKvAdd` does, at this M and d, one
// goroutine per CPU of the set) under the same pinning, and reports the
// end-to-end CG iteration's speed as a fraction of it: the pipeline's
// overhead (decode, standardise, reduce, the M × M work) as a number.
//
//	go run ./bench/fit -mode pinned -n 300000 -d 12 -m 2000 -iters 10 -reps 2
//
// AB mode compares a CG iteration of two builds (-base and -from) on the
// same store, interleaved and pinned as pinned mode does, float64 and
// float32, minimum of -reps repetitions (issue #12: the standardisation
// folded into the kernel's tile loading is not slower):
//
//	go run ./bench/fit -mode ab -base COMMIT -from HEAD -n 300000 -d 28 -m 2000 -iters 5 -reps 3
//
// I/O mode is the I/O-bound corner (issue #16): a store larger than the
// memory the fit may use, small M. It runs the same fit with the store in
// page cache and, after evicting the store's pages (fadvise DONTNEED,
// `dd iflag=nocache`), in a memory cgroup whose limit (-limit) is below
// the store size, interleaved, -reps times; and it times a cold
// sequential read of the store's files (the disk's read rate as the fit
// sees it) and an O_DIRECT dd of them. It needs root (cgroup v1 memory
// controller or cgroup v2 memory.max):
//
//	go run ./bench/fit -mode io -n 20000000 -d 12 -m 200 -iters 3 -limit 1G
//
// Profile mode fits in-process (from the working tree) on pinned mode's
// training store and writes a CPU profile of the CG iterations alone:
//
//	go build -o /tmp/benchfit ./bench/fit
//	taskset -c 0 /tmp/benchfit -mode profile -n 300000 -d 12 -m 2000 -iters 10 -cpuprofile cg.pprof
//
// Data and stores are kept in -dir (never in the repository) and reused
// by later runs with the same sizes.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

const seed = 20170904 // data seed: the same data in every run

func main() {
	mode := flag.String("mode", "memory", "memory or speed")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "falkon-bench-fit"), "work `directory` for stores, .npy files and models (not the repository)")
	d := flag.Int("d", 20, "features")
	m := flag.Int("m", 2000, "Nyström centres M")
	iters := flag.Int("iters", 0, "CG iterations (0: 3 in memory mode, 20 in speed mode)")
	lambda := flag.Float64("lambda", 1e-6, "λ")
	workers := flag.Int("workers", 0, "fit --workers (0: one per CPU)")
	ns := flag.String("ns", "100000,10000000", "memory mode: row counts, comma-separated")
	childEnv := flag.String("env", "", "memory mode: extra environment for the fit children, e.g. GOGC=50 (comma-separated)")
	precisions := flag.String("precisions", "float64", "memory mode: fit --precision values, comma-separated")
	n := flag.Int("n", 100_000, "speed mode: training rows")
	ntest := flag.Int("ntest", 100_000, "speed mode: test rows")
	peers := flag.String("peers", "numpy64,numpy32,sklearn", "speed mode: peers to run when present (numpy64, numpy32, sklearn), comma-separated; empty for none")
	python := flag.String("python", "/usr/bin/python3", "speed mode: the Python with numpy, scipy and scikit-learn")
	sklearnMaxBytes := flag.Int64("sklearn-max-bytes", 6<<30, "speed mode: skip sklearn when its n×M float64 feature matrix would exceed this")
	reps := flag.Int("reps", 2, "pinned mode: repetitions (the minimum of each setup is kept)")
	cpuSets := flag.String("cpus", "0;0,1", "pinned mode: taskset CPU lists, separated by ';'")
	block := flag.Int("block", 256, "pinned mode: the numpy FALKON's rows per block")
	limit := flag.String("limit", "1G", "io mode: the cgroup's memory limit")
	precision := flag.String("precision", "float64", "io and profile modes: fit --precision")
	cpuprofile := flag.String("cpuprofile", "cg.pprof", "profile mode: where to write the CPU profile of the CG iterations")
	before := flag.String("before", "", "pinned and io modes: also run falkon-ooc built from this commit, interleaved with -from, and report both (before/after)")
	numpy := flag.Bool("numpy", true, "pinned mode: run the numpy FALKON")
	from := flag.String("from", "HEAD", "build falkon-ooc from this commit (git archive), or from the working tree if empty")
	baseRev := flag.String("base", "", "ab mode: the commit to compare -from with")
	flag.Parse()
	if *mode == "kernel" {
		kernelMode(*m, *d)
		return
	}
	if *mode == "std" {
		stdMode(*m, *d, max(*reps, 2))
		return
	}
	if *mode == "profile" {
		if *iters == 0 {
			*iters = 10
		}
		profileMode(*dir, *n, *d, *m, *iters, *lambda, *precision, *cpuprofile)
		return
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	bin := buildCLI(*dir, *from, "falkon-ooc")
	printMachine()
	switch *mode {
	case "memory":
		if *iters == 0 {
			*iters = 3
		}
		var sizes []int
		for _, s := range strings.Split(*ns, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || v < 1 {
				fail(fmt.Errorf("bad -ns entry %q", s))
			}
			sizes = append(sizes, int(v))
		}
		var env []string
		if *childEnv != "" {
			env = strings.Split(*childEnv, ",")
		}
		memoryMode(bin, *dir, sizes, *d, *m, *iters, *workers, strings.Split(*precisions, ","), env)
	case "speed":
		if *iters == 0 {
			*iters = 20
		}
		var ps []string
		if *peers != "" {
			ps = strings.Split(*peers, ",")
		}
		speedMode(bin, *dir, *n, *ntest, *d, *m, *iters, *workers, *lambda, ps, *python, *sklearnMaxBytes)
	case "io":
		if *iters == 0 {
			*iters = 3
		}
		beforeBin := ""
		if *before != "" {
			beforeBin = buildCLI(*dir, *before, "falkon-ooc-before")
		}
		ioMode(bin, beforeBin, *dir, *n, *d, *m, *iters, *reps, *limit, *precision)
	case "ab":
		if *baseRev == "" {
			fail(fmt.Errorf("ab mode needs -base COMMIT"))
		}
		if *iters == 0 {
			*iters = 5
		}
		base := buildCLI(*dir, *baseRev, "falkon-ooc-base")
		abMode(base, bin, *dir, *n, *d, *m, *iters, *reps, *lambda, strings.Split(*cpuSets, ";"))
	case "pinned":
		if *iters == 0 {
			*iters = 10
		}
		beforeBin := ""
		if *before != "" {
			beforeBin = buildCLI(*dir, *before, "falkon-ooc-before")
		}
		pinnedMode(bin, beforeBin, *dir, *n, *ntest, *d, *m, *iters, *reps, *lambda, strings.Split(*cpuSets, ";"), *python, *block, *numpy)
	default:
		fail(fmt.Errorf("unknown -mode %q", *mode))
	}
}

// buildCLI builds cmd/falkon-ooc into dir, from commit rev (extracted with
// git archive, so that work in progress in the checkout does not break or
// change the measurement) or from the working tree if rev is empty.
func buildCLI(dir, rev, name string) string {
	bin := filepath.Join(dir, name)
	src := "."
	if rev != "" {
		out, err := exec.Command("git", "rev-parse", "--short=12", rev).Output()
		if err != nil {
			fail(fmt.Errorf("git rev-parse %s (run from the repository root): %w", rev, err))
		}
		hash := strings.TrimSpace(string(out))
		bin = filepath.Join(dir, "falkon-ooc-"+hash)
		src = filepath.Join(dir, "src-"+hash)
		if !exists(filepath.Join(src, "go.mod")) {
			if err := os.MkdirAll(src, 0o755); err != nil {
				fail(err)
			}
			sh := exec.Command("sh", "-c", "git archive --format=tar "+hash+" | tar -x -C "+src)
			sh.Stderr = os.Stderr
			if err := sh.Run(); err != nil {
				fail(fmt.Errorf("extracting %s: %w", hash, err))
			}
		}
		fmt.Printf("falkon-ooc built from commit %s\n", hash)
	} else {
		fmt.Println("falkon-ooc built from the working tree")
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/falkon-ooc")
	build.Dir = src
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fail(fmt.Errorf("building falkon-ooc: %w", err))
	}
	return bin
}

func printMachine() {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(l[strings.Index(l, ":")+1:])
				break
			}
		}
	}
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Printf("machine: %s, %d CPUs, %s, load average %s, %s\n",
		model, runtime.NumCPU(), runtime.Version(), load, time.Now().UTC().Format("2006-01-02 15:04 MST"))
}

// gen produces the deterministic data set: x ~ N(0, 1)^d and
// y = sin(u) + ½cos(2v) + ¼uv + 0.1ε, u = a·x, v = b·x with fixed unit
// vectors a, b. Rows are generated in blocks of genBlock, each from its
// own PCG stream, so any block can be produced alone.
type gen struct {
	d    int
	a, b []float64
	set  uint64 // 0 train, 1 test
}

const genBlock = 32768

func newGen(d int, set uint64) *gen {
	r := rand.New(rand.NewPCG(seed, 0))
	g := &gen{d: d, a: make([]float64, d), b: make([]float64, d), set: set}
	for _, v := range [][]float64{g.a, g.b} {
		s := 0.0
		for i := range v {
			v[i] = r.NormFloat64()
			s += v[i] * v[i]
		}
		for i := range v {
			v[i] /= math.Sqrt(s)
		}
	}
	return g
}

// block fills cols (d feature columns then the target, each of len rows)
// with block number blk.
func (g *gen) block(cols [][]float64, blk int) {
	r := rand.New(rand.NewPCG(seed+1+g.set, uint64(blk)))
	rows := len(cols[0])
	for i := range rows {
		u, v := 0.0, 0.0
		for j := range g.d {
			x := r.NormFloat64()
			cols[j][i] = x
			u += g.a[j] * x
			v += g.b[j] * x
		}
		cols[g.d][i] = math.Sin(u) + 0.5*math.Cos(2*v) + 0.25*u*v + 0.1*r.NormFloat64()
	}
}

// writeData writes rows rows of set to a store at storeDir and, if npyBase
// is not empty, to npyBase+"_x.npy" (rows × d) and npyBase+"_y.npy".
// Existing outputs are kept.
func writeData(storeDir, npyBase string, rows, d int, set uint64) {
	needStore := !exists(filepath.Join(storeDir, "meta.json"))
	needNpy := npyBase != "" && !(exists(npyBase+"_x.npy") && exists(npyBase+"_y.npy"))
	if !needStore && !needNpy {
		return
	}
	start := time.Now()
	g := newGen(d, set)
	var w *chunkstore.Writer
	if needStore {
		specs := make([]chunkstore.ColumnSpec, d)
		for j := range specs {
			specs[j] = chunkstore.ColumnSpec{Name: fmt.Sprintf("x%02d", j), Type: "float64"}
		}
		var err error
		w, err = chunkstore.Create(storeDir, specs, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}}, chunkstore.Options{Codec: "zstd"}) // explicit: the fit binary may be older than this one
		if err != nil {
			fail(err)
		}
		defer w.Abort()
	}
	var fx, fy *os.File
	var bx, by *bufio.Writer
	if needNpy {
		fx, bx = createNpy(npyBase+".tmp_x.npy", []int{rows, d})
		fy, by = createNpy(npyBase+".tmp_y.npy", []int{rows})
	}
	cols := make([][]float64, d+1)
	for j := range cols {
		cols[j] = make([]float64, genBlock)
	}
	var buf [8]byte
	for blk := 0; blk*genBlock < rows; blk++ {
		nr := min(genBlock, rows-blk*genBlock)
		c := make([][]float64, d+1)
		for j := range c {
			c[j] = cols[j][:nr]
		}
		g.block(c, blk)
		if w != nil {
			if err := w.Append(c); err != nil {
				fail(err)
			}
		}
		if bx != nil {
			for i := range nr {
				for j := range d {
					binary.LittleEndian.PutUint64(buf[:], math.Float64bits(c[j][i]))
					bx.Write(buf[:])
				}
				binary.LittleEndian.PutUint64(buf[:], math.Float64bits(c[d][i]))
				by.Write(buf[:])
			}
		}
	}
	if w != nil {
		if err := w.Close(); err != nil {
			fail(err)
		}
	}
	if bx != nil {
		for _, p := range []struct {
			f *os.File
			b *bufio.Writer
			s string
		}{{fx, bx, "x"}, {fy, by, "y"}} {
			if err := p.b.Flush(); err != nil {
				fail(err)
			}
			if err := p.f.Close(); err != nil {
				fail(err)
			}
			if err := os.Rename(npyBase+".tmp_"+p.s+".npy", npyBase+"_"+p.s+".npy"); err != nil {
				fail(err)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "wrote %d rows (store %v, npy %v) in %.1f s\n", rows, needStore, needNpy, time.Since(start).Seconds())
}

// createNpy starts a little-endian float64 .npy file (format 1.0) of the
// given C-order shape.
func createNpy(path string, shape []int) (*os.File, *bufio.Writer) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	s := make([]string, len(shape))
	for i, v := range shape {
		s[i] = strconv.Itoa(v)
	}
	dims := strings.Join(s, ", ")
	if len(shape) == 1 {
		dims += ","
	}
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", dims)
	pad := 64 - (10+len(hdr)+1)%64
	hdr += strings.Repeat(" ", pad%64) + "\n"
	b := bufio.NewWriterSize(f, 1<<20)
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	return f, b
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// childResult is what a child run gives: its stdout, wall time, peak RSS
// (rusage maxrss) and the peaks of RssAnon and RssFile sampled from
// /proc/PID/status every 20 ms.
type childResult struct {
	stdout          []byte
	stderr          string
	wall            time.Duration
	maxRSS          int64         // bytes
	peakAnon, peakF int64         // bytes, sampled
	user, sys       time.Duration // CPU time (rusage)
}

func runChild(env []string, name string, args ...string) childResult {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	done := make(chan struct{})
	var peakAnon, peakFile int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		path := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				if len(f) < 2 {
					continue
				}
				v, _ := strconv.ParseInt(f[1], 10, 64)
				switch f[0] {
				case "RssAnon:":
					peakAnon = max(peakAnon, v<<10)
				case "RssFile:":
					peakFile = max(peakFile, v<<10)
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-sampled
	r := childResult{stdout: out.Bytes(), stderr: errb.String(), wall: time.Since(start), peakAnon: peakAnon, peakF: peakFile}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // kilobytes on Linux
		r.user, r.sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
	}
	if err != nil {
		fail(fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(errb.String(), 20)))
	}
	return r
}

func lastLines(s string, k int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-k):], "\n")
}

// fitJSON is the part of `fit --json` used here.
type fitJSON struct {
	N                   int64   `json:"n"`
	Centers             int     `json:"centers"`
	Iterations          int     `json:"iterations"`
	Seconds             float64 `json:"seconds"`
	SecondsPerIteration float64 `json:"seconds_per_iteration"`
	MemoryEstimate      struct {
		Total int64 `json:"total"`
	} `json:"memory_estimate"`
}

func runFit(bin string, env []string, store, model string, m, iters, workers int, sigma, lambda float64, precision string) (fitJSON, childResult) {
	args := []string{"fit", "--json", "--quiet", "--no-checkpoint", "--out", model,
		"--centers", strconv.Itoa(m), "--iters", strconv.Itoa(iters), "--lambda", strconv.FormatFloat(lambda, 'g', -1, 64),
		"--precision", precision, "--workers", strconv.Itoa(workers)}
	if sigma > 0 {
		args = append(args, "--sigma", strconv.FormatFloat(sigma, 'g', -1, 64))
	}
	args = append(args, store)
	r := runChild(env, bin, args...)
	var fj fitJSON
	if err := json.Unmarshal(r.stdout, &fj); err != nil {
		fail(fmt.Errorf("fit --json output: %w\n%s", err, r.stdout))
	}
	return fj, r
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func memoryMode(bin, dir string, sizes []int, d, m, iters, workers int, precisions, env []string) {
	fmt.Printf("memory: d = %d, M = %d, %d iterations, workers %d (0: one per CPU), child env %q\n", d, m, iters, workers, env)
	type row struct {
		n    int
		prec string
		fj   fitJSON
		r    childResult
	}
	var rows []row
	for _, n := range sizes {
		store := filepath.Join(dir, fmt.Sprintf("mem-n%d-d%d.store", n, d))
		writeData(store, "", n, d, 0)
		for _, p := range precisions {
			fj, r := runFit(bin, env, store, filepath.Join(dir, "mem.model"), m, iters, workers, 0, 1e-6, p)
			rows = append(rows, row{n, p, fj, r})
			fmt.Fprintf(os.Stderr, "n = %d %s: peak RSS %s, estimate %s, %.1f s\n", n, p, mib(r.maxRSS), mib(fj.MemoryEstimate.Total), r.wall.Seconds())
		}
	}
	fmt.Println()
	fmt.Println("| n | precision | fit s | s/iter | peak RSS | peak RssAnon | peak RssFile | estimate | RSS / estimate |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, x := range rows {
		fmt.Printf("| %d | %s | %.1f | %.2f | %s | %s | %s | %s | %.2f |\n", x.n, x.prec, x.fj.Seconds, x.fj.SecondsPerIteration,
			mib(x.r.maxRSS), mib(x.r.peakAnon), mib(x.r.peakF), mib(x.fj.MemoryEstimate.Total),
			float64(x.r.maxRSS)/float64(x.fj.MemoryEstimate.Total))
	}
	fmt.Println()
	for _, p := range precisions {
		var first *row
		for i := range rows {
			if rows[i].prec != p {
				continue
			}
			if first == nil {
				first = &rows[i]
				continue
			}
			x := rows[i]
			fmt.Printf("%s: peak RSS at n = %d / at n = %d: %.3f (target: within 10 %%)\n", p, x.n, first.n, float64(x.r.maxRSS)/float64(first.r.maxRSS))
		}
	}
}

// peerJSON is what bench/peers/falkon_numpy.py prints.
type peerJSON struct {
	System              string  `json:"system"`
	Seconds             float64 `json:"train_seconds"`
	SecondsPerIteration float64 `json:"seconds_per_iteration"`
	Iterations          int     `json:"iterations"`
	TestRMSE            float64 `json:"test_rmse"`
	Note                string  `json:"note"`
	Versions            string  `json:"versions"`
}

type speedRow struct {
	name     string
	train    float64 // s
	perIter  float64 // s, 0 if not iterative
	rmse     float64
	rss      int64
	wall     float64
	isNumpy  bool
	precTag  string
	versions string
}

func speedMode(bin, dir string, n, ntest, d, m, iters, workers int, lambda float64, peers []string, python string, sklearnMax int64) {
	sigma := math.Sqrt(float64(d))
	fmt.Printf("speed: n = %d train, %d test, d = %d, M = %d, σ = √d = %.4g, λ = %g, t = %d, workers %d (0: one per CPU)\n",
		n, ntest, d, m, sigma, lambda, iters, workers)
	train := filepath.Join(dir, fmt.Sprintf("train-n%d-d%d", n, d))
	test := filepath.Join(dir, fmt.Sprintf("test-n%d-d%d", ntest, d))
	writeData(train+".store", train, n, d, 0)
	writeData(test+".store", test, ntest, d, 1)

	var rows []speedRow
	for _, p := range []string{"float64", "float32"} {
		model := filepath.Join(dir, "speed-"+p+".model")
		fj, r := runFit(bin, nil, train+".store", model, m, iters, workers, sigma, lambda, p)
		pr := runChild(nil, bin, "predict", "--json", "--quiet", "--model", model, test+".store")
		var pj struct {
			RMSE *float64 `json:"rmse"`
		}
		if err := json.Unmarshal(pr.stdout, &pj); err != nil || pj.RMSE == nil {
			fail(fmt.Errorf("predict --json output %q: %v", pr.stdout, err))
		}
		if p == "float64" {
			writeCenters(model, filepath.Join(dir, "centers.npy"))
		}
		rows = append(rows, speedRow{name: "falkon-ooc " + p, train: fj.Seconds, perIter: fj.SecondsPerIteration,
			rmse: *pj.RMSE, rss: r.maxRSS, wall: r.wall.Seconds(), precTag: p})
		fmt.Fprintf(os.Stderr, "falkon-ooc %s: %.2f s/iter, rmse %.5f\n", p, fj.SecondsPerIteration, *pj.RMSE)
	}
	// OpenBLAS in Debian picks its kernels by CPU model and does not
	// recognise this one; SkylakeX makes it use AVX-512.
	penv := []string{"OPENBLAS_CORETYPE=SkylakeX"}
	script := filepath.Join("bench", "peers", "falkon_numpy.py")
	for _, p := range peers {
		if _, err := exec.LookPath(python); err != nil {
			fmt.Printf("peers skipped: %s not found\n", python)
			break
		}
		args := []string{script, "--train", train, "--test", test, "--m", strconv.Itoa(m),
			"--sigma", strconv.FormatFloat(sigma, 'g', -1, 64), "--lambda", strconv.FormatFloat(lambda, 'g', -1, 64),
			"--iters", strconv.Itoa(iters)}
		centers := filepath.Join(dir, "centers.npy")
		switch p {
		case "numpy64":
			args = append(args, "--system", "numpy", "--dtype", "float64", "--centers", centers)
		case "numpy32":
			args = append(args, "--system", "numpy", "--dtype", "float32", "--centers", centers)
		case "sklearn":
			if need := int64(n) * int64(m) * 8; need > sklearnMax {
				fmt.Printf("sklearn skipped: Nystroem's n×M feature matrix alone would be %s (> -sklearn-max-bytes)\n", mib(need))
				continue
			}
			args = append(args, "--system", "sklearn")
		default:
			fail(fmt.Errorf("unknown peer %q", p))
		}
		if err := exec.Command(python, "-c", "import numpy, scipy"+map[bool]string{true: ", sklearn"}[p == "sklearn"]).Run(); err != nil {
			fmt.Printf("%s skipped: %s cannot import numpy/scipy/sklearn\n", p, python)
			continue
		}
		r := runChild(penv, python, args...)
		var pj peerJSON
		if err := json.Unmarshal(r.stdout, &pj); err != nil {
			fail(fmt.Errorf("%s output: %w\n%s\n%s", p, err, r.stdout, lastLines(r.stderr, 20)))
		}
		rows = append(rows, speedRow{name: pj.System, train: pj.Seconds, perIter: pj.SecondsPerIteration, rmse: pj.TestRMSE,
			rss: r.maxRSS, wall: r.wall.Seconds(), isNumpy: strings.HasPrefix(p, "numpy"), precTag: map[string]string{"numpy64": "float64", "numpy32": "float32"}[p],
			versions: pj.Versions})
		fmt.Fprintf(os.Stderr, "%s: %.2f s/iter, rmse %.5f\n", pj.System, pj.SecondsPerIteration, pj.TestRMSE)
	}
	var ref64 *speedRow
	for i := range rows {
		if rows[i].isNumpy && rows[i].precTag == "float64" {
			ref64 = &rows[i]
		}
		if rows[i].versions != "" {
			fmt.Printf("%s: %s\n", rows[i].name, rows[i].versions)
		}
	}
	fmt.Println()
	fmt.Println("Ratios are against the numpy FALKON of the same precision (float64 for sklearn), measured in this run.")
	fmt.Println()
	fmt.Println("| system | s/iter | train s | process wall s | test RMSE | peak RSS | s/iter ÷ numpy | train ÷ numpy | RMSE ÷ numpy | RSS ÷ numpy |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, x := range rows {
		ref := ref64
		for i := range rows {
			if rows[i].isNumpy && rows[i].precTag == x.precTag && x.precTag != "" {
				ref = &rows[i]
			}
		}
		per := "—"
		if x.perIter > 0 {
			per = fmt.Sprintf("%.3f", x.perIter)
		}
		rat := "| — | — | — | —"
		if ref != nil {
			ri := "—"
			if x.perIter > 0 && ref.perIter > 0 {
				ri = fmt.Sprintf("%.3f", x.perIter/ref.perIter)
			}
			rat = fmt.Sprintf("| %s | %.3f | %.4f | %.2f", ri, x.train/ref.train, x.rmse/ref.rmse, float64(x.rss)/float64(ref.rss))
		}
		fmt.Printf("| %s | %s | %.2f | %.1f | %.5f | %s %s |\n", x.name, per, x.train, x.wall, x.rmse, mib(x.rss), rat)
	}
}

// writeCenters writes the standardised centres of a model to an .npy file,
// so that the numpy FALKON uses the same centres as falkon-ooc and the
// test errors compare the solvers, not two random draws of centres.
func writeCenters(model, path string) {
	mdl, err := ooc.Load(model)
	if err != nil {
		fail(err)
	}
	f, b := createNpy(path, []int{mdl.M(), mdl.D()})
	for _, v := range mdl.Centers() {
		binary.Write(b, binary.LittleEndian, v)
	}
	if err := b.Flush(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/fit:", err)
	os.Exit(1)
}
