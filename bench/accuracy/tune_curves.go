package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

var curvesDir = flag.String("curves-dir", ".", "with -tune-mode curves: where the per-data-set JSON goes")

// curveDoc is what -tune-mode curves writes per data set: every
// candidate's validation RMSE after each iteration, with no candidate
// stopped (patience and halving off), and each candidate's test RMSE at
// its best iteration. design/experiments/schedule.py replays stopping
// schedules on it: candidates are independent CG columns, so a schedule
// only decides which prefix of each curve is seen.
type curveDoc struct {
	Data       string      `json:"data"`
	Seconds    float64     `json:"seconds"`
	Candidates []curveCand `json:"candidates"`
	Config     ooc.Config  `json:"config"`
	Passes     int         `json:"passes"`
	Memory     ooc.Memory  `json:"memory"`
}

type curveCand struct {
	Sigma      float64   `json:"sigma"`
	Lambda     float64   `json:"lambda"`
	Validation []float64 `json:"validation"` // RMSE after iterations 1, 2, …
	BestIter   int       `json:"best_iteration"`
	Test       float64   `json:"test"` // at BestIter
}

func tuneCurves(ctx context.Context, te *tuneEnv, name string, trs, tes stream.Source, base ooc.Config, valFrac float64) error {
	t0 := time.Now()
	res, err := ooc.Tune(ctx, trs, ooc.TuneConfig{Base: base, Sigmas: te.sigmas, Lambdas: te.lambdas, ValFraction: valFrac,
		Patience: -1}, ooc.RunOptions{Workers: te.workers})
	if err != nil {
		return err
	}
	doc := curveDoc{Data: name, Seconds: time.Since(t0).Seconds(), Config: base, Passes: res.Passes, Memory: res.Memory}
	for _, c := range res.Candidates {
		cc := curveCand{Sigma: c.Sigma, Lambda: c.Lambda, BestIter: c.BestIteration}
		for _, v := range c.Validation {
			cc.Validation = append(cc.Validation, *v.RMSE)
		}
		if c.Model() != nil {
			met, err := c.Model().Evaluate(ctx, tes, ooc.PredictOptions{Workers: te.workers})
			if err != nil {
				return err
			}
			cc.Test = *met.RMSE
		}
		doc.Candidates = append(doc.Candidates, cc)
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	path := filepath.Join(*curvesDir, name+".json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	logf("%s: curves in %s (%.1f s, %d passes)", name, path, doc.Seconds, doc.Passes)
	fmt.Printf("| %s | %s | %.1f |\n", name, path, doc.Seconds)
	return nil
}
