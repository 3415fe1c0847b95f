package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// delivery is one request a test receiver got.
type delivery struct {
	Header http.Header
	Body   []byte
}

// receiver is an httptest server recording deliveries; answer decides each response (nil: 200).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{r.Header.Clone(), body})
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

type subscriptionAnswer struct {
	Data subscriptionJSON `json:"data"`
}

type eventsAnswer struct {
	Data     []eventJSON `json:"data"`
	Metadata metadata    `json:"metadata"`
}

// subscribe creates a subscription with the named token and returns it (with its secret).
func (e *testEnv) subscribe(token, url, topic string) subscriptionJSON {
	e.t.Helper()
	return decode[subscriptionAnswer](e.t, e.do("POST", "/webhooks", token, map[string]any{"url": url, "topic": topic}), 201).Data
}

func (e *testEnv) events(token, subID, query string) []eventJSON {
	e.t.Helper()
	return decode[eventsAnswer](e.t, e.do("GET", "/webhooks/"+subID+"/events"+query, token, nil), 200).Data
}

func (e *testEnv) emit(account, topic string, payload any) {
	e.t.Helper()
	if err := e.db.EmitWebhookEvent(context.Background(), e.accounts[account].ID, topic, payload); err != nil {
		e.t.Fatal(err)
	}
}

func TestWebhookDeliverySigned(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	sub := e.subscribe("all", rc.URL+"/hook?k=v", webhook.TopicLabelPurchased)
	// Neither another topic, an inactive subscription nor another account's gets the event.
	e.subscribe("all", rc.URL+"/other-topic", webhook.TopicLabelVoided)
	e.do("POST", "/webhooks", "all", map[string]any{"url": rc.URL + "/inactive", "topic": webhook.TopicLabelPurchased, "is_active": false})
	e.subscribe("other", rc.URL+"/other-account", webhook.TopicLabelPurchased)

	e.emit("acme", webhook.TopicLabelPurchased, map[string]any{"tracking_code": "WB123", "status": "PRE_TRANSIT"})
	e.drain()

	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("receiver got %d deliveries; want 1", len(got))
	}
	d := got[0]
	evs := e.events("all", sub.ID, "")
	if len(evs) != 1 {
		t.Fatalf("GET events = %d records; want 1", len(evs))
	}
	ev := evs[0]
	wantBody := fmt.Sprintf(`{"id":%q,"topic":"LABEL_PURCHASED","webhook_subscription_id":%q,"happened_at":"2026-11-22T03:42:03.123456Z","status":"PENDING","payload":{"status":"PRE_TRANSIT","tracking_code":"WB123"}}`, ev.ID, sub.ID)
	if string(d.Body) != wantBody {
		t.Errorf("delivered body = %s; want %s", d.Body, wantBody)
	}
	mac := hmac.New(sha256.New, []byte(sub.Secret))
	mac.Write(d.Body)
	if got, want := d.Header.Get("X-Webhook-Signature"), hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("X-Webhook-Signature = %q; want %q", got, want)
	}
	if got := d.Header.Get("webhook-id"); got != ev.ID {
		t.Errorf("webhook-id = %q; want %q", got, ev.ID)
	}
	ts, err := strconv.ParseInt(d.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil || ts != testStart.Unix() {
		t.Errorf("webhook-timestamp = %q; want %d", d.Header.Get("webhook-timestamp"), testStart.Unix())
	}
	if !webhook.VerifyStandard("whsec_"+sub.Secret, ev.ID, ts, d.Body, d.Header.Get("webhook-signature")) {
		t.Errorf("webhook-signature %q does not verify with whsec_<secret>", d.Header.Get("webhook-signature"))
	}
	if ct := d.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
	if ev.Status != webhook.StatusDelivered || ev.Attempts != 1 || ev.LastResponseStatus == nil || *ev.LastResponseStatus != 200 ||
		ev.NextAttemptAt != nil || ev.LastAttemptAt == nil || ev.URL != rc.URL+"/hook?k=v" {
		t.Errorf("event record = %+v; want DELIVERED after 1 attempt answered 200", ev)
	}

	// Drained again, nothing is delivered twice.
	e.drain()
	if n := len(rc.deliveries()); n != 1 {
		t.Errorf("after a second drain the receiver got %d deliveries; want 1", n)
	}

	// Redeliver queues it again (200, PENDING) and the next drain delivers the same message id.
	w := e.do("POST", "/webhooks/"+sub.ID+"/events/"+ev.ID+"/redeliver", "all", nil)
	re := decode[struct{ Data eventJSON }](t, w, 200).Data
	if re.Status != webhook.StatusPending || re.NextAttemptAt == nil {
		t.Errorf("redeliver answered %+v; want PENDING, due now", re)
	}
	e.drain()
	got = rc.deliveries()
	if len(got) != 2 || got[1].Header.Get("webhook-id") != ev.ID || !bytes.Equal(got[1].Body, got[0].Body) {
		t.Fatalf("after redeliver the receiver got %d deliveries; want the same message again", len(got))
	}
	if ev := e.events("all", sub.ID, "")[0]; ev.Status != webhook.StatusDelivered || ev.Attempts != 2 {
		t.Errorf("after redelivery: %s after %d attempts; want DELIVERED after 2", ev.Status, ev.Attempts)
	}
}

