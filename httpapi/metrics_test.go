package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi/internal/metrics"
	"github.com/waybill/waybill/shipping"
)

// scrape reads /metrics with the admin token and returns its samples by series.
func (e *testEnv) scrape() map[string]float64 {
	e.t.Helper()
	w := e.do("GET", "/metrics", "admin", nil)
	if w.Code != 200 {
		e.t.Fatalf("GET /metrics = %d; want 200; body: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		e.t.Errorf("Content-Type = %q", ct)
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSuffix(w.Body.String(), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			e.t.Fatalf("bad sample line %q", line)
		}
		samples[line[:i]] = v
	}
	return samples
}

func (e *testEnv) importOrder(account, body string) {
	e.t.Helper()
	req := httptest.NewRequest("POST", "/webhook/custom-orders", strings.NewReader(body))
	mac := hmac.New(sha256.New, []byte(e.accounts[account].IngestSecret))
	mac.Write([]byte(body))
	req.Header.Set("X-Service-Organization-Id", e.accounts[account].OrganizationID)
	req.Header.Set("X-CustomOrderSource-Signature", hex.EncodeToString(mac.Sum(nil)))
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	if w.Code != 202 {
		e.t.Fatalf("order import = %d; body: %s", w.Code, w.Body)
	}
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	e.do("GET", "/shipments", "all", nil)
	e.do("GET", "/shipments", "all", nil)
	e.do("GET", "/shipments/nope", "all", nil)
	e.do("GET", "/no/such/path", "all", nil)
	e.do("DELETE", "/shipments", "all", nil)
	e.do("BREW", "/no/such/path", "", nil)

	// Two imports wait in the inbox; the oldest is 90 s old at the scrape.
	e.importOrder("acme", `{"id":"M-1"}`)
	e.setClock(testStart.Add(30 * time.Second))
	e.importOrder("other", `{"id":"M-2"}`)
	e.setClock(testStart.Add(90 * time.Second))

	// One delivery fails (500), one succeeds; a third event waits on an inactive subscription.
	failing := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	ok := newReceiver(t, nil)
	e.subscribe("all", failing.URL, "LABEL_PURCHASED")
	e.subscribe("all", ok.URL, "LABEL_VOIDED")
	e.emit("acme", "LABEL_PURCHASED", map[string]string{"n": "1"})
	e.emit("acme", "LABEL_VOIDED", map[string]string{"n": "2"})

	s := e.scrape()
	for series, want := range map[string]float64{
		`http_requests_total{route="/shipments",method="GET",status="200"}`:                            2,
		`http_requests_total{route="/shipments/{id}",method="GET",status="404"}`:                       1,
		`http_requests_total{route="unmatched",method="GET",status="404"}`:                             1,
		`http_requests_total{route="unmatched",method="DELETE",status="405"}`:                          1,
		`http_requests_total{route="unmatched",method="OTHER",status="404"}`:                           1,
		`http_requests_total{route="/webhook/custom-orders",method="POST",status="202"}`:               2,
		`http_request_duration_seconds_count{route="/shipments",method="GET",status="200"}`:            2,
		`http_request_duration_seconds_bucket{route="/shipments",method="GET",status="200",le="+Inf"}`: 2,
		`http_request_duration_seconds_count{route="/shipments/{id}",method="GET",status="404"}`:       1,
		`waybill_order_import_inbox_depth`:                                                             2,
		`waybill_order_import_oldest_age_seconds`:                                                      90,
		`waybill_webhook_queue_depth`:                                                                  2,
		`waybill_webhook_parked_events`:                                                                0,
		`waybill_webhook_delivery_lag_seconds`:                                                         0, // emitted at the scrape's time
		`waybill_worker_errors_total{worker="webhook_delivery"}`:                                       0,
		`waybill_worker_errors_total{worker="order_import"}`:                                           0,
	} {
		if got, ok := s[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v); want %v", series, got, ok, want)
		}
	}

	// Ten seconds on, both events are overdue by ten seconds.
	e.setClock(testStart.Add(100 * time.Second))
	if got := e.scrape()[`waybill_webhook_delivery_lag_seconds`]; got != 10 {
		t.Errorf("waybill_webhook_delivery_lag_seconds = %v; want 10", got)
	}
	e.drain()
	s = e.scrape()
	for series, want := range map[string]float64{
		`waybill_webhook_delivery_attempts_total{topic="LABEL_PURCHASED"}`: 1,
		`waybill_webhook_delivery_failures_total{topic="LABEL_PURCHASED"}`: 1,
		`waybill_webhook_delivery_attempts_total{topic="LABEL_VOIDED"}`:    1,
		`waybill_webhook_queue_depth`:                                      1, // the failed one waits for its retry
		`waybill_order_import_inbox_depth`:                                 0,
		`waybill_order_import_oldest_age_seconds`:                          0,
		`http_requests_total{route="/metrics",method="GET",status="200"}`:  2,
	} {
		if got, ok := s[series]; !ok || got != want {
			t.Errorf("after drain: %s = %v (present %v); want %v", series, got, ok, want)
		}
	}
	if _, ok := s[`waybill_webhook_delivery_failures_total{topic="LABEL_VOIDED"}`]; ok {
		t.Errorf("a delivered topic has a failure series")
	}

	// Buckets are cumulative and end at the count.
	var prev float64
	for _, le := range append(metrics.LatencyBuckets, 0) {
		bound := "+Inf"
		if le != 0 {
			bound = strconv.FormatFloat(le, 'g', -1, 64)
		}
		v := s[`http_request_duration_seconds_bucket{route="/shipments",method="GET",status="200",le="`+bound+`"}`]
		if v < prev {
			t.Errorf("bucket le=%s = %v < previous %v", bound, v, prev)
		}
		prev = v
	}
	if prev != 2 {
		t.Errorf("+Inf bucket = %v; want 2", prev)
	}
}

