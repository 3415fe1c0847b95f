package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// freshShipment renders a shipment the way the API did before responses were stored: decoded
// from its rows, linked, encoded.
func (e *testEnv) freshShipment(t *testing.T, id string) []byte {
	t.Helper()
	s, err := e.db.Shipment(context.Background(), e.accounts["acme"].ID, id)
	if err != nil {
		t.Fatal(err)
	}
	e.api.linkShipments(s)
	w := httptest.NewRecorder()
	writeData(w, http.StatusOK, s)
	return w.Body.Bytes()
}

func (e *testEnv) freshLabel(t *testing.T, id string) []byte {
	t.Helper()
	l, err := e.db.Label(context.Background(), e.accounts["acme"].ID, id)
	if err != nil {
		t.Fatal(err)
	}
	e.api.linkLabels(l)
	w := httptest.NewRecorder()
	writeData(w, http.StatusOK, l)
	return w.Body.Bytes()
}

func (e *testEnv) freshList(t *testing.T, p store.Page, k *store.Keyset) []byte {
	t.Helper()
	ctx, acct := context.Background(), e.accounts["acme"].ID
	page, err := e.db.ListShipmentsJSON(ctx, acct, store.ShipmentFilter{}, p, k)
	if err != nil {
		t.Fatal(err)
	}
	// The page's shipments, read afresh from their rows.
	ids := make([]string, len(page.Items))
	for i, js := range page.Items {
		var s struct{ ID string }
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatal(err)
		}
		ids[i] = s.ID
	}
	items, err := e.db.Shipments(ctx, acct, ids)
	if err != nil || len(items) != len(ids) {
		t.Fatalf("Shipments = %d, %v; want %d", len(items), err, len(ids))
	}
	l := store.List[*shipping.Shipment]{Items: items, HasNext: page.HasNext, HasPrev: page.HasPrev, Total: page.Total, Keys: page.Keys}
	e.api.linkShipments(l.Items...)
	w := httptest.NewRecorder()
	if k != nil {
		writeList(w, l.Items, e.api.docs.sealMeta(keysetMeta(*k, l)))
	} else {
		writeList(w, l.Items, offsetMeta(p, l))
	}
	return w.Body.Bytes()
}

