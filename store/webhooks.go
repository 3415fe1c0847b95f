package store

import (
	"context"
	"database/sql"
)

// emitEvent records, inside the caller's transaction, one webhook event per active
// subscription of the account to topic (the outbox). payload is marshalled to JSON.
func (db *DB) emitEvent(ctx context.Context, tx *sql.Tx, accountID, topic string, payload any) error {
	return nil // TODO(webhooks issue)
}

// emitEventToAll is emitEvent for every account subscribed to topic (ZIP_COVERAGE_UPDATED).
func (db *DB) emitEventToAll(ctx context.Context, tx *sql.Tx, topic string, payload any) error {
	return nil // TODO(webhooks issue)
}
