package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/waybill/waybill/webhook"
)

// lockSubscriptions locks the webhook subscriptions with these ids (repeats allowed) in id
// order (db.lock). Every transaction that changes a subscription or its event records —
// PATCH, DELETE, redeliver, leasing, finishing deliveries — locks the subscription first, so
// they never deadlock on the records (each takes those in its own order) and none undoes
// another's change to the subscription.
func (db *DB) lockSubscriptions(ctx context.Context, tx *sql.Tx, ids []string) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	for _, id := range ids {
		if err := db.lock(ctx, tx, `SELECT id FROM webhook_subscriptions WHERE id = $1`, id); err != nil {
			return err
		}
	}
	return nil
}

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
	// Most changes reach no subscription: then no id is drawn and nothing is written.
	var args []any
	f := subscriptionsTo(&args, accountID, topic)
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 "+f+" LIMIT 1) s", args...).Scan(&n); err != nil {
		return fmt.Errorf("emit %s: %w", topic, err)
	}
	if n == 0 {
		return nil
	}
	return db.insertEvents(ctx, tx, accountID, topic, payload)
}

// subscriptionsTo is the FROM clause of the active subscriptions to topic (of one account, or
// of all when accountID is nil), its arguments appended to args.
func subscriptionsTo(args *[]any, accountID *string, topic string) string {
	f := "FROM webhook_subscriptions WHERE topic = " + arg(args, topic) + " AND is_active = " + arg(args, true)
	if accountID != nil {
		f += " AND account_id = " + arg(args, *accountID)
	}
	return f
}

// subscribed is an expression for a statement that changes one row of table: whether the row's
// account (its account_id) has an active subscription to topic, its arguments appended to args.
// Where it is known so, insertEvents emits without emit's query.
func subscribed(table string, args *[]any, topic string) string {
	return "EXISTS (SELECT 1 " + subscriptionsTo(args, nil, topic) + " AND account_id = " + table + ".account_id)"
}

// insertEvents is emit of a valid topic to subscriptions known to exist.
func (db *DB) insertEvents(ctx context.Context, tx *sql.Tx, accountID *string, topic string, payload any) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("emit %s: %w", topic, err)
	}
	args := []any{db.NewID(), string(body), db.now()}
	f := subscriptionsTo(&args, accountID, topic)
	// The casts type the select list's parameters for PostgreSQL, which would read them as text.
	_, err = tx.ExecContext(ctx, `INSERT INTO webhook_events
		(id, subscription_id, account_id, topic, url, payload, happened_at, status, next_attempt_at, due_at, created_at)
		SELECT $1, id, account_id, topic, url, $2, CAST($3 AS BIGINT), '`+webhook.StatusPending+`', CAST($3 AS BIGINT), CAST($3 AS BIGINT),
			CAST($3 AS BIGINT) `+f, args...)
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

func scanSubscription(row rowScanner) (webhook.Subscription, error) {
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
	return offsetList(ctx, db.r, listQuery[webhook.Subscription]{
		Columns: subscriptionColumns,
		From:    "webhook_subscriptions WHERE account_id = $1",
		Args:    []any{accountID},
		Scan:    func(rows *sql.Rows) (webhook.Subscription, error) { return scanSubscription(rows) },
	}, "created_at DESC, id DESC", p)
}

// UpdateWebhookSubscription implements webhook.Subscriptions: it stores the subscription
// edit makes of it and applies the retarget to the pending event records.
func (db *DB) UpdateWebhookSubscription(ctx context.Context, accountID, id string, edit func(webhook.Subscription) (webhook.Subscription, webhook.Retarget)) (webhook.Subscription, error) {
	var s webhook.Subscription
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lockSubscriptions(ctx, tx, []string{id}); err != nil {
			return err
		}
		var err error
		s, err = scanSubscription(tx.QueryRowContext(ctx, `SELECT `+subscriptionColumns+`
			FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`, accountID, id))
		if err != nil {
			return err
		}
		var retarget webhook.Retarget
		s, retarget = edit(s)
		now := db.now()
		s.UpdatedAt = Time(now)
		if _, err = tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET url = $1, is_active = $2, updated_at = $3
			WHERE account_id = $4 AND id = $5`, s.URL, s.IsActive, now, accountID, id); err != nil {
			return err
		}
		if retarget.URL != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET url = $1
				WHERE account_id = $2 AND subscription_id = $3 AND status = $4`,
				*retarget.URL, accountID, id, webhook.StatusPending); err != nil {
				return err
			}
		}
		return setDue(ctx, tx, accountID, id, retarget.Due)
	})
	return s, err
}

