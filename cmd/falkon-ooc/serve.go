package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/falkon-ooc/falkon-ooc/serve"
)

func init() {
	register(&command{
		Name:  "serve",
		Short: "answer predictions of a model over HTTP",
		Usage: "--model MODEL [--addr 127.0.0.1:8080] [flags]",
		Long: `
Serve answers predictions of a model made by 'falkon-ooc fit' over HTTP:

  POST /v1/predict  rows as JSON, {"rows": [{"x1": 0.5, …}, …]} or
                    {"columns": {"x1": [0.5, …], …}} (Content-Type
                    application/json), or an Arrow IPC stream
                    (application/vnd.apache.arrow.stream); the query
                    parameters proba, std and interval=LEVEL ask what
                    predict's --proba, --std and --interval ask. The
                    answer has predict's columns, in the body's form.
  GET /v1/model     the model's summary, as inspect --json shows it
  GET /healthz, /readyz, /metrics (Prometheus)

Features are matched by name; a bad row is answered 400 with the row,
the feature and what is wrong. A model fitted on categorical or date
columns takes those columns as predict reads them (levels as strings,
dates as strings or Arrow dates and timestamps); levels it does not know
are answered as predict answers them and counted in the answer. Concurrent
small requests are gathered into kernel blocks of up to --max-batch rows.
Past --max-inflight requests, or --max-memory of decoded rows, requests
are answered 503; past --max-client-inflight from one client, 429.

SIGHUP (and, with --watch, a change of the file) reloads the model: the
new one is checked and swapped in while requests in flight finish on the
old; one that fails to load leaves the old serving. SIGTERM or Ctrl-C
stops accepting connections and exits once the requests in flight are
answered. Logs go to stderr.`,
		Flags: serveFlags,
	})
}

type serveOpts struct {
	model, addr, nulls, maxBody, maxMemory, logFormat, logLevel string
	maxBatch, workers, maxRows, maxInflight, maxClient          int
	maxDelay, readHeader, read, write, idle, shutdown, watch    time.Duration
}

func serveFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &serveOpts{}
	fs.StringVar(&o.model, "model", "", "the model `file` (required)")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "the `host:port` to listen on")
	fs.StringVar(&o.nulls, "nulls", "", "what a null, NaN or ±Inf feature does: error (a 400 answer), mean (read as the feature's training mean) or zero (read as 0); default: mean for a model fitted on data ingested with --nulls mean, else error; a categorical column's null is a level")
	fs.IntVar(&o.maxBatch, "max-batch", 256, "gather concurrent requests into kernel blocks of up to this many `rows` (1: no gathering)")
	fs.DurationVar(&o.maxDelay, "max-delay", 0, "how long a block waits for more requests (0: it takes only those already waiting)")
	fs.IntVar(&o.workers, "workers", 0, "goroutines that run kernel blocks (0: one per CPU)")
	fs.StringVar(&o.maxBody, "max-body", "64MiB", "the largest request body")
	fs.IntVar(&o.maxRows, "max-rows", 100_000, "the most rows in one request")
	fs.IntVar(&o.maxInflight, "max-inflight", 1024, "the most requests in flight; past it a request is answered 503")
	fs.IntVar(&o.maxClient, "max-client-inflight", 0, "the most requests in flight from one client IP address; past it its request is answered 429 (0: no limit)")
	fs.StringVar(&o.maxMemory, "max-memory", "1GiB", "the decoded rows of all requests in flight; past it a request is answered 503")
	fs.DurationVar(&o.readHeader, "read-header-timeout", 5*time.Second, "time to read a request's headers")
	fs.DurationVar(&o.read, "read-timeout", 30*time.Second, "time to read a whole request, body included")
	fs.DurationVar(&o.write, "write-timeout", 60*time.Second, "time from the end of the headers to the end of the answer")
	fs.DurationVar(&o.idle, "idle-timeout", 2*time.Minute, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&o.shutdown, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for the requests in flight")
	fs.DurationVar(&o.watch, "watch", 0, "check the model file this often and reload it when it changes (0: only on SIGHUP)")
	fs.StringVar(&o.logFormat, "log-format", "text", "logs as text or json")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug (every refused request too), info, warn or error")
	return func(ctx context.Context, e *env, args []string) error {
		return runServe(ctx, e, o, args)
	}
}

