// Package metrics keeps the API's counters and histograms in memory and writes them, with the
// queue depths read at scrape time, in the Prometheus text exposition format (0.0.4): no client
// library is needed for a handful of series.
package metrics

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/store"
)

// LatencyBuckets are the upper bounds, in seconds, of http_request_duration_seconds.
var LatencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Registry holds the API's counters and histograms.
type Registry struct {
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

// New returns an empty registry.
func New() *Registry {
	return &Registry{requests: map[requestKey]*histogram{},
		attempts: map[string]uint64{}, failures: map[string]uint64{}, workerErrors: map[string]uint64{}}
}

// Workers gives each named worker its error series, at 0 until it errs: every series exists
// from the start.
func (m *Registry) Workers(names ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		if _, ok := m.workerErrors[n]; !ok {
			m.workerErrors[n] = 0
		}
	}
}

// Request counts one answered request under its route pattern ("unmatched" for paths
// no route serves, so scanners cannot blow up the series count).
func (m *Registry) Request(pattern, method string, status int, d time.Duration) {
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
		h = &histogram{counts: make([]uint64, len(LatencyBuckets)+1)}
		m.requests[k] = h
	}
	s := d.Seconds()
	i, _ := slices.BinarySearch(LatencyBuckets, s)
	h.counts[i]++
	h.sum += s
	h.n++
}

var knownMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Delivery counts one webhook delivery attempt of topic.
func (m *Registry) Delivery(topic string, delivered bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts[topic]++
	if !delivered {
		m.failures[topic]++
	}
}

// WorkerError counts one error of the named background worker.
func (m *Registry) WorkerError(worker string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.workerErrors[worker]++
}

// WriteTo writes every metric; q are the queue depths read for this scrape and now the
// scrape's time.
func (m *Registry) WriteTo(w *bufio.Writer, q store.QueueStats, now time.Time) {
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
		for i, le := range LatencyBuckets {
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
	gauge(w, "waybill_purchases_unresolved", "Label purchases whose process died while the carrier sold and that the carrier cannot be asked again: each waits for an operator (waybill purchase resolve).", float64(q.PurchasesUnresolved))
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

// CountErrors is h, calling count for every error record that passes through it, whatever
// level h itself logs.
func CountErrors(h slog.Handler, count func()) slog.Handler {
	return &countingHandler{Handler: h, count: count}
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
