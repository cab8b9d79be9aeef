package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// profileMode fits in-process on the pinned mode's training store (written
// if missing) and writes a CPU profile of the CG iterations alone (from
// the first StageIterate report to the end of the fit) to out. It prints
// s/iteration. Run it under taskset to profile one core.
func profileMode(dir string, n, d, m, iters int, lambda float64, precision, out string) {
	train := filepath.Join(dir, fmt.Sprintf("train-n%d-d%d", n, d))
	writeData(train+".store", "", n, d, 0)
	r, err := chunkstore.Open(train + ".store")
	if err != nil {
		fail(err)
	}
	defer r.Close()
	prec, err := kernel.ParsePrecision(precision)
	if err != nil {
		fail(err)
	}
	cfg := ooc.Config{Centers: m, Iterations: iters, Lambda: lambda, Precision: prec,
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(float64(d))}}
	f, err := os.Create(out)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	var started bool
	var t0 time.Time
	opts := ooc.RunOptions{Progress: func(p ooc.Progress) {
		if p.Stage == ooc.StageIterate && !started {
			started = true
			t0 = time.Now()
			if err := pprof.StartCPUProfile(f); err != nil {
				fail(err)
			}
		}
	}}
	model, err := ooc.Fit(context.Background(), r, cfg, opts)
	if started {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fail(err)
	}
	fmt.Printf("profile: n = %d, d = %d, M = %d, %s, %d iterations: %.4f s/iteration (model), %.3f s in CG; profile in %s\n",
		n, d, m, precision, iters, model.Training().SecondsPerIteration, time.Since(t0).Seconds(), out)
}
