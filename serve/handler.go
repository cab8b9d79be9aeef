package serve

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"
)

// Options configures a Handler. A zero field means its default.
type Options struct {
	// MaxBody is the largest request body in bytes; 0 means 64 MiB.
	MaxBody int64
	// MaxRows is the most rows in one request; 0 means 100 000.
	MaxRows int
	// MaxInflight is the most prediction requests in flight; past it a
	// request is answered 503 at once. 0 means 1024.
	MaxInflight int
	// MaxMemory bounds, in bytes, the decoded rows of the requests in
	// flight (8 bytes a feature value); a request that would pass it is
	// answered 503. 0 means 1 GiB.
	MaxMemory int64
	// MaxBatch is the most rows of one kernel block: small requests are
	// gathered up to it. 0 means 256; 1 turns gathering off.
	MaxBatch int
	// MaxDelay is how long a worker waits for more requests to fill a
	// block once it holds one; 0 gathers only the requests already
	// waiting.
	MaxDelay time.Duration
	// Workers is the number of goroutines that run kernel blocks; 0
	// means GOMAXPROCS.
	Workers int
	// Nulls says how a null, NaN or infinite feature reads: "error" (the
	// default: the request is refused), "mean" (the feature's training
	// mean) or "zero".
	Nulls string
	// Logger receives the server's structured logs; nil discards them.
	Logger *slog.Logger
	// Registry holds the metrics, served at /metrics; nil means a new
	// one from NewRegistry.
	Registry *prometheus.Registry
}

func (o *Options) defaults() {
	if o.MaxBody <= 0 {
		o.MaxBody = 64 << 20
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 100_000
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = 1024
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = 1 << 30
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = NewRegistry()
	}
}

// state is one model as the server serves it, immutable once built.
type state struct {
	m           Model
	info        Info
	id          string
	index       map[string]int
	featureList string
	nulls       nullPolicy
	plans       [8]plan
	scorers     chan Scorer
}

func (h *Handler) newState(m Model, id string) (*state, error) {
	st := &state{m: m, info: m.Info(), id: id}
	if err := st.info.check(); err != nil {
		return nil, err
	}
	var err error
	if st.nulls, err = newNullPolicy(h.opt.Nulls, &st.info); err != nil {
		return nil, err
	}
	st.index = make(map[string]int, len(st.info.Features))
	for j, f := range st.info.Features {
		st.index[f] = j
	}
	list := st.info.Features
	more := ""
	if len(list) > 8 {
		list, more = list[:8], fmt.Sprintf(", … %d in all", len(st.info.Features))
	}
	st.featureList = fmt.Sprintf("its features: %s%s", strings.Join(quoteAll(list), ", "), more)
	st.plans = makePlans(&st.info)
	st.scorers = make(chan Scorer, h.opt.Workers)
	return st, nil
}

func quoteAll(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return q
}

func (st *state) getScorer() Scorer {
	select {
	case s := <-st.scorers:
		return s
	default:
		return st.m.NewScorer()
	}
}

func (st *state) putScorer(s Scorer) {
	select {
	case st.scorers <- s:
	default:
	}
}

// decoder reads request bodies for one model; its scratch is reused.
type decoder struct {
	*state
	seen  []uint64 // stamp of the row or body that named feature j
	stamp uint64
	col   []float64 // one Arrow column's values, converted
}

// item is one prediction request on its way through the server: its
// decoded rows, its predictions and the scratch that reads and writes
// them, reused from request to request.
type item struct {
	st   *state
	x    []float64
	rows int
	std  bool
	res  Result
	err  error
	done chan struct{}

	rb   rowBuf
	dc   decoder
	jr   jsonReader
	body limitedBody
	out  []byte
}

// Items keep buffers up to this many bytes between requests; larger ones
// are dropped when their request ends.
const keepBytes = 1 << 20

