package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/store"
)

const acmeCard = `{"name": "Acme Express", "effective_from": "2026-01-01", "max_weight_oz": 1120, "max_length_in": 108,
 "max_length_plus_girth_in": 165, "services": [{"code": "GROUND", "name": "Acme Ground", "transit_days": [1, 2, 3, 3, 4, 4, 5, 5],
 "weight_breaks_oz": [16, 32], "prices_cents": [[500, 520, 540, 560, 580, 600, 620, 640], [600, 620, 640, 660, 680, 700, 720, 740]]}],
 "tracking": {"scheme": "ups_1z", "shipper_number": "999AA1", "service_codes": {"GROUND": "01"}, "range_start": 2345678, "range_end": 2399999}}`

// TestCarrierSeenByAnotherProcess: a carrier stored through one process, and a profile naming
// it, are shopped at once by another process sharing the database, without a restart; its
// label carries the carrier's UPS number and names the service as the card does.
func TestCarrierSeenByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	var handles [2]*store.DB
	for i := range handles {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		handles[i] = db
	}
	e := newEnvWith(t, handles[0])
	t.Cleanup(func() { handles[1].Close() })
	other, err := New(Config{DB: handles[1], BaseURL: e.url})
	if err != nil {
		t.Fatal(err)
	}
	doOther := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		other.ServeHTTP(w, req)
		return w
	}
	// The other process quotes, so its carriers are compiled before ACMEX exists.
	decode[shipmentAnswer](t, doOther("POST", "/shipments", shipmentBody("CHEAPEST", "PDF")), http.StatusCreated)

	decode[any](t, e.do("PUT", "/admin/carriers/ACMEX", "admin", acmeCard), http.StatusCreated)
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/acme", "admin", `{"name": "Acme", "carriers": ["ACMEX"]}`), http.StatusCreated)
	time.Sleep(2 * time.Millisecond)
	w := doOther("POST", "/shipments", strings.Replace(shipmentBody("CHEAPEST", "PNG"), "{", `{"rate_shopping_profile": "acme", `, 1))
	s := decode[shipmentAnswer](t, w, http.StatusCreated)
	if len(s.Data.ShippingRates) != 1 || s.Data.ShippingRates[0].Carrier != "ACMEX" {
		t.Fatalf("the other process quoted %+v; want ACMEX", s.Data.ShippingRates)
	}
	b := decode[shipmentAnswer](t, doOther("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, ""), http.StatusOK)
	if code := b.Data.ShippingLabel.TrackingCode; code != "1Z999AA10123456784" {
		t.Errorf("tracking code = %q; want the first of the carrier's range, 1Z999AA10123456784", code)
	}
	if name := other.serviceName("ACMEX", "GROUND"); name != "Acme Ground" {
		t.Errorf("serviceName(ACMEX, GROUND) = %q; want the card's Acme Ground", name)
	}
}
