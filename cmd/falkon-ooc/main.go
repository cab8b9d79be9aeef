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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
