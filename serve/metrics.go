package serve

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Error kinds, the label of falkon_serve_errors_total.
const (
	kindMalformed   = "malformed"    // not JSON / Arrow, or the wrong shape
	kindBadRow      = "bad_row"      // a row's value: type, null, non-finite, missing or unknown feature
	kindTooLarge    = "too_large"    // the body or the rows past their limits
	kindContentType = "content_type" // neither JSON nor Arrow
	kindBusy        = "busy"         // overload: requests or memory in flight, in all or from one client
	kindTimeout     = "timeout"      // the body did not arrive in time
	kindInternal    = "internal"
)

// metrics are the server's Prometheus metrics.
type metrics struct {
	requests  *prometheus.CounterVec // by code
	codes     map[int]prometheus.Counter
	rows      prometheus.Counter
	latency   *prometheus.HistogramVec // by form
	latJSON   prometheus.Observer
	latArrow  prometheus.Observer
	batchRows prometheus.Histogram
	batchReqs prometheus.Histogram
	errors    map[string]prometheus.Counter
	inflight  prometheus.Gauge
	model     *prometheus.GaugeVec
	reloads   *prometheus.CounterVec
	unseen    *prometheus.CounterVec // by column
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "falkon_serve_requests_total", Help: "Prediction requests answered, by HTTP status code.",
		}, []string{"code"}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "falkon_serve_rows_total", Help: "Rows predicted.",
		}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "falkon_serve_request_duration_seconds", Help: "Time from a prediction request's arrival to its answer, by body form.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
		}, []string{"form"}),
		batchRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "falkon_serve_batch_rows", Help: "Rows per kernel block (requests gathered by the batcher).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 17),
		}),
		batchReqs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "falkon_serve_batch_requests", Help: "Requests per kernel block.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "falkon_serve_inflight_requests", Help: "Prediction requests in flight.",
		}),
		model: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "falkon_serve_model_info", Help: "The model served (1), by identity, task, centres and features.",
		}, []string{"id", "task", "centers", "features"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "falkon_serve_reloads_total", Help: "Model reloads, by result (ok or failed).",
		}, []string{"result"}),
	}
	m.unseen = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "falkon_serve_unseen_levels_total", Help: "Values of categorical columns whose level the model's encoding does not know, by column: they read as the column's (other) level, or as none.",
	}, []string{"column"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "falkon_serve_errors_total", Help: "Prediction requests refused or failed, by kind.",
	}, []string{"kind"})
	for _, c := range []prometheus.Collector{m.requests, m.rows, m.latency, m.batchRows, m.batchReqs, m.inflight, m.model, m.reloads, m.unseen, errs} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.errors = map[string]prometheus.Counter{}
	for _, k := range []string{kindMalformed, kindBadRow, kindTooLarge, kindContentType, kindBusy, kindTimeout, kindInternal} {
		m.errors[k] = errs.WithLabelValues(k)
	}
	m.codes = map[int]prometheus.Counter{}
	for _, c := range []int{200, 400, 404, 405, 408, 413, 415, 429, 500, 503} {
		m.codes[c] = m.requests.WithLabelValues(strconv.Itoa(c))
	}
	m.latJSON = m.latency.WithLabelValues("json")
	m.latArrow = m.latency.WithLabelValues("arrow")
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("failed")
	return m, nil
}

// code counts a request answered with status code.
func (m *metrics) code(code int) {
	c, ok := m.codes[code]
	if !ok {
		c = m.requests.WithLabelValues(strconv.Itoa(code))
	}
	c.Inc()
}

// errorKind is the metrics' kind of a refused request.
func errorKind(e *RequestError) string {
	switch {
	case e.Status == 413:
		return kindTooLarge
	case e.Status == 415:
		return kindContentType
	case e.Status == 503 || e.Status == 429:
		return kindBusy
	case e.Status == 408:
		return kindTimeout
	case e.Status >= 500:
		return kindInternal
	case e.syntax:
		return kindMalformed
	case e.Row >= 0 || e.Field != "":
		return kindBadRow
	}
	return kindMalformed
}

// NewRegistry returns a registry with the Go runtime's and the process's
// collectors, for Options.Registry.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}
