package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/waybill/waybill/shipping"
)

// TestCreateShipmentsConcurrently creates shipments from many goroutines (sharing the profile
// cache) while an operator replaces the profile; every create succeeds and each shipment reads
// back with its own rates.
func TestCreateShipmentsConcurrently(t *testing.T) {
	e := newEnv(t)
	const n = 8
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := e.do("POST", "/shipments", "all", fuzzShipmentBody)
			if w.Code != http.StatusCreated {
				t.Errorf("POST /shipments = %d; want 201: %s", w.Code, w.Body)
				return
			}
			s := decode[struct{ Data shipping.Shipment }](t, w, http.StatusCreated)
			ids[i] = s.Data.ID
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := e.do("PUT", "/admin/rate_shopping_profiles/default", "admin", `{"name": "Default", "carriers": ["POSTLINE", "PARCELCO"]}`)
		if w.Code != http.StatusOK {
			t.Errorf("PUT profile = %d; want 200: %s", w.Code, w.Body)
		}
	}()
	wg.Wait()
	for _, id := range ids {
		s := decode[struct{ Data shipping.Shipment }](t, e.do("GET", "/shipments/"+id, "all", nil), http.StatusOK)
		if len(s.Data.ShippingRates) == 0 {
			t.Errorf("shipment %s has no rates", id)
		}
		for _, r := range s.Data.ShippingRates {
			if r.ShipmentID != id {
				t.Errorf("shipment %s lists rate %s of shipment %s", id, r.ID, r.ShipmentID)
			}
		}
	}
	l := decode[struct{ Metadata metadata }](t, e.do("GET", "/shipments", "all", nil), http.StatusOK)
	if l.Metadata.TotalCount != n {
		t.Errorf("GET /shipments total_count = %d; want %d", l.Metadata.TotalCount, n)
	}
	// After the replacement, new shipments are shopped under the new profile only.
	s := decode[struct{ Data shipping.Shipment }](t, e.do("POST", "/shipments", "all", fuzzShipmentBody), http.StatusCreated)
	for _, r := range s.Data.ShippingRates {
		if r.Carrier != "POSTLINE" && r.Carrier != "PARCELCO" {
			t.Errorf("rate from %s after the profile dropped it", r.Carrier)
		}
	}
}

