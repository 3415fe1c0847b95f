package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/manifest"
	"github.com/waybill/waybill/store"
)

type manifestAnswer struct {
	Data manifest.View `json:"data"`
}

// buyLabels buys n labels of the cheapest carrier for the named token's account and returns
// the carrier.
func (e *testEnv) buyLabels(t testing.TB, token string, n int) (carrier string, labels []string) {
	t.Helper()
	for range n {
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", token, shipmentBody("CHEAPEST", "PDF")), http.StatusCreated)
		b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, token, nil), http.StatusOK)
		carrier, labels = b.Data.ShippingLabel.Carrier, append(labels, b.Data.ShippingLabel.ID)
	}
	return carrier, labels
}

// checkManifests checks, from the database, that no label is in two manifests: each manifest's
// labels point back at it and no label id is listed twice; it returns how many labels are
// manifested.
func (e *testEnv) checkManifests(t *testing.T) int {
	t.Helper()
	l, err := e.db.ListManifests(context.Background(), e.accounts["acme"].ID, store.ManifestFilter{}, store.Page{Number: 1, Size: 250})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, m := range l.Items {
		if m.LabelCount != len(m.ShippingLabelIDs) {
			t.Errorf("manifest %s: label_count %d, %d ids", m.ID, m.LabelCount, len(m.ShippingLabelIDs))
		}
		for _, id := range m.ShippingLabelIDs {
			if other, dup := seen[id]; dup {
				t.Errorf("label %s is in manifests %s and %s", id, other, m.ID)
			}
			seen[id] = m.ID
			lb, err := e.db.Label(context.Background(), e.accounts["acme"].ID, id)
			if err != nil || lb.ManifestID == nil || *lb.ManifestID != m.ID {
				t.Errorf("label %s: manifest_id %v (%v); want %s", id, lb.ManifestID, err, m.ID)
			}
		}
	}
	var n int
	if err := e.sql.QueryRow(`SELECT COUNT(*) FROM shipping_labels WHERE manifest_id IS NOT NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(seen) {
		t.Errorf("%d labels have a manifest_id; the manifests list %d", n, len(seen))
	}
	return n
}

// TestConcurrentManifests: close-outs racing each other and purchases never put a label in two
// manifests; every label bought before the last close-out is in exactly one.
func TestConcurrentManifests(t *testing.T) {
	e := newEnv(t)
	carrier, labels := e.buyLabels(t, "all", 10)
	body := fmt.Sprintf(`{"carrier": %q}`, carrier)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, bought := 0, len(labels)
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			w := e.do("POST", "/manifests", "all", body)
			switch w.Code {
			case http.StatusCreated:
				mu.Lock()
				created++
				mu.Unlock()
			case http.StatusUnprocessableEntity:
				if !strings.Contains(w.Body.String(), "nothing_to_manifest") {
					t.Errorf("close-out %d: %s", i, w.Body)
				}
			default:
				t.Errorf("close-out %d: %d %s", i, w.Code, w.Body)
			}
		}()
		go func() {
			defer wg.Done()
			if _, l := e.buyLabels(t, "all", 1); len(l) == 1 {
				mu.Lock()
				bought++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if created == 0 {
		t.Fatal("no close-out succeeded")
	}
	w := e.do("POST", "/manifests", "all", body)
	if w.Code != http.StatusCreated && w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("last close-out: %d %s", w.Code, w.Body)
	}
	if n := e.checkManifests(t); n != bought {
		t.Errorf("%d labels manifested; want all %d bought", n, bought)
	}
}

// TestManifestedLabelCannotBeVoided: cancel of a manifested label is 422 label_manifested and
// voids nothing; the label still tracks.
func TestManifestedLabelCannotBeVoided(t *testing.T) {
	e := newEnv(t)
	s := e.createShipment(t, "CHEAPEST", "PDF")
	b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	m := decode[manifestAnswer](t, e.do("POST", "/manifests", "all", `{"carrier": "`+b.Data.ShippingLabel.Carrier+`"}`), http.StatusCreated)
	if m.Data.LabelCount != 1 || m.Data.ShippingLabelIDs[0] != b.Data.ShippingLabel.ID {
		t.Fatalf("manifest = %+v", m.Data)
	}
	w := e.do("PUT", "/shipments/"+s.Data.ID+"/cancel", "all", nil)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"label_manifested"`) {
		t.Fatalf("cancel of a manifested label: %d %s", w.Code, w.Body)
	}
	l := decode[struct {
		Data shipping.Label `json:"data"`
	}](t, e.do("GET", "/shipping_labels/"+b.Data.ShippingLabel.ID, "all", nil), http.StatusOK)
	if l.Data.Status != shipping.LabelPreTransit || l.Data.ManifestID == nil || *l.Data.ManifestID != m.Data.ID {
		t.Errorf("label after the refused cancel: %s, manifest_id %v", l.Data.Status, l.Data.ManifestID)
	}
}

