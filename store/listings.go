package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
)

// TokenInfo is a token as operators list it: never the bearer string nor its hash.
type TokenInfo struct {
	ID         string
	AccountID  string
	Scopes     []string
	CreatedAt  shipping.Timestamp
	LastUsedAt *shipping.Timestamp
	RevokedAt  *shipping.Timestamp
}

// lastUsedGranularity is how stale a token's last_used_at may get: a token is written at most
// once per this interval, however often it is used.
const lastUsedGranularity = time.Minute

// ListAccounts lists every account, newest first. It spans accounts by design (an operator's
// listing).
func (db *DB) ListAccounts(ctx context.Context, p Page) (List[Account], error) {
	q := listQuery[Account]{Columns: accountColumns, From: "accounts WHERE 1 = 1",
		Scan: func(rows *sql.Rows) (Account, error) { return scanAccount(rows) }}
	return offsetList(ctx, db.r, q, "created_at DESC, id DESC", p)
}

// ListTokens lists the account's tokens, revoked ones included, newest first; an unknown
// account is ErrNotFound.
func (db *DB) ListTokens(ctx context.Context, accountID string, p Page) (List[TokenInfo], error) {
	if _, err := db.Account(ctx, accountID); err != nil {
		return List[TokenInfo]{}, err
	}
	q := listQuery[TokenInfo]{Columns: `id, account_id, scopes, created_at, last_used_at, revoked_at`,
		From: "api_tokens WHERE account_id = $1", Args: []any{accountID}, Scan: func(rows *sql.Rows) (TokenInfo, error) {
			var t TokenInfo
			var scopes string
			var created int64
			var used, revoked sql.NullInt64
			err := rows.Scan(&t.ID, &t.AccountID, &scopes, &created, &used, &revoked)
			t.Scopes = []string{}
			if scopes != "" {
				t.Scopes = strings.Split(scopes, ",")
			}
			t.CreatedAt, t.LastUsedAt, t.RevokedAt = stamp(created), nullStamp(used), nullStamp(revoked)
			return t, err
		}}
	return offsetList(ctx, db.r, q, "created_at DESC, id DESC", p)
}

// touchToken records that the token was used now, unless it was already recorded less than
// lastUsedGranularity ago (lastUsed, as read by the lookup): busy tokens cost one write a
// minute, not one per request.
func (db *DB) touchToken(ctx context.Context, id string, lastUsed sql.NullInt64) error {
	now := db.now()
	if lastUsed.Valid && now-lastUsed.Int64 < lastUsedGranularity.Microseconds() && now >= lastUsed.Int64 {
		return nil
	}
	// The condition repeats the check so concurrent requests write once.
	_, err := db.w.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = $1
		WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3 OR last_used_at > $1)`,
		now, id, now-lastUsedGranularity.Microseconds())
	return err
}

// ListOrderImports lists the account's imports, newest first; a non-empty status keeps only
// imports in that status.
func (db *DB) ListOrderImports(ctx context.Context, accountID, status string, p Page) (List[ingest.Import], error) {
	q := listQuery[ingest.Import]{Columns: importColumns, From: "order_imports WHERE account_id = $1", Args: []any{accountID},
		Scan: func(rows *sql.Rows) (ingest.Import, error) { return scanImport(rows) }}
	if status != "" {
		q.From += " AND status = $2"
		q.Args = append(q.Args, status)
	}
	return offsetList(ctx, db.r, q, "received_at DESC, id DESC", p)
}

// QueueStats is what the metrics report about the background queues, across all accounts.
type QueueStats struct {
	// WebhookPending counts PENDING webhook event records of active subscriptions;
	// WebhookParked those of inactive subscriptions (they wait for reactivation).
	WebhookPending, WebhookParked int
	// OldestDueWebhook is the earliest next_attempt_at, already past, of a PENDING record of an
	// active subscription (zero when nothing is overdue): how far delivery lags.
	OldestDueWebhook time.Time
	// ImportsQueued counts imports not yet finished (QUEUED or PROCESSING); OldestImport is
	// when the oldest of them was received (zero when there is none).
	ImportsQueued int
	OldestImport  time.Time
	// PurchasesUnresolved counts the purchase attempts an operator must resolve.
	PurchasesUnresolved int
}

// QueueStats reads the depth of the webhook and import queues. It spans accounts by design
// (operators' metrics); each count is an index scan on the workers' own indexes.
func (db *DB) QueueStats(ctx context.Context) (QueueStats, error) {
	var s QueueStats
	var due sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN s.is_active THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN s.is_active THEN 0 ELSE 1 END), 0),
		MIN(CASE WHEN s.is_active AND e.next_attempt_at <= $1 THEN e.next_attempt_at END)
		FROM webhook_events e JOIN webhook_subscriptions s ON s.id = e.subscription_id
		WHERE e.status = $2`, db.now(), "PENDING").Scan(&s.WebhookPending, &s.WebhookParked, &due)
	if err != nil {
		return QueueStats{}, err
	}
	if due.Valid {
		s.OldestDueWebhook = Time(due.Int64)
	}
	var oldest sql.NullInt64
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*), MIN(received_at) FROM order_imports WHERE status IN ($1, $2)`,
		ingest.StatusQueued, ingest.StatusProcessing).Scan(&s.ImportsQueued, &oldest)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return QueueStats{}, err
	}
	if oldest.Valid {
		s.OldestImport = Time(oldest.Int64)
	}
	s.PurchasesUnresolved, err = db.CountUnresolvedAttempts(ctx)
	return s, err
}
