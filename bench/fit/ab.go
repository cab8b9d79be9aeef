package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/falkon-ooc/falkon-ooc/kernel"
)

// abMode times a CG iteration of two builds of falkon-ooc on the same
// store: base (built from -base) and new (from -from), interleaved (each
// repetition runs every setup once, base then new), pinned with taskset
// to each CPU set, float64 and float32, keeping the minimum s/iteration
// of each over reps repetitions. It prints the table of new ÷ base.
func abMode(base, bin, dir string, n, d, m, iters, reps int, lambda float64, cpuSets []string) {
	sigma := math.Sqrt(float64(d))
	fmt.Printf("ab: n = %d, d = %d, M = %d, σ = √d = %.4g, λ = %g, t = %d, %d repetitions, CPU sets %q\n",
		n, d, m, sigma, lambda, iters, reps, cpuSets)
	train := filepath.Join(dir, fmt.Sprintf("train-n%d-d%d", n, d))
	writeData(train+".store", "", n, d, 0)
	type key struct{ cpus, prec, build string }
	best := map[key]float64{}
	load0 := loadavg()
	for rep := range reps {
		fmt.Fprintf(os.Stderr, "repetition %d of %d\n", rep+1, reps)
		for _, cpus := range cpuSets {
			for _, p := range []string{"float64", "float32"} {
				for _, b := range []struct{ name, bin string }{{"base", base}, {"new", bin}} {
					model := filepath.Join(dir, "ab-"+b.name+"-"+p+".model")
					args := []string{"-c", cpus, b.bin, "fit", "--json", "--quiet", "--no-checkpoint", "--out", model,
						"--centers", strconv.Itoa(m), "--iters", strconv.Itoa(iters), "--lambda", strconv.FormatFloat(lambda, 'g', -1, 64),
						"--precision", p, "--sigma", strconv.FormatFloat(sigma, 'g', -1, 64), train + ".store"}
					r := runChild(nil, "taskset", args...)
					var fj fitJSON
					if err := json.Unmarshal(r.stdout, &fj); err != nil {
						fail(fmt.Errorf("fit --json output: %w\n%s", err, r.stdout))
					}
					k := key{cpus, p, b.name}
					if old, ok := best[k]; !ok || fj.SecondsPerIteration < old {
						best[k] = fj.SecondsPerIteration
					}
					fmt.Fprintf(os.Stderr, "  %s on CPUs %s, %s: %.4f s/iter (load %s)\n", b.name, cpus, p, fj.SecondsPerIteration, loadavg())
				}
			}
		}
	}
	fmt.Printf("load average before %s, after %s\n\n", load0, loadavg())
	fmt.Println("Minimum s/iteration over the repetitions.")
	fmt.Println()
	fmt.Println("| CPUs | precision | base s/iter | new s/iter | new ÷ base |")
	fmt.Println("|---|---|---|---|---|")
	for _, cpus := range cpuSets {
		for _, p := range []string{"float64", "float32"} {
			b, nw := best[key{cpus, p, "base"}], best[key{cpus, p, "new"}]
			fmt.Printf("| %s | %s | %.4f | %.4f | **%.3f** |\n", cpus, p, b, nw, nw/b)
		}
	}
}

// stdMode times one chunk's kernel pass (KtKvAdd, Gaussian, k = 1, on
// kernelRows rows of d features against m centres) the old way — the
// chunk standardised in place with a finiteness check (as
// ooc.standardizeChecked did), then the kernel — and the new way — the
// kernel with the standardisation as its input map
// (kernel.Centers.WithInputMap) and Workspace.NonFinite — alternating
// call by call in one goroutine of this process, so that load drifts hit
// both alike; each call starts from the raw chunk (a copy, as a decode
// would write it). It prints the minimum seconds per call of each, per
// precision, as one JSON object. Run it under taskset (see abMode).
func stdMode(m, d, reps int) {
	rng := rand.New(rand.NewPCG(2, 2))
	rnd := func(n int, scale, shift float64) []float64 {
		a := make([]float64, n)
		for i := range a {
			a[i] = scale*(2*rng.Float64()-1) + shift
		}
		return a
	}
	raw, cen, u := rnd(kernelRows*d, 7, 3), rnd(m*d, 1, 0), rnd(m, 1, 0)
	mean, invStd := rnd(d, 1, 3), rnd(d, 0.05, 0.15)
	buf := make([]float64, len(raw))
	out := map[string]float64{}
	for _, p := range []kernel.Precision{kernel.Float64, kernel.Float32} {
		plain := kernel.NewCenters(kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(float64(d))}, cen, m, d, p)
		mapped := plain.WithInputMap(mean, invStd)
		ws := plain.NewWorkspace()
		w := make([]float64, m)
		oldBest, newBest := math.Inf(1), math.Inf(1)
		for range reps {
			t0 := time.Now()
			copy(buf, raw)
			for i := 0; i < len(buf); i += d {
				row := buf[i : i+d : i+d]
				bad := false
				for _, v := range row {
					bad = bad || v-v != 0
				}
				if bad {
					fail(fmt.Errorf("non-finite benchmark data"))
				}
				for c, v := range row {
					row[c] = (v - mean[c]) * invStd[c]
				}
			}
			plain.KtKvAdd(ws, w, buf, kernelRows, u, nil, 1)
			oldBest = min(oldBest, time.Since(t0).Seconds())
			t0 = time.Now()
			copy(buf, raw)
			mapped.KtKvAdd(ws, w, buf, kernelRows, u, nil, 1)
			if ws.NonFinite() >= 0 {
				fail(fmt.Errorf("non-finite benchmark data"))
			}
			newBest = min(newBest, time.Since(t0).Seconds())
		}
		out["old_"+p.String()], out["new_"+p.String()] = oldBest, newBest
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
