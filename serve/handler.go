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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"

	"github.com/falkon-ooc/falkon-ooc/featenc"
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
	// MaxClientInflight is the most prediction requests in flight from
	// one client (one remote IP address); past it the client's request
	// is answered 429 at once, so that one client cannot take the
	// server's whole MaxInflight. 0 means no limit per client.
	MaxClientInflight int
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
	// request is refused), "mean" (the feature's training mean) or
	// "zero". "" means as the model's training data (Info.Nulls): mean
	// for a model fitted on data whose NULLs were filled with their
	// means, else error. A categorical column's null is a level of its
	// own, whatever Nulls says.
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
	m    Model
	info Info
	id   string
	// inputs are the columns of a request: the features, or for a model
	// with encoded features the input columns they are made from
	// (featenc.Assembler's Columns), of the kinds kinds (nil: all
	// numbers).
	inputs []string
	kinds  []inputKind
	// For errors: "features" or "input columns", "a feature" or "an
	// input column", "feature" or "input column", and the shapes of the
	// two JSON forms.
	what, one, noun      string
	rowsShape, colsShape string
	index                map[string]int
	featureList          string
	nulls                nullPolicy
	plans                [8]plan
	scorers              chan Scorer
}

// inputKind is how a request's column is read.
type inputKind uint8

const (
	inNumber   inputKind = iota // a number (a feature, or a time column's days)
	inCategory                  // a level of a categorical column (featenc.Code)
	inTime                      // a date or timestamp, or its days since 1970-01-01
)

// encoded reports whether requests hold input columns that the server
// expands into the features.
func (st *state) encoded() bool { return st.kinds != nil }

func (h *Handler) newState(m Model, id string) (*state, error) {
	st := &state{m: m, info: m.Info(), id: id}
	if err := st.info.check(); err != nil {
		return nil, err
	}
	st.inputs, st.what, st.one, st.noun = st.info.Features, "features", "a feature", "feature"
	if st.info.Encoding != nil {
		asm, err := featenc.NewAssembler(st.info.Encoding, st.info.Features)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		if asm.Encoded() {
			st.inputs, st.what, st.one, st.noun = asm.Columns, "input columns", "an input column", "input column"
			st.kinds = make([]inputKind, len(asm.Columns))
			for k, c := range asm.Columns {
				switch col := st.info.Encoding.Column(c); {
				case slices.Contains(asm.Categorical, c):
					st.kinds[k] = inCategory
				case col != nil && col.Kind == featenc.Time:
					st.kinds[k] = inTime
				}
			}
		}
	}
	st.rowsShape = fmt.Sprintf(`an array of rows, [{"%s": value, …}, …]`, st.noun)
	st.colsShape = fmt.Sprintf(`an object of columns, {"%s": [values], …}`, st.noun)
	var err error
	if st.nulls, err = newNullPolicy(h.opt.Nulls, &st.info, st.inputs); err != nil {
		return nil, err
	}
	st.index = make(map[string]int, len(st.inputs))
	for j, f := range st.inputs {
		st.index[f] = j
	}
	list := st.inputs
	more := ""
	if len(list) > 8 {
		list, more = list[:8], fmt.Sprintf(", … %d in all", len(st.inputs))
	}
	st.featureList = fmt.Sprintf("its %s: %s%s", st.what, strings.Join(quoteAll(list), ", "), more)
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
	seen  []uint64 // stamp of the row or body that named request column j
	stamp uint64
	col   []float64 // one Arrow column's values, converted
	lbuf  []byte    // scratch of table.Levels
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

	z    []float64 // the intervals' multipliers, one per output
	rb   rowBuf
	dc   decoder
	jr   jsonReader
	body limitedBody
	out  []byte

	// An encoded model's features, assembled from the request's columns
	// (assemble).
	asm    *featenc.Assembler
	asmFor *state
	xa     []float64   // rows × D
	cols   []float64   // a block of the request's columns, column-major
	blk    [][]float64 // the block's columns
	unseen []featenc.Unseen
}

// assembleRows is the most rows assembled at once: the Assembler's
// scratch and the block of columns stay that small.
const assembleRows = 1024

// assemble expands the request's input columns (it.rb, row-major) into
// the model's features (it.x), as falkon-ooc predict does
// (featenc.Assembler), and keeps the request's unseen levels in
// it.unseen.
func (it *item) assemble() error {
	st, rb := it.st, &it.rb
	n, w, d := rb.n, len(st.inputs), len(st.info.Features)
	if it.asmFor != st {
		a, err := featenc.NewAssembler(st.info.Encoding, st.info.Features)
		if err != nil {
			return err
		}
		it.asm, it.asmFor = a, st
	}
	var err error
	if it.xa, err = rb.grow(it.xa, n*d); err != nil {
		return err
	}
	b := min(n, assembleRows)
	if cap(it.cols) < b*w {
		it.cols = make([]float64, assembleRows*w)
	}
	it.blk = slices.Grow(it.blk[:0], w)[:w]
	for r0 := 0; r0 < n; r0 += assembleRows {
		m := min(assembleRows, n-r0)
		for k := range w {
			col := it.cols[k*m : (k+1)*m]
			for i := range col {
				col[i] = rb.x[(r0+i)*w+k]
			}
			it.blk[k] = col
		}
		it.asm.Assemble(it.xa[r0*d:(r0+m)*d], it.blk, m)
	}
	it.unseen = append(it.unseen[:0], it.asm.Unseen()...)
	it.asm.ResetUnseen()
	it.x = it.xa[:n*d]
	return nil
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
	clients  clientCounts
}