// Handler serves a model over HTTP:
//
//	POST /v1/predict   rows in (JSON or Arrow IPC stream), predictions out
//	GET  /v1/model     the model's summary, as inspect --json shows it
//	GET  /healthz      200 while the process serves
//	GET  /readyz       200 while a model is loaded and the server not draining
//	GET  /metrics      Prometheus metrics
//
// It is safe for concurrent use. Swap and Reload change the model while
// it serves; Close stops its workers.
type Handler struct {
	opt      Options
	cur      atomic.Pointer[state]
	mux      *http.ServeMux
	queue    chan *item
	inflight atomic.Int64
	budget   *semaphore.Weighted
	met      *metrics
	log      *slog.Logger
	items    sync.Pool
	workers  sync.WaitGroup
	mu       sync.RWMutex // held for reading while a request submits; Close takes it
	closed   bool
	draining atomic.Bool
	reloadMu sync.Mutex
}

// New returns a Handler serving m, whose identity (shown in answers, in
// /v1/model and in the metrics) is id. It starts opt.Workers goroutines;
// Close stops them.
func New(m Model, id string, opt Options) (*Handler, error) {
	opt.defaults()
	h := &Handler{opt: opt, log: opt.Logger, budget: semaphore.NewWeighted(opt.MaxMemory)}
	var err error
	if h.met, err = newMetrics(opt.Registry); err != nil {
		return nil, err
	}
	st, err := h.newState(m, id)
	if err != nil {
		return nil, err
	}
	h.setState(st, nil)
	h.queue = make(chan *item, opt.MaxInflight)
	h.items.New = func() any { return &item{done: make(chan struct{}, 1)} }
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("POST /v1/predict", h.predict)
	h.mux.HandleFunc("GET /v1/model", h.model)
	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	h.mux.HandleFunc("GET /readyz", h.ready)
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(opt.Registry, promhttp.HandlerOpts{}))
	for range opt.Workers {
		h.workers.Add(1)
		go h.worker()
	}
	return h, nil
}

// ServeHTTP serves the routes listed on Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// ModelID returns the identity of the model being served.
func (h *Handler) ModelID() string { return h.cur.Load().id }

func (h *Handler) setState(st, old *state) {
	h.cur.Store(st)
	if old != nil {
		h.met.model.DeleteLabelValues(old.id, old.info.Task, modelSize(old), strconv.Itoa(len(old.info.Features)))
	}
	h.met.model.WithLabelValues(st.id, st.info.Task, modelSize(st), strconv.Itoa(len(st.info.Features))).Set(1)
}

// modelSize is the model's M as its summary states it ("" if absent).
func modelSize(st *state) string {
	const key = `"centers":`
	s := string(st.info.Summary)
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = strings.TrimLeft(s[i+len(key):], " ")
	j := strings.IndexAny(s, ",}\n")
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(s[:j])
}

// Swap makes m (identity id) the model served. Requests already decoding
// or predicting finish on the model they started with; every later one
// uses m. A model whose description is inconsistent is refused, and the
// current one stays.
func (h *Handler) Swap(m Model, id string) error {
	st, err := h.newState(m, id)
	if err != nil {
		return err
	}
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	old := h.cur.Load()
	h.setState(st, old)
	h.log.Info("model swapped in", "id", id, "previous", old.id, "task", st.info.Task, "features", len(st.info.Features))
	return nil
}

// Reload loads a model with load and swaps it in. When load fails, or
// the model it returns is refused, the current model keeps serving, and
// Reload logs and returns why.
func (h *Handler) Reload(load func() (Model, string, error)) error {
	m, id, err := load()
	if err == nil {
		err = h.Swap(m, id)
	}
	if err != nil {
		h.met.reloads.WithLabelValues("failed").Inc()
		h.log.Error("reload failed; the previous model keeps serving", "id", h.ModelID(), "err", err)
		return err
	}
	h.met.reloads.WithLabelValues("ok").Inc()
	return nil
}

// Drain marks the server as shutting down: /readyz answers 503 so that a
// load balancer stops sending requests, which are still served.
func (h *Handler) Drain() { h.draining.Store(true) }

