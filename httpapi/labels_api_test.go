package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
)

// shipmentBody is a POST /shipments body from Los Angeles to New York.
func shipmentBody(strategy, format string) string {
	return `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
	 "destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
	 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"},
	 "rate_shopping_strategy": "` + strategy + `", "label_format": "` + format + `"}`
}

type shipmentAnswer struct {
	Data struct {
		ID            string `json:"id"`
		Status        string `json:"status"`
		ShippingRates []struct {
			ID      string `json:"id"`
			Carrier string `json:"carrier"`
		} `json:"shipping_rates"`
		ShippingLabel *struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			TrackingCode string `json:"tracking_code"`
			Carrier      string `json:"carrier"`
			Service      string `json:"service"`
			LabelFile    string `json:"label_file"`
			LabelURL     string `json:"label_url"`
		} `json:"shipping_label"`
	} `json:"data"`
}

func (e *testEnv) createShipment(t testing.TB, strategy, format string) shipmentAnswer {
	t.Helper()
	return decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", shipmentBody(strategy, format)), http.StatusCreated)
}

// countLabels counts the shipment's labels straight from the database.
func (e *testEnv) countLabels(t *testing.T, shipmentID string) int {
	t.Helper()
	var n int
	if err := e.sql.QueryRow(`SELECT COUNT(*) FROM shipping_labels WHERE shipment_id = $1`, shipmentID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// buyRequest sends a buy with an optional Idempotency-Key.
func (e *testEnv) buyRequest(path, key string) (int, http.Header, []byte) {
	req := httptest.NewRequest("POST", path, nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	return w.Code, w.Header(), w.Body.Bytes()
}

// TestBuyConcurrent races buyers of every rate of one shipment: exactly one buys, the others
// get 422 invalid_state, and the shipment has exactly one label.
func TestBuyConcurrent(t *testing.T) {
	e := newEnv(t)
	s := e.createShipment(t, "ALL", "PDF")
	if len(s.Data.ShippingRates) < 2 {
		t.Fatalf("want several rates to race on; got %d", len(s.Data.ShippingRates))
	}
	const buyers = 24
	codes := make([]int, buyers)
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rate := s.Data.ShippingRates[i%len(s.Data.ShippingRates)].ID
			codes[i], _, _ = e.buyRequest("/shipments/"+s.Data.ID+"/rates/"+rate, "")
		}()
	}
	wg.Wait()
	won := 0
	for i, c := range codes {
		switch c {
		case http.StatusOK:
			won++
		case http.StatusUnprocessableEntity:
		default:
			t.Errorf("buyer %d got %d; want 200 or 422", i, c)
		}
	}
	if won != 1 {
		t.Errorf("%d buyers succeeded; want exactly 1", won)
	}
	if n := e.countLabels(t, s.Data.ID); n != 1 {
		t.Errorf("shipment has %d labels; want 1", n)
	}
}

// TestBuyConcurrentIdempotent races retries of one request under one Idempotency-Key: every
// one answers 200 with the same label, all but one as replays, and one label exists.
func TestBuyConcurrentIdempotent(t *testing.T) {
	e := newEnv(t)
	s := e.createShipment(t, "ALL", "PDF")
	path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID
	const retries = 16
	type result struct {
		code     int
		replayed bool
		body     []byte
	}
	results := make([]result, retries)
	var wg sync.WaitGroup
	for i := range retries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, h, body := e.buyRequest(path, "retry-key-1")
			results[i] = result{code, h.Get("Idempotent-Replayed") == "true", body}
		}()
	}
	wg.Wait()
	replays := 0
	for i, r := range results {
		if r.code != http.StatusOK {
			t.Fatalf("retry %d got %d: %s", i, r.code, r.body)
		}
		if !bytes.Equal(r.body, results[0].body) {
			t.Errorf("retry %d answered\n%s\nwant the same as retry 0:\n%s", i, r.body, results[0].body)
		}
		if r.replayed {
			replays++
		}
	}
	if replays != retries-1 {
		t.Errorf("%d answers were replays; want %d", replays, retries-1)
	}
	if n := e.countLabels(t, s.Data.ID); n != 1 {
		t.Errorf("shipment has %d labels; want 1", n)
	}
}

