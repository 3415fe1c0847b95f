package httpapi

import (
	"net/http"
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
