package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestLog checks the one JSON log line per request: request id, pattern, status, and
// never the bearer token.
func TestRequestLog(t *testing.T) {
	e := newEnv(t)
	var buf bytes.Buffer
	e.api.log = slog.New(slog.NewJSONHandler(&buf, nil))
	r := httptest.NewRequest("GET", "/shipments", nil)
	r.Header.Set("Authorization", "Bearer "+e.tokens["read_billing"])
	r.Header.Set("X-Request-Id", "req-123")
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, r)
	if got := w.Header().Get("X-Request-Id"); got != "req-123" {
		t.Errorf("X-Request-Id = %q; want the caller's", got)
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if line["id"] != "req-123" || line["pattern"] != "GET /shipments" || line["status"] != float64(403) {
		t.Errorf("log line = %v", line)
	}
	if strings.Contains(buf.String(), e.tokens["read_billing"]) {
		t.Errorf("log line contains the bearer token: %s", buf.String())
	}

	// Without a caller's id, one is made.
	w = httptest.NewRecorder()
	e.api.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
	if len(w.Header().Get("X-Request-Id")) != 36 {
		t.Errorf("generated X-Request-Id = %q; want a UUID", w.Header().Get("X-Request-Id"))
	}
}

func TestNewRequiresDB(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New(Config{}) = nil error; want one")
	}
}
