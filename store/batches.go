package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// Batches: POST /batches stores a batch and its items in one transaction before it
// answers; the batch worker claims items with a lease (FOR UPDATE SKIP LOCKED on PostgreSQL),
// fairly between accounts, and finishes each in a transaction of its own that also completes
// the batch with its last item. An item's shipment id is decided when it is stored, and its
// buy's Idempotency-Key derived from the batch and position (BatchItemKey), so an item worked
// again after a crash or an expired lease finds what the first run created and bought.

// CreateBatch stores a batch and its items in one transaction (shipping.BatchCreator).
func (db *DB) CreateBatch(ctx context.Context, b *shipping.Batch, items []shipping.NewBatchItem, completed json.RawMessage) error {
	created := Micros(b.CreatedAt.Time)
	var completedAt sql.NullInt64
	if b.CompletedAt != nil {
		completedAt = sql.NullInt64{Int64: Micros(b.CompletedAt.Time), Valid: true}
	}
	errs := make([]sql.NullString, len(items))
	pending := 0
	for i, it := range items {
		if b.Items[i].Status == shipping.ItemQueued {
			pending++
			continue
		}
		var err error
		if errs[i], err = itemErrors("", it.Errors); err != nil {
			return err
		}
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO batches (id, account_id, status, buy, label_format, item_count, pending,
			created_at, completed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, b.ID, b.AccountID, b.Status, b.Buy,
			sql.NullString{String: b.LabelFormat, Valid: b.LabelFormat != ""}, len(items), pending, created,
			completedAt)
		if err != nil {
			return err
		}
		next := 0
		for _, size := range statementSizes(len(items)) {
			var args []any
			rows := make([]string, size)
			for i := range size {
				values := placeholders(&args, []any{b.ID, next, b.AccountID, items[next].ShipmentID, items[next].Body, b.Items[next].Status, errs[next]})
				rows[i] = "(" + values + ", 0, 0, " + arg(&args, created) + ")"
				next++
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO batch_items (batch_id, position, account_id, shipment_id, body,
				status, errors, attempts, claimed_until, queued_at) VALUES `+strings.Join(rows, ", "), args...); err != nil {
				return err
			}
		}
		if completed == nil {
			return nil
		}
		return db.emitEvent(ctx, tx, b.AccountID, webhook.TopicBatchCompleted, completed)
	})
}

// itemErrors is the errors column of a FAILED item: its error, and its shipment if it made one.
func itemErrors(shipmentID string, errs json.RawMessage) (sql.NullString, error) {
	var shipment *string
	if shipmentID != "" {
		shipment = &shipmentID
	}
	b, err := json.Marshal(struct {
		ShipmentID *string         `json:"shipment_id"`
		Errors     json.RawMessage `json:"errors"`
	}{shipment, errs})
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

const batchColumns = `id, account_id, status, buy, label_format, item_count, created_at, completed_at`

func scanBatch(row rowScanner) (*shipping.Batch, error) {
	var b shipping.Batch
	var format sql.NullString
	var created int64
	var completed sql.NullInt64
	if err := row.Scan(&b.ID, &b.AccountID, &b.Status, &b.Buy, &format, &b.Count, &created, &completed); err != nil {
		return nil, err
	}
	b.LabelFormat, b.CreatedAt, b.CompletedAt = format.String, stamp(created), nullStamp(completed)
	return &b, nil
}

// Batch returns one of the account's batches with its items in order, tallied.
func (db *DB) Batch(ctx context.Context, accountID, id string) (*shipping.Batch, error) {
	return batchIn(ctx, db.r, accountID, id)
}

// batchIn is Batch through q (a transaction, say).
func batchIn(ctx context.Context, q querier, accountID, id string) (*shipping.Batch, error) {
	b, err := scanBatch(q.QueryRowContext(ctx, `SELECT `+batchColumns+` FROM batches WHERE account_id = $1 AND id = $2`,
		accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT position, shipment_id, status, errors FROM batch_items
		WHERE account_id = $1 AND batch_id = $2 ORDER BY position`, accountID, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	b.Items = make([]shipping.BatchItem, 0, b.Count)
	for rows.Next() {
		var it shipping.BatchItem
		var shipment string
		var errs sql.NullString
		if err := rows.Scan(&it.Index, &shipment, &it.Status, &errs); err != nil {
			return nil, err
		}
		// The shipment id is decided up front, but shown only once the item made it (a failed
		// item's, if it made one, is stored with its error).
		if it.Status == shipping.ItemCreated || it.Status == shipping.ItemPurchased {
			it.ShipmentID = &shipment
		}
		if errs.Valid {
			var e struct {
				ShipmentID *string         `json:"shipment_id"`
				Errors     json.RawMessage `json:"errors"`
			}
			if err := json.Unmarshal([]byte(errs.String), &e); err != nil {
				return nil, err
			}
			it.ShipmentID, it.Errors = e.ShipmentID, e.Errors
		}
		b.Items = append(b.Items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	b.Tally()
	return b, nil
}

// BatchAccount returns the account of a batch (its label document's capability URL names the
// batch only).
func (db *DB) BatchAccount(ctx context.Context, id string) (string, error) {
	return db.accountOf(ctx, "batches", id)
}

// ListBatches lists the account's batches newest first, without their items but tallied.
func (db *DB) ListBatches(ctx context.Context, accountID string, p Page) (List[*shipping.Batch], error) {
	q := listQuery[*shipping.Batch]{Columns: batchColumns, From: "batches WHERE account_id = $1", Args: []any{accountID},
		Scan: func(rows *sql.Rows) (*shipping.Batch, error) { return scanBatch(rows) }}
	l, err := offsetList(ctx, db.r, q, "created_at DESC, id DESC", p)
	if err != nil || len(l.Items) == 0 {
		return l, err
	}
	byID := map[string]*shipping.Batch{}
	args := []any{accountID}
	ids := make([]string, len(l.Items))
	for i, b := range l.Items {
		byID[b.ID], ids[i] = b, b.ID
	}
	rows, err := db.r.QueryContext(ctx, `SELECT batch_id, status, COUNT(*) FROM batch_items
		WHERE account_id = $1 AND batch_id IN (`+placeholders(&args, ids)+`) GROUP BY batch_id, status`, args...)
	if err != nil {
		return l, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, status string
		var n int
		if err := rows.Scan(&id, &status, &n); err != nil {
			return l, err
		}
		switch b := byID[id]; status {
		case shipping.ItemCreated:
			b.Created = n
		case shipping.ItemPurchased:
			b.Purchased = n
		case shipping.ItemFailed:
			b.Failed = n
		}
	}
	return l, rows.Err()
}

// BatchAccounts lists the accounts with a batch in progress, in order (shipping.BatchStore).
func (db *DB) BatchAccounts(ctx context.Context) ([]string, error) {
	return collect(ctx, db.r, `SELECT DISTINCT account_id FROM batches WHERE status = $1 ORDER BY account_id`,
		[]any{shipping.BatchProcessing}, scanString)
}

// ClaimBatchItems leases up to n of the account's due batch items until lease ends
// (shipping.BatchStore): its expired leases first, then its queue in order; each becomes
// PROCESSING with its attempts counted up.
func (db *DB) ClaimBatchItems(ctx context.Context, accountID string, n int, lease time.Duration) ([]shipping.BatchClaim, error) {
	now := db.now()
	var claims []shipping.BatchClaim
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		claims = claims[:0]
		for _, c := range []struct {
			status string
			until  int64
		}{{shipping.ItemProcessing, now}, {shipping.ItemQueued, 0}} {
			if len(claims) == n {
				break
			}
			got, err := claim(ctx, db, tx, batchItemQueue(accountID, c.status, c.until, now+lease.Microseconds()), n-len(claims), scanBatchClaim)
			if err != nil {
				return err
			}
			claims = append(claims, got...)
		}
		return db.claimedBatches(ctx, tx, claims)
	})
	return claims, err
}

// batchItemQueue leases the account's items in status whose lease ended by until (0 for queued
// items, which have none) until leaseEnd, in the batch's order, by the (account_id, status,
// queued_at, batch_id, position) index.
func batchItemQueue(accountID, status string, until, leaseEnd int64) queue {
	return queue{table: "batch_items", key: []string{"batch_id", "position"},
		where: "account_id = $1 AND status = $2 AND claimed_until <= $3", args: []any{accountID, status, until},
		order: "queued_at, batch_id, position",
		set:   "status = $1, claimed_until = $2, attempts = attempts + 1", setArgs: []any{shipping.ItemProcessing, leaseEnd},
		returning: "batch_id, position, account_id, shipment_id, body, attempts"}
}

func scanBatchClaim(row rowScanner) (shipping.BatchClaim, error) {
	var c shipping.BatchClaim
	err := row.Scan(&c.BatchID, &c.Index, &c.AccountID, &c.ShipmentID, &c.Body, &c.Attempts)
	return c, err
}

// claimedBatches fills in the claims' batch settings (buy, label format), one query.
func (db *DB) claimedBatches(ctx context.Context, tx *sql.Tx, claims []shipping.BatchClaim) error {
	if len(claims) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, c := range claims {
		if !seen[c.BatchID] {
			seen[c.BatchID], ids = true, append(ids, c.BatchID)
		}
	}
	var args []any
	rows, err := tx.QueryContext(ctx, `SELECT id, buy, label_format FROM batches WHERE id IN (`+placeholders(&args, ids)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	type settings struct{ buy, format string }
	byID := map[string]settings{}
	for rows.Next() {
		var id, buy string
		var format sql.NullString
		if err := rows.Scan(&id, &buy, &format); err != nil {
			return err
		}
		byID[id] = settings{buy, format.String}
	}
	for i := range claims {
		s := byID[claims[i].BatchID]
		claims[i].Buy, claims[i].LabelFormat = s.buy, s.format
	}
	return rows.Err()
}

// CompleteBatchItem ends a claimed item in one transaction and counts it off its batch
// (shipping.BatchStore): with done, the item is the batch's last, which is COMPLETED at done.At
// and emits BATCH_COMPLETED with done.Payload; without it, an item that is the last is
// shipping.ErrLastItem and nothing is written. The claim's attempts fence it: an item claimed
// again since (its lease expired) is left alone, and the answer is shipping.ErrStaleClaim.
// Locks: the item, then its batch.
func (db *DB) CompleteBatchItem(ctx context.Context, c shipping.BatchClaim, o shipping.ItemOutcome, done *shipping.BatchCompletion) error {
	var errs sql.NullString
	if o.Status == shipping.ItemFailed {
		// A failed item's shipment, if it made one, is kept with its error.
		var err error
		if errs, err = itemErrors(o.ShipmentID, o.Errors); err != nil {
			return err
		}
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE batch_items SET status = $1, errors = $2, claimed_until = 0
			WHERE account_id = $3 AND batch_id = $4 AND position = $5 AND attempts = $6 AND status = $7`,
			o.Status, errs, c.AccountID, c.BatchID, c.Index, c.Attempts, shipping.ItemProcessing)
		if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
			return shipping.ErrStaleClaim
		} else if err != nil {
			return err
		}
		var pending int
		if err := tx.QueryRowContext(ctx, `UPDATE batches SET pending = pending - 1 WHERE account_id = $1 AND id = $2
			RETURNING pending`, c.AccountID, c.BatchID).Scan(&pending); err != nil {
			return err
		}
		switch {
		case pending > 0 && done == nil:
			return nil
		case pending > 0:
			return fmt.Errorf("batch %s: completed with %d items pending", c.BatchID, pending)
		case done == nil:
			return shipping.ErrLastItem
		}
		if _, err := tx.ExecContext(ctx, `UPDATE batches SET status = $1, completed_at = $2 WHERE account_id = $3 AND id = $4`,
			shipping.BatchCompleted, Micros(done.At), c.AccountID, c.BatchID); err != nil {
			return err
		}
		return db.emitEvent(ctx, tx, c.AccountID, webhook.TopicBatchCompleted, done.Payload)
	})
}

// Shipments returns the account's shipments with the given ids, with their rates and labels,
// in the order of ids (missing ones left out).
func (db *DB) Shipments(ctx context.Context, accountID string, ids []string) ([]*shipping.Shipment, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{accountID}
	rows, err := db.r.QueryContext(ctx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+`
		WHERE account_id = $1 AND id IN (`+placeholders(&args, ids)+`)`, args...)
	if err != nil {
		return nil, err
	}
	byID := map[string]*shipping.Shipment{}
	for rows.Next() {
		s, err := scanShipment(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		byID[s.ID] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*shipping.Shipment, 0, len(byID))
	for _, id := range ids {
		if s := byID[id]; s != nil {
			out = append(out, s)
		}
	}
	return out, db.completeShipments(ctx, accountID, out)
}
