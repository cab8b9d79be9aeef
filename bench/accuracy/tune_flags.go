package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Flags of the -tune modes beyond those main declares (bench/TUNE.md).
var (
	tuneLambdasFlag  = flag.String("tune-lambdas", "", "with -tune: comma-separated λ grid (default 1e-8,…,1e-3)")
	tuneSigmasFlag   = flag.String("tune-sigmas", "", "with -tune: comma-separated σ grid (default 0.5,1,2,4,8)")
	ardRowsFlag      = flag.Int("ard-rows", 0, "with -tune-mode ard: rows of the ARD subsample (0: ooc's default)")
	ardCentersFlag   = flag.Int("ard-centers", 0, "with -tune-mode ard: centres of the subsample's model (0: ooc's default)")
	ardStepsFlag     = flag.Int("ard-steps", 0, "with -tune-mode ard: gradient steps (0: ooc's default)")
	handoffGridFlag  = flag.Bool("handoff-grid", true, "with -tune-mode handoff: fit the grid at -m as the reference (the slow part)")
	handoffRulesFlag = flag.String("handoff-rules", "keep,sqrt,linear,slope", "with -tune-mode handoff: the rules run with the search on 1/-handoff-div of the rows")
	handoffDivFlag   = flag.Int("handoff-div", 8, "with -tune-mode handoff: the search's rows are the training rows / this")
)

// floatList parses a comma-separated list of numbers; "" gives def.
func floatList(s string, def []float64) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return def, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q in %q", f, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// applyTuneFlags sets the grids of te from the flags.
func applyTuneFlags(te *tuneEnv) error {
	var err error
	if te.lambdas, err = floatList(*tuneLambdasFlag, te.lambdas); err != nil {
		return err
	}
	te.sigmas, err = floatList(*tuneSigmasFlag, te.sigmas)
	return err
}