// sampleTracking is the tracking scheme of a sample carrier.
func sampleTracking(t *testing.T, code string) *carrier.TrackingScheme {
	for _, c := range carrier.SampleCards() {
		if c.Code == code {
			return &c.Tracking
		}
	}
	t.Fatalf("no sample carrier %s", code)
	return nil
}

// TestTrackingCodes checks the codes the sample carriers give bought labels: the carrier's
// serials in order, in its scheme, and unique.
func TestTrackingCodes(t *testing.T) {
	e := newEnv(t)
	seen := map[string]bool{}
	carriers := map[string]bool{}
	for range 3 {
		s := e.createShipment(t, "ALL", "PDF")
		for _, r := range s.Data.ShippingRates {
			if carriers[r.Carrier] {
				continue
			}
			carriers[r.Carrier] = true
			b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+r.ID, "all", nil), http.StatusOK)
			l := b.Data.ShippingLabel
			if l == nil {
				t.Fatal("bought shipment has no label")
			}
			code := l.TrackingCode
			if want := sampleTracking(t, l.Carrier).Number(l.Service, 1); code != want {
				t.Errorf("%s tracking code %q; want %q, the first serial of the carrier's range", l.Carrier, code, want)
			}
			if seen[code] {
				t.Errorf("tracking code %q issued twice", code)
			}
			seen[code] = true
			break
		}
	}
	prefixes := map[string]string{}
	for code := range seen {
		prefixes[code[:2]] = code
	}
	if len(prefixes) != len(seen) {
		t.Errorf("carriers share tracking prefixes: %v", seen)
	}
}

// TestInlineLabelIsTheDocument: label_file decodes to exactly what label_url serves, for both
// formats, and the document shows the tracking code.
func TestInlineLabelIsTheDocument(t *testing.T) {
	for _, format := range []string{"PDF", "ZPL", "PNG"} {
		t.Run(format, func(t *testing.T) {
			e := newEnv(t)
			s := e.createShipment(t, "CHEAPEST", format)
			b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID+"?inline_label=true", "all", nil), http.StatusOK)
			l := b.Data.ShippingLabel
			inline, err := base64.StdEncoding.DecodeString(l.LabelFile)
			if err != nil {
				t.Fatalf("label_file is not base64: %v", err)
			}
			path := strings.TrimPrefix(l.LabelURL, e.url)
			w := e.do("GET", path, "all", nil)
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s = %d", path, w.Code)
			}
			if !bytes.Equal(w.Body.Bytes(), inline) {
				t.Errorf("label_file differs from the served document")
			}
			switch format {
			case "PDF":
				if want := []byte("(Ground Advantage)"); !bytes.Contains(inline, want) {
					t.Errorf("PDF document lacks %s", want)
				}
			case "ZPL":
				if want := []byte("^BCN,160,N,N,N,A^FD" + l.TrackingCode + "^FS"); !bytes.Contains(inline, want) {
					t.Errorf("ZPL document lacks %s", want)
				}
			case "PNG":
				cfg, err := png.DecodeConfig(bytes.NewReader(inline))
				if err != nil || cfg.Width != 812 || cfg.Height != 1218 {
					t.Errorf("PNG document is %dx%d, %v; want 812x1218", cfg.Width, cfg.Height, err)
				}
				if ct := w.Header().Get("Content-Type"); ct != "image/png" {
					t.Errorf("PNG document served as %q; want image/png", ct)
				}
			}
			// Drawn again from the stored data, the document is the same bytes.
			if again := e.do("GET", path, "all", nil); !bytes.Equal(again.Body.Bytes(), inline) {
				t.Error("the document changed between two requests")
			}
			// Voided, it is drawn again, marked VOID.
			decode[shipmentAnswer](t, e.do("PUT", "/shipments/"+s.Data.ID+"/cancel", "all", nil), http.StatusOK)
			voided := e.do("GET", path, "all", nil).Body.Bytes()
			if bytes.Equal(voided, inline) {
				t.Error("the voided label's document is the same as before")
			}
			if format != "PNG" && !bytes.Contains(voided, []byte("VOID")) {
				t.Errorf("the voided label's %s document does not say VOID", format)
			}
		})
	}
}

// flakyCarrier is a host's Go carrier, FLAKY, quoting as the sample POSTLINE does, whose
// purchases or voids fail while told to.
type flakyCarrier struct {
	shipping.Carrier
	failPurchase, failVoid *atomic.Bool
}

