package main

import (
	"io"
	"log/slog"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Beam's and Prism's own logs go through slog's default logger. beam.Init
// sets that logger to write to os.Stderr from level INFO, and Prism's job
// service keeps the default logger it finds when it starts (once per
// process). So the default logger is set once, after beam.Init, to a
// handler whose destination and level are those of the current run:
// warnings and errors (errors only with --quiet), or from INFO with
// --verbose, on the run's stderr.
var beamLog struct {
	mu    sync.Mutex
	w     io.Writer // nil: discard
	level slog.LevelVar
	once  sync.Once
}

type beamLogWriter struct{}

func (beamLogWriter) Write(p []byte) (int, error) {
	beamLog.mu.Lock()
	defer beamLog.mu.Unlock()
	if beamLog.w == nil {
		return len(p), nil
	}
	return beamLog.w.Write(p)
}

// logTo sends Beam's and Prism's logs of level or above to w (nil:
// nowhere).
func logTo(w io.Writer, level slog.Level) {
	beamLog.once.Do(func() {
		if !beam.Initialized() {
			beam.Init() // its logging setup first, so that ours replaces it
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(beamLogWriter{}, &slog.HandlerOptions{Level: &beamLog.level})))
	})
	beamLog.mu.Lock()
	beamLog.w = w
	beamLog.mu.Unlock()
	beamLog.level.Set(level)
}
