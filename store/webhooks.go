package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// emitEvent records, inside the caller's transaction, one webhook event per active
// subscription of the account to topic (the outbox). payload is marshalled to JSON.
func (db *DB) emitEvent(ctx context.Context, tx *sql.Tx, accountID, topic string, payload any) error {
	return db.emit(ctx, tx, &accountID, topic, payload)
}

// emitEventToAll is emitEvent for every account subscribed to topic (ZIP_COVERAGE_UPDATED).
func (db *DB) emitEventToAll(ctx context.Context, tx *sql.Tx, topic string, payload any) error {
	return db.emit(ctx, tx, nil, topic, payload)
}

// emit inserts the event records with one INSERT … SELECT over the active subscriptions to
// topic (of one account, or of all when accountID is nil). The records of one emission share
// their event id.
func (db *DB) emit(ctx context.Context, tx *sql.Tx, accountID *string, topic string, payload any) error {
	if !webhook.ValidTopic(topic) {
		return fmt.Errorf("emit: unknown webhook topic %q", topic)
	}
	// filter selects the subscriptions with placeholders numbered from first.
	filter := func(first int) (string, []any) {
		f := fmt.Sprintf("FROM webhook_subscriptions WHERE topic = $%d AND is_active = $%d", first, first+1)
		args := []any{topic, true}
		if accountID != nil {
			f += fmt.Sprintf(" AND account_id = $%d", first+2)
			args = append(args, *accountID)
		}
		return f, args
	}
	// Most changes reach no subscription: then no id is drawn and nothing is written.
	f, args := filter(1)
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 "+f+" LIMIT 1) s", args...).Scan(&n); err != nil {
		return fmt.Errorf("emit %s: %w", topic, err)
	}
	if n == 0 {
		return nil
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("emit %s: %w", topic, err)
	}
	f, args = filter(4)
	// The casts type the select list's parameters for PostgreSQL, which would read them as text.
	_, err = tx.ExecContext(ctx, `INSERT INTO webhook_events
		(id, subscription_id, account_id, topic, url, payload, happened_at, status, next_attempt_at, created_at)
		SELECT $1, id, account_id, topic, url, $2, CAST($3 AS BIGINT), '`+webhook.StatusPending+`', CAST($3 AS BIGINT), CAST($3 AS BIGINT) `+f,
		append([]any{db.NewID(), string(body), db.now()}, args...)...)
	if err != nil {
		return fmt.Errorf("emit %s: %w", topic, err)
	}
	return nil
}

// CreateWebhookSubscription subscribes url to topic for the account with a fresh secret.
func (db *DB) CreateWebhookSubscription(ctx context.Context, accountID, url, topic string, active bool) (webhook.Subscription, error) {
	secret, err := db.newSecret()
	if err != nil {
		return webhook.Subscription{}, err
	}
	if err := db.checkFile(); err != nil {
		return webhook.Subscription{}, err
	}
	now := db.now()
	s := webhook.Subscription{ID: db.NewID(), AccountID: accountID, URL: url, Topic: topic, IsActive: active,
		Secret: secret, CreatedAt: Time(now), UpdatedAt: Time(now)}
	_, err = db.w.ExecContext(ctx, `INSERT INTO webhook_subscriptions
		(id, account_id, url, topic, is_active, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		s.ID, accountID, url, topic, active, secret, now)
	return s, err
}

const subscriptionColumns = "id, account_id, url, topic, is_active, created_at, updated_at"

func scanSubscription(row interface{ Scan(...any) error }) (webhook.Subscription, error) {
	var s webhook.Subscription
	var created, updated int64
	err := row.Scan(&s.ID, &s.AccountID, &s.URL, &s.Topic, &s.IsActive, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	s.CreatedAt, s.UpdatedAt = Time(created), Time(updated)
	return s, err
}

// WebhookSubscription returns one of the account's subscriptions (without its secret).
func (db *DB) WebhookSubscription(ctx context.Context, accountID, id string) (webhook.Subscription, error) {
	return scanSubscription(db.r.QueryRowContext(ctx, `SELECT `+subscriptionColumns+`
		FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`, accountID, id))
}

// ListWebhookSubscriptions lists the account's subscriptions, newest first.
func (db *DB) ListWebhookSubscriptions(ctx context.Context, accountID string, p Page) (List[webhook.Subscription], error) {
	return OffsetList(ctx, db.r, Query[webhook.Subscription]{
		Columns: subscriptionColumns,
		From:    "webhook_subscriptions WHERE account_id = $1",
		Args:    []any{accountID},
		Scan:    func(rows *sql.Rows) (webhook.Subscription, error) { return scanSubscription(rows) },
	}, "created_at DESC, id DESC", p)
}

// UpdateWebhookSubscription changes a subscription's url and/or is_active (nil: unchanged).
func (db *DB) UpdateWebhookSubscription(ctx context.Context, accountID, id string, url *string, active *bool) (webhook.Subscription, error) {
	var s webhook.Subscription
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		s, err = scanSubscription(tx.QueryRowContext(ctx, `SELECT `+subscriptionColumns+`
			FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`, accountID, id))
		if err != nil {
			return err
		}
		if url != nil {
			s.URL = *url
		}
		if active != nil {
			s.IsActive = *active
		}
		now := db.now()
		s.UpdatedAt = Time(now)
		_, err = tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET url = $1, is_active = $2, updated_at = $3
			WHERE account_id = $4 AND id = $5`, s.URL, s.IsActive, now, accountID, id)
		return err
	})
	return s, err
}