// Close stops the workers once the requests queued are answered. Call it
// after the HTTP server has stopped calling ServeHTTP (http.Server's
// Shutdown returned); a request that still arrives is answered 503.
func (h *Handler) Close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.queue)
	}
	h.mu.Unlock()
	h.workers.Wait()
}

func (h *Handler) ready(w http.ResponseWriter, _ *http.Request) {
	if h.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "draining\n")
		return
	}
	io.WriteString(w, "ready\n")
}

// model answers GET /v1/model: {"id": ID, "model": SUMMARY}.
func (h *Handler) model(w http.ResponseWriter, _ *http.Request) {
	st := h.cur.Load()
	b := append([]byte(`{"id":`), appendJSONString(nil, st.id)...)
	b = append(b, `,"model":`...)
	b = append(b, st.info.Summary...)
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// Body forms.
const (
	formJSON = iota
	formArrow
)

// contentForm returns the form of a Content-Type, or a 415 error.
func contentForm(ct string) (int, error) {
	mt := ct
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimSpace(mt)
	switch {
	case strings.EqualFold(mt, "application/json"):
		return formJSON, nil
	case strings.EqualFold(mt, ArrowStream):
		return formArrow, nil
	}
	if mt == "" {
		return 0, &RequestError{Status: 415, Row: -1, Msg: "no Content-Type: send application/json or " + ArrowStream}
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return 0, &RequestError{Status: 415, Row: -1, Msg: fmt.Sprintf("Content-Type %q is not a media type: send application/json or %s", ct, ArrowStream)}
	}
	return 0, &RequestError{Status: 415, Row: -1, Msg: fmt.Sprintf("Content-Type %q is not served: send application/json or %s", mt, ArrowStream)}
}

// queryValue returns the first value of name in the raw query (unescaped
// only when it holds escapes).
func queryValue(raw, name string) string {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != name {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			if u, err := url.QueryUnescape(v); err == nil {
				return u
			}
		}
		return v
	}
	return ""
}

var errBusy = &RequestError{Status: 503, Row: -1, Msg: "server busy: too many requests in flight (--max-inflight); retry later"}

func (h *Handler) predict(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	n := h.inflight.Add(1)
	h.met.inflight.Set(float64(n))
	defer func() { h.met.inflight.Set(float64(h.inflight.Add(-1))) }()
	form, err := contentForm(r.Header.Get("Content-Type"))
	if n > int64(h.opt.MaxInflight) {
		err = errBusy
	}
	if err != nil {
		h.fail(w, r, err, start, form)
		return
	}
	st := h.cur.Load()
	ask, err := st.info.parseAsk(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err, start, form)
		return
	}
	it := h.getItem(st)
	defer h.putItem(it)
	it.body.reset(r.Body, h.opt.MaxBody)
	if form == formJSON {
		it.jr.reset(&it.body)
		err = it.dc.decodeJSON(&it.jr, &it.rb)
	} else {
		err = it.dc.decodeArrow(&it.body, &it.rb, h.opt.MaxBody)
	}
	if err != nil {
		h.fail(w, r, err, start, form)
		return
	}
	it.x, it.rows, it.std = it.rb.x, it.rb.n, ask.Std || ask.Interval > 0
	if it.rows > 0 {
		if err := h.submit(it); err != nil {
			h.fail(w, r, err, start, form)
			return
		}
		<-it.done
		if it.err != nil {
			h.fail(w, r, fmt.Errorf("predict: %w", it.err), start, form)
			return
		}
	}
	p := st.plans[planKey(ask)]
	z := 0.0
	if ask.Interval > 0 {
		z = IntervalZ(ask.Interval)
		if st.info.IntervalZ != nil {
			z = st.info.IntervalZ(ask.Interval)
		}
	}
	if form == formJSON {
		w.Header().Set("Content-Type", "application/json")
		err = it.writeJSON(w, st, p, z)
	} else {
		w.Header().Set("Content-Type", ArrowStream)
		w.Header().Set("Falkon-Model", st.id)
		err = writeArrow(w, &st.info, p, z, it)
	}
	if err != nil {
		h.log.Debug("answer not delivered", "remote", r.RemoteAddr, "err", err)
	}
	h.met.rows.Add(float64(it.rows))
	h.met.code(200)
	h.observe(form, start)
}

