package httpapi

import (
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestRequestIDEchoed: the caller's X-Request-Id comes back when it is at most 64 printable
// ASCII characters; otherwise the answer carries a fresh UUID.
func TestRequestIDEchoed(t *testing.T) {
	e := newEnv(t)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, tt := range []struct {
		sent string
		echo bool
	}{
		{"req-42 from:client", true},
		{"", false},
		{"\xff\xfe", false},
		{"caf\xc3\xa9", false},
		{"tab\there", false},
		{string(make([]byte, 65)), false},
	} {
		r := httptest.NewRequest("GET", "/healthz", nil)
		if tt.sent != "" {
			r.Header.Set("X-Request-Id", tt.sent)
		}
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, r)
		got := w.Header().Get("X-Request-Id")
		if tt.echo && got != tt.sent || !tt.echo && !uuid.MatchString(got) {
			t.Errorf("X-Request-Id %q answered %q; want it echoed: %v", tt.sent, got, tt.echo)
		}
	}
}
