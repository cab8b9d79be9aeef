package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// The -tune-mode handoff (bench/PAPER.md, "Hand-off"): how the best σ and
// λ move between a search at a small M on a row subsample and the grid
// fitted at the large M on all the training rows, and which hand-off
// rule of ooc.FitTuned carries λ best.
//
// On the training part (validation rows held out as Tune holds them out):
//   - with -handoff-grid, the grid at M = -m, one ooc.Tune per σ
//     (patience and halving off, so every candidate is the separate fit
//     at its best validated iteration), each candidate scored on the test
//     part;
//   - ooc.FitTuned with the search on all the training rows (only M
//     differs; every rule gives the same λ) and on 1/-handoff-div of them
//     with each rule of -handoff-rules, each scored on the test part, with
//     the final fit's iterations (run, and best) and the slope rule's
//     exponent.
func tuneHandoff(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	run := ooc.RunOptions{Workers: te.workers}
	type point struct{ sigma, lambda, val, test float64 }
	var grid []point
	t0 := time.Now()
	for _, s := range te.sigmas {
		if !*handoffGridFlag {
			break
		}
		res, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: []float64{s}, Lambdas: te.lambdas, ValFraction: valFrac,
			Patience: -1, SigmaHalving: -1}, run)
		if err != nil {
			return fmt.Errorf("grid σ=%g: %w", s, err)
		}
		for _, c := range res.Candidates {
			if c.Model() == nil {
				continue
			}
			tm, err := c.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
			if err != nil {
				return err
			}
			grid = append(grid, point{s, c.Lambda, c.BestMetric, *tm.RMSE})
			logf("%s: grid M=%d σ=%g λ=%.0e: validation %.4f (iteration %d), test %.4f", name, base.Centers, s, c.Lambda,
				c.BestMetric, c.BestIteration, *tm.RMSE)
		}
	}
	gridSecs := time.Since(t0).Seconds()
	bestTest, bestVal := point{test: math.Inf(1)}, point{val: math.Inf(1)}
	for _, p := range grid {
		if p.test < bestTest.test {
			bestTest = p
		}
		if p.val < bestVal.val {
			bestVal = p
		}
	}
	n := stream.Rows(trs)
	ntrain := int64(float64(n) * (1 - valFrac))
	type tuned struct {
		rows               int64
		rule               ooc.HandoffRule
		sigma, searchLam   float64
		lambda, test, secs float64
		searchSecs         float64
		iters, best        int
		slope              *ooc.HandoffSlopeResult
	}
	type job struct {
		rows int64
		rule ooc.HandoffRule
	}
	jobs := []job{{0, ooc.HandoffKeep}}
	for _, r := range strings.Split(*handoffRulesFlag, ",") {
		rule, err := ooc.ParseHandoffRule(strings.TrimSpace(r))
		if err != nil {
			return err
		}
		jobs = append(jobs, job{ntrain / int64(*handoffDivFlag), rule})
	}
	var out []tuned
	for _, c := range jobs {
		t1 := time.Now()
		cfg := base
		cfg.Iterations = 50
		m, err := ooc.FitTuned(ctx, trs, ooc.FitTunedConfig{Fit: cfg, Rows: c.rows, Handoff: c.rule,
			Search: ooc.TuneConfig{Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac}}, run)
		if err != nil {
			return fmt.Errorf("FitTuned rows %d %s: %w", c.rows, c.rule, err)
		}
		secs := time.Since(t1).Seconds()
		tm, err := m.Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
		if err != nil {
			return err
		}
		tr := m.Training()
		ho := tr.Handoff
		out = append(out, tuned{ho.SearchRows, c.rule, ho.Sigma, ho.SearchLambda, ho.Lambda, *tm.RMSE, secs, ho.SearchSeconds,
			tr.Iterations, tr.BestIteration, ho.Slope})
		slope := ""
		if sl := ho.Slope; sl != nil {
			slope = fmt.Sprintf("; slope: tolerated λ %.3g on %d rows, %.3g on %d, α %.2f (%d passes, %.1f s)", sl.Tolerated,
				ho.SearchRows, sl.ProbeTolerated, sl.Rows, sl.Exponent, sl.Passes, sl.Seconds)
		}
		logf("%s: FitTuned search on %d rows at M=%d: σ=%g λ=%.0e → %s λ=%.2e%s; final M=%d: %d iterations (best %d), test %.4f, %.1f s (search %.1f s) (load %s)",
			name, ho.SearchRows, ho.SearchCenters, ho.Sigma, ho.SearchLambda, c.rule, ho.Lambda, slope, m.M(), tr.Iterations,
			tr.BestIteration, *tm.RMSE, secs, ho.SearchSeconds, loadavg())
	}
	if len(grid) > 0 {
		fmt.Printf("| %s | %d | %d | %.4f (σ %g, λ %.0e) | %.4f (σ %g, λ %.0e) |", name, ntrain, base.Centers,
			bestTest.test, bestTest.sigma, bestTest.lambda, bestVal.test, bestVal.sigma, bestVal.lambda)
	} else {
		fmt.Printf("| %s | %d | %d | – | – |", name, ntrain, base.Centers)
	}
	for _, t := range out {
		rel := ""
		if len(grid) > 0 {
			rel = fmt.Sprintf("%+.2f %%; ", 100*(t.test/bestTest.test-1))
		}
		alpha := ""
		if t.slope != nil {
			alpha = fmt.Sprintf(", α %.2f", t.slope.Exponent)
		}
		fmt.Printf(" %.4f (%sσ %g, λ %.0e→%.1e%s; %d it, best %d) |", t.test, rel, t.sigma, t.searchLam, t.lambda, alpha, t.iters, t.best)
	}
	if len(grid) > 0 {
		fmt.Printf(" %.0f s |\n", gridSecs)
	} else {
		fmt.Printf(" – |\n")
	}
	return nil
}