func (c flakyCarrier) Name() string { return "FLAKY" }

func (c flakyCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	if c.failPurchase.Load() {
		return "", errors.New("carrier API down: secret-account-number 12345")
	}
	return "FK-" + req.LabelID[len(req.LabelID)-8:], nil
}

func (c flakyCarrier) Void(ctx context.Context, code string) error {
	if c.failVoid.Load() {
		return errors.New("carrier API down")
	}
	return nil
}

// useFlakyCarrier serves the env from a second API over its database with the Go carrier
// FLAKY, which the profile "flaky" shops, and returns the switches of its failures.
func (e *testEnv) useFlakyCarrier(t *testing.T) (failPurchase, failVoid *atomic.Bool) {
	failPurchase, failVoid = new(atomic.Bool), new(atomic.Bool)
	for _, c := range carrier.SampleCarriers() {
		if c.Name() == "POSTLINE" {
			api, err := New(Config{DB: e.db, BaseURL: e.url, Carriers: []shipping.Carrier{flakyCarrier{c, failPurchase, failVoid}}})
			if err != nil {
				t.Fatal(err)
			}
			e.api = api
		}
	}
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/flaky", "admin", `{"name": "Flaky", "carriers": ["FLAKY"]}`), http.StatusCreated)
	return failPurchase, failVoid
}

// TestBuyCarrierFailure: a carrier that fails to buy leaves nothing behind — the shipment
// stays OPEN without a label, no LABEL_PURCHASED event, and the Idempotency-Key stays unused,
// so a retry under it buys. The carrier's message is not shown.
func TestBuyCarrierFailure(t *testing.T) {
	e := newEnv(t)
	failPurchase, _ := e.useFlakyCarrier(t)
	hook := decode[struct{ Data struct{ ID string } }](t, e.do("POST", "/webhooks", "all",
		`{"url": "https://hooks.example.com/bought", "topic": "LABEL_PURCHASED"}`), http.StatusCreated)
	s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all",
		strings.Replace(shipmentBody("CHEAPEST", "PDF"), "{", `{"rate_shopping_profile": "flaky", `, 1)), http.StatusCreated)
	path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID

	failPurchase.Store(true)
	code, _, body := e.buyRequest(path, "k1")
	if code != http.StatusBadGateway || !bytes.Contains(body, []byte(`"carrier_error"`)) || bytes.Contains(body, []byte("secret")) {
		t.Fatalf("buy with a failing carrier = %d %s; want 502 carrier_error without the carrier's message", code, body)
	}
	got := decode[shipmentAnswer](t, e.do("GET", "/shipments/"+s.Data.ID, "all", nil), http.StatusOK)
	if got.Data.Status != shipping.StatusOpen || got.Data.ShippingLabel != nil || e.countLabels(t, s.Data.ID) != 0 {
		t.Fatalf("after a failed buy the shipment is %s with label %v; want OPEN without one", got.Data.Status, got.Data.ShippingLabel)
	}
	events := decode[struct{ Data []any }](t, e.do("GET", "/webhooks/"+hook.Data.ID+"/events", "all", nil), http.StatusOK)
	if len(events.Data) != 0 {
		t.Errorf("a failed buy emitted %d events; want none", len(events.Data))
	}
	failPurchase.Store(false)
	code, h, body := e.buyRequest(path, "k1")
	if code != http.StatusOK || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry under the same key = %d (replayed %q) %s; want a fresh 200", code, h.Get("Idempotent-Replayed"), body)
	}
	events = decode[struct{ Data []any }](t, e.do("GET", "/webhooks/"+hook.Data.ID+"/events", "all", nil), http.StatusOK)
	if len(events.Data) != 1 {
		t.Errorf("the buy emitted %d LABEL_PURCHASED events; want 1", len(events.Data))
	}
}