// TestWebhookRetries follows one record through the test schedule (1 s, 2 s): it fails, is
// retried when due and not before, honours Retry-After, and is FAILED after the last attempt.
func TestWebhookRetries(t *testing.T) {
	t.Run("fails then succeeds", func(t *testing.T) {
		e := newEnv(t)
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n < 3 {
				w.WriteHeader(http.StatusInternalServerError)
			}
		})
		sub := e.subscribe("all", rc.URL, webhook.TopicLabelVoided)
		e.emit("acme", webhook.TopicLabelVoided, map[string]string{"tracking_code": "T1"})

		e.drain()
		ev := e.events("all", sub.ID, "")[0]
		checkRetry(t, ev, 1, 500, testStart, time.Second)
		e.drain() // not due yet
		if n := len(rc.deliveries()); n != 1 {
			t.Fatalf("a record not due yet was delivered: %d attempts; want 1", n)
		}
		now := testStart.Add(2 * time.Second)
		e.setClock(now)
		e.drain()
		checkRetry(t, e.events("all", sub.ID, "")[0], 2, 500, now, 2*time.Second)
		now = now.Add(3 * time.Second)
		e.setClock(now)
		e.drain()
		ev = e.events("all", sub.ID, "")[0]
		if ev.Status != webhook.StatusDelivered || ev.Attempts != 3 || *ev.LastResponseStatus != 200 {
			t.Errorf("third attempt: %s after %d attempts; want DELIVERED after 3", ev.Status, ev.Attempts)
		}
		if evs := e.events("all", sub.ID, "?status=PENDING"); len(evs) != 0 {
			t.Errorf("GET events?status=PENDING = %d records; want 0", len(evs))
		}
	})

	t.Run("always fails", func(t *testing.T) {
		e := newEnv(t)
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
		sub := e.subscribe("all", rc.URL, webhook.TopicLabelVoided)
		e.emit("acme", webhook.TopicLabelVoided, map[string]string{"tracking_code": "T1"})
		for i := 0; i < 5; i++ {
			e.setClock(testStart.Add(time.Duration(i) * 10 * time.Second))
			e.drain()
		}
		ev := e.events("all", sub.ID, "")[0]
		if ev.Status != webhook.StatusFailed || ev.Attempts != 3 || ev.NextAttemptAt != nil || *ev.LastResponseStatus != 502 {
			t.Errorf("record = %s after %d attempts, next %v; want FAILED after 3 (1 + 2 retries), no next", ev.Status, ev.Attempts, ev.NextAttemptAt)
		}
		if n := len(rc.deliveries()); n != 3 {
			t.Errorf("receiver got %d attempts; want 3", n)
		}
		// The subscription stays active: only 410 switches it off.
		if s := decode[subscriptionAnswer](t, e.do("GET", "/webhooks/"+sub.ID, "all", nil), 200).Data; !s.IsActive {
			t.Errorf("subscription is_active = false after failures; want true")
		}
	})

	t.Run("Retry-After", func(t *testing.T) {
		for _, ra := range []string{"90", testStart.Add(90 * time.Second).Format(http.TimeFormat)} {
			e := newEnv(t)
			rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", ra)
				w.WriteHeader(http.StatusServiceUnavailable)
			})
			sub := e.subscribe("all", rc.URL, webhook.TopicLabelVoided)
			e.emit("acme", webhook.TopicLabelVoided, nil)
			e.drain()
			ev := e.events("all", sub.ID, "")[0]
			// The Retry-After time is later than the schedule's 1 s, so it wins; the HTTP date
			// has whole seconds, so the clock's fraction is lost.
			want := testStart.Add(90 * time.Second)
			if ra != "90" {
				want = want.Truncate(time.Second)
			}
			if ev.NextAttemptAt == nil || *ev.NextAttemptAt != shipping.FormatTime(want) {
				t.Errorf("Retry-After %q: next_attempt_at = %v; want %s", ra, ev.NextAttemptAt, shipping.FormatTime(want))
			}
		}
	})
}

