// Package flagtest holds the command lines that the tests of falkon-ooc
// and falkon-ooc-beam feed through their parsers, expecting the same
// settings from both (cliflags's invariant), and the text those settings
// are compared as.
package flagtest

import (
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// Lines are command lines of fit and tune (the command first, then its
// flags; the STORE argument is left out) that together give every flag
// cliflags declares, each valid in both programs. VAL stands for a
// validation store.
var Lines = [][]string{
	{"fit"},
	{"fit", "--out", "m", "--centers", "300", "--kernel", "laplacian", "--sigma", "2.5", "--lambda", "1e-5", "--iters", "7", "--tol", "1e-9",
		"--precision", "float32", "--task", "regression", "--precond", "pivoted", "--jitter", "1e-7", "--precond-precision", "float32",
		"--workers", "3", "--seed", "11", "--centers-sampling", "leverage", "--candidates", "900", "--json", "--quiet", "--force"},
	{"fit", "--kernel", "matern32", "--sigmas", "1,2,3"},
	{"fit", "--kernel", "polynomial", "--degree", "3", "--gamma", "0.5", "--coef0", "1"},
	{"fit", "--precond", "nystrom", "--precond-rank", "40", "--resume", "--no-checkpoint"},
	{"fit", "--loss", "logistic", "--newton-steps", "4", "--class-weight", "balanced", "--task", "binary", "--threshold", "0.3"},
	{"fit", "--val", "VAL", "--val-every", "2", "--patience", "2", "--min-improvement", "0.01", "--threshold", "f1"},
	{"fit", "--val", "VAL", "--uncertainty", "--uncertainty-method", "exact", "--uncertainty-rank", "20"},
	{"fit", "--val", "VAL", "--threshold", "balanced", "--task", "binary", "--max-memory", "2GiB"},
	{"fit", "--val", "VAL", "--tune", "--pick", "1se", "--max-memory", "800MB"},
	{"fit", "--val", "VAL", "--tune", "--sigma", "1,2", "--lambda", "1e-6:1e-4:3", "--tune-rows", "2000", "--tune-centers", "50",
		"--handoff", "linear", "--ard", "--ard-rows", "500", "--ard-steps", "5", "--extend", "1", "--sigma-halving", "2,4", "--max-passes", "60"},
	{"fit", "--val", "VAL", "--tune", "--patience", "0", "--sigma-halving", "0"},
	{"fit", "--val-fraction", "0.2", "--patience", "3"},
	{"fit", "--uncertainty", "--threshold", "f1"},
	{"fit", "--tune", "--val-fraction", "0.15"},
	{"tune"},
	{"tune", "--sigma", "2,4", "--lambda", "1e-6,1e-4"},
	{"tune", "--out", "m", "--centers", "80", "--kernel", "matern52", "--sigma", "0.5:8:5", "--lambda", "1e-7", "--iters", "9", "--tol", "1e-6",
		"--precision", "float32", "--task", "binary", "--precond", "cholesky", "--precond-precision", "float64", "--jitter", "1e-6",
		"--workers", "2", "--seed", "5", "--centers-sampling", "leverage", "--candidates", "400", "--json", "--quiet", "--force",
		"--class-weight", "balanced", "--threshold", "cost:1:5", "--val-fraction", "0.2", "--patience", "0", "--halving", "2",
		"--sigma-halving", "0", "--extend", "2", "--pick", "1se", "--max-memory", "12G"},
	{"tune", "--kernel", "polynomial", "--degree", "4", "--gamma", "2", "--coef0", "0.5", "--loss", "logistic", "--newton-steps", "3", "--task", "binary"},
	{"tune", "--val", "VAL", "--ard", "--ard-rows", "300", "--ard-steps", "4", "--patience", "5", "--sigma-halving", "3,6", "--max-passes", "40"},
}

// Settings renders what a command line set: the flags that are no
// setting of ooc (f), the Config, and fit --tune's FitTunedConfig or tune's
// TuneConfig (nil for a plain fit), with the functions left out.
func Settings(f *cliflags.Flags, cfg ooc.Config, tuned *ooc.FitTunedConfig, tune *ooc.TuneConfig) string {
	run := f.RunOptions()
	s := fmt.Sprintf("flags out=%q val=%q val-fraction=%g json=%v quiet=%v force=%v resume=%v no-checkpoint=%v workers=%d val-every=%d max-memory=%d\n",
		f.Out, f.Val, f.ValFraction, f.JSON, f.Quiet, f.Force, f.Resume, f.NoCheckpoint, run.Workers, run.ValEvery, run.MaxMemory)
	s += fmt.Sprintf("config %+v precision %v", cfg, cfg.Precision)
	if tuned != nil {
		t := *tuned
		search := tuneText(t.Search)
		t.Search = ooc.TuneConfig{}
		s += fmt.Sprintf("\ntuned %+v\nsearch %s", t, search)
	}
	if tune != nil {
		s += "\ntune " + tuneText(*tune)
	}
	return s
}

func tuneText(tc ooc.TuneConfig) string {
	ard := "none"
	if tc.ARD != nil {
		ard = fmt.Sprintf("%+v", *tc.ARD)
	}
	tc.ARD = nil
	return fmt.Sprintf("%+v ard %s", tc, ard)
}