// setDue parks (active false) or unparks the subscription's pending records. A record a worker
// holds is unparked due at once; the lease still keeps it from a second worker.
func setDue(ctx context.Context, tx *sql.Tx, accountID, subscriptionID string, active bool) error {
	var err error
	if active {
		_, err = tx.ExecContext(ctx, `UPDATE webhook_events SET due_at = next_attempt_at
			WHERE account_id = $1 AND subscription_id = $2 AND status = $3 AND due_at IS NULL`,
			accountID, subscriptionID, webhook.StatusPending)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE webhook_events SET due_at = NULL
			WHERE account_id = $1 AND subscription_id = $2 AND due_at IS NOT NULL`, accountID, subscriptionID)
	}
	return err
}

// DeleteWebhookSubscription deletes a subscription and its event records.
func (db *DB) DeleteWebhookSubscription(ctx context.Context, accountID, id string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// The subscription before its records, as every change to both (lockSubscriptions),
		// and FOR UPDATE: the lock a delete needs, which also waits for transactions that have
		// just emitted a record for it.
		rows, err := tx.QueryContext(ctx, `SELECT id FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`+db.forUpdate(),
			accountID, id)
		if err != nil {
			return err
		}
		if err := rows.Close(); err != nil {
			return err
		}
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
	last_attempt_at, next_attempt_at, last_response_status, last_error`

func scanEvent(row rowScanner, extra ...any) (webhook.Event, error) {
	var e webhook.Event
	var happened int64
	var payload string
	var lastAt, nextAt, respStatus sql.NullInt64
	var lastErr sql.NullString
	dest := append([]any{&e.ID, &e.SubscriptionID, &e.AccountID, &e.Topic, &e.URL, &payload, &happened, &e.Status,
		&e.Attempts, &lastAt, &nextAt, &respStatus, &lastErr}, extra...)
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
	if lastErr.Valid && lastErr.String != "" {
		e.LastError = &lastErr.String
	}
	return e, nil
}

// ListWebhookEvents lists a subscription's event records, newest first, optionally only
// those with status. An unknown subscription is ErrNotFound.
func (db *DB) ListWebhookEvents(ctx context.Context, accountID, subscriptionID, status string, p Page) (List[webhook.Event], error) {
	if _, err := db.WebhookSubscription(ctx, accountID, subscriptionID); err != nil {
		return List[webhook.Event]{}, err
	}
	q := listQuery[webhook.Event]{
		Columns: eventColumns,
		From:    "webhook_events WHERE account_id = $1 AND subscription_id = $2",
		Args:    []any{accountID, subscriptionID},
		Scan:    func(rows *sql.Rows) (webhook.Event, error) { return scanEvent(rows) },
	}
	if status != "" {
		q.From += " AND status = $3"
		q.Args = append(q.Args, status)
	}
	return offsetList(ctx, db.r, q, "created_at DESC, id DESC", p)
}

// RedeliverWebhookEvent implements webhook.Subscriptions: it queues an event record again,
// PENDING, due now, with a fresh retry schedule, to the subscription's current URL, and commits
// if allow accepts the subscription.
func (db *DB) RedeliverWebhookEvent(ctx context.Context, accountID, subscriptionID, eventID string, allow func(webhook.Subscription) error) (webhook.Event, error) {
	var e webhook.Event
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lockSubscriptions(ctx, tx, []string{subscriptionID}); err != nil {
			return err
		}
		s, err := scanSubscription(tx.QueryRowContext(ctx, `SELECT `+subscriptionColumns+`
			FROM webhook_subscriptions WHERE account_id = $1 AND id = $2`, accountID, subscriptionID))
		if err != nil {
			return err
		}
		e, err = scanEvent(tx.QueryRowContext(ctx, `UPDATE webhook_events
			SET status = $1, next_attempt_at = $2, due_at = $2, retry_from = attempts, url = $3, lease_until = NULL, lease_token = NULL
			WHERE account_id = $4 AND subscription_id = $5 AND id = $6 RETURNING `+eventColumns,
			webhook.StatusPending, db.now(), s.URL, accountID, subscriptionID, eventID))
		if err != nil {
			return err
		}
		return allow(s)
	})
	return e, err
}

