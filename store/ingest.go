package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
)

// OrganizationSecret returns the account of an organization id and its current ingest secret
// (ingest.Inbox). The secret is read afresh on every request, so a rotation takes effect at once.
func (db *DB) OrganizationSecret(ctx context.Context, organizationID string) (accountID, secret string, err error) {
	a, err := db.accountWhere(ctx, "organization_id", organizationID)
	if errors.Is(err, ErrNotFound) {
		return "", "", ingest.ErrUnknownOrganization
	}
	return a.ID, a.IngestSecret, err
}

// EnqueueImport commits body to the inbox as a QUEUED import (ingest.Inbox). A body the
// account already sent (same SHA-256) is not stored again: its import is returned instead.
func (db *DB) EnqueueImport(ctx context.Context, accountID string, body []byte, orderID *string) (ingest.Import, bool, error) {
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	imp := ingest.Import{ID: db.NewID(), AccountID: accountID, OrderID: orderID, Status: ingest.StatusQueued,
		Errors: []shipping.FieldError{}, ReceivedAt: Time(db.now())}
	created := false
	// The insert and the read of an earlier import of the same body need no transaction
	// around them: the read runs only when the insert found that import committed.
	err := db.write(ctx, func(ctx context.Context, w writer) error {
		res, err := w.ExecContext(ctx, `INSERT INTO order_imports
			(id, account_id, body_sha256, body, order_id, status, attempts, claimed_until, received_at)
			VALUES ($1, $2, $3, $4, $5, $6, 0, 0, $7)
			ON CONFLICT (account_id, body_sha256) DO NOTHING`,
			imp.ID, accountID, hash, string(body), orderID, ingest.StatusQueued, Micros(imp.ReceivedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			created = n == 1
			return err
		}
		imp, err = scanImport(w.QueryRowContext(ctx, `SELECT `+importColumns+` FROM order_imports
			WHERE account_id = $1 AND body_sha256 = $2`, accountID, hash))
		return err
	})
	if err != nil {
		return ingest.Import{}, false, err
	}
	return imp, created, nil
}

// OrderImport returns one import of the account.
func (db *DB) OrderImport(ctx context.Context, accountID, id string) (ingest.Import, error) {
	imp, err := scanImport(db.r.QueryRowContext(ctx, `SELECT `+importColumns+` FROM order_imports
		WHERE account_id = $1 AND id = $2`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ingest.Import{}, ErrNotFound
	}
	return imp, err
}

const importColumns = `id, account_id, order_id, status, errors, attempts, received_at, processed_at`

func scanImport(row rowScanner) (ingest.Import, error) {
	var imp ingest.Import
	var orderID, errs sql.NullString
	var received int64
	var processed sql.NullInt64
	if err := row.Scan(&imp.ID, &imp.AccountID, &orderID, &imp.Status, &errs, &imp.Attempts, &received, &processed); err != nil {
		return ingest.Import{}, err
	}
	if orderID.Valid {
		imp.OrderID = &orderID.String
	}
	imp.Errors = []shipping.FieldError{}
	if errs.Valid {
		if err := json.Unmarshal([]byte(errs.String), &imp.Errors); err != nil {
			return ingest.Import{}, err
		}
	}
	imp.ReceivedAt, imp.ProcessedAt = Time(received), NullTime(processed)
	return imp, nil
}

// ClaimImports leases up to limit due imports to the caller (ingest.Queue). It is the one
// query that spans accounts: the worker serves them all. Expired leases come first (few: at
// most the imports in flight when a worker stopped), then the queue in arrival order. Each is
// one equality on status, so the queue's claim reads the first rows of the (status,
// received_at, id) index instead of sorting the backlog.
func (db *DB) ClaimImports(ctx context.Context, lease time.Duration, limit int) ([]ingest.Claim, error) {
	now := db.now()
	var claims []ingest.Claim
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		claims = claims[:0]
		for _, due := range []struct {
			where string
			args  []any
		}{{claimExpired, []any{ingest.StatusProcessing, now}}, {claimQueued, []any{ingest.StatusQueued}}} {
			got, err := claim(ctx, db, tx, importQueue(due.where, due.args, now+lease.Microseconds()), limit-len(claims), scanClaim)
			if err != nil {
				return err
			}
			if claims = append(claims, got...); len(claims) >= limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(claims, func(a, b ingest.Claim) int {
		return cmp.Or(a.ReceivedAt.Compare(b.ReceivedAt), cmp.Compare(a.ID, b.ID))
	})
	return claims, nil
}

// The two claims' conditions: expired leases ($1 is PROCESSING, $2 now), and the queue ($1
// QUEUED; a queued import is never leased, its claimed_until is 0).
const (
	claimExpired = "status = $1 AND claimed_until <= $2"
	claimQueued  = "status = $1"
)

// importQueue leases the oldest imports matching where (with args) until until, by the
// (status, received_at, id) index.
func importQueue(where string, args []any, until int64) queue {
	return queue{table: "order_imports", key: []string{"id"}, where: where, args: args, order: "received_at, id",
		set: "status = $1, claimed_until = $2, attempts = attempts + 1", setArgs: []any{ingest.StatusProcessing, until},
		returning: "id, account_id, body, attempts, received_at"}
}

func scanClaim(row rowScanner) (ingest.Claim, error) {
	var c ingest.Claim
	var body string
	var received int64
	err := row.Scan(&c.ID, &c.AccountID, &body, &c.Attempts, &received)
	c.Body, c.ReceivedAt = []byte(body), Time(received)
	return c, err
}

// CompleteImports ends claimed imports and upserts their orders in one transaction
// (ingest.Queue). A claim's attempts fence it: if its lease expired and the import was claimed
// again, it is stale, skipped and counted; the others all commit or none does. An order whose
// stored content comes from a newer import is left alone; the import is PROCESSED all the
// same. The batch is written in a stable key order (account, order id, import id), so two
// processes completing batches that touch the same orders lock them in the same order and
// never deadlock. It takes two statements per 64 completions (statementSizes), not two per
// completion: on PostgreSQL each statement is a round trip.
func (db *DB) CompleteImports(ctx context.Context, done []ingest.Completion) (stale int, err error) {
	done = slices.Clone(done)
	slices.SortFunc(done, func(a, b ingest.Completion) int {
		return cmp.Or(cmp.Compare(a.Claim.AccountID, b.Claim.AccountID), cmp.Compare(orderKey(a), orderKey(b)),
			cmp.Compare(a.Claim.ID, b.Claim.ID))
	})
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stale = 0
		rest := done
		for _, size := range statementSizes(len(rest)) {
			chunk := rest[:size]
			rest = rest[size:]
			ended, err := db.endImports(ctx, tx, chunk)
			if err != nil {
				return err
			}
			stale += len(chunk) - len(ended)
			if err := db.upsertOrders(ctx, tx, chunk, ended); err != nil {
				return err
			}
		}
		return nil
	})
	return stale, err
}

// statementSizes splits n rows into statements of 64, 16, 4 and 1 rows. A multi-row
// statement's text depends on its row count, and every text is prepared and kept by each
// connection that runs it (SQLite's statement cache, pgx's), so only four texts are used:
// with a text per batch size, a writer's cache held dozens of statements of thousands of
// parameters (peak RSS 57 -> 93 MB under .ci/load).
func statementSizes(n int) []int {
	var sizes []int
	for size := 64; n > 0; size /= 4 {
		for ; n >= size; n -= size {
			sizes = append(sizes, size)
		}
	}
	return sizes
}

// orderKey is the order id a completion upserts, "" when it upserts none.
func orderKey(d ingest.Completion) string {
	if d.Order == nil {
		return ""
	}
	return d.Order.OrderID
}

// endImports ends the claimed imports of done, PROCESSED or FAILED, in one statement, and
// returns the ids it ended: a claim whose attempts no longer match (claimed again after its
// lease expired) or that is no longer PROCESSING is stale and left alone.
func (db *DB) endImports(ctx context.Context, tx *sql.Tx, done []ingest.Completion) (map[string]bool, error) {
	// SQLite numbers parameters in the order they first appear, so they are numbered so.
	var args []any
	rows := make([]string, len(done))
	for i, d := range done {
		status, errsJSON := ingest.StatusProcessed, sql.NullString{}
		if d.Order == nil {
			status = ingest.StatusFailed
			b, err := json.Marshal(d.Errors)
			if err != nil {
				return nil, err
			}
			errsJSON = sql.NullString{String: string(b), Valid: true}
		}
		rows[i] = "(CAST(" + arg(&args, d.Claim.AccountID) + " AS TEXT), CAST(" + arg(&args, d.Claim.ID) + " AS TEXT), CAST(" +
			arg(&args, d.Claim.Attempts) + " AS BIGINT), CAST(" + arg(&args, status) + " AS TEXT), CAST(" + arg(&args, errsJSON) + " AS TEXT))"
	}
	query := `WITH ended (account_id, id, attempts, status, errors) AS (VALUES ` + strings.Join(rows, ", ") + `)
		UPDATE order_imports SET status = ended.status, errors = ended.errors, processed_at = ` + arg(&args, db.now()) + `,
			claimed_until = 0
		FROM ended
		WHERE order_imports.account_id = ended.account_id AND order_imports.id = ended.id
			AND order_imports.attempts = ended.attempts AND order_imports.status = ` + arg(&args, ingest.StatusProcessing) + `
		RETURNING order_imports.id`
	res, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	ended := map[string]bool{}
	for res.Next() {
		var id string
		if err := res.Scan(&id); err != nil {
			return nil, err
		}
		ended[id] = true
	}
	return ended, res.Err()
}

// upsertOrders upserts the orders of the completions of done that ended (done is in key
// order), in statements of statementSizes rows. An order whose stored content comes from a
// newer import is left alone. Of several completions of one order, the newest import's content is written, under the
// id the first would have been given: what completing them one after another would store.
func (db *DB) upsertOrders(ctx context.Context, tx *sql.Tx, done []ingest.Completion, ended map[string]bool) error {
	var orders []orderUpsert
	for _, d := range done {
		if d.Order == nil || !ended[d.Claim.ID] {
			continue
		}
		u := orderUpsert{db.NewID(), d}
		if last := len(orders) - 1; last >= 0 && orders[last].d.Claim.AccountID == d.Claim.AccountID &&
			orders[last].d.Order.OrderID == d.Order.OrderID {
			if d.Claim.Supersedes(orders[last].d.Claim) {
				orders[last].d = d
			}
			continue
		}
		orders = append(orders, u)
	}
	for _, size := range statementSizes(len(orders)) {
		if err := db.insertOrders(ctx, tx, orders[:size]); err != nil {
			return err
		}
		orders = orders[size:]
	}
	return nil
}

// orderUpsert is one order upsertOrders writes: its id if new, and the completion it comes from.
type orderUpsert struct {
	id string
	d  ingest.Completion
}

// insertOrders upserts orders in one statement.
func (db *DB) insertOrders(ctx context.Context, tx *sql.Tx, orders []orderUpsert) error {
	now := db.now()
	var args []any // numbered in order of first appearance, as SQLite binds them
	rows := make([]string, len(orders))
	for i, u := range orders {
		c, o := u.d.Claim, u.d.Order
		tags, err := json.Marshal(o.Tags)
		if err != nil {
			return err
		}
		var addr sql.NullString
		if o.ShippingAddress != nil {
			b, err := json.Marshal(o.ShippingAddress)
			if err != nil {
				return err
			}
			addr = sql.NullString{String: string(b), Valid: true}
		}
		fos, err := json.Marshal(o.FulfillmentOrders)
		if err != nil {
			return err
		}
		values := placeholders(&args, []any{u.id, c.AccountID, o.OrderID, o.Name, string(tags), addr, string(fos), c.ID, Micros(c.ReceivedAt)})
		at := arg(&args, now)
		rows[i] = "(" + values + ", " + at + ", " + at + ")"
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO orders (id, account_id, order_id, name, tags, shipping_address,
			fulfillment_orders, import_id, import_received_at, created_at, updated_at)
		VALUES `+strings.Join(rows, ", ")+`
		ON CONFLICT (account_id, order_id) DO UPDATE SET name = excluded.name, tags = excluded.tags,
			shipping_address = excluded.shipping_address, fulfillment_orders = excluded.fulfillment_orders,
			import_id = excluded.import_id, import_received_at = excluded.import_received_at,
			updated_at = excluded.updated_at
		WHERE orders.import_received_at < excluded.import_received_at
			OR (orders.import_received_at = excluded.import_received_at AND orders.import_id < excluded.import_id)`, args...)
	return err
}

// Order returns one order of the account by waybill's id.
func (db *DB) Order(ctx context.Context, accountID, id string) (ingest.Order, error) {
	return oneOrder(ctx, db, `SELECT `+orderColumns+` FROM orders WHERE account_id = $1 AND id = $2`, accountID, id)
}

// OrderBySender returns the account's order with the sender's order_id (one at most).
func (db *DB) OrderBySender(ctx context.Context, accountID, orderID string) (ingest.Order, error) {
	return oneOrder(ctx, db, `SELECT `+orderColumns+` FROM orders WHERE account_id = $1 AND order_id = $2`, accountID, orderID)
}

// oneOrder reads the order query finds; ErrNotFound when it finds none.
func oneOrder(ctx context.Context, db *DB, query string, args ...any) (ingest.Order, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return ingest.Order{}, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return ingest.Order{}, err
		}
		return ingest.Order{}, ErrNotFound
	}
	return scanOrder(rows)
}

// ListOrders lists the account's orders, newest first; a non-empty orderID keeps only the
// order with that payload id.
func (db *DB) ListOrders(ctx context.Context, accountID, orderID string, p Page) (List[ingest.Order], error) {
	q := listQuery[ingest.Order]{Columns: orderColumns, From: "orders WHERE account_id = $1", Args: []any{accountID}, Scan: scanOrder}
	if orderID != "" {
		q.From += " AND order_id = $2"
		q.Args = append(q.Args, orderID)
	}
	return offsetList(ctx, db.r, q, "created_at DESC, id DESC", p)
}

const orderColumns = `id, account_id, order_id, name, tags, shipping_address, fulfillment_orders, import_id, created_at, updated_at`

func scanOrder(rows *sql.Rows) (ingest.Order, error) {
	var o ingest.Order
	var tags, fos string
	var addr sql.NullString
	var created, updated int64
	if err := rows.Scan(&o.ID, &o.AccountID, &o.OrderID, &o.Name, &tags, &addr, &fos, &o.ImportID, &created, &updated); err != nil {
		return ingest.Order{}, err
	}
	if err := json.Unmarshal([]byte(tags), &o.Tags); err != nil {
		return ingest.Order{}, err
	}
	if addr.Valid {
		o.ShippingAddress = new(ingest.Address)
		if err := json.Unmarshal([]byte(addr.String), o.ShippingAddress); err != nil {
			return ingest.Order{}, err
		}
	}
	if err := json.Unmarshal([]byte(fos), &o.FulfillmentOrders); err != nil {
		return ingest.Order{}, err
	}
	o.CreatedAt, o.UpdatedAt = Time(created), Time(updated)
	return o, nil
}
