package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// kernelRows is the rows per KtKvAdd call, as in kernel's benchmarks.
const kernelRows = 4096

// kernelMode prints, as one JSON object, the rate of KtKvAdd (Gaussian,
// k = 1) in kernel elements per second, float64 and float32, with one
// goroutine per CPU this process may run on (each with its own workspace
// and w, shared centres, as a CG pass runs it), for about 2 s each.
func kernelMode(m, d int) {
	procs := runtime.GOMAXPROCS(0)
	rng := rand.New(rand.NewPCG(1, 1))
	rnd := func(n int) []float64 {
		a := make([]float64, n)
		for i := range a {
			a[i] = 2*rng.Float64() - 1
		}
		return a
	}
	x, cen, u, v := rnd(kernelRows*d), rnd(m*d), rnd(m), rnd(kernelRows)
	out := map[string]float64{"procs": float64(procs)}
	for _, p := range []kernel.Precision{kernel.Float64, kernel.Float32} {
		cs := kernel.NewCenters(kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(float64(d))}, cen, m, d, p)
		best := 0.0
		for range 3 { // best of three ~0.7 s rounds
			var wg sync.WaitGroup
			calls := make([]int, procs)
			start := time.Now()
			deadline := start.Add(700 * time.Millisecond)
			for g := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ws := cs.NewWorkspace()
					w := make([]float64, m)
					for time.Now().Before(deadline) {
						cs.KtKvAdd(ws, w, x, kernelRows, u, v, 1)
						calls[g]++
					}
				}()
			}
			wg.Wait()
			total := 0
			for _, c := range calls {
				total += c
			}
			best = max(best, float64(total)*kernelRows*float64(m)/time.Since(start).Seconds())
		}
		out[p.String()] = best
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

type pinnedKey struct{ cpus, prec, system string }

