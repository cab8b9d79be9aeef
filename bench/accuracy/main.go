// Command accuracy measures falkon-ooc's test accuracy on real data sets and
// prints one Markdown table row per data set next to a published number.
//
// For each data set it prepares train and test parts, carves a validation
// split out of the training part, chooses σ and λ by a small grid on that
// validation split at a modest M, refits the best pair at the final M on the
// whole training part and evaluates the test part once. Every fit goes
// through the path users get: the rows are written as Parquet files in a
// temporary directory, ingested into chunk stores (package ingest), fitted
// with ooc.Fit on the store and evaluated with Model.Evaluate on a store.
//
// Usage, from the repository root:
//
//	go run ./bench/accuracy [-only NAME[,NAME]] [-quick] [-data ../shared/data]
//	go run ./bench/accuracy -classify [-classify-rows 60000] [-classify-centers 2000]
//
// -classify measures the calibration of class probabilities on skin and
// fashion-mnist: a fit on 80 % of a subsample, ooc.Calibrate on the other
// 20 %, and log-loss and expected calibration error (15 equal-width bins
// of the top-class probability) on test rows, uncalibrated and calibrated.
//
// The data live in ../shared/data (see its README.md); a data set whose files
// are absent is skipped with a message. Fashion-MNIST is read from
// /usr/share/datasets/fashion-mnist (Debian package dataset-fashion-mnist).
// Progress goes to stderr, the tables to stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

func main() {
	dataDir := flag.String("data", "../shared/data", "directory of the shared data sets")
	susy := flag.String("susy", "/work/paper-data/susy", "with -classify: directory of bench/paper's susy shape (train/ and test/ Parquet parts)")
	fmnist := flag.String("fashion", "/usr/share/datasets/fashion-mnist", "directory of the Fashion-MNIST IDX files")
	only := flag.String("only", "", "comma-separated data set names to run (default: all); names: "+strings.Join(names(), ", "))
	quick := flag.Bool("quick", false, "small grid, small M and subsampled big data: a smoke test, not the reported numbers")
	workers := flag.Int("workers", 0, "worker goroutines (0: GOMAXPROCS)")
	seed := flag.Uint64("seed", 1, "seed of the splits and of the centres")
	tune := flag.Bool("tune", false, "instead: ooc.Tune over a σ × λ grid against the same grid fitted point by point (bench/TUNE.md)")
	tuneM := flag.Int("tune-centers", 1000, "with -tune: centres M")
	tuneIters := flag.Int("tune-iters", 20, "with -tune: CG iterations")
	tuneMode := flag.String("tune-mode", "grid", "with -tune: grid (tune vs the grid fitted point by point), timing (interleaved fit / tune / tune with halving, minimum of -tune-reps), ard (tune --ard beside the σ grid against the grid alone), handoff (the σ, λ of a small-M search against the grid at -m, and ooc.FitTuned's hand-off rules), tuned-timing (fit --tune against one fit at -m, interleaved), uncertainty (coverage and NLPD of predictive standard deviations)")
	tuneHalving := flag.Int("tune-halving", 4, "with -tune-mode timing: the halving step of the second tune")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile (runtime/pprof) of the whole run to this file")
	tuneReps := flag.Int("tune-reps", 2, "with -tune-mode timing: repetitions")
	uncTiming := flag.Bool("unc-timing", false, "with -tune-mode uncertainty: also time Predict with and without standard deviations")
	uncVariants := flag.String("unc-variants", "precond:16,precond:32,precond:64,precond:256,exact:64,exact:256,precond:full,exact:full", "with -tune-mode uncertainty: METHOD:RANK list (full: rank M, only for M ≤ 3000)")
	classify := flag.Bool("classify", false, "instead: calibration of class probabilities (log-loss, ECE before and after) on skin, fashion-mnist, flights (delay > 15) and susy (bench/ACCURACY.md, bench/PASSES.md)")
	classifyRows := flag.Int("classify-rows", 60000, "with -classify: at most this many training rows (80 % fit, 20 % validation for the calibration)")
	classifyTest := flag.Int("classify-test", 20000, "with -classify: at most this many test rows")
	classifyM := flag.Int("classify-centers", 2000, "with -classify: centres M")
	classifyIters := flag.Int("classify-iters", 20, "with -classify: CG iterations (per Newton step with -classify-loss logistic)")
	classifyLoss := flag.String("classify-loss", "squared", "with -classify: the loss, squared or logistic (ooc.Config.Loss); the raw probabilities are then the model's own σ(f)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			if !slices.Contains(names(), n) {
				fmt.Fprintf(os.Stderr, "accuracy: unknown data set %q (have %s)\n", n, strings.Join(names(), ", "))
				os.Exit(2)
			}
			want[n] = true
		}
	}
	env := &env{dataDir: *dataDir, fashionDir: *fmnist, susyDir: *susy, quick: *quick, workers: *workers, seed: *seed}
	if *classify {
		ce := &classifyEnv{env: env, rows: *classifyRows, testRows: *classifyTest, m: *classifyM, iters: *classifyIters, loss: *classifyLoss}
		if !classifyMain(ctx, ce, want) {
			os.Exit(1)
		}
		return
	}
	if *stopFlag {
		if !stopMain(ctx, env, want) {
			os.Exit(1)
		}
		return
	}
	if *tune {
		te := &tuneEnv{env: env, m: *tuneM, iters: *tuneIters, mode: *tuneMode, halving: *tuneHalving, reps: *tuneReps, uncTiming: *uncTiming, uncVariants: *uncVariants,
			sigmas:  []float64{0.5, 1, 2, 4, 8},
			lambdas: []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3}}
		if !tuneMain(ctx, te, want) {
			os.Exit(1)
		}
		return
	}
	start := time.Now()
	var rows []result
	failed := false
	for _, ds := range datasets {
		if len(want) > 0 && !want[ds.name] {
			continue
		}
		if miss := ds.missing(env); miss != "" {
			fmt.Fprintf(os.Stderr, "accuracy: skip %s: %s not found\n", ds.name, miss)
			continue
		}
		logf("=== %s", ds.name)
		res, err := run(ctx, env, ds)
		if err != nil {
			fmt.Fprintf(os.Stderr, "accuracy: %s: %v\n", ds.name, err)
			failed = true
			if ctx.Err() != nil {
				break
			}
			continue
		}
		rows = append(rows, res...)
		for _, r := range res {
			logf("%s", r.row())
		}
	}
	fmt.Printf("%s\n", tableHeader)
	for _, r := range rows {
		fmt.Println(r.row())
	}
	fmt.Printf("\nValidation grids (metric on the validation split carved from the training part):\n\n")
	for _, r := range rows {
		if len(r.grid) > 0 {
			fmt.Println(r.gridSummary())
		}
	}
	fmt.Printf("GOMAXPROCS %d, %s/%s, total %.0f s\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, time.Since(start).Seconds())
	if failed {
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func names() []string {
	var n []string
	for _, d := range append(slices.Clone(datasets), classifyDatasets...) {
		n = append(n, d.name)
	}
	return n
}
