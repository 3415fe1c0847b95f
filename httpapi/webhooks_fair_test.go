package httpapi

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/webhook"
)

// TestWebhookFairAcrossAccounts runs the real worker loop with the default capacity while
// account acme has 8 receivers that never answer, each with a backlog, and/or a fan-out of one
// event to 10,000 subscriptions: the other account's events are still delivered within 2 s.
func TestWebhookFairAcrossAccounts(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10,000 subscriptions")
	}
	for _, tt := range []struct {
		name      string
		hang, fan bool
	}{{"hanging receivers and fan-out", true, true}, {"fan-out", false, true}, {"hanging receivers", true, false}} {
		t.Run(tt.name, func(t *testing.T) { testFairness(t, tt.hang, tt.fan) })
	}
}

func testFairness(t *testing.T, hanging, fanOut bool) {
	e := newEnv(t)
	w := e.api.webhooks.worker
	w.Timeout, w.PollInterval = time.Minute, 50*time.Millisecond
	w.Init() // the defaults: Concurrency, PerAccount, PerSubscription
	share := w.PerAccount
	release := make(chan struct{})
	hang := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	var fanned atomic.Int64
	fan := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		fanned.Add(1)
		time.Sleep(20 * time.Millisecond) // a receiver that takes its time
	})
	b := newReceiver(t, nil)

	ctx := context.Background()
	acme := e.accounts["acme"].ID
	if hanging {
		for i := range 8 {
			if _, err := e.db.CreateWebhookSubscription(ctx, acme, hang.URL+"/"+string(rune('a'+i)), webhook.TopicLabelVoided, true); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			e.emit("acme", webhook.TopicLabelVoided, nil)
		}
	}
	if fanOut {
		// One statement writes them (through the test's own connection: 10,000 API calls
		// would take the test's whole budget).
		_, err := e.sql.ExecContext(ctx, `WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
			INSERT INTO webhook_subscriptions (id, account_id, url, topic, is_active, secret, created_at, updated_at)
			SELECT 'fan-' || i, $1, $2, $3, $4, $5, $6, $6 FROM n`,
			acme, fan.URL, webhook.TopicLabelInTransit, true, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", testStart.UnixMicro())
		if err != nil {
			t.Fatal(err)
		}
		e.emit("acme", webhook.TopicLabelInTransit, map[string]string{"tracking_code": "FAN"})
	}
	sub := e.subscribe("other", b.URL, webhook.TopicLabelInTransit)

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.api.Run(runCtx) }()
	defer func() {
		close(release)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	// Let acme's receivers take what they can, then time the other account's deliveries.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if (!hanging || len(hang.deliveries()) >= share) && (hanging || fanned.Load() > 0) {
			break
		}
	}
	// The other account's events happen later than acme's backlog, as they would.
	e.setClock(testStart.Add(time.Second))
	for i := range 3 {
		e.emit("other", webhook.TopicLabelInTransit, map[string]int{"n": i})
		sent := time.Now()
		for len(b.deliveries()) <= i && time.Since(sent) < 5*time.Second {
			time.Sleep(5 * time.Millisecond)
		}
		lat := time.Since(sent)
		t.Logf("other account's event %d delivered after %v (hanging deliveries %d, fan-out deliveries %d)",
			i, lat.Round(time.Millisecond), len(hang.deliveries()), fanned.Load())
		if len(b.deliveries()) <= i || lat > 2*time.Second {
			t.Fatalf("the other account's event %d took %v; want it within 2 s", i, lat)
		}
	}
	if n := len(hang.deliveries()); n > share {
		t.Errorf("acme's hanging receivers got %d deliveries; want at most %d (its share)", n, share)
	}
	if !hanging && fanned.Load() == 0 {
		t.Errorf("acme's fan-out got nowhere")
	}
	if evs := e.events("other", sub.ID, ""); len(evs) != 3 {
		t.Errorf("the other account has %d event records; want 3", len(evs))
	}
}
