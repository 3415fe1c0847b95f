package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/waybill/waybill/billing"
)

// BillingTx runs fn in one write transaction over the billing ledger (billing.Books).
func (db *DB) BillingTx(ctx context.Context, fn func(ctx context.Context, l billing.Ledger) error) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, ledger{db, tx}) })
}

// EndedDrafts lists DRAFT invoices whose period ended before day (billing.Books).
func (db *DB) EndedDrafts(ctx context.Context, day time.Time, limit int) ([]billing.InvoiceRef, error) {
	return collect(ctx, db.r, `SELECT account_id, id FROM invoices WHERE status = $1 AND period_end < $2
		ORDER BY period_end, id LIMIT $3`, []any{string(billing.Draft), billing.Date(day), limit},
		func(row rowScanner) (billing.InvoiceRef, error) {
			var r billing.InvoiceRef
			err := row.Scan(&r.AccountID, &r.ID)
			return r, err
		})
}

// ledger is billing.Ledger over one transaction.
type ledger struct {
	db *DB
	tx *sql.Tx
}

func (l ledger) LockProfile(ctx context.Context, accountID string) (billing.Profile, error) {
	if err := l.db.lockBillingProfile(ctx, l.tx, accountID); err != nil {
		return billing.Profile{}, err
	}
	return billingProfile(ctx, l.tx, accountID)
}

func (l ledger) Profile(ctx context.Context, accountID string) (billing.Profile, error) {
	return billingProfile(ctx, l.tx, accountID)
}

func (l ledger) SaveProfile(ctx context.Context, p billing.Profile) error {
	var name, addr sql.NullString
	if p.BillToName != "" {
		name = sql.NullString{String: p.BillToName, Valid: true}
	}
	if p.BillToAddress != nil {
		j, err := json.Marshal(p.BillToAddress)
		if err != nil {
			return err
		}
		addr = sql.NullString{String: string(j), Valid: true}
	}
	res, err := l.tx.ExecContext(ctx, `UPDATE billing_profiles SET period = $1, bill_to_name = $2, bill_to_address = $3,
		updated_at = $4 WHERE account_id = $5`, string(p.Period), name, addr, l.db.now(), p.AccountID)
	return rowsOrNotFound(res, err)
}

func (l ledger) InvoicesFrom(ctx context.Context, accountID string, start time.Time) ([]billing.Invoice, error) {
	return collect(ctx, l.tx, `SELECT `+invoiceColumns+` FROM invoices WHERE account_id = $1 AND period_start >= $2`,
		[]any{accountID, billing.Date(start)}, scanInvoice)
}

// CreateInvoice numbers the invoice from the year's sequence in the same transaction. Numbers
// are gapless: the sequence row is locked first (a no-op upsert), then the period's invoice is
// looked up again (on PostgreSQL a concurrent transaction may have created it while this one
// waited for the lock; this statement sees its commit), and only a transaction that creates
// the invoice takes the next number.
func (l ledger) CreateInvoice(ctx context.Context, prof billing.Profile, start, end time.Time) (id string, created bool, err error) {
	var last int64
	err = l.tx.QueryRowContext(ctx, `INSERT INTO invoice_sequences (year, last_seq) VALUES ($1, 0)
		ON CONFLICT (year) DO UPDATE SET last_seq = invoice_sequences.last_seq RETURNING last_seq`, start.Year()).Scan(&last)
	if err != nil {
		return "", false, err
	}
	err = l.tx.QueryRowContext(ctx, `SELECT id FROM invoices WHERE account_id = $1 AND period_start = $2`,
		prof.AccountID, billing.Date(start)).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, false, err
	}
	seq := last + 1
	if _, err := l.tx.ExecContext(ctx, `UPDATE invoice_sequences SET last_seq = $1 WHERE year = $2`, seq, start.Year()); err != nil {
		return "", false, err
	}
	id = l.db.NewID()
	_, err = l.tx.ExecContext(ctx, `INSERT INTO invoices (id, account_id, status, currency, invoice_number, period_start, period_end,
		total_cents, deferred_cents, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 0, $8, $8)`,
		id, prof.AccountID, string(billing.Draft), prof.Currency, billing.Number(start.Year(), seq),
		billing.Date(start), billing.Date(end), l.db.now())
	if err != nil {
		return "", false, err
	}
	return id, true, nil
}

