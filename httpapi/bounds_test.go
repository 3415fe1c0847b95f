package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// hostileStatuses is a statuses filter of n distinct values, the shape that took 28 s of CPU
// when values were de-duplicated before the cap.
func hostileStatuses(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "v%d", i)
	}
	return b.String()
}

// TestFilterValuesCappedFirst: 120,000 values in one filter are refused (400
// invalid_parameter) in linear time, whether they reach the filter through a short URL or not.
func TestFilterValuesCappedFirst(t *testing.T) {
	q := url.Values{"statuses": {hostileStatuses(120_000)}}
	start := time.Now()
	_, err := shipmentFilter(q)
	elapsed := time.Since(start)
	if e := errorFor(err); e.Status != http.StatusBadRequest || e.Code != "invalid_parameter" || e.Parameter != "statuses" {
		t.Errorf("shipmentFilter(120,000 statuses) = %v; want 400 invalid_parameter on statuses", err)
	}
	// Linear time is a few milliseconds; the quadratic de-duplication took 28 s.
	if elapsed > time.Second {
		t.Errorf("shipmentFilter(120,000 statuses) took %v; want well under a second", elapsed)
	}
}

// BenchmarkFilterValuesHostile measures the filter on 120,000 distinct values (the figure
// that once took 28 s, before the cap moved first).
func BenchmarkFilterValuesHostile(b *testing.B) {
	q := url.Values{"statuses": {hostileStatuses(120_000)}}
	for b.Loop() {
		if _, err := shipmentFilter(q); err == nil {
			b.Fatal("shipmentFilter accepted 120,000 values")
		}
	}
}

// BenchmarkListShipmentsHostileURL measures GET /shipments?statuses=<120,000 values> through
// the whole handler: refused 414 before any parameter is read.
func BenchmarkListShipmentsHostileURL(b *testing.B) {
	e := newEnv(b)
	// The request is parsed once: parsing the URL is net/http's work, before the API's.
	req := httptest.NewRequest("GET", "/shipments?statuses="+hostileStatuses(120_000), nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
	for b.Loop() {
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, req)
		if w.Code != http.StatusRequestURITooLong {
			b.Fatalf("status = %d; want 414", w.Code)
		}
	}
}

// TestRequestLineBound: a request line over 8 KiB is 414 uri_too_long in the JSON error
// shape, on any path, before authentication; one at the bound is served.
func TestRequestLineBound(t *testing.T) {
	e := newEnv(t)
	line := func(target string) int { return len("GET ") + len(target) + len(" HTTP/1.1") }
	atBound := "/shipments?brands=" + strings.Repeat("x", maxRequestLine-line("/shipments?brands="))
	if line(atBound) != 8192 {
		t.Fatalf("request line is %d bytes; want 8192", line(atBound))
	}
	tests := []struct {
		name, target, token string
		want                int
	}{
		{"at the bound", atBound, "all", http.StatusOK},
		{"a byte over", atBound + "y", "all", http.StatusRequestURITooLong},
		{"no token", atBound + "y", "", http.StatusRequestURITooLong},
		{"unknown path", "/nowhere/" + strings.Repeat("p", 9000), "all", http.StatusRequestURITooLong},
		{"120,000 statuses", "/shipments?statuses=" + hostileStatuses(120_000), "all", http.StatusRequestURITooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := e.do("GET", tt.target, tt.token, nil)
			if w.Code != tt.want {
				t.Fatalf("GET (%d bytes) = %d %.200s; want %d", len(tt.target), w.Code, w.Body, tt.want)
			}
			if tt.want == http.StatusRequestURITooLong {
				body := decode[struct{ Errors Error }](t, w, tt.want)
				if body.Errors.Code != "uri_too_long" || w.Header().Get("Content-Type") != "application/json" {
					t.Errorf("414 answer = %s (%s); want code uri_too_long in JSON", w.Body, w.Header().Get("Content-Type"))
				}
			}
		})
	}
}