// pinnedMode runs falkon-ooc fit and the numpy FALKON interleaved and
// pinned, and the kernel alone under the same pinning (see the package
// comment).
//
// With beforeBin set, each falkon-ooc fit is preceded by the same fit of
// beforeBin (the "before" commit), and the table reports both; with
// numpy false the numpy FALKON is not run.
func pinnedMode(bin, beforeBin, dir string, n, ntest, d, m, iters, reps int, lambda float64, cpuSets []string, python string, block int, numpy bool) {
	sigma := math.Sqrt(float64(d))
	fmt.Printf("pinned: n = %d, d = %d, M = %d, σ = √d = %.4g, λ = %g, t = %d, %d repetitions, CPU sets %q, numpy block %d rows\n",
		n, d, m, sigma, lambda, iters, reps, cpuSets, block)
	if _, err := exec.LookPath("taskset"); err != nil {
		fail(fmt.Errorf("taskset not found: %w", err))
	}
	train := filepath.Join(dir, fmt.Sprintf("train-n%d-d%d", n, d))
	test := filepath.Join(dir, fmt.Sprintf("test-n%d-d%d", ntest, d))
	writeData(train+".store", train, n, d, 0)
	writeData(test+".store", test, ntest, d, 1)
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	script := filepath.Join("bench", "peers", "falkon_numpy.py")
	centers := filepath.Join(dir, fmt.Sprintf("centers-n%d-d%d-m%d.npy", n, d, m))
	// Debian's OpenBLAS does not recognise this CPU's model; SkylakeX
	// makes it use its AVX-512 kernels.
	penv := []string{"OPENBLAS_CORETYPE=SkylakeX"}
	if v := os.Getenv("OPENBLAS_CORETYPE"); v != "" {
		penv = []string{"OPENBLAS_CORETYPE=" + v}
	}
	best := map[pinnedKey]float64{}
	rmse := map[pinnedKey]float64{}
	kern := map[string]map[string]float64{}
	note := func(k pinnedKey, v float64) {
		if old, ok := best[k]; !ok || v < old {
			best[k] = v
		}
		fmt.Fprintf(os.Stderr, "  %s on CPUs %s, %s: %.4f s/iter (load %s)\n", k.system, k.cpus, k.prec, v, loadavg())
	}
	load0 := loadavg()
	for rep := range reps {
		fmt.Fprintf(os.Stderr, "repetition %d of %d\n", rep+1, reps)
		for _, cpus := range cpuSets {
			for _, p := range []string{"float64", "float32"} {
				model := filepath.Join(dir, "pinned-"+p+".model")
				fit := func(bin, system string) {
					args := []string{"-c", cpus, bin, "fit", "--json", "--quiet", "--no-checkpoint", "--out", model,
						"--centers", strconv.Itoa(m), "--iters", strconv.Itoa(iters), "--lambda", strconv.FormatFloat(lambda, 'g', -1, 64),
						"--precision", p, "--sigma", strconv.FormatFloat(sigma, 'g', -1, 64), train + ".store"}
					r := runChild(nil, "taskset", args...)
					var fj fitJSON
					if err := json.Unmarshal(r.stdout, &fj); err != nil {
						fail(fmt.Errorf("fit --json output: %w\n%s", err, r.stdout))
					}
					note(pinnedKey{cpus, p, system}, fj.SecondsPerIteration)
				}
				if beforeBin != "" {
					fit(beforeBin, "before")
				}
				fit(bin, "falkon-ooc")
				if rep == 0 && cpus == cpuSets[0] {
					pr := runChild(nil, bin, "predict", "--json", "--quiet", "--model", model, test+".store")
					var pj struct {
						RMSE *float64 `json:"rmse"`
					}
					if err := json.Unmarshal(pr.stdout, &pj); err != nil || pj.RMSE == nil {
						fail(fmt.Errorf("predict --json output %q: %v", pr.stdout, err))
					}
					rmse[pinnedKey{"", p, "falkon-ooc"}] = *pj.RMSE
					if p == "float64" {
						writeCenters(model, centers)
					}
				}
				if !numpy {
					continue
				}
				pargs := []string{"-c", cpus, python, script, "--train", train, "--test", test, "--m", strconv.Itoa(m),
					"--sigma", strconv.FormatFloat(sigma, 'g', -1, 64), "--lambda", strconv.FormatFloat(lambda, 'g', -1, 64),
					"--iters", strconv.Itoa(iters), "--system", "numpy", "--dtype", p, "--centers", centers, "--block", strconv.Itoa(block)}
				pr := runChild(penv, "taskset", pargs...)
				var pj peerJSON
				if err := json.Unmarshal(pr.stdout, &pj); err != nil {
					fail(fmt.Errorf("numpy peer output: %w\n%s\n%s", err, pr.stdout, lastLines(pr.stderr, 20)))
				}
				note(pinnedKey{cpus, p, "numpy"}, pj.SecondsPerIteration)
				if rep == 0 {
					rmse[pinnedKey{"", p, "numpy"}] = pj.TestRMSE
					if cpus == cpuSets[0] && p == "float64" {
						fmt.Printf("peer: %s\n", pj.Versions)
					}
				}
			}
			kr := runChild(nil, "taskset", "-c", cpus, self, "-mode", "kernel", "-m", strconv.Itoa(m), "-d", strconv.Itoa(d))
			var kj map[string]float64
			if err := json.Unmarshal(kr.stdout, &kj); err != nil {
				fail(fmt.Errorf("kernel mode output: %w\n%s", err, kr.stdout))
			}
			if kern[cpus] == nil {
				kern[cpus] = map[string]float64{}
			}
			for _, p := range []string{"float64", "float32"} {
				kern[cpus][p] = max(kern[cpus][p], kj[p])
			}
			fmt.Fprintf(os.Stderr, "  kernel on CPUs %s: %.3f / %.3f Gelem/s (float64 / float32)\n", cpus, kj["float64"]/1e9, kj["float32"]/1e9)
		}
	}
	load1 := loadavg()
	fmt.Printf("load average before %s, after %s\n\n", load0, load1)
	fmt.Println("Minimum s/iteration over the repetitions; the kernel row is n·M ÷ the kernel's rate (KtKvAdd alone, one goroutine per CPU).")
	fmt.Println()
	if beforeBin != "" {
		fmt.Println("| CPUs | precision | before s/iter | after s/iter | after ÷ before | kernel alone s/iter | before ÷ kernel speed | **after ÷ kernel speed** |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
		for _, cpus := range cpuSets {
			for _, p := range []string{"float64", "float32"} {
				b, a := best[pinnedKey{cpus, p, "before"}], best[pinnedKey{cpus, p, "falkon-ooc"}]
				ks := float64(n) * float64(m) / kern[cpus][p]
				fmt.Printf("| %s | %s | %.3f | %.3f | %.2f | %.3f | %.0f %% | **%.0f %%** |\n", cpus, p, b, a, a/b, ks, 100*ks/b, 100*ks/a)
			}
		}
		if !numpy {
			return
		}
		fmt.Println()
	}
	fmt.Println("| CPUs | precision | falkon-ooc s/iter | numpy s/iter | falkon-ooc ÷ numpy | kernel alone s/iter | end-to-end ÷ kernel speed | test RMSE falkon-ooc / numpy |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, cpus := range cpuSets {
		for _, p := range []string{"float64", "float32"} {
			f, np := best[pinnedKey{cpus, p, "falkon-ooc"}], best[pinnedKey{cpus, p, "numpy"}]
			ks := float64(n) * float64(m) / kern[cpus][p]
			fmt.Printf("| %s | %s | %.3f | %.3f | **%.2f×** | %.3f | %.0f %% | %.5f / %.5f |\n", cpus, p, f, np, f/np, ks, 100*ks/f,
				rmse[pinnedKey{"", p, "falkon-ooc"}], rmse[pinnedKey{"", p, "numpy"}])
		}
	}
}
