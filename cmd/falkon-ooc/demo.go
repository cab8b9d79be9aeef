package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

//go:embed demodata/california_housing.tsv.gz
var californiaHousing []byte

// demoReference is the published number the demo is compared with.
const demoReference = 0.578

func init() {
	register(&command{
		Name:  "demo",
		Short: "ingest, fit and predict on bundled real data (California housing)",
		Usage: "[flags]",
		Long: `
Demo runs the whole job on data bundled in the program, with no download:
the California housing data (20 640 census block groups, MIT licence via
PMLB). It derives scikit-learn's eight features, splits the rows 80/20 at
random (by --seed), ingests both parts into chunk stores in a temporary
directory, fits FALKON on the training part, predicts the held-out part and
prints the test RMSE (house value in units of 100 000 dollars) next to the
published 0.578 of the Falkon (Python) tutorial, which used a Gaussian
kernel with sigma 1, lambda 1e-5 and 5000 centres on z-scored features.
Those are the demo's settings too; change them with the flags.`,
		Flags: demoFlags,
	})
}

type demoOpts struct {
	centers, iters, workers int
	sigma, lambda           float64
	seed                    uint64
	keep                    string
	jsonOut, quiet          bool
}

func demoFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &demoOpts{}
	fs.IntVar(&o.centers, "centers", 5000, "number of Nyström centres M")
	fs.Float64Var(&o.sigma, "sigma", 1, "Gaussian kernel length scale")
	fs.Float64Var(&o.lambda, "lambda", 1e-5, "ridge regularisation λ")
	fs.IntVar(&o.iters, "iters", ooc.DefaultIterations, "conjugate-gradient iterations")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (0: one per CPU)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the train/test split and of the centres")
	fs.StringVar(&o.keep, "keep", "", "keep the stores and the model in this `directory` instead of a temporary one")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object with the result on stdout")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	return func(ctx context.Context, e *env, args []string) error {
		if len(args) > 0 {
			return usagef("demo takes no arguments, got %q", args)
		}
		if !(o.sigma > 0) || !(o.lambda > 0) || o.centers < 1 || o.iters < 1 {
			return usagef("--sigma and --lambda must be > 0, --centers and --iters ≥ 1")
		}
		return runDemo(ctx, e, o)
	}
}

type demoResult struct {
	Version       string      `json:"version"`
	Data          string      `json:"data"`
	TrainRows     int64       `json:"train_rows"`
	TestRows      int64       `json:"test_rows"`
	Metrics       ooc.Metrics `json:"test"`
	Reference     float64     `json:"reference_rmse"`
	FitSeconds    float64     `json:"fit_seconds"`
	SecondsPerIt  float64     `json:"seconds_per_iteration"`
	TotalSeconds  float64     `json:"seconds"`
	Config        ooc.Config  `json:"config"`
	Iterations    int         `json:"iterations"`
	FinalResidual float64     `json:"residual"`
}