// checkRetry checks a record waiting for its next attempt, delay after at, ±10%.
func checkRetry(t *testing.T, ev eventJSON, attempts, status int, at time.Time, delay time.Duration) {
	t.Helper()
	if ev.Status != webhook.StatusPending || ev.Attempts != attempts || ev.LastResponseStatus == nil || *ev.LastResponseStatus != status {
		t.Fatalf("record = %s after %d attempts (last %v); want PENDING after %d answered %d", ev.Status, ev.Attempts, ev.LastResponseStatus, attempts, status)
	}
	next, err := time.Parse(time.RFC3339Nano, *ev.NextAttemptAt)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := at.Add(delay*9/10), at.Add(delay*11/10)
	if next.Before(lo) || next.After(hi) {
		t.Errorf("next_attempt_at = %s; want between %s and %s", next, lo, hi)
	}
}

func TestWebhookGoneDeactivates(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	sub := e.subscribe("all", rc.URL, webhook.TopicLabelInTransit)
	e.emit("acme", webhook.TopicLabelInTransit, nil)
	e.drain()
	ev := e.events("all", sub.ID, "")[0]
	if ev.Status != webhook.StatusFailed || ev.Attempts != 1 || *ev.LastResponseStatus != 410 {
		t.Errorf("record = %s after %d attempts; want FAILED after 1", ev.Status, ev.Attempts)
	}
	s := decode[subscriptionAnswer](t, e.do("GET", "/webhooks/"+sub.ID, "all", nil), 200).Data
	if s.IsActive {
		t.Errorf("subscription is_active = true after 410 Gone; want false")
	}
	// An inactive subscription records no new events, and its records cannot be redelivered.
	e.emit("acme", webhook.TopicLabelInTransit, nil)
	if evs := e.events("all", sub.ID, ""); len(evs) != 1 {
		t.Errorf("inactive subscription has %d records after another event; want 1", len(evs))
	}
	if w := e.do("POST", "/webhooks/"+sub.ID+"/events/"+ev.ID+"/redeliver", "all", nil); w.Code != 422 {
		t.Errorf("redeliver to an inactive subscription = %d; want 422", w.Code)
	}
}

// TestWebhookHostileReceivers: redirects are not followed, huge bodies are cut off, a receiver
// that never answers times out — and none of them holds up a good receiver.
func TestWebhookHostileReceivers(t *testing.T) {
	e := newEnv(t)
	e.api.webhooks.worker.Timeout = 300 * time.Millisecond
	followed := newReceiver(t, nil)
	redirect := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, followed.URL, http.StatusTemporaryRedirect)
	})
	huge := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for i := 0; i < 1024; i++ { // 64 MiB, unless the client hangs up first
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	release := make(chan struct{})
	hang := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	good := newReceiver(t, nil)

	subs := map[string]subscriptionJSON{}
	for name, rc := range map[string]*receiver{"redirect": redirect, "huge": huge, "hang": hang, "good": good} {
		subs[name] = e.subscribe("all", rc.URL, webhook.TopicLabelTrackingUpdated)
	}
	e.emit("acme", webhook.TopicLabelTrackingUpdated, map[string]string{"tracking_code": "T1"})
	e.drain()

	if n := len(followed.deliveries()); n != 0 {
		t.Errorf("the redirect was followed (%d deliveries to its target); want none", n)
	}
	want := map[string]struct {
		status     string
		respStatus int // 0: no answer
	}{
		"redirect": {webhook.StatusPending, 307},
		"huge":     {webhook.StatusDelivered, 200},
		"hang":     {webhook.StatusPending, 0},
		"good":     {webhook.StatusDelivered, 200},
	}
	for name, w := range want {
		ev := e.events("all", subs[name].ID, "")[0]
		gotResp := 0
		if ev.LastResponseStatus != nil {
			gotResp = *ev.LastResponseStatus
		}
		if ev.Status != w.status || gotResp != w.respStatus || ev.Attempts != 1 {
			t.Errorf("%s receiver: record %s, response %d, %d attempts; want %s, %d, 1", name, ev.Status, gotResp, ev.Attempts, w.status, w.respStatus)
		}
	}
	var stored int
	if err := e.sql.QueryRow(`SELECT LENGTH(last_response_body) FROM webhook_events WHERE subscription_id = $1`, subs["huge"].ID).Scan(&stored); err != nil || stored != webhook.MaxResponseBody {
		t.Errorf("stored response body of the huge answer: %d bytes (%v); want %d", stored, err, webhook.MaxResponseBody)
	}
}

