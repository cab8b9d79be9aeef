package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/outguard"
)

// Guards that run before the first pass over the data, all through
// internal/outguard, which the Beam binary shares: an output that would
// clobber an input, a store, another output or a file that is not
// falkon-ooc's is refused, an output that cannot be written is found at
// once, and what killed runs left in the output's directory is removed.

// guardErr maps outguard's refusals to the command's: a usage error (exit
// 2) or a plain one.
func guardErr(err error) error {
	var ge *outguard.Error
	if errors.As(err, &ge) && ge.Usage {
		return usagef("%s", ge.Error())
	}
	return err
}

// prepareOut checks --out (flag names it in messages) against the inputs
// (from inputPaths) and its directory before any work, then that its
// directory is writable. Then the leftovers of dead processes in that
// directory are removed and listed on stderr (outguard.Prepare).
func prepareOut(e *env, flag, out string, dirOK bool, inputs ...string) error {
	removed, warn, err := outguard.Prepare(outguard.Output{Path: out, Flag: flag, Dir: dirOK}, inputs)
	if err != nil {
		return guardErr(err)
	}
	for _, l := range removed {
		fmt.Fprintf(e.stderr, "falkon-ooc: removed leftover %s\n", oneLine(l.String()))
	}
	if warn != nil {
		fmt.Fprintf(e.stderr, "falkon-ooc: warning: %s\n", oneLine(warn.Error()))
	}
	return nil
}

// maxTarget bounds |y|: the fit sums squares of targets and residuals
// over up to ~1e8 rows, which overflows float64 beyond about 1e150.
const maxTarget = 1e150

// checkTargets refuses targets whose squares would overflow in the fit,
// before its first pass (once: NaN at save, after every iteration).
func checkTargets(r *chunkstore.Reader, storePath string) error {
	for _, c := range r.Manifest().Targets {
		if a := math.Max(math.Abs(c.Min), math.Abs(c.Max)); a > maxTarget {
			return fmt.Errorf("store %s: target %q reaches %g; beyond %g its squares overflow float64 in the fit: rescale it (divide by a power of ten) and ingest again", storePath, clipArg(c.Name), a, maxTarget)
		}
	}
	return nil
}

// clipArg shortens a user value to at most 200 bytes for a message.
func clipArg(s string) string { return outguard.Clip(s) }

// noteSkipped says on w how many files of predictions written by
// falkon-ooc the inputs' folders held, which were not read.
func noteSkipped(w io.Writer, skipped []string) {
	if len(skipped) > 0 {
		fmt.Fprintf(w, "falkon-ooc: %s\n", ingest.SkippedNote(len(skipped)))
	}
}

// inputPaths returns every path the inputs name, for the clobber checks
// (outguard.Inputs).
func inputPaths(args ...string) []string { return outguard.Inputs(args...) }

// checkFitOutputs refuses, before any input is read, a fit or tune whose
// outputs (outguard.FitOutputs) would overwrite one of its inputs (the
// training inputs after the directory walk and glob expansion, and
// --val's), each other, or (without --force) a file that is not their own
// kind.
func (o *fitOpts) checkFitOutputs(args []string, rawInputs bool) error {
	inputs := inputPaths(append(append([]string(nil), args...), o.Val)...)
	outs := outguard.FitOutputs(o.Out, o.plot, !o.NoCheckpoint, rawInputs && o.input.cache == "")
	return guardErr(outguard.Check(outs, inputs, o.Force))
}
