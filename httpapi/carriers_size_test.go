package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping/carrier"
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
// inflated), and refuses larger ones and junk with bounded work; every other
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

// TestCarriersCompiledOnlyInForce: only versions in force today or later are compiled, on the
// first quote that needs them; a change to one carrier carries the others' compiled versions
// over, and a version no longer in force is never read again.
func TestCarriersCompiledOnlyInForce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, code := range []string{"ACMEX", "BETAX"} {
		card := strings.Replace(acmeCard, `"999AA1"`, map[string]string{"ACMEX": `"999AA1"`, "BETAX": `"999BB1"`}[code], 1)
		decode[any](t, e.do("PUT", "/admin/carriers/"+code, "admin", card), http.StatusCreated)
	}
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/both", "admin", `{"name": "Both", "carriers": ["ACMEX", "BETAX"]}`), http.StatusCreated)
	quote := func() {
		t.Helper()
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", strings.Replace(shipmentBody("ALL", "PDF"), "{", `{"rate_shopping_profile": "both", `, 1)), http.StatusCreated)
		if len(s.Data.ShippingRates) != 2 {
			t.Fatalf("quoted %+v; want ACMEX and BETAX", s.Data.ShippingRates)
		}
	}
	versions := func(code string) []*carrier.Version {
		t.Helper()
		s, err := e.api.carriers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.All[code].(*carrier.Table).Versions()
	}
	quote()
	beta := versions("BETAX")[0]
	// A new version of ACMEX effective today: version 1 is no longer in force.
	decode[any](t, e.do("PUT", "/admin/carriers/ACMEX", "admin", strings.Replace(acmeCard, `"2026-01-01"`, `"2026-11-22"`, 1)), http.StatusOK)
	if _, err := e.sql.ExecContext(ctx, `UPDATE carrier_versions SET card = 'unreadable' WHERE carrier = 'ACMEX' AND version = 1`); err != nil {
		t.Fatal(err)
	}
	quote()
	if got := versions("BETAX")[0]; got != beta {
		t.Error("BETAX's compiled version was not carried over a change of ACMEX")
	}
	// Another process on the same database, started now, compiles only what is in force.
	other, err := New(Config{DB: e.db, BaseURL: e.url})
	if err != nil {
		t.Fatalf("New with an unreadable version no longer in force: %v", err)
	}
	req := httptest.NewRequest("POST", "/shipments", strings.NewReader(strings.Replace(shipmentBody("ALL", "PDF"), "{", `{"rate_shopping_profile": "both", `, 1)))
	req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	other.ServeHTTP(w, req)
	if s := decode[shipmentAnswer](t, w, http.StatusCreated); len(s.Data.ShippingRates) != 2 {
		t.Errorf("the other process quoted %+v; want ACMEX and BETAX", s.Data.ShippingRates)
	}
}