// DueWebhookEvents implements webhook.Store. It reads across accounts (the delivery worker
// serves them all) and only the due index, so parked records cost nothing. It finds the
// accounts with a due record by a skip scan of that index (one seek per account with pending
// work), takes up to accounts of them, longest waiting first and none of exclude, and reads up
// to perAccount due records of each, none of excludeSubscriptions, account after account.
func (db *DB) DueWebhookEvents(ctx context.Context, now time.Time, exclude, excludeSubscriptions []string, perAccount, accounts int) ([]webhook.Candidate, error) {
	var args []any
	notIn := func(column string, ids []string) string {
		if len(ids) == 0 {
			return ""
		}
		return " AND " + column + " NOT IN (" + placeholders(&args, ids) + ")"
	}
	q := `WITH RECURSIVE a (account_id) AS (
			SELECT MIN(account_id) FROM webhook_events WHERE due_at IS NOT NULL
			UNION ALL
			SELECT (SELECT MIN(e.account_id) FROM webhook_events e WHERE e.due_at IS NOT NULL AND e.account_id > a.account_id)
			FROM a WHERE a.account_id IS NOT NULL
		)
		SELECT account_id FROM (
			SELECT account_id, (SELECT MIN(e.due_at) FROM webhook_events e
				WHERE e.account_id = a.account_id AND e.due_at IS NOT NULL) AS first_due
			FROM a WHERE account_id IS NOT NULL` + notIn("account_id", exclude) + `
		) d WHERE first_due <= ` + arg(&args, Micros(now)) + ` ORDER BY first_due, account_id LIMIT ` + arg(&args, accounts)
	ids, err := collect(ctx, db.r, q, args, scanString)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	// A LIMITed range of the due index per account, dueChunk accounts to a query (SQLite caps
	// a compound SELECT at 500 terms; Run asks for at most Concurrency accounts, Drain for all).
	byAccount := map[string][]webhook.Candidate{}
	for first := 0; first < len(ids); first += dueChunk {
		chunk := ids[first:min(first+dueChunk, len(ids))]
		args = nil
		var at, subs, limit string
		parts := make([]string, len(chunk))
		for i, id := range chunk {
			acct := arg(&args, id)
			if i == 0 {
				at = arg(&args, Micros(now))
				subs = notIn("subscription_id", excludeSubscriptions)
				limit = arg(&args, perAccount)
			}
			parts[i] = fmt.Sprintf(`SELECT * FROM (SELECT account_id, subscription_id, id, due_at FROM webhook_events
				WHERE account_id = %s AND due_at <= %s AND (lease_until IS NULL OR lease_until <= %s)%s
				ORDER BY due_at, subscription_id, id LIMIT %s) q%d`, acct, at, at, subs, limit, i)
		}
		cs, err := collect(ctx, db.r, strings.Join(parts, " UNION ALL "), args, scanCandidate)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			byAccount[c.AccountID] = append(byAccount[c.AccountID], c)
		}
	}
	var out []webhook.Candidate
	for _, id := range ids {
		out = append(out, byAccount[id]...)
	}
	return out, nil
}

// dueChunk is how many accounts' due records one query reads.
const dueChunk = 100

func scanCandidate(rows *sql.Rows) (webhook.Candidate, error) {
	var c webhook.Candidate
	var due int64
	err := rows.Scan(&c.AccountID, &c.SubscriptionID, &c.ID, &due)
	return c, err
}