// DeleteWebhookSubscription deletes a subscription and its event records.
func (db *DB) DeleteWebhookSubscription(ctx context.Context, accountID, id string) error {
	return db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE account_id = $1 AND subscription_id = $2`, accountID, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`, accountID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

const eventColumns = `id, subscription_id, account_id, topic, url, payload, happened_at, status, attempts,
	last_attempt_at, next_attempt_at, last_response_status`

func scanEvent(row interface{ Scan(...any) error }, extra ...any) (webhook.Event, error) {
	var e webhook.Event
	var happened int64
	var payload string
	var lastAt, nextAt, respStatus sql.NullInt64
	dest := append([]any{&e.ID, &e.SubscriptionID, &e.AccountID, &e.Topic, &e.URL, &payload, &happened, &e.Status,
		&e.Attempts, &lastAt, &nextAt, &respStatus}, extra...)
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, err
	}
	e.Payload = json.RawMessage(payload)
	e.HappenedAt = Time(happened)
	e.LastAttemptAt, e.NextAttemptAt = NullTime(lastAt), NullTime(nextAt)
	if respStatus.Valid {
		s := int(respStatus.Int64)
		e.LastResponseStatus = &s
	}
	return e, nil
}

// ListWebhookEvents lists a subscription's event records, newest first, optionally only
// those with status. An unknown subscription is ErrNotFound.
func (db *DB) ListWebhookEvents(ctx context.Context, accountID, subscriptionID, status string, p Page) (List[webhook.Event], error) {
	if _, err := db.WebhookSubscription(ctx, accountID, subscriptionID); err != nil {
		return List[webhook.Event]{}, err
	}
	q := Query[webhook.Event]{
		Columns: eventColumns,
		From:    "webhook_events WHERE account_id = $1 AND subscription_id = $2",
		Args:    []any{accountID, subscriptionID},
		Scan:    func(rows *sql.Rows) (webhook.Event, error) { return scanEvent(rows) },
	}
	if status != "" {
		q.From += " AND status = $3"
		q.Args = append(q.Args, status)
	}
	return OffsetList(ctx, db.r, q, "created_at DESC, id DESC", p)
}

// RedeliverWebhookEvent queues an event record again: PENDING, due now, with a fresh retry
// schedule, to the subscription's current URL. The subscription must be active.
func (db *DB) RedeliverWebhookEvent(ctx context.Context, accountID, subscriptionID, eventID string) (webhook.Event, error) {
	var e webhook.Event
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		s, err := scanSubscription(tx.QueryRowContext(ctx, `SELECT `+subscriptionColumns+`
			FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`, accountID, subscriptionID))
		if err != nil {
			return err
		}
		e, err = scanEvent(tx.QueryRowContext(ctx, `UPDATE webhook_events
			SET status = $1, next_attempt_at = $2, retry_from = attempts, url = $3, lease_until = NULL, lease_token = NULL
			WHERE account_id = $4 AND subscription_id = $5 AND id = $6 RETURNING `+eventColumns,
			webhook.StatusPending, db.now(), s.URL, accountID, subscriptionID, eventID))
		if err != nil {
			return err
		}
		if !s.IsActive {
			return fmt.Errorf("%w: the webhook subscription is not active", shipping.ErrInvalidState)
		}
		return nil
	})
	return e, err
}

