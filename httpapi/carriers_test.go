package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
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
	e := newEnvWith(t, handles[0], path)
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

// TestBuyTrackingNumberTaken: two stored carriers whose ranges meet (loaded around PUT's
// check, as seeding does) — once the second reaches a number the first issued, its buy is 422
// tracking_number_taken, not a 500, and buys nothing; the serial is used up, so the buy
// tried again gets the next number.
func TestBuyTrackingNumberTaken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "waybill.db")
	db, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var cards []carrier.Card
	for code, start := range map[string]int64{"ACMEX": 2345678, "BETAX": 2345679} {
		var c carrier.Card
		if err := json.Unmarshal([]byte(acmeCard), &c); err != nil {
			t.Fatal(err)
		}
		c.Normalize(code, testStart)
		c.Tracking.RangeStart = start
		cards = append(cards, c)
	}
	if err := db.SeedCarriers(context.Background(), cards); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, db, path)
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/both", "admin", `{"name": "Both", "carriers": ["ACMEX", "BETAX"]}`), http.StatusCreated)
	buy := func(carrier string) (shipmentID, path string) {
		t.Helper()
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all",
			strings.Replace(shipmentBody("ALL", "PDF"), "{", `{"rate_shopping_profile": "both", `, 1)), http.StatusCreated)
		for _, r := range s.Data.ShippingRates {
			if r.Carrier == carrier {
				return s.Data.ID, "/shipments/" + s.Data.ID + "/rates/" + r.ID
			}
		}
		t.Fatalf("no rate of %s in %+v", carrier, s.Data.ShippingRates)
		return "", ""
	}
	for _, want := range []string{"1Z999AA10123456784", "1Z999AA10123456793"} {
		_, path := buy("ACMEX")
		if b := decode[shipmentAnswer](t, e.do("POST", path, "all", nil), http.StatusOK); b.Data.ShippingLabel.TrackingCode != want {
			t.Fatalf("ACMEX bought %s; want %s", b.Data.ShippingLabel.TrackingCode, want)
		}
	}
	id, path := buy("BETAX") // its first serial, 2345679, made ACMEX's second number
	w := e.do("POST", path, "all", nil)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"code":"tracking_number_taken"`) {
		t.Fatalf("buy of a taken number = %d %s; want 422 tracking_number_taken", w.Code, w.Body)
	}
	if s := decode[shipmentAnswer](t, e.do("GET", "/shipments/"+id, "all", nil), http.StatusOK); s.Data.Status != shipping.StatusOpen {
		t.Fatalf("after the refused buy the shipment is %s; want OPEN", s.Data.Status)
	}
	if b := decode[shipmentAnswer](t, e.do("POST", path, "all", nil), http.StatusOK); b.Data.ShippingLabel.TrackingCode != "1Z999AA10123456800" {
		t.Errorf("BETAX bought %s on the second try; want its next serial's 1Z999AA10123456800", b.Data.ShippingLabel.TrackingCode)
	}
}

// TestTrackingOverlapPastVersions: a carrier's range is refused when it meets the range of
// another carrier's version replaced before today, whose numbers labels may carry (a reviewer
// stored such a carrier, and its buys then met tracking_number_taken).
func TestTrackingOverlapPastVersions(t *testing.T) {
	e := newEnv(t)
	decode[any](t, e.do("PUT", "/admin/carriers/ACMEX", "admin", acmeCard), http.StatusCreated)
	moved := strings.NewReplacer(`"effective_from": "2026-01-01"`, `"effective_from": "2026-06-01"`,
		`"range_start": 2345678, "range_end": 2399999`, `"range_start": 3000000, "range_end": 3999999`).Replace(acmeCard)
	decode[any](t, e.do("PUT", "/admin/carriers/ACMEX", "admin", moved), http.StatusOK)
	w := e.do("PUT", "/admin/carriers/ACMEY", "admin", strings.Replace(acmeCard, "Acme Express", "Acme Two", 1))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"tracking_range_overlap"`) ||
		!strings.Contains(w.Body.String(), "carrier ACMEX (version 1") {
		t.Errorf("PUT of a range ACMEX's replaced version issued from: %d %s; want 422 tracking_range_overlap naming it", w.Code, w.Body)
	}
}

// TestCarrierDryRunNoChanges: a dry run whose prices equal the version in force answers
// "changes": [], a list as always, not null or nothing.
func TestCarrierDryRunNoChanges(t *testing.T) {
	e := newEnv(t)
	decode[any](t, e.do("PUT", "/admin/carriers/ACMEX", "admin", acmeCard), http.StatusCreated)
	w := e.do("PUT", "/admin/carriers/ACMEX?dry_run=true", "admin", acmeCard)
	var answer struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || w.Code != http.StatusOK || string(answer.Data["changes"]) != "[]" {
		t.Errorf("dry run with no price changed: %d, changes %s; want 200 and []", w.Code, answer.Data["changes"])
	}
}
