package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/waybill/waybill/webhook"
)

// TestWebhookTopicZIPCoverageUpdated: a rate shopping profile change to zip_coverage reaches
// every account subscribed to ZIP_COVERAGE_UPDATED, through the outbox, signed and delivered;
// a change that leaves zip_coverage alone emits nothing.
func TestWebhookTopicZIPCoverageUpdated(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	acme := e.subscribe("all", rc.URL+"/acme", webhook.TopicZIPCoverageUpdated)
	other := e.subscribe("other", rc.URL+"/other", webhook.TopicZIPCoverageUpdated)
	e.subscribe("all", rc.URL+"/labels", webhook.TopicLabelPurchased)

	profile := func(name string, zips ...string) map[string]any {
		return map[string]any{"name": name, "carriers": []string{"POSTLINE"}, "zip_coverage": map[string]any{"POSTLINE": zips}}
	}
	decode[map[string]any](t, e.do("PUT", "/admin/rate_shopping_profiles/west", "admin", profile("West", "900-961")), 201)
	decode[map[string]any](t, e.do("PUT", "/admin/rate_shopping_profiles/west", "admin", profile("West coast", "900-961")), 200)
	e.drain()

	got := rc.deliveries()
	if len(got) != 2 {
		t.Fatalf("receiver got %d deliveries; want 2 (one per subscribed account)", len(got))
	}
	for _, sub := range []subscriptionJSON{acme, other} {
		token := "all"
		if sub.ID == other.ID {
			token = "other"
		}
		evs := e.events(token, sub.ID, "")
		if len(evs) != 1 || evs[0].Status != webhook.StatusDelivered || evs[0].Topic != webhook.TopicZIPCoverageUpdated {
			t.Fatalf("subscription %s records = %+v; want one DELIVERED ZIP_COVERAGE_UPDATED", sub.URL, evs)
		}
		var p struct {
			ProfileKey  string              `json:"profile_key"`
			ZipCoverage map[string][]string `json:"zip_coverage"`
		}
		if err := json.Unmarshal(evs[0].Payload, &p); err != nil || p.ProfileKey != "west" || len(p.ZipCoverage["POSTLINE"]) != 1 {
			t.Errorf("payload = %s; want profile_key west with its zip_coverage", evs[0].Payload)
		}
	}
	for _, d := range got {
		sub := acme
		if d.Header.Get("webhook-id") == "" {
			t.Fatalf("delivery without webhook-id")
		}
		var body struct {
			SubscriptionID string `json:"webhook_subscription_id"`
		}
		json.Unmarshal(d.Body, &body)
		if body.SubscriptionID == other.ID {
			sub = other
		}
		if !webhook.VerifyStandard("whsec_"+sub.Secret, d.Header.Get("webhook-id"), testStart.Unix(), d.Body, d.Header.Get("webhook-signature")) {
			t.Errorf("delivery to %s: signature does not verify with its subscription's secret", sub.URL)
		}
	}
}
