package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/waybill/waybill/webhook"
)

// TestWebhookTopicsLabels follows labels through buy, tracking and cancel and checks that each
// label topic is recorded in the change's transaction and delivered, signed, with the label
// payload (shipment_id, shipping_label_id, tracking_code, status, substatus, tracking_events).
func TestWebhookTopicsLabels(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	subs := map[string]subscriptionJSON{}
	for _, topic := range []string{webhook.TopicLabelPurchased, webhook.TopicLabelInTransit, webhook.TopicLabelTrackingUpdated, webhook.TopicLabelVoided} {
		subs[topic] = e.subscribe("all", rc.URL+"/"+topic, topic)
	}
	// Another account's subscriptions hear nothing of acme's labels.
	otherSub := e.subscribe("other", rc.URL+"/other", webhook.TopicLabelPurchased)

	type shipment struct {
		ID            string `json:"id"`
		ShippingLabel struct {
			ID           string `json:"id"`
			TrackingCode string `json:"tracking_code"`
		} `json:"shipping_label"`
	}
	buy := func() shipment {
		t.Helper()
		body := `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
			"destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
			"parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"},
			"buy_cheapest_rate": true}`
		return decode[struct{ Data shipment }](t, e.do("POST", "/shipments", "all", body), 201).Data
	}
	track := func(code, status, at string) {
		t.Helper()
		w := e.do("POST", "/admin/tracking_events", "admin", map[string]any{"tracking_code": code, "status": status,
			"occurred_at": at, "message": status})
		if w.Code != 201 {
			t.Fatalf("POST /admin/tracking_events %s = %d %s", status, w.Code, w.Body)
		}
	}
	moving := buy()
	track(moving.ShippingLabel.TrackingCode, "IN_TRANSIT", "2026-11-22T09:00:00Z")
	track(moving.ShippingLabel.TrackingCode, "OUT_FOR_DELIVERY", "2026-11-22T09:30:00Z")
	voided := buy()
	if w := e.do("PUT", "/shipments/"+voided.ID+"/cancel", "all", nil); w.Code != 200 {
		t.Fatalf("cancel = %d %s", w.Code, w.Body)
	}
	e.drain()

	want := []struct {
		topic   string
		label   shipment
		records int
		status  string // the label status in the latest record's payload
	}{
		{webhook.TopicLabelPurchased, voided, 2, "PRE_TRANSIT"},
		{webhook.TopicLabelInTransit, moving, 1, "IN_TRANSIT"},
		{webhook.TopicLabelTrackingUpdated, moving, 2, "OUT_FOR_DELIVERY"},
		{webhook.TopicLabelVoided, voided, 1, "VOIDED"},
	}
	for _, w := range want {
		sub := subs[w.topic]
		evs := e.events("all", sub.ID, "")
		if len(evs) != w.records {
			t.Errorf("%s: %d records; want %d", w.topic, len(evs), w.records)
			continue
		}
		for _, ev := range evs {
			if ev.Status != webhook.StatusDelivered || ev.Topic != w.topic {
				t.Errorf("%s record %s: %s %s; want DELIVERED", w.topic, ev.ID, ev.Topic, ev.Status)
			}
		}
		var p map[string]any
		if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p["shipment_id"] != w.label.ID || p["shipping_label_id"] != w.label.ShippingLabel.ID ||
			p["tracking_code"] != w.label.ShippingLabel.TrackingCode || p["status"] != w.status {
			t.Errorf("%s payload = %s; want shipment %s, label %s, %s, status %s", w.topic, evs[0].Payload,
				w.label.ID, w.label.ShippingLabel.ID, w.label.ShippingLabel.TrackingCode, w.status)
		}
		for _, k := range []string{"substatus", "tracking_events"} {
			if _, ok := p[k]; !ok {
				t.Errorf("%s payload lacks %s: %s", w.topic, k, evs[0].Payload)
			}
		}
	}
	if evs := e.events("other", otherSub.ID, ""); len(evs) != 0 {
		t.Errorf("another account's subscription got %d records of acme's labels; want 0", len(evs))
	}

	// Every delivery verifies under its own subscription's secret.
	secrets := map[string]string{}
	for _, s := range subs {
		secrets[s.ID] = s.Secret
	}
	got := rc.deliveries()
	if len(got) != 6 {
		t.Errorf("receiver got %d deliveries; want 6", len(got))
	}
	for _, d := range got {
		var body struct {
			SubscriptionID string `json:"webhook_subscription_id"`
		}
		json.Unmarshal(d.Body, &body)
		if !webhook.VerifyStandard("whsec_"+secrets[body.SubscriptionID], d.Header.Get("webhook-id"), testStart.Unix(), d.Body, d.Header.Get("webhook-signature")) {
			t.Errorf("delivery %s does not verify", d.Body)
		}
	}
}
