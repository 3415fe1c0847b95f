package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
)

// attemptColumns are an attempt's columns, in scanAttempt's order.
const attemptColumns = `label_id, account_id, shipment_id, rate_id, carrier, insured_cents,
	COALESCE(idempotency_key, ''), COALESCE(fingerprint, ''), state, started_at`

func scanAttempt(row rowScanner) (shipping.Attempt, error) {
	var a shipping.Attempt
	var started int64
	err := row.Scan(&a.LabelID, &a.AccountID, &a.ShipmentID, &a.RateID, &a.Carrier, &a.InsuredCents, &a.Key,
		&a.Fingerprint, &a.State, &started)
	a.StartedAt = Time(started)
	return a, err
}

// attemptWait bounds the pause between two looks at another purchase's attempt.
const attemptWait = 250 * time.Millisecond

// awaitAttempts waits while another purchase of r's shipment, or under its key, has an attempt
// PENDING, r's own attempt aside; ErrPurchaseUnresolved when one is UNRESOLVED.
func (db *DB) awaitAttempts(ctx context.Context, r shipping.BuyRequest) error {
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, attemptWait) {
		var state string
		err := db.r.QueryRowContext(ctx, `SELECT state FROM purchase_attempts WHERE account_id = $1
			AND (shipment_id = $2 OR idempotency_key = $3) AND label_id <> $4 ORDER BY state DESC LIMIT 1`,
			r.AccountID, r.ShipmentID, r.Key, r.Attempt).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		case state == shipping.AttemptUnresolved:
			return shipping.ErrPurchaseUnresolved
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// attemptedExists is a column that says whether another purchase of the buy's shipment ($2 of the
// account $1), or under its key ($4), has an attempt, the buy's own ($3) aside; a reservation
// reads it with the shipment. Two lookups, each by its own index: an OR of both in one made
// SQLite build an index of the table afresh at every buy. (SQLite numbers parameters in the
// order they first appear.)
const attemptedExists = `(EXISTS (SELECT 1 FROM purchase_attempts a WHERE a.account_id = $1 AND a.shipment_id = $2
	AND a.label_id <> $3) OR EXISTS (SELECT 1 FROM purchase_attempts a WHERE a.account_id = $1 AND a.idempotency_key = $4
	AND a.label_id <> $3))`

// attempted reports whether another purchase of r's shipment, or under its key, has an attempt.
func (db *DB) attempted(ctx context.Context, r shipping.BuyRequest) (bool, error) {
	var attempted bool
	err := db.r.QueryRowContext(ctx, `SELECT `+attemptedExists, r.AccountID, r.ShipmentID, r.Attempt, r.Key).Scan(&attempted)
	return attempted, err
}

// beginAttempt writes the purchase's attempt, PENDING, in its own transaction;
// shipping.ErrPurchaseInProgress when the shipment or the key has one already.
func (db *DB) beginAttempt(ctx context.Context, r shipping.BuyRequest, p shipping.Purchase, carrier string) error {
	var key, fingerprint sql.NullString
	if r.Key != "" {
		key, fingerprint = sql.NullString{String: r.Key, Valid: true}, sql.NullString{String: r.Fingerprint, Valid: true}
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO purchase_attempts (label_id, account_id, shipment_id, rate_id, carrier,
			insured_cents, idempotency_key, fingerprint, state, started_at, claimed_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0) ON CONFLICT DO NOTHING`,
			p.LabelID, r.AccountID, r.ShipmentID, p.RateID, carrier, p.InsuredCents, key, fingerprint,
			shipping.AttemptPending, Micros(p.At))
		if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
			return shipping.ErrPurchaseInProgress
		} else {
			return err
		}
	})
}

// endAttempt deletes the attempt of the label in tx; false when it has none.
func endAttempt(ctx context.Context, tx *sql.Tx, labelID string) (bool, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM purchase_attempts WHERE label_id = $1`, labelID)
	if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
		return false, nil
	} else {
		return err == nil, err
	}
}

// dropPendingAttempt deletes the label's attempt if it is PENDING: its purchase sold nothing.
func (db *DB) dropPendingAttempt(ctx context.Context, labelID string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM purchase_attempts WHERE label_id = $1 AND state = $2`,
			labelID, shipping.AttemptPending)
		return err
	})
}

// ClaimStaleAttempts claims up to n PENDING attempts started before cutoff and not claimed at
// now, each until lease runs out (shipping.AttemptStore).
func (db *DB) ClaimStaleAttempts(ctx context.Context, cutoff, now time.Time, lease time.Duration, n int) ([]shipping.Attempt, error) {
	var out []shipping.Attempt
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		out, err = claim(ctx, db, tx, attemptQueue(Micros(cutoff), Micros(now), Micros(now.Add(lease))), n, scanAttempt)
		return err
	})
	return out, err
}

// attemptQueue leases the PENDING attempts started before cutoff and not claimed at now, until
// leaseEnd, the oldest first.
func attemptQueue(cutoff, now, leaseEnd int64) queue {
	return queue{table: "purchase_attempts", key: []string{"label_id"},
		where: "state = $1 AND started_at < $2 AND claimed_until <= $3", args: []any{shipping.AttemptPending, cutoff, now},
		order: "started_at", set: "claimed_until = $1", setArgs: []any{leaseEnd}, returning: attemptColumns}
}

// UnresolveAttempt makes a PENDING attempt UNRESOLVED (shipping.AttemptStore).
func (db *DB) UnresolveAttempt(ctx context.Context, labelID string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE purchase_attempts SET state = $1 WHERE label_id = $2 AND state = $3`,
			shipping.AttemptUnresolved, labelID, shipping.AttemptPending)
		return rowsOrNotFound(res, err)
	})
}

// Attempt reads one attempt (shipping.AttemptStore); ErrNotFound when there is none.
func (db *DB) Attempt(ctx context.Context, labelID string) (shipping.Attempt, error) {
	a, err := scanAttempt(db.r.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM purchase_attempts WHERE label_id = $1`, labelID))
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	return a, err
}

// DropAttempt deletes an UNRESOLVED attempt (shipping.AttemptStore).
func (db *DB) DropAttempt(ctx context.Context, labelID string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM purchase_attempts WHERE label_id = $1 AND state = $2`,
			labelID, shipping.AttemptUnresolved)
		return rowsOrNotFound(res, err)
	})
}

// ListAttempts lists the attempts in state ("" for every state), the oldest first.
func (db *DB) ListAttempts(ctx context.Context, state string, p Page) (List[shipping.Attempt], error) {
	from, args := "purchase_attempts WHERE 1 = 1", []any{}
	if state != "" {
		from, args = "purchase_attempts WHERE state = $1", []any{state}
	}
	return offsetList(ctx, db.r, listQuery[shipping.Attempt]{Columns: attemptColumns, From: from, Args: args,
		Scan: func(rows *sql.Rows) (shipping.Attempt, error) { return scanAttempt(rows) }}, "started_at, label_id", p)
}

// CountUnresolvedAttempts counts the UNRESOLVED attempts, for the metric.
func (db *DB) CountUnresolvedAttempts(ctx context.Context) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM purchase_attempts WHERE state = $1`, shipping.AttemptUnresolved).Scan(&n)
	return n, err
}
