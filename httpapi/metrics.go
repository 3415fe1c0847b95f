package httpapi

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"

	"github.com/waybill/waybill/httpapi/internal/metrics"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

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
	a.metrics.WriteTo(bw, q, a.db.Now())
	return bw.Flush()
}

// workerLog is the logger of one background worker: its lines carry worker=name, and its
// errors count in waybill_worker_errors_total.
func (a *API) workerLog(name string) *slog.Logger {
	return slog.New(metrics.CountErrors(a.log.Handler(), func() { a.metrics.WorkerError(name) })).With("worker", name)
}

// meteredWebhookStore counts every delivery attempt the webhook worker records, by topic.
type meteredWebhookStore struct {
	*store.DB
	m *metrics.Registry
}

func (s meteredWebhookStore) FinishWebhookDeliveries(ctx context.Context, rs []webhook.Result) error {
	// An attempt was made whether or not its result is still ours to record.
	for _, r := range rs {
		s.m.Delivery(r.Topic, r.Status == webhook.StatusDelivered)
	}
	return s.DB.FinishWebhookDeliveries(ctx, rs)
}