// LeaseWebhookEvents implements webhook.Store: in one transaction it leases each candidate
// still due and unleased (due again when the lease ends), and reads the subscription's
// current URL and secret to deliver with. A record's url becomes the URL it is sent to.
func (db *DB) LeaseWebhookEvents(ctx context.Context, cs []webhook.Candidate, now, until time.Time) ([]webhook.Delivery, error) {
	var out []webhook.Delivery
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		token := db.NewID()
		type target struct {
			url, secret string
			active      bool
		}
		subs := make([]string, len(cs))
		for i, c := range cs {
			subs[i] = c.SubscriptionID
		}
		if err := db.lockSubscriptions(ctx, tx, subs); err != nil {
			return err
		}
		targets := map[string]target{}
		for _, c := range cs {
			t, ok := targets[c.SubscriptionID]
			if !ok {
				err := tx.QueryRowContext(ctx, `SELECT url, secret, is_active FROM webhook_subscriptions WHERE id = $1`,
					c.SubscriptionID).Scan(&t.url, &t.secret, &t.active)
				if errors.Is(err, sql.ErrNoRows) {
					continue // deleted meanwhile
				}
				if err != nil {
					return err
				}
				targets[c.SubscriptionID] = t
			}
			if !t.active {
				continue // deactivated meanwhile: its records are parked
			}
			leased, err := claim(ctx, db, tx, eventQueue(c, Micros(now), Micros(until), token, t.url), 1, scanLeasedEvent)
			if err != nil {
				return err
			}
			for _, d := range leased { // none when taken or changed meanwhile
				d.Secret, d.Lease = t.secret, token
				out = append(out, d)
			}
		}
		return nil
	})
	return out, err
}

// eventQueue leases the candidate's record, if it is still due at now and unleased, until
// until under token, to be sent to url (due again when the lease ends).
func eventQueue(c webhook.Candidate, now, until int64, token, url string) queue {
	return queue{table: "webhook_events", key: []string{"subscription_id", "id"},
		where: "subscription_id = $1 AND id = $2 AND status = $3 AND due_at <= $4 AND (lease_until IS NULL OR lease_until <= $4)",
		args:  []any{c.SubscriptionID, c.ID, webhook.StatusPending, now},
		set:   "lease_until = $1, lease_token = $2, due_at = $1, url = $3", setArgs: []any{until, token, url},
		returning: eventColumns + ", retry_from"}
}

// scanLeasedEvent reads a leased record as a delivery: its event and its round.
func scanLeasedEvent(row rowScanner) (webhook.Delivery, error) {
	var retryFrom int
	e, err := scanEvent(row, &retryFrom)
	return webhook.Delivery{Event: e, Round: e.Attempts - retryFrom}, err
}

// FinishWebhookDeliveries implements webhook.Store: in one transaction it records each
// attempt unless its lease was lost (the record was redelivered, or the lease ran out and
// another worker took it), and on 410 Gone deactivates the subscription.
func (db *DB) FinishWebhookDeliveries(ctx context.Context, rs []webhook.Result) error {
	subs := make([]string, len(rs))
	for i, r := range rs {
		subs[i] = r.SubscriptionID
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lockSubscriptions(ctx, tx, subs); err != nil {
			return err
		}
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
	var lastErr sql.NullString
	if r.Error != "" {
		lastErr = sql.NullString{String: r.Error, Valid: true}
	}
	at := Micros(r.At)
	// A retry is due at its next attempt, unless the subscription was deactivated meanwhile.
	res, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, attempts = attempts + 1,
			last_attempt_at = $2, next_attempt_at = $3, last_response_status = $4, last_response_body = $5,
			last_error = $6, lease_until = NULL, lease_token = NULL,
			due_at = CASE WHEN EXISTS (SELECT 1 FROM webhook_subscriptions s
				WHERE s.account_id = $7 AND s.id = $8 AND s.is_active = $9) THEN CAST($3 AS BIGINT) END
		WHERE account_id = $7 AND subscription_id = $8 AND id = $10 AND lease_token = $11`,
		r.Status, at, next, respStatus, r.ResponseBody, lastErr, r.AccountID, r.SubscriptionID, true, r.ID, r.Lease)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 || !r.Deactivate {
		return err
	}
	if _, err = tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET is_active = $1, updated_at = $2
		WHERE account_id = $3 AND id = $4`, false, at, r.AccountID, r.SubscriptionID); err != nil {
		return err
	}
	return setDue(ctx, tx, r.AccountID, r.SubscriptionID, false)
}