func TestMetricsAccess(t *testing.T) {
	e := newEnv(t)
	if w := e.do("GET", "/metrics", "all", nil); w.Code != 403 {
		t.Errorf("GET /metrics without ADMIN = %d; want 403", w.Code)
	}
	if w := e.do("GET", "/metrics", "", nil); w.Code != 401 {
		t.Errorf("GET /metrics without a token = %d; want 401", w.Code)
	}
	// The separate listener's handler needs no token.
	w := httptest.NewRecorder()
	e.api.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "# TYPE http_requests_total counter") {
		t.Errorf("MetricsHandler = %d %q", w.Code, w.Body)
	}
	// Mounted under another path, as README shows.
	mux := http.NewServeMux()
	mux.Handle("/internal/metrics", http.StripPrefix("/internal", e.api.MetricsHandler()))
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/internal/metrics", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "# TYPE http_requests_total counter") {
		t.Errorf("MetricsHandler under /internal = %d %q", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	e.api.MetricsHandler().ServeHTTP(w, httptest.NewRequest("POST", "/metrics", nil))
	if w.Code != 405 {
		t.Errorf("POST to MetricsHandler = %d; want 405", w.Code)
	}
}

func TestMetricsWorkerErrors(t *testing.T) {
	e := newEnv(t)
	log := e.api.workerLog("order_import")
	log.Error("boom")
	log.With("k", "v").Error("boom again")
	log.Warn("not an error")
	if got := e.scrape()[`waybill_worker_errors_total{worker="order_import"}`]; got != 2 {
		t.Errorf("worker errors = %v; want 2", got)
	}
}

// TestMetricsPromtool scrapes a live server and has Prometheus's promtool check the answer.
func TestMetricsPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool missing (Debian package prometheus)")
		}
		t.Skip("promtool missing (Debian package prometheus)")
	}
	e := newEnv(t)
	srv := httptest.NewServer(e.api)
	defer srv.Close()
	get := func(path, token string) *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+e.tokens[token])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	get("/shipments", "all").Body.Close()
	get("/nowhere", "").Body.Close()
	e.importOrder("acme", `{"id":"P-1"}`)
	e.emit("acme", "LABEL_PURCHASED", map[string]string{"n": "1"})
	res := get("/metrics", "admin")
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d, %v", res.StatusCode, err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\n--- scrape\n%s", err, out, body)
	}
}

// stallingCarrier is a host's Go carrier, SLOW, whose quotes wait until the request ends:
// entered is told each time a quote starts.
type stallingCarrier struct {
	shipping.Carrier
	entered chan struct{}
}

func (c stallingCarrier) Name() string { return "SLOW" }

func (c stallingCarrier) Rates(ctx context.Context, req shipping.RateRequest) ([]shipping.Quote, error) {
	c.entered <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestAbandonedRequest: a request whose client goes away while its handler works (its context
// canceled, as net/http cancels it when the connection closes) is logged and counted as 499,
// and logs no error; one the server gives up on (a deadline) stays a 500.
func TestAbandonedRequest(t *testing.T) {
	e := newEnv(t)
	var logs syncBuf
	slow := stallingCarrier{entered: make(chan struct{})}
	api, err := New(Config{DB: e.db, BaseURL: e.url, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Carriers: []shipping.Carrier{slow}})
	if err != nil {
		t.Fatal(err)
	}
	e.api = api
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/slow", "admin", `{"name": "Slow", "carriers": ["SLOW"]}`), http.StatusCreated)
	body := strings.Replace(shipmentBody("CHEAPEST", "PDF"), "{", `{"rate_shopping_profile": "slow", `, 1)
	send := func(ctx context.Context) {
		req := httptest.NewRequestWithContext(ctx, "POST", "/shipments", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
		e.api.ServeHTTP(httptest.NewRecorder(), req)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		send(ctx)
	}()
	<-slow.entered // the handler is working
	cancel()
	<-done

	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(50*time.Millisecond))
	defer cancel()
	go func() { <-slow.entered }()
	send(ctx)

	s := e.scrape()
	for series, want := range map[string]float64{
		`http_requests_total{route="/shipments",method="POST",status="499"}`: 1,
		`http_requests_total{route="/shipments",method="POST",status="500"}`: 1,
	} {
		if got := s[series]; got != want {
			t.Errorf("%s = %v; want %v", series, got, want)
		}
	}
	var statuses []int
	failed := 0
	for line := range strings.Lines(logs.String()) {
		var l struct {
			Msg, Level, Pattern string
			Status              int
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch {
		case l.Msg == "request" && l.Pattern == "POST /shipments":
			statuses = append(statuses, l.Status)
		case l.Msg == "request failed":
			failed++
		}
	}
	if !slices.Equal(statuses, []int{499, 500}) || failed != 1 {
		t.Errorf("logged POST /shipments with statuses %v and %d failures; want [499 500] and one failure (the deadline's):\n%s",
			statuses, failed, logs.String())
	}
}