// TestShipmentsOlderStatusFilter: status, the filter statuses replaced, narrows
// the list as statuses does, never widening it by being ignored.
func TestShipmentsOlderStatusFilter(t *testing.T) {
	e := newEnv(t)
	open := decode[struct{ Data shipping.Shipment }](t, e.do("POST", "/shipments", "all", fuzzShipmentBody), http.StatusCreated)
	gone := decode[struct{ Data shipping.Shipment }](t, e.do("POST", "/shipments", "all", fuzzShipmentBody), http.StatusCreated)
	decode[struct{ Data shipping.Shipment }](t, e.do("PUT", "/shipments/"+gone.Data.ID+"/cancel", "all", nil), http.StatusOK)
	for query, want := range map[string][]string{
		"status=OPEN":                    {open.Data.ID},
		"status=CANCELLED":               {gone.Data.ID},
		"status=OPEN&statuses=CANCELLED": {gone.Data.ID, open.Data.ID},
	} {
		got := decode[struct{ Data []shipping.Shipment }](t, e.do("GET", "/shipments?"+query, "all", nil), http.StatusOK)
		var ids []string
		for _, s := range got.Data {
			ids = append(ids, s.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("GET /shipments?%s = %v; want %v", query, ids, want)
		}
	}
	bad := decode[map[string]map[string]any](t, e.do("GET", "/shipments?status=SHIPPED", "all", nil), http.StatusBadRequest)
	if bad["errors"]["code"] != "invalid_parameter" {
		t.Errorf("status=SHIPPED: %v; want invalid_parameter", bad)
	}
}

// TestShipmentsHostileInput sends malformed and hostile requests to the shipment and profile
// endpoints: each gets its documented error code, never a 500.
func TestShipmentsHostileInput(t *testing.T) {
	e := newEnv(t)
	created := decode[struct{ Data shipping.Shipment }](t, e.do("POST", "/shipments", "all", fuzzShipmentBody), http.StatusCreated)
	var brands []string
	for i := 0; i <= maxFilterValues; i++ {
		brands = append(brands, fmt.Sprint("b", i))
	}
	many := strings.Join(brands, ",")
	hundred := strings.Join(brands[:maxFilterValues], ",")
	// The cap counts values as sent, before de-duplication.
	sameOpen := strings.Repeat("OPEN,", maxFilterValues) + "OPEN"
	repeated := strings.Repeat("statuses=OPEN&", 60) + strings.Repeat("statuses[]=OPEN&", 41)
	carriers := `["POSTLINE"` + strings.Repeat(`, "POSTLINE"`, 100) + `]`
	manyRanges := `["900"` + strings.Repeat(`, "900"`, 1000) + `]`
	manyScopes := `["READ_SHIPMENTS"` + strings.Repeat(`, "READ_SHIPMENTS"`, 100) + `]`
	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	huge := `{"name": "` + strings.Repeat("x", 1<<20) + `"}`
	tests := []struct {
		method, path, token string
		body                any
		status              int
		code                string
	}{
		{"GET", "/shipments?statuses=%ff", "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?brands=" + many, "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?brands=" + hundred, "all", nil, 200, ""},
		{"GET", "/shipments?statuses=" + sameOpen, "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?" + repeated, "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?carriers=" + strings.Repeat(",", 100), "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?after=", "all", nil, 400, "invalid_cursor"},
		{"GET", "/shipments?before=%00%01", "all", nil, 400, "invalid_cursor"},
		{"GET", "/shipments?first=99999999999999999999", "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?page=-1", "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?start_date=2026-11-22T00:00:00Z", "all", nil, 400, "invalid_parameter"},
		{"GET", "/shipments?brands=%27%20OR%201%3D1%20--", "all", nil, 200, ""},
		{"GET", "/shipments/%27%20OR%201%3D1%20--", "all", nil, 404, "not_found"},
		{"GET", "/shipments/" + strings.Repeat("a", 5000), "all", nil, 404, "not_found"},
		{"POST", "/shipments", "all", deep, 400, "malformed_json"},
		{"POST", "/shipments", "all", "\xff\xfe", 400, "malformed_json"},
		{"POST", "/shipments", "all", `{"parcel": {"weight": 1e999}}`, 400, "validation_failed"},
		{"POST", "/shipments", "all", `{"origin": "x"}`, 400, "validation_failed"},
		{"POST", "/shipments", "all", `{"ship_date": 20261122}`, 400, "validation_failed"},
		{"POST", "/shipments", "all", `{"buy_cheapest_rate": "yes"}`, 400, "validation_failed"},
		{"POST", "/shipments", "all", huge, 413, "payload_too_large"},
		{"POST", "/shipments", "all", strings.Replace(fuzzShipmentBody, `"parcel"`, `"rate_shopping_profile": "../../etc", "parcel"`, 1), 422, "unknown_rate_shopping_profile"},
		{"PATCH", "/shipments/" + created.Data.ID, "all", `{"custom_reference_1": {"$ne": 1}}`, 400, "validation_failed"},
		{"PATCH", "/shipments/" + created.Data.ID, "all", `{"custom_reference_1": "a\u0000b"}`, 400, "validation_failed"},
		{"GET", "/rate_shopping_profiles/%00", "all", nil, 404, "not_found"},
		{"GET", "/rate_shopping_profiles?page_size=0", "all", nil, 400, "invalid_parameter"},
		{"PUT", "/admin/rate_shopping_profiles/" + strings.Repeat("k", 65), "admin", `{"name": "x", "carriers": ["POSTLINE"]}`, 400, "validation_failed"},
		{"PUT", "/admin/rate_shopping_profiles/x", "admin", `{"name": "x", "carriers": ["POSTLINE"], "zip_coverage": {"POSTLINE": ["000-999", "-", "1-2", "999-"]}}`, 400, "validation_failed"},
		{"PUT", "/admin/rate_shopping_profiles/x", "admin", `{"name": "x", "carriers": [null]}`, 400, "validation_failed"},
		{"PUT", "/admin/rate_shopping_profiles/x", "admin", `{"name": "x", "carriers": ` + carriers + `}`, 400, "validation_failed"},
		{"PUT", "/admin/rate_shopping_profiles/x", "admin", `{"name": "x", "carriers": ["POSTLINE"], "zip_coverage": {"POSTLINE": ` + manyRanges + `}}`, 400, "validation_failed"},
		{"POST", "/admin/accounts/" + e.accounts["acme"].ID + "/tokens", "admin", `{"scopes": ` + manyScopes + `}`, 400, "validation_failed"},
		{"PUT", "/admin/rate_shopping_profiles/x", "admin", `{"name": "x", "carriers": ["POSTLINE"], "zone_tnt_mapping": [{"zone": 1e10}]}`, 400, "validation_failed"},
	}
	for _, tt := range tests {
		w := e.do(tt.method, tt.path, tt.token, tt.body)
		var got struct {
			Errors struct{ Code string } `json:"errors"`
		}
		json.Unmarshal(w.Body.Bytes(), &got)
		path := tt.path
		if len(path) > 60 {
			path = path[:60] + "…"
		}
		if w.Code != tt.status || got.Errors.Code != tt.code {
			t.Errorf("%s %s = %d %s; want %d %s (%.200s)", tt.method, path, w.Code, got.Errors.Code, tt.status, tt.code, w.Body)
		}
	}
}
