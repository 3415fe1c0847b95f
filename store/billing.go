package store

import (
	"context"
	"database/sql"
)

// createBillingProfile gives a new account its billing profile, inside CreateAccount's
// transaction.
func (db *DB) createBillingProfile(ctx context.Context, tx *sql.Tx, accountID string) error {
	return nil // TODO(billing issue)
}

// billFinishedLabel bills a label whose shipment finished (DELIVERED or RETURN_TO_SENDER) at
// finishedAt (microseconds), inside the tracking event's transaction. Calling it again for the
// same label does nothing: a label is billed at most once.
func (db *DB) billFinishedLabel(ctx context.Context, tx *sql.Tx, labelID string, finishedAt int64) error {
	return nil // TODO(billing issue)
}
