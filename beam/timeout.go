package beam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// DefaultObjectTimeout is the default of ObjectTimeout.
const DefaultObjectTimeout = time.Minute

// ObjectTimeout bounds every wait on object storage (s3://, gs://, any
// URL): opening its filesystem (credentials included), each request until
// it answers, and each read or write that makes no progress, so that an
// endpoint that accepts a connection and never answers, or a network that
// drops packets, fails with the URL instead of hanging. A long transfer
// that keeps moving is never cut. falkon-ooc-beam sets it from
// --object-timeout in the process that runs it (the driver, and Prism's
// workers in the same process); workers of a remote runner use the
// default. 0 or less: no bound.
var ObjectTimeout = DefaultObjectTimeout

// TimeoutError is an operation on object storage that waited longer than
// ObjectTimeout.
type TimeoutError struct {
	URL     string
	Op      string // "open", "list", "read", …
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: %s: no answer from object storage within %v (--object-timeout); check the endpoint and the network, or raise --object-timeout", e.URL, e.Op, e.Timeout)
}

// Is makes a TimeoutError match context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// newFS is filesystem.New bounded by ObjectTimeout: a filesystem whose
// client cannot be made in time (a credentials lookup that waits on the
// network) is a TimeoutError. The call is left to finish on its own.
func newFS(ctx context.Context, loc string) (filesystem.Interface, error) {
	t := ObjectTimeout
	if !hasScheme(loc) {
		return filesystem.New(ctx, loc)
	}
	if t <= 0 {
		fs, err := filesystem.New(ctx, loc)
		if err != nil {
			return nil, err
		}
		return timedFS{Interface: fs}, nil
	}
	type result struct {
		fs  filesystem.Interface
		err error
	}
	done := make(chan result, 1)
	go func() {
		fs, err := filesystem.New(ctx, loc)
		done <- result{fs, err}
	}()
	timer := time.NewTimer(t)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		return timedFS{Interface: r.fs, t: t}, nil
	case <-timer.C:
		go func() { // close it if it ever comes
			if r := <-done; r.fs != nil {
				r.fs.Close()
			}
		}()
		return nil, &TimeoutError{URL: loc, Op: "open", Timeout: t}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// timedFS bounds each call on a filesystem of object storage by t (0: no
// bound): a
// request must answer within t, and each read or write call on a stream
// must return within t (a watchdog, armed only while such a call waits,
// cancels the request's context; time spent between calls is the
// caller's and never counts).
type timedFS struct {
	filesystem.Interface
	t time.Duration
}

// call runs fn with a context that the watchdog cancels if fn has not
// returned within t; it returns fn's error, or a TimeoutError for op on
// url when the watchdog fired. On success the watchdog's context stays
// live (a stream uses it) until the caller stops it.
func (f timedFS) call(ctx context.Context, op, url string, fn func(ctx context.Context) error) (*watchdog, error) {
	w := newWatchdog(ctx, f.t)
	err := fn(w.ctx)
	w.disarm()
	if err != nil {
		w.stop()
		return nil, w.wrap(err, op, url)
	}
	return w, nil
}

func (f timedFS) List(ctx context.Context, glob string) (out []string, err error) {
	w, err := f.call(ctx, "list", glob, func(ctx context.Context) error {
		out, err = f.Interface.List(ctx, glob)
		return err
	})
	if err == nil {
		w.stop()
	}
	return out, err
}

func (f timedFS) Size(ctx context.Context, name string) (n int64, err error) {
	w, err := f.call(ctx, "size", name, func(ctx context.Context) error {
		n, err = f.Interface.Size(ctx, name)
		return err
	})
	if err == nil {
		w.stop()
	}
	return n, err
}

func (f timedFS) LastModified(ctx context.Context, name string) (tm time.Time, err error) {
	lm, ok := f.Interface.(filesystem.LastModifiedGetter)
	if !ok {
		return time.Time{}, nil // unknown, as for a filesystem without it
	}
	w, err := f.call(ctx, "stat", name, func(ctx context.Context) error {
		tm, err = lm.LastModified(ctx, name)
		return err
	})
	if err == nil {
		w.stop()
	}
	return tm, err
}

func (f timedFS) Remove(ctx context.Context, name string) error {
	rm, ok := f.Interface.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("%s: the filesystem cannot remove objects", name)
	}
	w, err := f.call(ctx, "remove", name, func(ctx context.Context) error { return rm.Remove(ctx, name) })
	if err == nil {
		w.stop()
	}
	return err
}

func (f timedFS) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	var rc io.ReadCloser
	w, err := f.call(ctx, "read", name, func(ctx context.Context) (err error) {
		rc, err = f.Interface.OpenRead(ctx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &timedReader{rc: rc, w: w, url: name}, nil
}

// timedRangeFS is a timedFS over a filesystem with range reads.
type timedRangeFS struct{ timedFS }

func (f timedRangeFS) OpenRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, error) {
	ro := f.Interface.(RangeOpener)
	var rc io.ReadCloser
	w, err := f.call(ctx, "read", name, func(ctx context.Context) (err error) {
		rc, err = ro.OpenRange(ctx, name, off, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &timedReader{rc: rc, w: w, url: name}, nil
}

func (f timedFS) OpenWrite(ctx context.Context, name string) (io.WriteCloser, error) {
	var wc io.WriteCloser
	w, err := f.call(ctx, "write", name, func(ctx context.Context) (err error) {
		wc, err = f.Interface.OpenWrite(ctx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &timedWriter{wc: wc, w: w, url: name}, nil
}

// watchdog cancels its context when a call it is armed for waits longer
// than t. It starts armed.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelFunc
	t      time.Duration
	mu     sync.Mutex
	timer  *time.Timer
	fired  bool
}

func newWatchdog(parent context.Context, t time.Duration) *watchdog {
	ctx, cancel := context.WithCancel(parent)
	w := &watchdog{ctx: ctx, cancel: cancel, t: t}
	if t <= 0 {
		return w // no bound
	}
	w.timer = time.AfterFunc(t, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		cancel()
	})
	return w
}

// arm starts a wait of at most t; disarm ends it.
func (w *watchdog) arm() {
	if w.timer != nil {
		w.timer.Reset(w.t)
	}
}

func (w *watchdog) disarm() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watchdog) stop() {
	w.disarm()
	w.cancel()
}

// wrap returns a TimeoutError for an error caused by the watchdog.
func (w *watchdog) wrap(err error, op, url string) error {
	w.mu.Lock()
	fired := w.fired
	w.mu.Unlock()
	if fired && (errors.Is(err, context.Canceled) || w.ctx.Err() != nil) {
		return &TimeoutError{URL: url, Op: op, Timeout: w.t}
	}
	return err
}

type timedReader struct {
	rc  io.ReadCloser
	w   *watchdog
	url string
}

func (r *timedReader) Read(p []byte) (int, error) {
	r.w.arm()
	n, err := r.rc.Read(p)
	r.w.disarm()
	if err != nil && err != io.EOF {
		err = r.w.wrap(err, "read", r.url)
	}
	return n, err
}

func (r *timedReader) Close() error {
	err := r.rc.Close()
	r.w.stop()
	return err
}

type timedWriter struct {
	wc  io.WriteCloser
	w   *watchdog
	url string
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.w.arm()
	n, err := w.wc.Write(p)
	w.w.disarm()
	if err != nil {
		err = w.w.wrap(err, "write", w.url)
	}
	return n, err
}

func (w *timedWriter) Close() error {
	w.w.arm()
	err := w.wc.Close()
	if err != nil {
		err = w.w.wrap(err, "write", w.url)
	}
	w.w.stop()
	return err
}