// DueWebhookEvents implements webhook.Store. It reads across accounts: the delivery worker
// serves them all.
func (db *DB) DueWebhookEvents(ctx context.Context, now time.Time, perSubscription, limit int) ([]webhook.Candidate, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT subscription_id, id FROM (
			SELECT e.subscription_id, e.id, e.next_attempt_at,
				ROW_NUMBER() OVER (PARTITION BY e.subscription_id ORDER BY e.next_attempt_at, e.id) AS n
			FROM webhook_events e JOIN webhook_subscriptions s ON s.id = e.subscription_id AND s.account_id = e.account_id
			WHERE e.status = $1 AND e.next_attempt_at <= $2 AND (e.lease_until IS NULL OR e.lease_until <= $2)
				AND s.is_active = $3
		) d WHERE n <= $4 ORDER BY next_attempt_at, subscription_id, id LIMIT $5`,
		webhook.StatusPending, Micros(now), true, perSubscription, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []webhook.Candidate
	for rows.Next() {
		var c webhook.Candidate
		if err := rows.Scan(&c.SubscriptionID, &c.ID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// LeaseWebhookEvents implements webhook.Store: in one transaction it leases each candidate
// still due and unleased, and reads the secrets to sign with.
func (db *DB) LeaseWebhookEvents(ctx context.Context, cs []webhook.Candidate, now, until time.Time) ([]webhook.Delivery, error) {
	var out []webhook.Delivery
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		token := db.NewID()
		secrets := map[string]string{}
		for _, c := range cs {
			var d webhook.Delivery
			var retryFrom int
			e, err := scanEvent(tx.QueryRowContext(ctx, `UPDATE webhook_events SET lease_until = $1, lease_token = $2
				WHERE subscription_id = $3 AND id = $4 AND status = $5 AND next_attempt_at <= $6
					AND (lease_until IS NULL OR lease_until <= $6)
				RETURNING `+eventColumns+`, retry_from`,
				Micros(until), token, c.SubscriptionID, c.ID, webhook.StatusPending, Micros(now)), &retryFrom)
			if errors.Is(err, ErrNotFound) {
				continue // taken or changed meanwhile
			}
			if err != nil {
				return err
			}
			secret, ok := secrets[e.SubscriptionID]
			if !ok {
				err := tx.QueryRowContext(ctx, `SELECT secret FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`,
					e.AccountID, e.SubscriptionID).Scan(&secret)
				if err != nil {
					return err
				}
				secrets[e.SubscriptionID] = secret
			}
			d.Event, d.Secret, d.Round, d.Lease = e, secret, e.Attempts-retryFrom, token
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// FinishWebhookDeliveries implements webhook.Store: in one transaction it records each
// attempt unless its lease was lost (the record was redelivered, or the lease ran out and
// another worker took it), and on 410 Gone deactivates the subscription.
func (db *DB) FinishWebhookDeliveries(ctx context.Context, rs []webhook.Result) error {
	return db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, r := range rs {
			if err := db.finishDelivery(ctx, tx, r); err != nil {
				return err
			}
		}
		return nil
	})
}

func (db *DB) finishDelivery(ctx context.Context, tx *sql.Tx, r webhook.Result) error {
	var next, respStatus sql.NullInt64
	if r.NextAttemptAt != nil {
		next = sql.NullInt64{Int64: Micros(*r.NextAttemptAt), Valid: true}
	}
	if r.ResponseStatus != nil {
		respStatus = sql.NullInt64{Int64: int64(*r.ResponseStatus), Valid: true}
	}
	at := Micros(r.At)
	res, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, attempts = attempts + 1,
			last_attempt_at = $2, next_attempt_at = $3, last_response_status = $4, last_response_body = $5,
			last_error = $6, lease_until = NULL, lease_token = NULL
		WHERE account_id = $7 AND subscription_id = $8 AND id = $9 AND lease_token = $10`,
		r.Status, at, next, respStatus, r.ResponseBody, r.Error, r.AccountID, r.SubscriptionID, r.ID, r.Lease)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 || !r.Deactivate {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET is_active = $1, updated_at = $2
		WHERE account_id = $3 AND id = $4`, false, at, r.AccountID, r.SubscriptionID)
	return err
}
