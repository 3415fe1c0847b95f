package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

// latencyBuckets are the upper bounds, in seconds, of http_request_duration_seconds.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics holds the API's counters and histograms in memory; queue depths are read from the
// database at scrape time. It is written in the Prometheus text exposition format (0.0.4) by
// writeTo; no client library is needed for a handful of series.
type metrics struct {
	mu           sync.Mutex
	requests     map[requestKey]*histogram // latency by route, method and status; n counts them
	attempts     map[string]uint64         // webhook delivery attempts by topic
	failures     map[string]uint64         // attempts that did not deliver, by topic
	workerErrors map[string]uint64         // by worker name
}

type routeKey struct{ route, method string }

type requestKey struct {
	routeKey
	status int
}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; the last one is +Inf
	sum    float64
	n      uint64
}

func newMetrics() *metrics {
	return &metrics{requests: map[requestKey]*histogram{},
		attempts: map[string]uint64{}, failures: map[string]uint64{}, workerErrors: map[string]uint64{}}
}

// observeRequest counts one answered request under its route pattern ("unmatched" for paths
// no route serves, so scanners cannot blow up the series count).
func (m *metrics) observeRequest(pattern, method string, status int, d time.Duration) {
	route := "unmatched"
	if pattern != "" {
		route = pattern
		if m, p, ok := strings.Cut(pattern, " "); ok {
			method, route = m, p
		}
	} else if !slices.Contains(knownMethods, method) {
		method = "OTHER"
	}
	k := requestKey{routeKey{route, method}, status}
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.requests[k]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
		m.requests[k] = h
	}
	s := d.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets, s)
	h.counts[i]++
	h.sum += s
	h.n++
}

var knownMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

func (m *metrics) observeDelivery(topic string, delivered bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts[topic]++
	if !delivered {
		m.failures[topic]++
	}
}

func (m *metrics) workerError(worker string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.workerErrors[worker]++
}

// writeTo writes every metric; q are the queue depths read for this scrape and now the
// scrape's time.
func (m *metrics) writeTo(w *bufio.Writer, q store.QueueStats, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()

	keys := sortedKeys(m.requests, func(a, b requestKey) int {
		return cmpStrings(a.route+" "+a.method, b.route+" "+b.method)*1000 + (a.status - b.status)
	})
	labelsOf := func(k requestKey) string {
		return "route=" + quote(k.route) + ",method=" + quote(k.method) + ",status=\"" + strconv.Itoa(k.status) + "\""
	}
	header(w, "http_requests_total", "counter", "HTTP requests answered, by route pattern, method and status.")
	for _, k := range keys {
		fmt.Fprintf(w, "http_requests_total{%s} %d\n", labelsOf(k), m.requests[k].n)
	}

	header(w, "http_request_duration_seconds", "histogram", "Time to answer HTTP requests, by route pattern, method and status.")
	for _, k := range keys {
		h := m.requests[k]
		labels := labelsOf(k)
		var cum uint64
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(w, "http_request_duration_seconds_bucket{%s,le=\"%s\"} %d\n", labels, formatFloat(le), cum)
		}
		fmt.Fprintf(w, "http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %d\n", labels, h.n)
		fmt.Fprintf(w, "http_request_duration_seconds_sum{%s} %s\n", labels, formatFloat(h.sum))
		fmt.Fprintf(w, "http_request_duration_seconds_count{%s} %d\n", labels, h.n)
	}

	byLabel(w, "waybill_webhook_delivery_attempts_total", "counter", "Webhook delivery attempts, by topic.", "topic", m.attempts)
	byLabel(w, "waybill_webhook_delivery_failures_total", "counter", "Webhook delivery attempts that did not deliver (a retry follows, or the event FAILED), by topic.", "topic", m.failures)
	byLabel(w, "waybill_worker_errors_total", "counter", "Errors of the background workers, by worker.", "worker", m.workerErrors)

	gauge(w, "waybill_webhook_queue_depth", "PENDING webhook event records of active subscriptions.", float64(q.WebhookPending))
	gauge(w, "waybill_webhook_parked_events", "PENDING webhook event records waiting for their inactive subscription to be reactivated.", float64(q.WebhookParked))
	gauge(w, "waybill_webhook_delivery_lag_seconds", "How long the most overdue PENDING webhook event record has been due (0 when none is): the delivery worker's lag.", age(now, q.OldestDueWebhook))
	gauge(w, "waybill_order_import_inbox_depth", "Order imports received and not yet processed (QUEUED or PROCESSING).", float64(q.ImportsQueued))
	gauge(w, "waybill_order_import_oldest_age_seconds", "Age of the oldest unprocessed order import (0 when the inbox is empty): the import worker's lag.", age(now, q.OldestImport))
}

// age is how long before now t was, 0 for the zero time.
func age(now, t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return max(0, now.Sub(t).Seconds())
}

func header(w *bufio.Writer, name, kind, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}

func gauge(w *bufio.Writer, name, help string, v float64) {
	header(w, name, "gauge", help)
	fmt.Fprintf(w, "%s %s\n", name, formatFloat(v))
}

func byLabel(w *bufio.Writer, name, kind, help, label string, values map[string]uint64) {
	header(w, name, kind, help)
	for _, k := range sortedKeys(values, cmpStrings) {
		fmt.Fprintf(w, "%s{%s=%s} %d\n", name, label, quote(k), values[k])
	}
}

func sortedKeys[K comparable, V any](m map[K]V, cmp func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp)
	return keys
}

func cmpStrings(a, b string) int { return strings.Compare(a, b) }

// quote writes a label value: backslash, double quote and newline escaped.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// MetricsHandler serves the metrics in the Prometheus text format without authentication, for
// a separate listener (waybill -metrics-addr): GET /metrics, and the API's JSON errors for any
// other path (404) or method (405). On the API's own listener GET /metrics needs an ADMIN token.
func (a *API) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			writeError(w, &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such path"})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: "method " + r.Method + " is not allowed here"})
			return
		}
		if err := a.serveMetrics(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

// serveMetrics: GET /metrics (ADMIN).
func (a *API) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	q, err := a.db.QueueStats(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	a.metrics.writeTo(bw, q, a.db.Now())
	return bw.Flush()
}

// workerLog is the logger of one background worker: its lines carry worker=name, and its
// errors count in waybill_worker_errors_total.
func (a *API) workerLog(name string) *slog.Logger {
	return slog.New(&countingHandler{Handler: a.log.Handler(), count: func() { a.metrics.workerError(name) }}).With("worker", name)
}

// countingHandler counts the error records passing through to its Handler.
type countingHandler struct {
	slog.Handler
	count func()
}

func (h *countingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.Handler.Enabled(ctx, l)
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.count()
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(as), count: h.count}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), count: h.count}
}

// meteredWebhookStore counts every delivery attempt the webhook worker records, by topic.
type meteredWebhookStore struct {
	*store.DB
	m *metrics
}

func (s meteredWebhookStore) FinishWebhookDeliveries(ctx context.Context, rs []webhook.Result) error {
	// An attempt was made whether or not its result is still ours to record.
	for _, r := range rs {
		s.m.observeDelivery(r.Topic, r.Status == webhook.StatusDelivered)
	}
	return s.DB.FinishWebhookDeliveries(ctx, rs)
}