// TestWebhookSlowReceiverDoesNotStall runs the real worker loop: a receiver that never answers
// gets many events, yet a good receiver's event is delivered while those hang.
func TestWebhookSlowReceiverDoesNotStall(t *testing.T) {
	e := newEnv(t)
	w := e.api.webhooks.worker
	w.Timeout, w.PollInterval = time.Minute, 10*time.Millisecond
	release := make(chan struct{})
	slow := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	good := newReceiver(t, nil)
	e.subscribe("all", slow.URL+"/1", webhook.TopicLabelTrackingUpdated)
	e.subscribe("all", slow.URL+"/2", webhook.TopicLabelTrackingUpdated)
	for i := 0; i < 30; i++ {
		e.emit("acme", webhook.TopicLabelTrackingUpdated, map[string]int{"n": i})
	}
	e.subscribe("all", good.URL, webhook.TopicLabelVoided)
	e.emit("acme", webhook.TopicLabelVoided, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.api.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(good.deliveries()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(good.deliveries()) == 0 {
		t.Errorf("the good receiver got nothing while a slow one hung")
	}
	if n := len(slow.deliveries()); n > 2*webhook.DefaultPerSubscription {
		t.Errorf("the slow receiver holds %d deliveries at once; want at most %d per subscription", n, webhook.DefaultPerSubscription)
	}
	close(release)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v; want nil", err)
	}
}

// TestWebhookDialGuard: with private addresses refused, a subscription that reaches a loopback
// address anyway (created while allowed, or through DNS rebinding) is refused at dial time.
func TestWebhookDialGuard(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	sub := e.subscribe("all", rc.URL, webhook.TopicLabelVoided)
	e.emit("acme", webhook.TopicLabelVoided, nil)

	strict, err := New(Config{DB: e.db, BaseURL: e.url, WebhookRetrySchedule: []time.Duration{time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if err := strict.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.deliveries()); n != 0 {
		t.Errorf("a loopback receiver got %d deliveries with private addresses refused; want 0", n)
	}
	ev := e.events("all", sub.ID, "")[0]
	if ev.Status != webhook.StatusPending || ev.Attempts != 1 || ev.LastResponseStatus != nil {
		t.Errorf("record = %s after %d attempts; want PENDING after 1 refused attempt", ev.Status, ev.Attempts)
	}
}

// TestWebhookPrivateURLRefused: the create and PATCH check, with the API refusing private
// addresses and a resolver the test controls. A refused URL is 400 validation_failed.
func TestWebhookPrivateURLRefused(t *testing.T) {
	e := newStrictEnv(t)
	tests := []struct {
		url      string
		want     int
		wantCode string
	}{
		{"https://hooks.example.com/waybill", 201, ""},
		{"https://internal.example.com/waybill", 400, "private_address"},
		{"http://localhost:9000/", 400, "private_address"},
		{"http://127.0.0.1:9000/", 400, "private_address"},
		{"http://[::1]:9000/", 400, "private_address"},
		{"http://169.254.169.254/latest/meta-data/", 400, "private_address"},
		{"http://[::ffff:192.168.0.1]/", 400, "private_address"},
		{"http://100.64.0.1/", 400, "private_address"},
		{"http://198.18.0.1/", 400, "private_address"},
		{"http://192.0.2.1/", 400, "private_address"},
		{"http://198.51.100.1/", 400, "private_address"},
		{"http://203.0.113.1/", 400, "private_address"},
		{"http://239.1.2.3/", 400, "private_address"},
		{"http://240.0.0.1/", 400, "private_address"},
		{"http://255.255.255.255/", 400, "private_address"},
		{"http://[2001:db8::1]/", 400, "private_address"},
		{"http://[ff02::1]/", 400, "private_address"},
		{"http://127.1/", 400, "numeric_shorthand"},
		{"http://0x7f000001/", 400, "numeric_shorthand"},
		{"http://2130706433/", 400, "numeric_shorthand"},
		{"http://0177.0.0.1/", 400, "numeric_shorthand"},
		{"http://0/", 400, "numeric_shorthand"},
		{"https://unknown.example.com/", 201, ""}, // the dial-time guard checks it
	}
	var created string
	for _, tt := range tests {
		w := e.do("POST", "/webhooks", "all", map[string]any{"url": tt.url, "topic": webhook.TopicLabelVoided})
		if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.wantCode) {
			t.Errorf("POST /webhooks url=%s = %d %s; want %d %s", tt.url, w.Code, w.Body, tt.want, tt.wantCode)
		}
		if w.Code == 201 {
			created = decode[subscriptionAnswer](t, w, 201).Data.ID
		} else if !strings.Contains(w.Body.String(), `"validation_failed"`) {
			t.Errorf("POST /webhooks url=%s = %s; want validation_failed", tt.url, w.Body)
		}
	}
	for _, url := range []string{"http://internal.example.com/", "http://203.0.113.9/", "http://127.1/"} {
		w := e.do("PATCH", "/webhooks/"+created, "all", map[string]any{"url": url})
		if w.Code != 400 || !strings.Contains(w.Body.String(), "validation_failed") {
			t.Errorf("PATCH url=%s = %d %s; want 400 validation_failed", url, w.Code, w.Body)
		}
	}
}

// newStrictEnv is newEnv with an API that refuses private webhook targets, resolving hosts
// through a map: hooks.example.com is public, internal.example.com private, others unknown.
func newStrictEnv(t *testing.T) *testEnv {
	t.Helper()
	e := newEnv(t)
	api, err := New(Config{DB: e.db, BaseURL: e.url, WebhookRetrySchedule: []time.Duration{time.Second, 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	api.webhooks.resolver = mapResolver{"hooks.example.com": "93.184.216.34", "internal.example.com": "10.0.0.7", "localhost": "127.0.0.1"}
	e.api = api
	return e
}

type mapResolver map[string]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ip, ok := m[host]; ok {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// TestWebhookSecretsNotLogged captures the logs of subscriptions, failing and refused
// deliveries to a URL with credentials in it: no secret, signature or credential appears.
func TestWebhookSecretsNotLogged(t *testing.T) {
	e := newEnv(t)
	var logs syncBuf
	api, err := New(Config{DB: e.db, BaseURL: e.url, WebhookAllowPrivate: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		WebhookRetrySchedule: []time.Duration{time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	api.webhooks.worker.Timeout = 200 * time.Millisecond
	e.api = api
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 2 {
			time.Sleep(time.Second) // times out
		}
		w.WriteHeader(500)
		io.WriteString(w, "boom")
	})
	sub := e.subscribe("all", rc.URL+"/hook?token=hunter2-credential", webhook.TopicLabelVoided)
	e.subscribe("all", "http://user:pa55word-credential@127.0.0.1:1/", webhook.TopicLabelVoided)
	e.emit("acme", webhook.TopicLabelVoided, nil)
	e.drain()
	e.setClock(testStart.Add(time.Minute))
	e.drain()
	for _, path := range []string{"/webhooks", "/webhooks/" + sub.ID, "/webhooks/" + sub.ID + "/events"} {
		if w := e.do("GET", path, "all", nil); strings.Contains(w.Body.String(), sub.Secret) {
			t.Errorf("GET %s shows the secret", path)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "webhook delivery failed") {
		t.Fatalf("no delivery failure was logged:\n%s", out)
	}
	secrets := []string{sub.Secret, "hunter2-credential", "pa55word-credential"}
	for _, d := range rc.deliveries() {
		secrets = append(secrets, d.Header.Get("X-Webhook-Signature"), d.Header.Get("webhook-signature"))
	}
	if len(secrets) < 5 {
		t.Fatalf("the receiver got no deliveries")
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("the log shows %q:\n%s", s, out)
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