func runDemo(ctx context.Context, e *env, o *demoOpts) error {
	start := time.Now()
	pr := newProgress(e.stderr, o.quiet)
	dir := o.keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "falkon-ooc-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	if err := writeDemoSplit(train, test, o.seed); err != nil {
		return fmt.Errorf("prepare the bundled data: %w", err)
	}
	pr.printf("demo: California housing, 20 640 rows, 8 features; 80/20 split in %s", dir)
	stores := map[string]string{}
	for _, part := range []string{"train", "test"} {
		out := filepath.Join(dir, part+".store")
		os.RemoveAll(out)
		// Small chunks, so that every worker has chunks to compute.
		res, err := ingest.Run(ctx, []string{filepath.Join(dir, part+".csv")}, ingest.Config{Out: out, Targets: []string{"value"}, Workers: o.workers, ChunkRows: 2048})
		if err != nil {
			return err
		}
		pr.printf("demo: ingested %s: %d rows into %d chunk(s)", part, res.Rows, res.Chunks)
		stores[part] = out
	}
	r, err := chunkstore.Open(stores["train"])
	if err != nil {
		return err
	}
	defer r.Close()
	cfg := ooc.Config{
		Centers: o.centers, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: o.sigma},
		Lambda: o.lambda, Iterations: o.iters, Seed: o.seed, Task: ooc.TaskRegression,
	}
	if int64(cfg.Centers) > r.Manifest().Rows {
		cfg.Centers = int(r.Manifest().Rows)
	}
	run := ooc.RunOptions{Workers: o.workers}
	plan, err := ooc.Plan(r, cfg, run)
	if err != nil {
		return err
	}
	pr.printf("demo: fit with M = %d, Gaussian σ = %g, λ = %g, %d iterations; memory ≈ %s",
		cfg.Centers, o.sigma, o.lambda, o.iters, ooc.FormatBytes(plan.Memory.Total))
	said := map[ooc.Stage]bool{} // one line per stage
	run.Progress = func(p ooc.Progress) {
		switch {
		case p.Stage == ooc.StagePrecond && !said[p.Stage]:
			said[p.Stage] = true
			pr.printf("demo: factorising the preconditioner (%d × %d)", cfg.Centers, cfg.Centers)
		case p.Stage == ooc.StageIterate && p.Chunks == 0 && p.Iteration > 0:
			pr.update("demo: fit", fmt.Sprintf("iteration %d/%d, residual %.3g", p.Iteration, p.Iterations, p.Residual), p.Iteration == p.Iterations)
		}
	}
	m, err := ooc.Fit(ctx, r, cfg, run)
	if err != nil {
		return err
	}
	if o.keep != "" {
		if err := m.Save(filepath.Join(dir, "model.falkon")); err != nil {
			return err
		}
	}
	tr, err := chunkstore.Open(stores["test"])
	if err != nil {
		return err
	}
	defer tr.Close()
	met, err := m.Evaluate(ctx, tr, ooc.PredictOptions{Workers: o.workers})
	if err != nil {
		return err
	}
	res := demoResult{
		Version: version, Data: "California housing (StatLib cadata via PMLB, MIT)",
		TrainRows: m.Training().N, TestRows: met.Rows, Metrics: *met, Reference: demoReference,
		FitSeconds: m.Training().Seconds, SecondsPerIt: m.Training().SecondsPerIteration,
		TotalSeconds: time.Since(start).Seconds(), Config: m.Config(), Iterations: m.Training().Iterations,
	}
	if n := len(m.Training().Residuals); n > 0 {
		res.FinalResidual = m.Training().Residuals[n-1]
	}
	if o.jsonOut {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "California housing: %d training rows, %d test rows, 8 features\n", res.TrainRows, res.TestRows)
	fmt.Fprintf(e.stdout, "model: FALKON, Gaussian σ = %g, λ = %g, M = %d centres, %d CG iterations\n", o.sigma, o.lambda, m.M(), res.Iterations)
	fmt.Fprintf(e.stdout, "fit: %.2f s (%.3f s per iteration)\n", res.FitSeconds, res.SecondsPerIt)
	fmt.Fprintf(e.stdout, "test RMSE: %.3f (×100 000 $)   published (Falkon tutorial, same settings): %.3f\n", *met.RMSE, demoReference)
	fmt.Fprintf(e.stdout, "test relative squared error: %.3f\n", *met.RelErr)
	return nil
}

// writeDemoSplit decodes the bundled data, derives scikit-learn's
// features and writes a random 80/20 split as two CSV files.
func writeDemoSplit(train, test string, seed uint64) error {
	zr, err := gzip.NewReader(bytes.NewReader(californiaHousing))
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(zr)
	if !sc.Scan() {
		return fmt.Errorf("empty data")
	}
	header := strings.Split(sc.Text(), "\t")
	want := []string{"median_income", "housing_median_age", "total_rooms", "total_bedrooms", "population", "households", "latitude", "longitude", "target"}
	if strings.Join(header, ",") != strings.Join(want, ",") {
		return fmt.Errorf("unexpected columns %q", header)
	}
	var rows []string
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		v := make([]float64, len(f))
		for i, s := range f {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				return fmt.Errorf("row %d: %v", len(rows)+2, err)
			}
		}
		inc, age, rooms, beds, pop, hh, lat, lon, val := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
		rows = append(rows, fmt.Sprintf("%g,%g,%g,%g,%g,%g,%g,%g,%g", inc, age, rooms/hh, beds/hh, pop, pop/hh, lat, lon, val/1e5))
	}
	if err := sc.Err(); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x64656d6f))
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	cut := len(rows) * 8 / 10
	const head = "MedInc,HouseAge,AveRooms,AveBedrms,Population,AveOccup,Latitude,Longitude,value\n"
	for _, part := range []struct {
		path string
		rows []string
	}{{train, rows[:cut]}, {test, rows[cut:]}} {
		if err := os.WriteFile(part.path, []byte(head+strings.Join(part.rows, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}
