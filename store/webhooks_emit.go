package store

import (
	"context"
	"database/sql"
)

// EmitWebhookEvent records an event for the account's active subscriptions to topic in a
// transaction of its own. Waybill's changes emit inside their own transactions; this is for a
// host application's own events and for tests.
func (db *DB) EmitWebhookEvent(ctx context.Context, accountID, topic string, payload any) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return db.emitEvent(ctx, tx, accountID, topic, payload) })
}
