package store

import (
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// TestClaimFindsRowsByKey: every queue's claim reads its due rows through an index and then
// updates each picked row found by its key; it never walks the queue's rows again to update
// them (an import claim cost 17 ms at 10,700 queued when the outer statement matched rows by
// status).
func TestClaimFindsRowsByKey(t *testing.T) {
	db := openTest(t)
	for _, tt := range []struct {
		name string
		q    queue
		want string // how the UPDATE finds a picked row
	}{
		{"expired imports", importQueue(claimExpired, []any{ingest.StatusProcessing, 1}, 2),
			"SEARCH order_imports USING INDEX sqlite_autoindex_order_imports_1 (id=?)"},
		{"queued imports", importQueue(claimQueued, []any{ingest.StatusQueued}, 2),
			"SEARCH order_imports USING INDEX sqlite_autoindex_order_imports_1 (id=?)"},
		{"batch items", batchItemQueue("a", shipping.ItemQueued, 0, 2),
			"SEARCH batch_items USING INDEX sqlite_autoindex_batch_items_1 (batch_id=? AND position=?)"},
		{"voids", voidQueue(1, 2),
			"SEARCH label_voids USING INDEX sqlite_autoindex_label_voids_1 (id=?)"},
		{"polls", pollQueue("a", []string{"ACME"}, 1, time.Hour, 2),
			"SEARCH shipping_labels USING INDEX sqlite_autoindex_shipping_labels_1 (id=?)"},
		{"webhook records", eventQueue(webhook.Candidate{SubscriptionID: "s", ID: "e"}, 1, 2, "t", "u"),
			"SEARCH webhook_events USING INDEX sqlite_autoindex_webhook_events_1 (subscription_id=? AND id=?)"},
	} {
		query, args := tt.q.statement(db.dialect, 32)
		plan := queryPlan(t, db, query, args...)
		if !strings.Contains(plan, "SCAN picked\n"+tt.want) {
			t.Errorf("%s: the UPDATE does not find its rows by key:\n%s", tt.name, plan)
		}
	}
}
