package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// realSizeCard is acmeCard with a zone chart of origins × 995 destination ZIP3s, pretty-printed
// as an editor saves it: 20 origins are about 2 MB.
func realSizeCard(t *testing.T, origins int) []byte {
	t.Helper()
	var card map[string]any
	if err := json.Unmarshal([]byte(acmeCard), &card); err != nil {
		t.Fatal(err)
	}
	var chart []map[string]any
	for o := 0; o < origins; o++ {
		for d := 5; d < 1000; d++ {
			chart = append(chart, map[string]any{"origin_zip3": fmt.Sprintf("%03d", 100+o), "dest_zip3": fmt.Sprintf("%03d", d), "zone": 1 + d%8})
		}
	}
	card["zone_chart"] = chart
	b, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCarrierCardSizes: a carrier PUT takes cards up to 16 MiB, also gzipped (bounded when
// inflated), and refuses larger ones and junk with bounded work (DESIGN §18); every other
// route keeps its 1 MiB.
func TestCarrierCardSizes(t *testing.T) {
	e := newEnv(t)
	big := realSizeCard(t, 20)
	if len(big) <= maxBody {
		t.Fatalf("real-size card of %d bytes; want over 1 MiB", len(big))
	}
	junk := bytes.Repeat([]byte(`{["a1,:}]`), maxCardBody/9)
	tests := []struct {
		name     string
		path     string
		encoding string
		body     []byte
		status   int
		code     string
	}{
		{"20-origin chart", "/admin/carriers/ACMEX", "", big, http.StatusCreated, ""},
		{"gzipped", "/admin/carriers/ACMEX", "gzip", gzipped(t, big), http.StatusOK, ""},
		{"16 MiB of junk", "/admin/carriers/ACMEX", "", junk, http.StatusBadRequest, "malformed_json"},
		{"over 16 MiB", "/admin/carriers/ACMEX", "", make([]byte, maxCardBody+1), http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"gzip bomb", "/admin/carriers/ACMEX", "gzip", gzipped(t, make([]byte, 64<<20)), http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"not gzip", "/admin/carriers/ACMEX", "gzip", big, http.StatusBadRequest, "malformed_json"},
		{"100,001 chart entries", "/admin/carriers/ACMEX", "", nil, 0, ""}, // filled below
		{"other routes keep 1 MiB", "/admin/rate_shopping_profiles/big", "", big, http.StatusRequestEntityTooLarge, "payload_too_large"},
	}
	// 101 origins of 995 destinations, cut to 100,001 entries.
	var card map[string]any
	json.Unmarshal(realSizeCard(t, 101), &card)
	card["zone_chart"] = card["zone_chart"].([]any)[:100_001]
	long, _ := json.Marshal(card)
	tests[6].body, tests[6].status, tests[6].code = long, http.StatusBadRequest, "validation_failed"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("PUT", tt.path, bytes.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.tokens["admin"])
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			w := httptest.NewRecorder()
			e.api.ServeHTTP(w, req)
			if w.Code != tt.status || tt.code != "" && !strings.Contains(w.Body.String(), `"code":"`+tt.code+`"`) {
				t.Fatalf("PUT %s = %d %.300s; want %d %s", tt.path, w.Code, w.Body, tt.status, tt.code)
			}
			if tt.code == "validation_failed" && !strings.Contains(w.Body.String(), `"field":"zone_chart"`) {
				t.Errorf("PUT %s = %.300s; want the field zone_chart", tt.path, w.Body)
			}
		})
	}
	type answer struct {
		Data struct {
			Version   int64 `json:"version"`
			ZoneChart []any `json:"zone_chart"`
		} `json:"data"`
	}
	got := decode[answer](t, e.do("GET", "/admin/carriers/ACMEX", "admin", nil), http.StatusOK)
	if got.Data.Version != 2 || len(got.Data.ZoneChart) != 20*995 {
		t.Errorf("GET = version %d with %d chart entries; want version 2 with %d (nothing stored on a refusal)", got.Data.Version, len(got.Data.ZoneChart), 20*995)
	}
}
