package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/waybill/waybill/webhook"
)

// TestWebhookPatchedURLAppliesToPending: a record that failed at the old URL is retried at the
// URL the subscription was PATCHed to, and its last_error clears once delivered.
func TestWebhookPatchedURLAppliesToPending(t *testing.T) {
	e := newEnv(t)
	old := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	moved := newReceiver(t, nil)
	sub := e.subscribe("all", old.URL+"/old", webhook.TopicLabelVoided)
	e.emit("acme", webhook.TopicLabelVoided, map[string]string{"tracking_code": "T1"})
	e.drain()
	ev := e.events("all", sub.ID, "")[0]
	if ev.Status != webhook.StatusPending || ev.LastError == nil || *ev.LastError != "HTTP 500" {
		t.Fatalf("after a 500: %s, last_error %v; want PENDING, HTTP 500", ev.Status, ev.LastError)
	}

	decode[subscriptionAnswer](t, e.do("PATCH", "/webhooks/"+sub.ID, "all", map[string]any{"url": moved.URL + "/new"}), 200)
	if ev := e.events("all", sub.ID, "")[0]; ev.URL != moved.URL+"/new" {
		t.Errorf("pending record url = %s after PATCH; want %s", ev.URL, moved.URL+"/new")
	}
	e.setClock(testStart.Add(10 * time.Second))
	e.drain()
	if n, m := len(old.deliveries()), len(moved.deliveries()); n != 1 || m != 1 {
		t.Fatalf("old URL got %d attempts, new URL %d; want 1 and 1", n, m)
	}
	ev = e.events("all", sub.ID, "")[0]
	if ev.Status != webhook.StatusDelivered || ev.LastError != nil || ev.URL != moved.URL+"/new" || ev.Attempts != 2 {
		t.Errorf("record = %s, last_error %v, url %s, %d attempts; want DELIVERED, null, the new URL, 2", ev.Status, ev.LastError, ev.URL, ev.Attempts)
	}
}

// TestWebhookParkedWhileInactive: records of a deactivated subscription are not delivered,
// whatever their due time, and are delivered once it is active again.
func TestWebhookParkedWhileInactive(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	sub := e.subscribe("all", rc.URL, webhook.TopicLabelVoided)
	e.emit("acme", webhook.TopicLabelVoided, nil)
	e.emit("acme", webhook.TopicLabelVoided, nil)
	decode[subscriptionAnswer](t, e.do("PATCH", "/webhooks/"+sub.ID, "all", map[string]any{"is_active": false}), 200)
	e.setClock(testStart.Add(time.Hour))
	e.drain()
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("an inactive subscription got %d deliveries; want 0", n)
	}
	var due int
	if err := e.sql.QueryRow(`SELECT COUNT(*) FROM webhook_events WHERE due_at IS NOT NULL`).Scan(&due); err != nil || due != 0 {
		t.Errorf("%d parked records are on the due index (%v); want 0", due, err)
	}
	decode[subscriptionAnswer](t, e.do("PATCH", "/webhooks/"+sub.ID, "all", map[string]any{"is_active": true}), 200)
	e.drain()
	if n := len(rc.deliveries()); n != 2 {
		t.Errorf("after reactivation the receiver got %d deliveries; want 2", n)
	}
	for _, ev := range e.events("all", sub.ID, "") {
		if ev.Status != webhook.StatusDelivered {
			t.Errorf("record %s is %s after reactivation; want DELIVERED", ev.ID, ev.Status)
		}
	}
}
