package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

// RotateCarrierEventSecret gives carrier a new inbound secret for its signed pushes and returns
// it: base64 of 32 random bytes, as webhook and ingest secrets are. The old one stops working
// at once. Whether carrier is known is the caller's to check.
func (db *DB) RotateCarrierEventSecret(ctx context.Context, carrier string) (string, error) {
	secret, err := db.newSecret()
	if err != nil {
		return "", err
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO carrier_event_secrets (carrier, secret, rotated_at) VALUES ($1, $2, $3)
			ON CONFLICT (carrier) DO UPDATE SET secret = excluded.secret, rotated_at = excluded.rotated_at`, carrier, secret, db.now())
		return err
	})
	return secret, err
}

// CarrierEventSecret returns carrier's inbound secret; ErrNotFound when it has none yet.
func (db *DB) CarrierEventSecret(ctx context.Context, carrier string) (string, error) {
	var secret string
	err := db.readRow(ctx, `SELECT secret FROM carrier_event_secrets WHERE carrier = $1`, carrier).Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return secret, err
}

// pollDue is the condition of a label due for a poll at $2, its first poll being $1 after its
// purchase; it comes first in its WHERE, as SQLite numbers parameters in the order they appear.
// The statuses are shipping.PolledStatuses (constants, quoted as they are): the index on
// (carrier, status, poll_at) then reads the labels still polled, not every label of the carrier.
var pollDue = `status IN ('` + strings.Join(shipping.PolledStatuses, "', '") + `')
	AND COALESCE(poll_at, created_at + $1) <= $2`

// PollAccounts returns up to limit accounts with labels of carriers due for a poll at now, the
// account waiting longest first; first is how long after its purchase a label is first due.
func (db *DB) PollAccounts(ctx context.Context, carriers []string, now time.Time, first time.Duration, limit int) ([]string, error) {
	if len(carriers) == 0 {
		return nil, nil
	}
	query, args := pollAccounts(carriers, now, first, limit)
	return collect(ctx, db.r, query, args, scanString)
}

// pollAccounts is PollAccounts' query.
func pollAccounts(carriers []string, now time.Time, first time.Duration, limit int) (string, []any) {
	args := []any{first.Microseconds(), Micros(now)}
	query := `SELECT account_id FROM shipping_labels WHERE ` + pollDue + ` AND carrier IN (` + placeholders(&args, carriers) + `)
		GROUP BY account_id ORDER BY MIN(COALESCE(poll_at, created_at + $1)), account_id LIMIT ` + arg(&args, limit)
	return query, args
}

// ClaimPolls claims up to limit of the account's labels of carriers due for a poll at now, the
// longest waiting first, until now+lease: another process (or round) skips a claimed label
// until the claim ends, and a poll that dies with its process is retried after it.
func (db *DB) ClaimPolls(ctx context.Context, accountID string, carriers []string, now time.Time, first, lease time.Duration, limit int) ([]shipping.PollClaim, error) {
	if len(carriers) == 0 {
		return nil, nil
	}
	var claims []shipping.PollClaim
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		claims, err = claim(ctx, db, tx, pollQueue(accountID, carriers, Micros(now), first, Micros(now.Add(lease))), limit, scanPollClaim)
		return err
	})
	return claims, err
}

// pollQueue leases the account's labels of carriers due for a poll at now until leaseEnd, the
// longest waiting first (pollDue).
func pollQueue(accountID string, carriers []string, now int64, first time.Duration, leaseEnd int64) queue {
	args := []any{first.Microseconds(), now}
	where := pollDue + ` AND account_id = ` + arg(&args, accountID) + ` AND carrier IN (` + placeholders(&args, carriers) + `)`
	return queue{table: "shipping_labels", key: []string{"id"}, where: where, args: args,
		order: "COALESCE(poll_at, created_at + $1), id", set: "poll_at = $1", setArgs: []any{leaseEnd},
		returning: "account_id, id, carrier, tracking_code, poll_failures"}
}

func scanPollClaim(row rowScanner) (shipping.PollClaim, error) {
	var c shipping.PollClaim
	err := row.Scan(&c.AccountID, &c.LabelID, &c.Carrier, &c.TrackingCode, &c.Failures)
	return c, err
}

// FinishPoll schedules a claimed label's next poll at next, recording failures, the polls in a
// row that have failed (0 after a success).
func (db *DB) FinishPoll(ctx context.Context, c shipping.PollClaim, next time.Time, failures int) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET poll_at = $1, poll_failures = $2 WHERE account_id = $3 AND id = $4`,
			Micros(next), failures, c.AccountID, c.LabelID)
		return err
	})
}