// TestCancelVoidFailure: a carrier that fails to void leaves the shipment purchased and the
// label PRE_TRANSIT.
func TestCancelVoidFailure(t *testing.T) {
	e := newEnv(t)
	_, failVoid := e.useFlakyCarrier(t)
	s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all",
		strings.Replace(shipmentBody("CHEAPEST", "PDF"), "{", `{"rate_shopping_profile": "flaky", `, 1)), http.StatusCreated)
	decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	failVoid.Store(true)
	if w := e.do("PUT", "/shipments/"+s.Data.ID+"/cancel", "all", nil); w.Code != http.StatusBadGateway {
		t.Fatalf("cancel with a failing void = %d %s; want 502", w.Code, w.Body)
	}
	got := decode[shipmentAnswer](t, e.do("GET", "/shipments/"+s.Data.ID, "all", nil), http.StatusOK)
	if got.Data.Status != shipping.StatusPurchased || got.Data.ShippingLabel.Status != shipping.LabelPreTransit {
		t.Errorf("after a failed void: shipment %s, label %s; want SHIPPING_LABEL_PURCHASED, PRE_TRANSIT",
			got.Data.Status, got.Data.ShippingLabel.Status)
	}
}

// TestGoCarrierNamedLikeStored: a host's Go carrier may not have a stored carrier's name.
func TestGoCarrierNamedLikeStored(t *testing.T) {
	e := newEnv(t)
	_, err := New(Config{DB: e.db, BaseURL: e.url, Carriers: carrier.SampleCarriers()[:1]})
	if err == nil || !strings.Contains(err.Error(), "POSTLINE") {
		t.Errorf("New with a Go carrier POSTLINE = %v; want an error naming it", err)
	}
}

// TestTrackingEventsAcrossAccounts: the operator feed finds any account's label by tracking
// code, and only that account sees the result.
func TestTrackingEventsAcrossAccounts(t *testing.T) {
	e := newEnv(t)
	w := e.do("POST", "/shipments", "other", shipmentBody("CHEAPEST", "PDF"))
	s := decode[shipmentAnswer](t, w, http.StatusCreated)
	b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "other", nil), http.StatusOK)
	l := b.Data.ShippingLabel
	body := fmt.Sprintf(`{"tracking_code": %q, "status": "IN_TRANSIT", "message": "Picked up", "occurred_at": "2026-11-22T09:00:00Z"}`, l.TrackingCode)
	decode[any](t, e.do("POST", "/admin/tracking_events", "admin", body), http.StatusCreated)
	list := decode[struct{ Data []any }](t, e.do("GET", "/shipping_labels/"+l.ID+"/tracking_events", "other", nil), http.StatusOK)
	if len(list.Data) != 1 {
		t.Errorf("owner sees %d events; want 1", len(list.Data))
	}
	if w := e.do("GET", "/shipping_labels/"+l.ID+"/tracking_events", "all", nil); w.Code != http.StatusNotFound {
		t.Errorf("another account reading the events = %d; want 404", w.Code)
	}
}

// TestIdempotencyKeyRetention: a key replays for 24 hours; once the pruner forgets it, a retry
// is executed again and, the shipment being bought already, answers 422 invalid_state — never a second label.
func TestIdempotencyKeyRetention(t *testing.T) {
	e := newEnv(t)
	s := e.createShipment(t, "CHEAPEST", "PDF")
	path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID
	if code, _, body := e.buyRequest(path, "k"); code != http.StatusOK {
		t.Fatalf("buy = %d %s", code, body)
	}
	e.setClock(testStart.Add(23 * time.Hour))
	e.drain()
	if code, h, _ := e.buyRequest(path, "k"); code != http.StatusOK || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry after 23 h = %d (replayed %q); want the 200 replay", code, h.Get("Idempotent-Replayed"))
	}
	e.setClock(testStart.Add(25 * time.Hour))
	e.drain()
	if code, _, body := e.buyRequest(path, "k"); code != http.StatusUnprocessableEntity {
		t.Errorf("retry after 25 h = %d %s; want 422 (key forgotten, shipment already bought)", code, body)
	}
	if n := e.countLabels(t, s.Data.ID); n != 1 {
		t.Errorf("shipment has %d labels; want 1", n)
	}
}