func (h *Handler) observe(form int, start time.Time) {
	lat := time.Since(start).Seconds()
	if form == formArrow {
		h.met.latArrow.Observe(lat)
	} else {
		h.met.latJSON.Observe(lat)
	}
}

// fail answers a refused or failed request with its JSON error body.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error, start time.Time, form int) {
	var re *RequestError
	if !errors.As(err, &re) {
		re = &RequestError{Status: 500, Row: -1, Msg: err.Error()}
	}
	kind := errorKind(re)
	h.met.errors[kind].Inc()
	h.met.code(re.Status)
	h.observe(form, start)
	if re.Status >= 500 && re.Status != 503 {
		h.log.Error("request failed", "remote", r.RemoteAddr, "status", re.Status, "err", re.Error())
	} else {
		h.log.Debug("request refused", "remote", r.RemoteAddr, "status", re.Status, "kind", kind, "err", re.Error())
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	if re.Status == 503 {
		hd.Set("Retry-After", "1")
	}
	if re.Status == 413 || re.Status == 408 {
		hd.Set("Connection", "close")
	}
	w.WriteHeader(re.Status)
	w.Write(appendErrorJSON(nil, re))
}

func (h *Handler) getItem(st *state) *item {
	it := h.items.Get().(*item)
	it.st = st
	it.dc.state = st
	d := len(st.info.Features)
	if len(it.dc.seen) < d {
		it.dc.seen = make([]uint64, d)
		it.dc.stamp = 0
	}
	it.rb.reset(d, h.opt.MaxRows, h.budget)
	it.err = nil
	return it
}

func (h *Handler) putItem(it *item) {
	it.rb.release()
	if cap(it.rb.x)*8 > keepBytes {
		it.rb.x = nil
	}
	if cap(it.res.Scores)*8 > keepBytes || cap(it.res.Proba)*8 > keepBytes || cap(it.res.Std)*8 > keepBytes || cap(it.res.Class)*8 > keepBytes {
		it.res = Result{}
	}
	if cap(it.out) > keepBytes {
		it.out = nil
	}
	it.st, it.dc.state, it.x = nil, nil, nil
	it.jr.r, it.body.r = nil, nil
	h.items.Put(it)
}

// submit queues it for a worker.
func (h *Handler) submit(it *item) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return &RequestError{Status: 503, Row: -1, Msg: "server shutting down"}
	}
	select {
	case h.queue <- it:
		return nil
	default:
		return errBusy
	}
}

// limitedBody reads a request body, failing past max bytes.
type limitedBody struct {
	r    io.Reader
	left int64
	max  int64
}

// errBodyTooLarge is the read error past Options.MaxBody.
type errBodyTooLarge struct{ max int64 }

func (e *errBodyTooLarge) Error() string {
	return fmt.Sprintf("the request body exceeds %d bytes (--max-body)", e.max)
}

func (b *limitedBody) reset(r io.Reader, max int64) { b.r, b.left, b.max = r, max, max }

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &errBodyTooLarge{b.max}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, &errBodyTooLarge{b.max}
	}
	return n, err
}

// readError turns an error reading the body into the request's error
// (nil for io.EOF).
func readError(err error) error {
	if err == nil || err == io.EOF {
		return nil
	}
	var tl *errBodyTooLarge
	if errors.As(err, &tl) {
		return &RequestError{Status: 413, Row: -1, Msg: tl.Error()}
	}
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &RequestError{Status: 408, Row: -1, Msg: "the request body did not arrive in time (--read-timeout)"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &RequestError{Status: 400, Row: -1, Msg: "the request body ended early"}
	}
	return &RequestError{Status: 400, Row: -1, Msg: fmt.Sprintf("reading the request body: %v", err)}
}
