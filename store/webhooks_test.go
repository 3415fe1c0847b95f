package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
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
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
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
	if _, err := webhook.Update(ctx, db, acct.ID, parked.ID, webhook.Change{Active: &off}); err != nil {
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

// TestDueWebhookEventsByAccount: the due scan takes accounts longest-waiting first, up to
// perAccount records each, account after account (the worker interleaves them), skipping
// excluded accounts and subscriptions.
func TestDueWebhookEventsByAccount(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	base := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	clock := base
	db.Now = func() time.Time { return clock }
	var accts, subs []string
	for i, name := range []string{"a", "b", "c"} {
		acct, err := db.CreateAccount(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := db.CreateWebhookSubscription(ctx, acct.ID, "https://h.example/", webhook.TopicLabelVoided, true)
		if err != nil {
			t.Fatal(err)
		}
		accts, subs = append(accts, acct.ID), append(subs, s.ID)
		for range 5 - i { // a has 5 records, b 4, c 3; a's are oldest
			clock = clock.Add(time.Second)
			if err := db.EmitWebhookEvent(ctx, acct.ID, webhook.TopicLabelVoided, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := clock.Add(time.Minute)
	accountsOf := func(cs []webhook.Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, map[string]string{accts[0]: "a", accts[1]: "b", accts[2]: "c"}[c.AccountID])
		}
		return out
	}
	tests := []struct {
		name                 string
		exclude, excludeSubs []string
		perAccount, accounts int
		want                 []string
	}{
		{"all", nil, nil, 2, 10, []string{"a", "a", "b", "b", "c", "c"}},
		{"two accounts", nil, nil, 3, 2, []string{"a", "a", "a", "b", "b", "b"}},
		{"account excluded", []string{accts[0]}, nil, 2, 10, []string{"b", "b", "c", "c"}},
		{"subscription excluded", nil, []string{subs[1]}, 1, 10, []string{"a", "c"}},
	}
	for _, tt := range tests {
		cs, err := db.DueWebhookEvents(ctx, now, tt.exclude, tt.excludeSubs, tt.perAccount, tt.accounts)
		if err != nil {
			t.Fatal(err)
		}
		if got := accountsOf(cs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: accounts %v; want %v", tt.name, got, tt.want)
		}
	}
	// Nothing is due before its time, and a deactivated subscription's records are parked.
	if cs, _ := db.DueWebhookEvents(ctx, base, nil, nil, 10, 10); len(cs) != 0 {
		t.Errorf("before any record is due: %d candidates; want 0", len(cs))
	}
	off := false
	if _, err := webhook.Update(ctx, db, accts[0], subs[0], webhook.Change{Active: &off}); err != nil {
		t.Fatal(err)
	}
	cs, _ := db.DueWebhookEvents(ctx, now, nil, nil, 1, 10)
	if got := accountsOf(cs); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("with a's subscription inactive: accounts %v; want [b c]", got)
	}
}

// TestDueWebhookEventsManyAccounts: Drain asks for every account; more than one query's worth.
func TestDueWebhookEventsManyAccounts(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	for i := range 2*dueChunk + 7 {
		acct, err := db.CreateAccount(ctx, fmt.Sprintf("acct-%d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateWebhookSubscription(ctx, acct.ID, "https://h.example/", webhook.TopicLabelVoided, true); err != nil {
			t.Fatal(err)
		}
		if err := db.EmitWebhookEvent(ctx, acct.ID, webhook.TopicLabelVoided, nil); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := db.DueWebhookEvents(ctx, time.Now().Add(time.Hour), nil, nil, 1<<30, 1<<30)
	if err != nil || len(cs) != 2*dueChunk+7 {
		t.Errorf("DueWebhookEvents = %d candidates, %v; want %d", len(cs), err, 2*dueChunk+7)
	}
}

// TestSubscribed: the RETURNING expression a purchase reads instead of emit's query is true for
// an account with an active subscription to the topic, and only for it.
func TestSubscribed(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	a, b, c := openShipmentAt(t, db, "a"), openShipmentAt(t, db, "b"), openShipmentAt(t, db, "c")
	for _, s := range []struct {
		account, topic string
		active         bool
	}{{a.AccountID, "LABEL_PURCHASED", true}, {b.AccountID, "LABEL_PURCHASED", false}, {b.AccountID, webhook.TopicLabelTrackingUpdated, true}} {
		if _, err := db.CreateWebhookSubscription(ctx, s.account, "https://example.com/h", s.topic, s.active); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		s    *shipping.Shipment
		want bool
	}{{a, true}, {b, false}, {c, false}} {
		var got bool
		var args []any
		query := `SELECT ` + subscribed("shipments", &args, webhook.TopicLabelPurchased) + ` FROM shipments WHERE id = ` + arg(&args, tc.s.ID)
		err := db.r.QueryRowContext(ctx, query, args...).Scan(&got)
		if err != nil || got != tc.want {
			t.Errorf("account %s: subscribed = %v, %v; want %v", tc.s.AccountID, got, err, tc.want)
		}
	}
}