func runServe(ctx context.Context, e *env, o *serveOpts, args []string) error {
	if len(args) > 0 {
		return usagef("serve takes no arguments, found %q", args[0])
	}
	if o.model == "" {
		return usagef("--model is required")
	}
	opt := serve.Options{MaxRows: o.maxRows, MaxInflight: o.maxInflight, MaxClientInflight: o.maxClient, MaxBatch: o.maxBatch, MaxDelay: o.maxDelay, Workers: o.workers, Nulls: o.nulls}
	var err error
	if opt.MaxBody, err = parseBytes(o.maxBody); err != nil {
		return usagef("--max-body: %v", err)
	}
	if opt.MaxMemory, err = parseBytes(o.maxMemory); err != nil {
		return usagef("--max-memory: %v", err)
	}
	switch {
	case o.maxBatch < 1:
		return usagef("--max-batch must be at least 1, not %d", o.maxBatch)
	case o.maxRows < 1:
		return usagef("--max-rows must be at least 1, not %d", o.maxRows)
	case o.maxInflight < 1:
		return usagef("--max-inflight must be at least 1, not %d", o.maxInflight)
	case o.maxDelay < 0 || o.workers < 0 || o.watch < 0 || o.maxClient < 0:
		return usagef("--max-delay, --workers, --watch and --max-client-inflight cannot be negative")
	case o.nulls != "" && o.nulls != "error" && o.nulls != "mean" && o.nulls != "zero":
		return usagef("--nulls must be error, mean or zero, not %q (a server answers every row, so there is no drop)", o.nulls)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usagef("--log-level must be debug, info, warn or error, not %q", o.logLevel)
	}
	hopt := &slog.HandlerOptions{Level: level}
	var lh slog.Handler
	switch o.logFormat {
	case "text":
		lh = slog.NewTextHandler(e.stderr, hopt)
	case "json":
		lh = slog.NewJSONHandler(e.stderr, hopt)
	default:
		return usagef("--log-format must be text or json, not %q", o.logFormat)
	}
	log := slog.New(lh)
	opt.Logger = log

	// SIGHUP reloads the model here instead of stopping the command.
	hup := make(chan os.Signal, 1)
	signal.Reset(syscall.SIGHUP)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	m, id, err := serve.Load(o.model)
	if err != nil {
		return err
	}
	h, err := serve.New(m, id, opt)
	if err != nil {
		return err
	}
	defer h.Close()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: o.readHeader, ReadTimeout: o.read, WriteTimeout: o.write, IdleTimeout: o.idle,
		ErrorLog: slog.NewLogLogger(lh, slog.LevelWarn),
	}
	log.Info("serving", "addr", ln.Addr().String(), "model", o.model, "id", id, "nulls", h.Nulls())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var tick <-chan time.Time
	stamp := fileStamp(o.model)
	if o.watch > 0 {
		t := time.NewTicker(o.watch)
		defer t.Stop()
		tick = t.C
	}
	reload := func(why string) {
		log.Info("reloading the model", "why", why, "model", o.model)
		h.Reload(func() (serve.Model, string, error) { return serve.Load(o.model) })
	}
	for {
		select {
		case <-hup:
			stamp = fileStamp(o.model)
			reload("SIGHUP")
		case <-tick:
			if s := fileStamp(o.model); s != stamp && s != (stampOf{}) {
				stamp = s
				reload("the file changed")
			}
		case err := <-served:
			return err
		case <-ctx.Done():
			log.Info("shutting down: answering the requests in flight", "timeout", o.shutdown)
			h.Drain()
			sctx, cancel := context.WithTimeout(context.Background(), o.shutdown)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					srv.Close()
					return errors.New("shutdown: requests still in flight after --shutdown-timeout")
				}
				return err
			}
			h.Close()
			log.Info("stopped")
			return nil
		}
	}
}

// stampOf is what --watch compares: a file's size and modification time.
type stampOf struct {
	size int64
	mod  time.Time
}

func fileStamp(path string) stampOf {
	fi, err := os.Stat(path)
	if err != nil {
		return stampOf{}
	}
	return stampOf{fi.Size(), fi.ModTime()}
}
