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
		Usage: "[--dry-run] DIR…",
		Long: `
Clean removes, in each DIR, the temporary files and directories that
falkon-ooc processes left when they were killed (.NAME.falkon-tmp-PID-START-N:
half-written stores, models, checkpoints, predictions) and lock files
nobody holds. An entry is removed only if its owner, identified by process
id and start time, is no longer running (a live ingest or fit is never
touched) and its content proves it falkon-ooc's: a temporary directory's
marker file, a store's files, a model's or checkpoint's magic number.
Names of the older shape .NAME.tmp-PID-START-N are removed only on that
proof, and a name without the leading dot never. Each removal is listed on
stdout; --dry-run lists what would be removed and removes nothing. ingest,
fit and predict do the same in the directory of their --out before they
start.`,
		Flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) error {
			dry := fs.Bool("dry-run", false, "list what would be removed; remove nothing")
			return func(ctx context.Context, e *env, args []string) error {
				return runClean(ctx, e, *dry, args)
			}
		},
	})
}

func runClean(ctx context.Context, e *env, dry bool, args []string) error {
	if len(args) == 0 {
		return usagef("no DIR given")
	}
	total := 0
	for _, dir := range args {
		if dry {
			left, err := fileutil.Leftovers(dir)
			if err != nil {
				return fmt.Errorf("clean %s: %w", clipArg(dir), err)
			}
			for _, l := range left {
				fmt.Fprintf(e.stdout, "would remove %s\n", l)
			}
			total += len(left)
			continue
		}
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
