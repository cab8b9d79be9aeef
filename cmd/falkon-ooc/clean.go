package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

func init() {
	register(&command{
		Name:  "clean",
		Short: "remove what killed runs left in directories",
		Usage: "DIR…",
		Long: `
Clean removes, in each DIR, the temporary files and directories that
falkon-ooc processes left when they were killed (.NAME.tmp-PID-START-N:
half-written stores, models, checkpoints) and lock files nobody holds. A
file is removed only if its owner, identified by process id and start
time, is no longer running: a live ingest or fit is never touched. Each
removal is listed on stdout. ingest, fit and predict do the same in the
directory of their --out before they start.`,
		Flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			return runClean
		},
	})
}

func runClean(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("no DIR given")
	}
	total := 0
	for _, dir := range args {
		removed, err := fileutil.Clean(dir)
		for _, l := range removed {
			fmt.Fprintf(e.stdout, "removed %s\n", l)
		}
		total += len(removed)
		if err != nil {
			return err
		}
	}
	if total == 0 {
		fmt.Fprintln(e.stdout, "nothing to remove")
	}
	return nil
}