// tunedTiming times, interleaved, te.reps times each: ooc.FitTuned (the
// whole job: subsample, search at the default small M, fit at -m with
// patience, the iterations capped at 50) and one ooc.Fit at -m with the
// σ and λ FitTuned picked and -iters iterations, on the same training
// part; it prints the minima, their ratio, CPU seconds and both test
// RMSEs, and logs each run's phases. Each timed run starts with the heap
// returned to the system (fresh). Pin it with taskset and run it on a
// quiet machine.
func tunedTiming(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	run := ooc.RunOptions{Workers: te.workers}
	tunedMin, fitMin := math.Inf(1), math.Inf(1)
	var tunedCPU, fitCPU, tunedTest, fitTest float64
	var picked ooc.Config
	var tr ooc.Training
	for rep := range te.reps {
		cfg := base
		cfg.Iterations = 50
		fresh()
		c0, t0 := cpuSeconds(), time.Now()
		m, err := ooc.FitTuned(ctx, trs, ooc.FitTunedConfig{Fit: cfg,
			Search: ooc.TuneConfig{Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac}}, run)
		if err != nil {
			return err
		}
		if s := time.Since(t0).Seconds(); s < tunedMin {
			tunedMin, tunedCPU = s, cpuSeconds()-c0
		}
		picked, tr = m.Config(), m.Training()
		logf("%s: rep %d: fit --tune phases: subsample %.2f s, search %.2f s, final fit %s; process peak RSS %.0f MiB", name, rep+1,
			tr.Handoff.SubsampleSeconds, tr.Handoff.SearchSeconds, phaseSums(tr.Phases), float64(tr.PeakRSS)/(1<<20))
		if s := tr.Search; s != nil {
			logf("%s: rep %d: search phases (%d passes): %s; candidates: %s", name, rep+1, s.Passes,
				phaseSums(s.Phases), candIters(s.Candidates))
		}
		met, err := m.Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
		if err != nil {
			return err
		}
		tunedTest = *met.RMSE
		one := base
		one.Kernel, one.Lambda = picked.Kernel, picked.Lambda
		train, _ := stream.Holdout(trs, valFrac, base.Seed)
		fresh()
		c0, t0 = cpuSeconds(), time.Now()
		fm, err := ooc.Fit(ctx, train, one, run)
		if err != nil {
			return err
		}
		if s := time.Since(t0).Seconds(); s < fitMin {
			fitMin, fitCPU = s, cpuSeconds()-c0
		}
		fmet, err := fm.Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
		if err != nil {
			return err
		}
		fitTest = *fmet.RMSE
		logf("%s: rep %d: one fit phases: %s", name, rep+1, phaseSums(fm.Training().Phases))
		logf("%s: rep %d: fit --tune %.2f s, one fit %.2f s (load %s)", name, rep+1, tunedMin, fitMin, loadavg())
	}
	fmt.Printf("| %s | %d | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f (search) | %d (best %d) | %.4f | %.4f |\n", name, base.Centers,
		fitMin, tunedMin, tunedMin/fitMin, fitCPU, tunedCPU, tr.Handoff.SearchSeconds, tr.Iterations, tr.BestIteration,
		tunedTest, fitTest)
	return nil
}

// phaseSums sums the wall seconds of a fit's phases by name, in the
// order they first appear, with the count of each repeated phase.
func phaseSums(ph []ooc.Phase) string {
	var names []string
	sum, count := map[string]float64{}, map[string]int{}
	for _, p := range ph {
		if _, ok := sum[p.Name]; !ok {
			names = append(names, p.Name)
		}
		sum[p.Name] += p.Wall
		count[p.Name]++
	}
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %.2f s", n, sum[n])
		if count[n] > 1 {
			fmt.Fprintf(&b, " (%d× %.3f)", count[n], sum[n]/float64(count[n]))
		}
		b.WriteString("; ")
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// candIters lists each candidate's σ, λ, validation metric at its best
// iteration, the iterations it ran and its stop reason.
func candIters(cs []ooc.TuneCandidate) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "σ %g λ %.0e: %.4f at %d of %d (%s)", c.Sigma, c.Lambda, c.BestMetric, c.BestIteration,
			c.Iterations, c.Stop)
	}
	return b.String()
}

// fresh collects the garbage of the run before and returns its memory to
// the operating system, so that each timed run starts with the heap a new
// process would have. It does not make the runs alike in everything: at
// 3211683 the K_MM phase still took 1.8–2.0 s in FitTuned's fit and 0.2 s
// in the one fit timed after it at M = 10⁴, probably because the huge
// pages precond.prefault asks for are quick to find only right after the
// previous fit's M × M buffer was returned; a one fit in a process of its
// own has not been timed against it.
func fresh() {
	runtime.GC()
	debug.FreeOSMemory()
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