// clientCounts counts the requests in flight per client address.
type clientCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire counts a request of client host, unless it already has max in
// flight.
func (c *clientCounts) acquire(host string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[host] >= max {
		return false
	}
	c.n[host]++
	return true
}

// release ends a request of client host.
func (c *clientCounts) release(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[host] <= 1 {
		delete(c.n, host)
		return
	}
	c.n[host]--
}

// clientHost is the address of a request's client: RemoteAddr without
// its port.
func clientHost(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
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

// Nulls returns how missing values of the model being served read:
// "error", "mean" or "zero" (Options.Nulls, or the model's own policy
// when it is "").
func (h *Handler) Nulls() string { return h.cur.Load().nulls.name }

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
	h.log.Info("model swapped in", "id", id, "previous", old.id, "task", st.info.Task, "features", len(st.info.Features), "nulls", st.nulls.name)
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

var (
	errBusy       = &RequestError{Status: 503, Row: -1, Msg: "server busy: too many requests in flight (--max-inflight); retry later"}
	errClientBusy = &RequestError{Status: 429, Row: -1, Msg: "too many requests in flight from this client (--max-client-inflight); retry later"}
)

func (h *Handler) predict(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	n := h.inflight.Add(1)
	h.met.inflight.Set(float64(n))
	defer func() { h.met.inflight.Set(float64(h.inflight.Add(-1))) }()
	form, err := contentForm(r.Header.Get("Content-Type"))
	if n > int64(h.opt.MaxInflight) {
		err = errBusy
	}
	if err == nil && h.opt.MaxClientInflight > 0 {
		host := clientHost(r.RemoteAddr)
		if h.clients.acquire(host, h.opt.MaxClientInflight) {
			defer h.clients.release(host)
		} else {
			err = errClientBusy
		}
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
	method := ""
	if ask.Interval > 0 {
		it.z = slices.Grow(it.z[:0], st.info.K)[:st.info.K]
		if method, err = st.info.intervalZ(it.z, ask); err != nil {
			h.fail(w, r, err, start, form)
			return
		}
	}
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
	it.unseen = it.unseen[:0]
	if st.encoded() && it.rows > 0 {
		if err := it.assemble(); err != nil {
			h.fail(w, r, err, start, form)
			return
		}
		if len(it.unseen) > 0 {
			h.countUnseen(r, it.unseen)
		}
	}
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
	if form == formJSON {
		w.Header().Set("Content-Type", "application/json")
		err = it.writeJSON(w, st, p, it.z, method)
	} else {
		w.Header().Set("Content-Type", ArrowStream)
		w.Header().Set("Falkon-Model", st.id)
		if len(it.unseen) > 0 {
			w.Header().Set("Falkon-Unseen", string(appendUnseen(nil, it.unseen)))
		}
		if method != "" {
			w.Header().Set("Falkon-Interval-Method", method)
		}
		err = writeArrow(w, &st.info, p, it.z, it)
	}
	if err != nil {
		h.log.Debug("answer not delivered", "remote", r.RemoteAddr, "err", err)
	}
	h.met.rows.Add(float64(it.rows))
	h.met.code(200)
	h.observe(form, start)
}

// countUnseen counts a request's values of levels the model's encoding
// does not know (falkon_serve_unseen_levels_total) and logs them.
func (h *Handler) countUnseen(r *http.Request, unseen []featenc.Unseen) {
	for _, u := range unseen {
		h.met.unseen.WithLabelValues(u.Column).Add(float64(u.Count))
		h.log.Debug("unseen levels", "remote", r.RemoteAddr, "column", u.Column, "values", u.Count, "as", u.To)
	}
}

// appendUnseen appends {"column": count, …}.
func appendUnseen(b []byte, unseen []featenc.Unseen) []byte {
	b = append(b, '{')
	for i, u := range unseen {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, u.Column)
		b = append(b, ':')
		b = strconv.AppendInt(b, u.Count, 10)
	}
	return append(b, '}')
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
	if re.Status == 503 || re.Status == 429 {
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
	d := len(st.inputs)
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
	if cap(it.xa)*8 > keepBytes {
		it.xa = nil
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