// TestDeliveredLabelMovesOnlyForward reproduces a bug: IN_TRANSIT 09:00, DELIVERED 10:00, then
// a PRE_TRANSIT report dated 11:00 once put the label back to PRE_TRANSIT, and cancel
// (200) voided a delivered label whose postage stayed billed. Now the label stays DELIVERED,
// cancel is 422 invalid_state, the postage is billed once, and every later event is still
// recorded and still emits LABEL_TRACKING_UPDATED.
func TestDeliveredLabelMovesOnlyForward(t *testing.T) {
	e := newEnv(t)
	e.subscribe("all", "http://127.0.0.1:9/hook", "LABEL_TRACKING_UPDATED")
	s := e.createShipment(t, "CHEAPEST", "PDF")
	b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	l := b.Data.ShippingLabel
	track := func(status, at string) {
		t.Helper()
		body := fmt.Sprintf(`{"tracking_code": %q, "status": %q, "message": "scan", "occurred_at": "2026-11-22T%s:00Z"}`, l.TrackingCode, status, at)
		decode[any](t, e.do("POST", "/admin/tracking_events", "admin", body), http.StatusCreated)
	}
	track("IN_TRANSIT", "09:00")
	track("DELIVERED", "10:00")
	track("PRE_TRANSIT", "11:00")
	w := e.do("PUT", "/shipments/"+s.Data.ID+"/cancel", "all", nil)
	if got := decode[struct{ Errors Error }](t, w, http.StatusUnprocessableEntity); got.Errors.Code != "invalid_state" {
		t.Errorf("cancel of a delivered label = %s; want invalid_state", w.Body)
	}
	track("RETURN_TO_SENDER", "12:00")
	got := decode[shipmentAnswer](t, e.do("GET", "/shipments/"+s.Data.ID, "all", nil), http.StatusOK)
	if got.Data.Status != shipping.StatusPurchased || got.Data.ShippingLabel.Status != shipping.LabelDelivered {
		t.Errorf("after the late events and the cancel: shipment %s, label %s; want SHIPPING_LABEL_PURCHASED, DELIVERED",
			got.Data.Status, got.Data.ShippingLabel.Status)
	}
	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := e.sql.QueryRow(query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT COUNT(*) FROM billing_line_items WHERE label_id = $1`, l.ID); n != 1 {
		t.Errorf("the label is billed %d times; want once", n)
	}
	if n := count(`SELECT COUNT(*) FROM tracking_events WHERE label_id = $1`, l.ID); n != 4 {
		t.Errorf("%d tracking events recorded; want all 4", n)
	}
	if n := count(`SELECT COUNT(*) FROM webhook_events WHERE topic = 'LABEL_TRACKING_UPDATED'`); n != 4 {
		t.Errorf("%d LABEL_TRACKING_UPDATED events; want one per tracking event (4)", n)
	}
	if n := count(`SELECT COUNT(*) FROM webhook_events WHERE topic = 'LABEL_VOIDED'`); n != 0 {
		t.Errorf("%d LABEL_VOIDED events; want none", n)
	}
}

// slowCarrier is FLAKY that answers a purchase only after hang is closed, and counts its voids.
type slowCarrier struct {
	flakyCarrier
	hang   chan struct{}
	voided *atomic.Int32
}

func (c slowCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	<-c.hang // deaf to ctx, as a carrier's client may be
	return c.flakyCarrier.Purchase(ctx, req)
}

func (c slowCarrier) Void(ctx context.Context, code string) error {
	c.voided.Add(1)
	return nil
}

// TestBuyCarrierTimeout: a carrier that does not answer within Config.CarrierTimeout fails the
// buy with 502 carrier_error, and meanwhile every other write goes on; the shipment stays OPEN,
// and the label the carrier sells late is voided by the label_voider worker.
func TestBuyCarrierTimeout(t *testing.T) {
	e := newEnv(t)
	e.useFlakyCarrier(t)
	c := slowCarrier{flakyCarrier{failPurchase: new(atomic.Bool), failVoid: new(atomic.Bool)}, make(chan struct{}), new(atomic.Int32)}
	for _, sample := range carrier.SampleCarriers() {
		if sample.Name() == "POSTLINE" {
			c.flakyCarrier.Carrier = sample
		}
	}
	api, err := New(Config{DB: e.db, BaseURL: e.url, Carriers: []shipping.Carrier{c}, CarrierTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.api = api
	body := strings.Replace(shipmentBody("CHEAPEST", "PDF"), "{", `{"rate_shopping_profile": "flaky", `, 1)
	s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", body), http.StatusCreated)
	bought := make(chan int, 1)
	go func() {
		code, _, _ := e.buyRequest("/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "k1")
		bought <- code
	}()
	time.Sleep(50 * time.Millisecond) // the buy waits on the carrier
	decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", body), http.StatusCreated)
	select {
	case code := <-bought:
		if code != http.StatusBadGateway {
			t.Fatalf("buy from a carrier past its deadline = %d; want 502", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the buy did not give up on the carrier")
	}
	got := decode[shipmentAnswer](t, e.do("GET", "/shipments/"+s.Data.ID, "all", nil), http.StatusOK)
	if got.Data.Status != shipping.StatusOpen || got.Data.ShippingLabel != nil {
		t.Fatalf("after the timeout the shipment is %s with label %v; want OPEN without one", got.Data.Status, got.Data.ShippingLabel)
	}
	close(c.hang) // the carrier sells the label after all
	for deadline := time.Now().Add(5 * time.Second); c.voided.Load() == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		e.drain()
	}
	if n := c.voided.Load(); n != 1 {
		t.Errorf("the label sold late was voided %d times; want once", n)
	}
}

// TestIdempotencyKeyDecidesFirst: a key already used answers for itself before the shipment it
// is sent with is looked at: reused for another request (even one naming no shipment of the
// account) is 422 idempotency_key_reused, and the same request replays.
func TestIdempotencyKeyDecidesFirst(t *testing.T) {
	e := newEnv(t)
	s := e.createShipment(t, "ALL", "PDF")
	path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID
	if code, _, body := e.buyRequest(path, "key-first"); code != http.StatusOK {
		t.Fatalf("buy: %d %s", code, body)
	}
	if code, h, body := e.buyRequest(path, "key-first"); code != http.StatusOK || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same buy again: %d %s; want its answer replayed", code, body)
	}
	for _, other := range []string{"/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[1].ID,
		"/shipments/00000000-0000-7000-8000-00000000ffff/rates/" + s.Data.ShippingRates[0].ID} {
		if code, _, body := e.buyRequest(other, "key-first"); code != http.StatusUnprocessableEntity ||
			!strings.Contains(string(body), `"idempotency_key_reused"`) {
			t.Errorf("POST %s under the used key: %d %s; want 422 idempotency_key_reused", other, code, body)
		}
	}
}

// TestBoughtShipmentHasEveryQuote: a purchase reads only the bought rate before the carrier
// call; every answer still shows the shipment with all its quotes, as GET does: the plain buy,
// the buy with the label document inlined, a replay under an Idempotency-Key, and a create
// that buys its cheapest rate.
func TestBoughtShipmentHasEveryQuote(t *testing.T) {
	e := newEnv(t)
	type answer struct {
		Data struct {
			ID            string            `json:"id"`
			ShippingRates []json.RawMessage `json:"shipping_rates"`
		} `json:"data"`
	}
	check := func(name string, w *httptest.ResponseRecorder, status int) {
		t.Helper()
		got := decode[answer](t, w, status)
		stored := decode[answer](t, e.do("GET", "/shipments/"+got.Data.ID, "all", nil), http.StatusOK)
		if len(got.Data.ShippingRates) < 2 || len(got.Data.ShippingRates) != len(stored.Data.ShippingRates) {
			t.Errorf("%s: answered %d quotes; GET shows %d (want at least 2)", name, len(got.Data.ShippingRates), len(stored.Data.ShippingRates))
		}
	}
	buy := func(path, key string) *httptest.ResponseRecorder {
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", shipmentBody("ALL", "PDF")), http.StatusCreated)
		req := httptest.NewRequest("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[1].ID+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.tokens["all"])
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, req)
		if key != "" {
			check("the first buy under a key", w, http.StatusOK)
			w = httptest.NewRecorder()
			e.api.ServeHTTP(w, req.Clone(req.Context()))
		}
		return w
	}
	check("a buy", buy("", ""), http.StatusOK)
	check("a buy with the label inlined", buy("?inline_label=true", ""), http.StatusOK)
	check("a replay under a key", buy("", "k-every-quote"), http.StatusOK)
	body := strings.Replace(shipmentBody("ALL", "PDF"), "{", `{"buy_cheapest_rate": true, `, 1)
	check("a create that buys", e.do("POST", "/shipments", "all", body), http.StatusCreated)
}
