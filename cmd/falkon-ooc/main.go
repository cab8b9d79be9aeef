// Command falkon-ooc ingests tabular data into a chunk store, fits FALKON
// kernel ridge regression on it out of core, and predicts with the model.
//
// Run "falkon-ooc help" for the list of commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals end a command as Ctrl-C does: the context is cancelled, the
// command stops at its next check, removes its temporary files and exits
// 130. SIGHUP (the terminal closed) is one of them: its default action
// killed the process mid-write, leaving a temporary file, with exit 129.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	progName = programName(os.Args[0])
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