// TestCarrierPushBounds: a push carries 1 to 1,000 events; 1,000 each get a result.
func TestCarrierPushBounds(t *testing.T) {
	e := newEnv(t)
	carrier, _ := e.buyLabels(t, "all", 1)
	secret := decode[struct {
		Data struct{ Secret string } `json:"data"`
	}](t, e.do("POST", "/admin/carriers/"+carrier+"/event_secret/rotate", "admin", nil), http.StatusOK).Data.Secret
	push := func(n int) *httptest.ResponseRecorder {
		events := make([]string, n)
		for i := range events {
			events[i] = fmt.Sprintf(`{"tracking_code": "NOPE%d", "status": "IN_TRANSIT", "message": "m", "occurred_at": "2026-11-22T05:00:00Z"}`, i)
		}
		body := `{"events": [` + strings.Join(events, ",") + `]}`
		req := httptest.NewRequest("POST", "/carrier_events/"+carrier, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(CarrierSignatureHeader, ingest.Sign(secret, []byte(body)))
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, req)
		return w
	}
	if w := push(1001); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "validation_failed") {
		t.Errorf("1001 events: %d %s; want 400 validation_failed", w.Code, w.Body)
	}
	// More than 1 MiB is refused before anything is read into events, signed or not.
	big := `{"events": [{"tracking_code": "X", "message": "` + strings.Repeat("x", 1<<20) + `"}]}`
	req := httptest.NewRequest("POST", "/carrier_events/"+carrier, strings.NewReader(big))
	req.Header.Set(CarrierSignatureHeader, ingest.Sign(secret, []byte(big)))
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a push over 1 MiB: %d; want 413", w.Code)
	}
	// A NUL byte anywhere is refused like in every body (400, naming the event's field), never a
	// 500: no database column stores one.
	nul := `{"events": [{"tracking_code": "A\u0000B", "status": "IN_TRANSIT", "message": "m", "occurred_at": "2026-11-22T05:00:00Z"}]}`
	req = httptest.NewRequest("POST", "/carrier_events/"+carrier, strings.NewReader(nul))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(CarrierSignatureHeader, ingest.Sign(secret, []byte(nul)))
	w = httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"events[0].tracking_code"`) {
		t.Errorf("an event with a NUL byte: %d %s; want 400 naming events[0].tracking_code", w.Code, w.Body)
	}
	got := decode[struct {
		Data pushAnswer `json:"data"`
	}](t, push(1000), http.StatusOK)
	if len(got.Data.Results) != 1000 || got.Data.Results[999].Index != 999 || got.Data.Results[999].Status != pushUnknown {
		t.Errorf("1000 events: %d results, last %+v", len(got.Data.Results), got.Data.Results[len(got.Data.Results)-1])
	}
}

// BenchmarkCreateManifest1000 times POST /manifests closing out 1,000 labels on SQLite: the
// claim, both documents rendered and stored, 1,000 stored responses rewritten, in one
// transaction.
func BenchmarkCreateManifest1000(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b)
		carrier, _ := e.buyLabels(b, "all", 1000)
		b.StartTimer()
		decode[manifestAnswer](b, e.do("POST", "/manifests", "all", `{"carrier": "`+carrier+`"}`), http.StatusCreated)
	}
}
