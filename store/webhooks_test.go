package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/waybill/waybill/webhook"
)

// parkedDB is a database holding 99,000 pending events parked on an inactive subscription,
// recorded while it was active and then deactivated, and 10 due events of an active one.
func parkedDB(tb testing.TB) *DB {
	tb.Helper()
	db := openTest(tb)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		tb.Fatal(err)
	}
	parked, err := db.CreateWebhookSubscription(ctx, acct.ID, "https://parked.example/", webhook.TopicLabelVoided, true)
	if err != nil {
		tb.Fatal(err)
	}
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		for range 99_000 {
			if err := db.emitEvent(ctx, tx, acct.ID, webhook.TopicLabelVoided, map[string]string{"tracking_code": "T"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	off := false
	if _, err := db.UpdateWebhookSubscription(ctx, acct.ID, parked.ID, nil, &off); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.CreateWebhookSubscription(ctx, acct.ID, "https://live.example/", webhook.TopicLabelInTransit, true); err != nil {
		tb.Fatal(err)
	}
	for range 10 {
		if err := db.EmitWebhookEvent(ctx, acct.ID, webhook.TopicLabelInTransit, nil); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

// BenchmarkDueWebhookEventsParked measures one poll of the delivery loop (the due-events
// scan) with 99,000 events parked on an inactive subscription.
func BenchmarkDueWebhookEventsParked(b *testing.B) {
	db := parkedDB(b)
	ctx := context.Background()
	now := time.Now().Add(time.Hour)
	b.ResetTimer()
	for b.Loop() {
		cs, err := db.DueWebhookEvents(ctx, now, nil, nil, 4, 32)
		if err != nil {
			b.Fatal(err)
		}
		if len(cs) != 4 {
			b.Fatalf("%d candidates; want 4 (the live subscription's, capped per account)", len(cs))
		}
	}
}
