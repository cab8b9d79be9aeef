package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// fit's flags that say how a fit runs, not what it computes: a
// checkpoint does not record them and --resume takes them as given.
// --iters is recorded (a resumed fit keeps the cap it had) but may be
// changed: a larger one extends the fit; so may --newton-steps (the
// logistic loss checkpoints after each Newton step).
var runFlags = map[string]bool{"out": true, "resume": true, "no-checkpoint": true, "json": true, "quiet": true,
	"workers": true, "plot": true, "max-memory": true, "val-every": true, "cache": true, "force": true}

// fitSettings returns the flags of fs that define the fit's result, as
// the checkpoint records them (name → value as the flag prints it).
func fitSettings(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if !runFlags[f.Name] {
			out[f.Name] = f.Value.String()
		}
	})
	return out
}

// restoreSettings makes a --resume continue the checkpointed fit as it
// was: every recorded flag the command line does not give is set to the
// recorded value (and counts as given), and a flag given with another
// value than the recorded one is refused, naming each with both values,
// before any input is read. --iters and --newton-steps may differ.
func restoreSettings(fs *flag.FlagSet, set map[string]bool, saved map[string]string, ckpt string) error {
	var differ []string
	names := make([]string, 0, len(saved))
	for name := range saved {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			continue // a flag of another version
		}
		want := saved[name]
		if set[name] {
			if name != "iters" && name != "newton-steps" && !sameValue(f.Value.String(), want) {
				differ = append(differ, fmt.Sprintf("--%s %s (the checkpoint's: %s)", name, f.Value.String(), orEmpty(want)))
			}
			continue
		}
		if sameValue(f.Value.String(), want) {
			continue
		}
		if err := fs.Set(name, want); err != nil {
			return fmt.Errorf("--resume: %s records --%s %q, which this version refuses: %v", ckpt, name, want, err)
		}
		set[name] = true
	}
	if len(differ) > 0 {
		return usagef("--resume: %s was written by a fit with other settings: %s; leave these flags out to continue it as it was (or give --iters to extend it), or start afresh without --resume",
			ckpt, strings.Join(differ, ", "))
	}
	return nil
}

// sameValue compares two flag values as numbers when both are.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

func orEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// readResume reads the checkpoint for --resume, before any other work:
// nil, nil when there is none (the fit then starts afresh).
func readResume(ckpt string) (*ooc.Checkpoint, error) {
	c, err := ooc.ReadCheckpoint(ckpt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	return c, nil
}

// resumeCommand is the command that continues an interrupted fit: the
// checkpoint holds every other setting.
func resumeCommand(out string, inputs []string) string {
	parts := []string{progName, "fit", "--resume", "--out", shellQuote(out)}
	for _, in := range inputs {
		parts = append(parts, shellQuote(in))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
