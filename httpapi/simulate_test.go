package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// simulatorAPI is a second API over the env's database with the tracking simulator on. A new
// one stands for a restarted server: the API keeps nothing in memory the simulator needs.
func (e *testEnv) simulatorAPI(t *testing.T, step time.Duration) *API {
	t.Helper()
	api, err := New(Config{DB: e.db, BaseURL: e.url, WebhookAllowPrivate: true, SimulateTracking: step})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

type labelAnswer struct {
	Data struct {
		ID     string  `json:"id"`
		Status string  `json:"status"`
		Sub    *string `json:"substatus"`
	} `json:"data"`
}

type trackingAnswer struct {
	Data []shipping.TrackingEvent `json:"data"`
}

// TestSimulateTracking buys a label with the simulator on and follows it step by step, with a
// restart mid-way: it reaches DELIVERED through the operator feed's path, so its postage is
// billed and the webhook events are emitted and delivered.
func TestSimulateTracking(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	inTransit := e.subscribe("all", rc.URL+"/in-transit", webhook.TopicLabelInTransit)
	updated := e.subscribe("all", rc.URL+"/updated", webhook.TopicLabelTrackingUpdated)
	const step = 10 * time.Minute
	sim := e.simulatorAPI(t, step)
	ctx := context.Background()

	s := e.createShipment(t, "CHEAPEST", "PDF")
	bought := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	label := bought.Data.ShippingLabel.ID
	status := func() string {
		t.Helper()
		return decode[labelAnswer](t, e.do("GET", "/shipping_labels/"+label, "all", nil), http.StatusOK).Data.Status
	}

	// Not yet a step after the purchase: nothing moves, and without the simulator nothing ever does.
	e.setClock(testStart.Add(step - time.Second))
	if err := sim.drain(ctx); err != nil {
		t.Fatal(err)
	}
	e.setClock(testStart.Add(100 * step))
	e.drain()
	if got := status(); got != shipping.LabelPreTransit {
		t.Fatalf("before the first step (and with the simulator off) the label is %s; want PRE_TRANSIT", got)
	}

	// One step after the purchase: picked up.
	e.setClock(testStart.Add(step))
	if err := sim.drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != shipping.LabelInTransit {
		t.Fatalf("one step after the purchase the label is %s; want IN_TRANSIT", got)
	}

	// A restart: a new API carries on from the stored status and last event time.
	sim = e.simulatorAPI(t, step)
	e.setClock(testStart.Add(2 * step))
	if err := sim.drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != shipping.LabelOutForDelivery {
		t.Fatalf("two steps after the purchase (after a restart) the label is %s; want OUT_FOR_DELIVERY", got)
	}
	e.setClock(testStart.Add(4 * step))
	for range 2 { // a missed delivery takes one step more
		if err := sim.drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := status(); got != shipping.LabelDelivered {
		t.Fatalf("four steps after the purchase the label is %s; want DELIVERED", got)
	}

	// The events are the simulator's, one step apart.
	evs := decode[trackingAnswer](t, e.do("GET", "/shipping_labels/"+label+"/tracking_events", "all", nil), http.StatusOK).Data
	if len(evs) < 3 || len(evs) > 4 {
		t.Fatalf("%d tracking events; want 3 (or 4 with a missed delivery)", len(evs))
	}
	for i, ev := range evs {
		if ev.Source != shipping.SimulatedSource || !ev.OccurredAt.Equal(testStart.Add(time.Duration(i+1)*step)) {
			t.Errorf("event %d: %s at %v from %q; want from the simulator at %v", i, ev.Status, ev.OccurredAt, ev.Source, testStart.Add(time.Duration(i+1)*step))
		}
	}

	// Billed once, at delivery.
	var items int
	if err := e.sql.QueryRow(`SELECT COUNT(*) FROM billing_line_items WHERE label_id = $1`, label).Scan(&items); err != nil {
		t.Fatal(err)
	}
	if items != 1 {
		t.Errorf("%d line items for the delivered label; want 1 (POSTAGE)", items)
	}

	// Webhooks: one LABEL_IN_TRANSIT, one LABEL_TRACKING_UPDATED per event, delivered.
	e.drain()
	if n := len(e.events("all", inTransit.ID, "?status=DELIVERED")); n != 1 {
		t.Errorf("%d LABEL_IN_TRANSIT events delivered; want 1", n)
	}
	if n := len(e.events("all", updated.ID, "?status=DELIVERED")); n != len(evs) {
		t.Errorf("%d LABEL_TRACKING_UPDATED events delivered; want %d", n, len(evs))
	}
	if n := len(rc.deliveries()); n != 1+len(evs) {
		t.Errorf("the receiver got %d deliveries; want %d", n, 1+len(evs))
	}

	// Finished: nothing more happens.
	e.setClock(testStart.Add(100 * step))
	if err := sim.drain(ctx); err != nil {
		t.Fatal(err)
	}
	if evs2 := decode[trackingAnswer](t, e.do("GET", "/shipping_labels/"+label+"/tracking_events", "all", nil), http.StatusOK).Data; len(evs2) != len(evs) {
		t.Errorf("a delivered label got %d more events", len(evs2)-len(evs))
	}
}

// TestSimulateTrackingCatchesUp: after a long downtime one pass brings a label to its end,
// each event dated one step after the last; voided labels and an operator's exception are left
// alone.
func TestSimulateTrackingCatchesUp(t *testing.T) {
	e := newEnv(t)
	const step = time.Minute
	buy := func() shipmentAnswer {
		s := e.createShipment(t, "CHEAPEST", "PDF")
		return decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	}
	late, voided, lost := buy(), buy(), buy()
	if w := e.do("PUT", "/shipments/"+voided.Data.ID+"/cancel", "all", nil); w.Code != http.StatusOK {
		t.Fatalf("cancel = %d %s", w.Code, w.Body)
	}
	if w := e.do("POST", "/admin/tracking_events", "admin", map[string]any{"tracking_code": lost.Data.ShippingLabel.TrackingCode,
		"status": "DELIVERY_EXCEPTION", "substatus": "LOST", "message": "Lost", "occurred_at": "2026-11-22T03:42:10Z"}); w.Code != http.StatusCreated {
		t.Fatalf("POST /admin/tracking_events = %d %s", w.Code, w.Body)
	}
	e.setClock(testStart.Add(24 * time.Hour))
	if err := e.simulatorAPI(t, step).drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{late.Data.ShippingLabel.ID: "DELIVERED", voided.Data.ShippingLabel.ID: "VOIDED", lost.Data.ShippingLabel.ID: "DELIVERY_EXCEPTION"}
	for id, status := range want {
		if got := decode[labelAnswer](t, e.do("GET", "/shipping_labels/"+id, "all", nil), http.StatusOK).Data.Status; got != status {
			t.Errorf("label %s is %s after a day; want %s", id, got, status)
		}
	}
	evs := decode[trackingAnswer](t, e.do("GET", "/shipping_labels/"+late.Data.ShippingLabel.ID+"/tracking_events", "all", nil), http.StatusOK).Data
	if last := evs[len(evs)-1]; !last.OccurredAt.Equal(testStart.Add(time.Duration(len(evs)) * step)) {
		t.Errorf("the last event occurred at %v; want %d steps after the purchase", last.OccurredAt, len(evs))
	}
}
