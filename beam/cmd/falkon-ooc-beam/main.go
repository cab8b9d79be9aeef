// Command falkon-ooc-beam fits FALKON over a chunk store with every pass
// over the data run as an Apache Beam job: on Prism (Beam's local runner,
// in this process), or on Flink, Spark or Dataflow.
//
//	falkon-ooc-beam fit --out MODEL [flags] STORE
//
// The model file is the one falkon-ooc writes: predict with
// 'falkon-ooc predict --model MODEL'. Run 'falkon-ooc-beam fit --help' for
// the flags. The same binary is the Beam worker: runners start it with
// --worker, and it then serves Beam's worker protocol.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func main() {
	if slices.ContainsFunc(os.Args[1:], func(a string) bool {
		return a == "--worker" || a == "-worker" || a == "--worker=true" || a == "-worker=true"
	}) {
		// Started by a runner as a worker: Beam's flags, then its harness,
		// which exits the process when the worker is done.
		flag.Parse()
		beam.Init()
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	progName = programName(os.Args[0])
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
