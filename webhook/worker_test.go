package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"Sun, 22 Nov 2026 03:10:00 GMT", 10 * time.Minute},
		{"Sun, 22 Nov 2026 02:50:00 GMT", 0},
		{"999999999", maxRetryAfter},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.v, now); got != tt.want {
			t.Errorf("RetryAfter(%q) = %v; want %v", tt.v, got, tt.want)
		}
	}
}

// TestAttemptFollowsSchedule: a failed attempt is retried exactly the schedule's delay after
// it started (retries follow the schedule), a longer Retry-After wins, and the failure
// after the last delay is FAILED.
func TestAttemptFollowsSchedule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/later" {
			w.Header().Set("Retry-After", "3600")
		}
		w.WriteHeader(503)
	}))
	defer srv.Close()
	at := time.Date(2026, 11, 22, 3, 42, 3, 123456000, time.UTC)
	w := &Worker{AllowPrivate: true, Timeout: time.Second, Schedule: []time.Duration{5 * time.Second, 5 * time.Minute},
		Now: func() time.Time { return at }}
	w.Init()
	tests := []struct {
		path   string
		round  int
		status string
		next   time.Duration // after at, when status is PENDING
	}{
		{"/fail", 0, StatusPending, 5 * time.Second},
		{"/fail", 1, StatusPending, 5 * time.Minute},
		{"/fail", 2, StatusFailed, 0},
		{"/later", 0, StatusPending, time.Hour},
		{"/later", 2, StatusFailed, 0},
	}
	for _, tt := range tests {
		for _, id := range []string{"e1", "e2", "e3"} {
			d := Delivery{Event: Event{ID: id, SubscriptionID: "s1", URL: srv.URL + tt.path, Status: StatusPending, Attempts: tt.round},
				Secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Round: tt.round}
			res := w.attempt(context.Background(), d)
			var next time.Duration
			if res.NextAttemptAt != nil {
				next = res.NextAttemptAt.Sub(at)
			}
			if res.Status != tt.status || next != tt.next {
				t.Errorf("attempt %s of %s after %d failures: %s, next after %v; want %s, %v", tt.path, id, tt.round, res.Status, next, tt.status, tt.next)
			}
		}
	}
}

func TestDescribe(t *testing.T) {
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.DeadlineExceeded, "timeout"},
		{&url.Error{Op: "Post", URL: "http://h/", Err: context.DeadlineExceeded}, "timeout"},
		{dial(&net.DNSError{Err: "no such host", Name: "h.invalid", IsNotFound: true}), "dial: no such host"},
		{dial(&net.DNSError{Err: "i/o timeout", Name: "h", IsTimeout: true}), "timeout"},
		{dial(&net.DNSError{Err: "server misbehaving", Name: "h"}), "dial: lookup failed"},
		{dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "dial: connection refused"},
		{dial(os.NewSyscallError("connect", syscall.ENETUNREACH)), "dial: network is unreachable"},
		{dial(errBlocked), "dial: address not allowed"},
		{io.EOF, "connection closed"},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection closed"},
		{&tls.CertificateVerificationError{Err: errors.New("x509: unknown authority")}, "tls: certificate not trusted"},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "tls: not a TLS server"},
		{errors.New("something else at 10.0.0.1"), "request failed"},
	}
	for _, tt := range tests {
		if got := Describe(tt.err); got != tt.want {
			t.Errorf("Describe(%v) = %q; want %q", tt.err, got, tt.want)
		}
	}
}

// TestAttemptLastError: what an attempt's outcome records as its error.
func TestAttemptLastError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client hanging up
		switch r.URL.Path {
		case "/500":
			w.WriteHeader(500)
		case "/410":
			w.WriteHeader(410)
		case "/302":
			http.Redirect(w, r, "/", http.StatusFound)
		case "/hang":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	w := &Worker{AllowPrivate: true, Timeout: 200 * time.Millisecond, Schedule: []time.Duration{time.Second}}
	w.Init()
	tests := []struct {
		path, want, status string
	}{
		{"/ok", "", StatusDelivered},
		{"/500", "HTTP 500", StatusPending},
		{"/410", "HTTP 410", StatusFailed},
		{"/302", "HTTP 302", StatusPending},
		{"/hang", "timeout", StatusPending},
	}
	for _, tt := range tests {
		d := Delivery{Event: Event{ID: "e1", SubscriptionID: "s1", URL: srv.URL + tt.path, Status: StatusPending},
			Secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
		res := w.attempt(context.Background(), d)
		if res.Error != tt.want || res.Status != tt.status {
			t.Errorf("attempt %s: %s, error %q; want %s, %q", tt.path, res.Status, res.Error, tt.status, tt.want)
		}
	}
	// The dial-time guard refuses a loopback receiver when private targets are not allowed.
	strict := &Worker{Timeout: time.Second, Schedule: []time.Duration{time.Second}}
	strict.Init()
	res := strict.attempt(context.Background(), Delivery{Event: Event{ID: "e1", URL: srv.URL + "/ok"}, Secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	if res.Error != "dial: address not allowed" {
		t.Errorf("attempt to loopback with the guard: error %q; want %q", res.Error, "dial: address not allowed")
	}
}

// TestAttemptResponseBodyStorable: whatever bytes a receiver answers, the response body an
// attempt records is valid UTF-8 without NUL characters, cut at MaxResponseBody on a character
// boundary, so every backend stores it (PostgreSQL refuses NUL and invalid UTF-8 in text, and
// one refused result would fail the whole batch of results recorded with it).
func TestAttemptResponseBodyStorable(t *testing.T) {
	long := strings.Repeat("a", MaxResponseBody-1) + "é and more"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/nul":
			io.WriteString(w, "ok\x00done")
		case "/ff":
			io.WriteString(w, "ok\xff\xfe")
		case "/long":
			io.WriteString(w, long)
		}
	}))
	defer srv.Close()
	w := &Worker{AllowPrivate: true, Timeout: time.Second, Schedule: []time.Duration{time.Second}}
	w.Init()
	tests := []struct{ path, want string }{
		{"/nul", "okdone"},
		{"/ff", "ok\uFFFD"},
		{"/long", strings.Repeat("a", MaxResponseBody-1)},
	}
	for _, tt := range tests {
		d := Delivery{Event: Event{ID: "e1", SubscriptionID: "s1", URL: srv.URL + tt.path, Status: StatusPending},
			Secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
		res := w.attempt(context.Background(), d)
		if res.ResponseBody != tt.want {
			t.Errorf("attempt %s: response body %q; want %q", tt.path, res.ResponseBody, tt.want)
		}
		if !utf8.ValidString(res.ResponseBody) || strings.ContainsRune(res.ResponseBody, 0) {
			t.Errorf("attempt %s: response body %q is not storable text", tt.path, res.ResponseBody)
		}
	}
}