func (l ledger) Invoice(ctx context.Context, accountID, id string) (billing.Invoice, error) {
	return invoice(ctx, l.tx, accountID, id)
}

// LockInvoice locks the row before reading it: on PostgreSQL the read then sees the commit of
// a transaction that held the lock before.
func (l ledger) LockInvoice(ctx context.Context, accountID, id string) (billing.Invoice, error) {
	if err := l.db.lock(ctx, l.tx, `SELECT id FROM invoices WHERE account_id = $1 AND id = $2`, accountID, id); err != nil {
		return billing.Invoice{}, err
	}
	return invoice(ctx, l.tx, accountID, id)
}

func (l ledger) SetTotal(ctx context.Context, inv billing.Invoice, total int64) error {
	res, err := l.tx.ExecContext(ctx, `UPDATE invoices SET total_cents = $1, updated_at = $2
		WHERE account_id = $3 AND id = $4 AND status = $5`, total, l.db.now(), inv.AccountID, inv.ID, string(billing.Draft))
	return rowsOrNotFound(res, err)
}

func (l ledger) MoveInvoice(ctx context.Context, inv billing.Invoice, from billing.Status) (bool, error) {
	res, err := l.tx.ExecContext(ctx, `UPDATE invoices SET status = $1, invoice_date = $2, due_date = $3, deferred_cents = $4,
		finalized_at = $5, paid_at = $6, marked_uncollectible_at = $7, voided_at = $8, updated_at = $9
		WHERE account_id = $10 AND id = $11 AND status = $12`,
		string(inv.Status), nullString(inv.InvoiceDate), nullString(inv.DueDate), inv.DeferredCents,
		nullMicros(inv.FinalizedAt), nullMicros(inv.PaidAt), nullMicros(inv.MarkedUncollectibleAt),
		nullMicros(inv.VoidedAt), Micros(inv.UpdatedAt), inv.AccountID, inv.ID, string(from))
	if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// Label reads the label with its rate (the quote of its shipment it bought) and its shipment's
// request.
func (l ledger) Label(ctx context.Context, labelID string) (billing.Label, error) {
	var b billing.Label
	var shipmentID, rateID, request string
	var purchased int64
	err := l.tx.QueryRowContext(ctx, `SELECT l.account_id, l.shipment_id, l.shipping_rate_id, l.carrier, l.service,
			l.tracking_code, l.status, l.created_at, l.insurance_cents, q.request,
			EXISTS (SELECT 1 FROM billing_line_items b WHERE b.account_id = l.account_id AND b.label_id = l.id)
		FROM shipping_labels l
		JOIN shipment_requests q ON q.shipment_id = l.shipment_id
		WHERE l.id = $1`, labelID).
		Scan(&b.AccountID, &shipmentID, &rateID, &b.Carrier, &b.Service, &b.TrackingCode, &b.Status, &purchased,
			&b.InsuranceCents, &request, &b.Billed)
	if errors.Is(err, sql.ErrNoRows) {
		return b, ErrNotFound
	}
	if err != nil {
		return b, err
	}
	b.ID, b.PurchasedAt, b.Request = labelID, Time(purchased), json.RawMessage(request)
	b.Rate, err = scanQuote(l.tx.QueryRowContext(ctx, `SELECT `+quoteColumns+` FROM shipment_quotes
		WHERE shipment_id = $1 AND id = $2`, shipmentID, rateID))
	if err != nil {
		return b, fmt.Errorf("label %s: its rate %s: %w", labelID, rateID, err)
	}
	return b, nil
}

// unbilledLabels is UnbilledLabels' query: the account's labels by status and purchase (the
// index on (account_id, status, created_at, id)), so it reads the labels in those statuses only.
func unbilledLabels(accountID string, before time.Time, statuses []string) (string, []any) {
	args := []any{accountID}
	in := placeholders(&args, statuses)
	return `SELECT l.id, l.status, l.insurance_cents, r.total_cents FROM shipping_labels l
		JOIN shipment_quotes r ON r.shipment_id = l.shipment_id AND r.id = l.shipping_rate_id
		WHERE l.account_id = $1 AND l.status IN (` + in + `) AND l.created_at < ` + arg(&args, Micros(before)) + `
		AND NOT EXISTS (SELECT 1 FROM billing_line_items b WHERE b.account_id = l.account_id AND b.label_id = l.id)`, args
}

func (l ledger) UnbilledLabels(ctx context.Context, accountID string, before time.Time, statuses []string) ([]billing.Label, error) {
	query, args := unbilledLabels(accountID, before, statuses)
	return collect(ctx, l.tx, query, args, func(row rowScanner) (billing.Label, error) {
		b := billing.Label{AccountID: accountID}
		err := row.Scan(&b.ID, &b.Status, &b.InsuranceCents, &b.Rate.TotalCents)
		return b, err
	})
}

func (l ledger) AddLineItem(ctx context.Context, accountID, labelID string, it billing.LineItem) (string, bool, error) {
	id := l.db.NewID()
	if labelID == "" {
		_, err := l.tx.ExecContext(ctx, `INSERT INTO billing_line_items (id, account_id, invoice_id, type, description,
			postage_cents, surcharges_cents, total_cents, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, accountID, it.InvoiceID, it.Type, it.Description, it.PostageCents, it.SurchargesCents, it.TotalCents, l.db.now())
		return id, err == nil, err
	}
	var purchased sql.NullInt64
	if it.PurchasedAt != nil {
		purchased = sql.NullInt64{Int64: Micros(it.PurchasedAt.Time), Valid: true}
	}
	err := l.tx.QueryRowContext(ctx, `INSERT INTO billing_line_items (id, account_id, invoice_id, type, label_id, carrier, service,
			tracking_code, description, postage_cents, surcharges_cents, total_cents, retail_cents, purchased_at,
			shipping_label_status, shipment_request_parameters, shipping_rate_metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
		ON CONFLICT (label_id) DO NOTHING RETURNING id`,
		id, accountID, it.InvoiceID, it.Type, labelID, it.Carrier, it.Service, it.TrackingCode, it.Description,
		it.PostageCents, it.SurchargesCents, it.TotalCents, it.RetailCents, purchased, it.ShippingLabelStatus,
		string(it.ShipmentRequestParameters), string(it.ShippingRateMetadata), l.db.now()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return id, err == nil, err
}

func (l ledger) LineItem(ctx context.Context, accountID, id string) (billing.LineItem, error) {
	it, err := scanLineItem(l.tx.QueryRowContext(ctx, `SELECT `+lineItemColumns+` FROM billing_line_items
		WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return it, ErrNotFound
	}
	return it, err
}

func (l ledger) DeleteLineItem(ctx context.Context, accountID, id string) error {
	res, err := l.tx.ExecContext(ctx, `UPDATE billing_line_items SET deleted_at = $1
		WHERE account_id = $2 AND id = $3 AND deleted_at IS NULL`, l.db.now(), accountID, id)
	return rowsOrNotFound(res, err)
}

func (l ledger) Statement(ctx context.Context, accountID, invoiceID string) (billing.Statement, error) {
	return statement(ctx, l.tx, accountID, invoiceID)
}

func (l ledger) StoreDocuments(ctx context.Context, accountID, invoiceID string, docs billing.Documents) error {
	pdfSum, csvSum := sha256.Sum256(docs.PDF), sha256.Sum256(docs.CSV)
	_, err := l.tx.ExecContext(ctx, `INSERT INTO invoice_documents (invoice_id, account_id, pdf, pdf_sha256, csv, csv_sha256, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (invoice_id) DO NOTHING`,
		invoiceID, accountID, docs.PDF, hex.EncodeToString(pdfSum[:]), docs.CSV, hex.EncodeToString(csvSum[:]), l.db.now())
	return err
}
