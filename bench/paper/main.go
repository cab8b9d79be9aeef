// Command paper runs the FALKON paper's workloads (Rudi, Carratino,
// Rosasco, NIPS 2017, Table 3: MillionSongs, SUSY, HIGGS) by their shapes,
// end to end through the falkon-ooc command as a user would: Parquet
// files in, ingest, fit --tune, predict on the test files, and records
// per step the wall and CPU seconds, the peak RSS, the disk used, the
// load, and the test metric beside the Bayes optimum of the data.
//
// The real data sets cannot be fetched here, so gen writes data of the
// same shape from a known smooth function of correlated features plus
// label noise, whose best possible MSE, AUC and error rate are known
// (computed on the test rows from the true function).
//
//	go run ./bench/paper gen -shape susy -dir /data/susy
//	go run ./bench/paper run -shape susy -dir /data/susy -centers 10000 [-ard] [-resume]
//
// run builds the command from this checkout (or takes -bin) and writes a
// Markdown row and DIR/result-SHAPE-M.json. With -resume it skips the
// steps whose output is there and continues an interrupted fit from its
// checkpoint (fit --resume).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: paper gen|run -shape NAME -dir DIR [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	shapeName := fs.String("shape", "susy", "msd, susy, higgs, higgs-rough (or tiny, tinyreg)")
	dir := fs.String("dir", "", "the data directory")
	seed := fs.Uint64("seed", 2017, "data seed")
	rows := fs.Int64("rows", 0, "gen: total rows instead of the shape's (test rows scaled alike)")
	kappa := fs.Float64("kappa", 0, "gen: the logit's scale instead of the shape's (binary)")
	terms := fs.Int("terms", 0, "gen: sine terms of h instead of the shape's")
	freq := fs.Float64("freq", 0, "gen: the norm of h's frequencies instead of the shape's")
	rough := fs.String("rough", "", "gen: WEIGHT:DIMS:TERMS:FREQ of the rough part instead of the shape's")
	o := runOpts{}
	fs.StringVar(&o.bin, "bin", "", "run: the falkon-ooc binary (default: built from this checkout)")
	fs.IntVar(&o.centers, "centers", 10_000, "run: M of the final fit")
	fs.BoolVar(&o.ard, "ard", false, "run: fit --tune --ard")
	fs.BoolVar(&o.resume, "resume", false, "run: skip finished steps, continue the fit from its checkpoint")
	fs.StringVar(&o.extra, "fit-flags", "", "run: more flags for fit, space-separated")
	fs.StringVar(&o.tag, "tag", "", "run: a tag for the result file's name")
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	sh, ok := shapes[*shapeName]
	if !ok || *dir == "" {
		fmt.Fprintf(os.Stderr, "paper: unknown -shape %q or no -dir\n", *shapeName)
		os.Exit(2)
	}
	if *rows > 0 {
		sh.Test = max(sh.Test**rows/sh.Rows, 1000)
		sh.Rows = *rows
	}
	if *kappa > 0 {
		sh.Kappa = *kappa
	}
	if *terms > 0 {
		sh.Terms = *terms
	}
	if *freq > 0 {
		sh.Freq = *freq
	}
	if *rough != "" {
		if _, err := fmt.Sscanf(*rough, "%g:%d:%d:%g", &sh.Rough, &sh.RoughDims, &sh.RoughTerms, &sh.RoughFreq); err != nil || sh.RoughDims > sh.Relevant {
			fmt.Fprintf(os.Stderr, "paper: -rough %q: want WEIGHT:DIMS:TERMS:FREQ with DIMS ≤ %d\n", *rough, sh.Relevant)
			os.Exit(2)
		}
	}
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	var err error
	switch os.Args[1] {
	case "gen":
		var md *meta
		if md, err = generate(*dir, sh, *seed, logf); err == nil {
			fmt.Printf("%s: %d training, %d test rows × %d features; Bayes: MSE %.4g, AUC %.4f, error %.4f (baseline MSE %.4g, error %.4f)\n",
				sh.Name, md.Train, md.Test, sh.D, md.BayesMSE, md.BayesAUC, md.BayesError, md.BaselineMSE, md.BaselineError)
		}
	case "run":
		o.dir = *dir
		var res *result
		if res, err = runJob(ctx, o, logf); err == nil {
			fmt.Println(res.markdown())
		}
	default:
		err = fmt.Errorf("unknown mode %q (want gen or run)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "paper:", err)
		os.Exit(1)
	}
}
