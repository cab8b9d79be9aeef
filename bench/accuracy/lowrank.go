package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// lowrankPreconds is -lowrank-preconds: the preconditioners -tune-mode
// lowrank compares, "cholesky" or "nystrom:R".
var lowrankPreconds = flag.String("lowrank-preconds", "cholesky,nystrom:500,nystrom:1000,nystrom:2000,nystrom:4000",
	"with -tune-mode lowrank: the preconditioners compared at -tune-centers, comma-separated: cholesky or nystrom:R")

// tuneLowrank is issue #23's route decision on a real data set: σ and λ
// from a search at M = 1000 (ooc.Tune over the -tune grid, the training
// part less its validation rows), then, on the same centres (same seed)
// at M = -tune-centers, one fit per preconditioner of -lowrank-preconds
// for -tune-iters iterations: the CG iterations to relative residuals
// 1e-3 and 1e-5, the test RMSE, the preconditioner's bytes and seconds
// and the seconds per iteration.
func tuneLowrank(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	small := base
	small.Centers = 1000
	res, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: small, Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac}, ooc.RunOptions{Workers: te.workers})
	if err != nil {
		return fmt.Errorf("tune at M = 1000: %w", err)
	}
	best := res.Candidates[res.Best]
	rest, _ := stream.Holdout(trs, valFrac, te.seed)
	for _, p := range strings.Split(*lowrankPreconds, ",") {
		cfg := base
		cfg.Kernel, cfg.Lambda = best.Kernel, best.Lambda
		if r, ok := strings.CutPrefix(p, "nystrom:"); ok {
			cfg.Preconditioner = precond.MethodNystrom
			if cfg.PrecondRank, err = strconv.Atoi(r); err != nil {
				return fmt.Errorf("-lowrank-preconds %s: %w", p, err)
			}
		} else if p != "cholesky" {
			return fmt.Errorf("-lowrank-preconds: %q is neither cholesky nor nystrom:R", p)
		}
		mdl, err := ooc.Fit(ctx, rest, cfg, ooc.RunOptions{Workers: te.workers})
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		met, err := mdl.Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
		if err != nil {
			return err
		}
		tr := mdl.Training()
		fmt.Printf("| %s | %d | %s λ=%g | %s | %s | %.1f | %.2f | %s / %s | %.2g | %.4f | %s |\n", name, stream.Rows(rest), best.Kernel, best.Lambda, p,
			ooc.FormatBytes(tr.PrecondBytes), tr.PrecondSeconds, tr.SecondsPerIteration,
			itersTo(tr.Residuals, 1e-3), itersTo(tr.Residuals, 1e-5), tr.Residuals[len(tr.Residuals)-1], *met.RMSE, loadavg())
	}
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