// TestStoredResponsesMatchFreshRender: after every kind of change to a shipment or its label
// (create, buy, buy with insurance, PATCH, tracking events up to delivery and billing, cancel,
// void, webhook redelivery, manifest), each stored response the GETs answer (shipment, label, list pages)
// is byte for byte a fresh render of the rows.
func TestStoredResponsesMatchFreshRender(t *testing.T) {
	e := newEnv(t)
	var shipments, labels []string
	check := func(after string) {
		t.Helper()
		var missing int
		if err := e.sql.QueryRow(`SELECT COUNT(*) FROM shipments WHERE packed IS NULL`).Scan(&missing); err != nil || missing != 0 {
			t.Fatalf("after %s: %d shipments without a stored response (%v)", after, missing, err)
		}
		for _, id := range shipments {
			got := e.do("GET", "/shipments/"+id, "all", nil).Body.Bytes()
			if want := e.freshShipment(t, id); !bytes.Equal(got, want) {
				t.Errorf("after %s: GET /shipments/%s\n got %s\nwant %s", after, id, got, want)
			}
		}
		for _, id := range labels {
			got := e.do("GET", "/shipping_labels/"+id, "all", nil).Body.Bytes()
			if want := e.freshLabel(t, id); !bytes.Equal(got, want) {
				t.Errorf("after %s: GET /shipping_labels/%s\n got %s\nwant %s", after, id, got, want)
			}
		}
		got := e.do("GET", "/shipments?first=50", "all", nil).Body.Bytes()
		if want := e.freshList(t, store.Page{}, &store.Keyset{Size: 50}); !bytes.Equal(got, want) {
			t.Errorf("after %s: GET /shipments?first=50\n got %s\nwant %s", after, got, want)
		}
		got = e.do("GET", "/shipments?page=2&page_size=3", "all", nil).Body.Bytes()
		if want := e.freshList(t, store.Page{Number: 2, Size: 3}, nil); !bytes.Equal(got, want) {
			t.Errorf("after %s: GET /shipments?page=2&page_size=3\n got %s\nwant %s", after, got, want)
		}
	}
	create := func() shipmentAnswer {
		t.Helper()
		s := e.createShipment(t, "CHEAPEST", "PDF")
		shipments = append(shipments, s.Data.ID)
		return s
	}
	buy := func(s shipmentAnswer, query string) shipmentAnswer {
		t.Helper()
		b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID+query, "all", nil), http.StatusOK)
		labels = append(labels, b.Data.ShippingLabel.ID)
		return b
	}
	track := func(b shipmentAnswer, status, at string) {
		t.Helper()
		body := fmt.Sprintf(`{"tracking_code": %q, "status": %q, "message": "scan", "occurred_at": %q}`,
			b.Data.ShippingLabel.TrackingCode, status, at)
		decode[any](t, e.do("POST", "/admin/tracking_events", "admin", body), http.StatusCreated)
	}

	sub := e.subscribe("all", "http://127.0.0.1:1/hook", "LABEL_PURCHASED")
	open, kept, insured, voided := create(), create(), create(), create()
	// The stored responses compared hold messages (REGIONALX's REGSL does not carry 20 oz).
	if body := e.do("GET", "/shipments/"+kept.Data.ID, "all", nil).Body.Bytes(); !bytes.Contains(body, []byte(`"messages":[{"carrier":"REGIONALX"`)) {
		t.Fatalf("the shipment has no messages to compare: %s", body)
	}
	check("create")
	b := buy(kept, "")
	check("buy")
	bi := buy(insured, "?insurance_amount=120.50")
	check("buy with insurance")
	buy(voided, "")
	check("buy")
	for _, s := range []shipmentAnswer{open, kept} {
		body := `{"custom_reference_1": "PO-7", "custom_reference_2": null}`
		decode[any](t, e.do("PATCH", "/shipments/"+s.Data.ID, "all", body), http.StatusOK)
	}
	check("PATCH")
	track(b, "IN_TRANSIT", "2026-11-22T05:00:00Z")
	check("tracking event")
	track(bi, "IN_TRANSIT", "2026-11-22T05:00:00Z")
	track(bi, "DELIVERED", "2026-11-22T06:00:00Z")
	check("delivery (billed)")
	decode[any](t, e.do("PUT", "/shipments/"+open.Data.ID+"/cancel", "all", nil), http.StatusOK)
	check("cancel")
	decode[any](t, e.do("PUT", "/shipments/"+voided.Data.ID+"/cancel", "all", nil), http.StatusOK)
	check("cancel with void")
	evs := e.events("all", sub.ID, "")
	if len(evs) == 0 {
		t.Fatal("no webhook event to redeliver")
	}
	e.do("POST", "/webhooks/"+sub.ID+"/events/"+evs[0].ID+"/redeliver", "all", nil)
	check("redeliver")
	closed := buy(create(), "")
	body := fmt.Sprintf(`{"carrier": %q}`, closed.Data.ShippingLabel.Carrier)
	decode[any](t, e.do("POST", "/manifests", "all", body), http.StatusCreated)
	check("manifest")
	track(closed, "IN_TRANSIT", "2026-11-22T05:00:00Z")
	check("tracking event of a manifested label")
}

// TestAppendLinked: marked label_urls become the labels' URLs, encoded as encoding/json
// encodes them; other escapes, and a mark anywhere but a label_url, are left as they are.
func TestAppendLinked(t *testing.T) {
	a := &API{baseURL: "https://x.test", docs: newDocumentState([]byte("k"))}
	url := func(id string) string { q, _ := json.Marshal(a.labelURL(id)); return string(q) }
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`{"label_url":"\u0000L1"}`, `{"label_url":` + url("L1") + `}`},
		{`[{"label_url":"\u0000L1"},{"label_url":"\u0000L2"}]`, `[{"label_url":` + url("L1") + `},{"label_url":` + url("L2") + `}]`},
		{`{"a":"q\"\\\u0000","label_url":"\u0000L1"}`, `{"a":"q\"\\\u0000","label_url":` + url("L1") + `}`},
		{`{"note":"\u0000L1"}`, `{"note":"\u0000L1"}`},
		{`{"a":"\\","label_url":"\u0000L1"}`, `{"a":"\\","label_url":` + url("L1") + `}`},
		{`{"label_url":"\u0000L1`, `{"label_url":"\u0000L1`},
		{`{"label_url":null}`, `{"label_url":null}`},
	} {
		if got := string(a.appendLinked(nil, tc.in)); got != tc.want {
			t.Errorf("appendLinked(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	for _, s := range []string{"https://x.test/a", "a&b<c>", "é\"\\\n"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}
