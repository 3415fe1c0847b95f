package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// createBillingProfile gives a new account its billing profile (USD, MONTHLY, net 15), inside
// CreateAccount's transaction. The profile is keyed by the account, so it takes no id.
func (db *DB) createBillingProfile(ctx context.Context, tx *sql.Tx, accountID string) error {
	p := billing.DefaultProfile(accountID)
	now := db.now()
	_, err := tx.ExecContext(ctx, `INSERT INTO billing_profiles (account_id, currency, period, net_terms_days, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)`, accountID, p.Currency, string(p.Period), p.NetTermsDays, now)
	return err
}

// BillingProfile returns the account's billing profile.
func (db *DB) BillingProfile(ctx context.Context, accountID string) (billing.Profile, error) {
	return billingProfile(ctx, db.r, accountID)
}

func billingProfile(ctx context.Context, q querier, accountID string) (billing.Profile, error) {
	p := billing.Profile{AccountID: accountID}
	var name, addr sql.NullString
	err := q.QueryRowContext(ctx, `SELECT currency, period, net_terms_days, bill_to_name, bill_to_address
		FROM billing_profiles WHERE account_id = $1`, accountID).
		Scan(&p.Currency, &p.Period, &p.NetTermsDays, &name, &addr)
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, err
	}
	p.BillToName = name.String
	if addr.Valid {
		p.BillToAddress = &billing.Address{}
		err = json.Unmarshal([]byte(addr.String), p.BillToAddress)
	}
	return p, err
}

const invoiceColumns = `id, account_id, status, currency, invoice_number, period_start, period_end, total_cents,
	deferred_cents, invoice_date, due_date, finalized_at, paid_at, marked_uncollectible_at, voided_at, created_at, updated_at`

func scanInvoice(s rowScanner) (billing.Invoice, error) {
	var inv billing.Invoice
	var invoiceDate, dueDate sql.NullString
	var finalized, paid, uncollectible, voided sql.NullInt64
	var created, updated int64
	err := s.Scan(&inv.ID, &inv.AccountID, &inv.Status, &inv.Currency, &inv.Number, &inv.PeriodStart, &inv.PeriodEnd,
		&inv.TotalCents, &inv.DeferredCents, &invoiceDate, &dueDate, &finalized, &paid, &uncollectible, &voided, &created, &updated)
	inv.InvoiceDate, inv.DueDate = invoiceDate.String, dueDate.String
	inv.FinalizedAt, inv.PaidAt, inv.MarkedUncollectibleAt, inv.VoidedAt = NullTime(finalized), NullTime(paid), NullTime(uncollectible), NullTime(voided)
	inv.CreatedAt, inv.UpdatedAt = Time(created), Time(updated)
	return inv, err
}

// Invoice returns one of the account's invoices.
func (db *DB) Invoice(ctx context.Context, accountID, id string) (billing.Invoice, error) {
	return invoice(ctx, db.r, accountID, id)
}

func invoice(ctx context.Context, q querier, accountID, id string) (billing.Invoice, error) {
	inv, err := scanInvoice(q.QueryRowContext(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE account_id = $1 AND id = $2`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return inv, ErrNotFound
	}
	return inv, err
}

// InvoiceAccount returns the account an invoice belongs to. It serves the ADMIN endpoints, which
// act on any account: they resolve the account first and then use the account-scoped methods.
func (db *DB) InvoiceAccount(ctx context.Context, invoiceID string) (string, error) {
	return db.accountOf(ctx, "invoices", invoiceID)
}

// LineItemAccount returns the account a line item belongs to (for the ADMIN endpoints).
func (db *DB) LineItemAccount(ctx context.Context, itemID string) (string, error) {
	return db.accountOf(ctx, "billing_line_items", itemID)
}

// InvoiceFilter narrows the invoice list.
type InvoiceFilter struct {
	Status billing.Status // "" for any
	// Search matches invoice numbers containing it, ignoring case.
	Search string
}

// Invoices lists the account's invoices, newest period first.
func (db *DB) Invoices(ctx context.Context, accountID string, f InvoiceFilter, p Page) (List[billing.Invoice], error) {
	from := "invoices WHERE account_id = $1"
	args := []any{accountID}
	if f.Status != "" {
		from += " AND status = " + arg(&args, string(f.Status))
	}
	if f.Search != "" {
		from += " AND invoice_number LIKE " + arg(&args, "%"+likeEscaper.Replace(strings.ToUpper(f.Search))+"%") + ` ESCAPE '\'`
	}
	q := listQuery[billing.Invoice]{Columns: invoiceColumns, From: from, Args: args,
		Scan: func(r *sql.Rows) (billing.Invoice, error) { return scanInvoice(r) }}
	return offsetList(ctx, db.r, q, "period_start DESC, id DESC", p)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

const lineItemColumns = `id, invoice_id, type, carrier, service, tracking_code, description, postage_cents,
	surcharges_cents, total_cents, retail_cents, purchased_at, shipping_label_status, shipment_request_parameters,
	shipping_rate_metadata, created_at`

func scanLineItem(s rowScanner) (billing.LineItem, error) {
	var it billing.LineItem
	var carrier, service, tracking, status, params, meta sql.NullString
	var retail, purchased sql.NullInt64
	var created int64
	err := s.Scan(&it.ID, &it.InvoiceID, &it.Type, &carrier, &service, &tracking, &it.Description, &it.PostageCents,
		&it.SurchargesCents, &it.TotalCents, &retail, &purchased, &status, &params, &meta, &created)
	if err != nil {
		return it, err
	}
	it.Carrier, it.Service, it.TrackingCode, it.ShippingLabelStatus = billingNullString(carrier), billingNullString(service), billingNullString(tracking), billingNullString(status)
	if retail.Valid {
		it.RetailCents = &retail.Int64
	}
	it.PurchasedAt = shipping.Stamp(NullTime(purchased))
	if params.Valid {
		it.ShipmentRequestParameters = json.RawMessage(params.String)
	}
	it.Surcharges = []billing.Surcharge{}
	if meta.Valid {
		var m shipping.RateMetadata
		if err := codec.DecodeRateMetadata(meta.String, &m); err != nil {
			return it, fmt.Errorf("line item %s: shipping_rate_metadata: %w", it.ID, err)
		}
		it.ShippingRateMetadata = json.RawMessage(meta.String)
		it.Surcharges = billing.SurchargesOf(m)
	}
	it.CreatedAt = shipping.Timestamp{Time: Time(created)}
	return it, nil
}

func billingNullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// LineItems lists an invoice's live line items, oldest first. An unknown invoice, or another
// account's, is ErrNotFound.
func (db *DB) LineItems(ctx context.Context, accountID, invoiceID string, p Page) (List[billing.LineItem], error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices WHERE account_id = $1 AND id = $2`, accountID, invoiceID).Scan(&n); err != nil {
		return List[billing.LineItem]{}, err
	}
	if n == 0 {
		return List[billing.LineItem]{}, ErrNotFound
	}
	q := listQuery[billing.LineItem]{Columns: lineItemColumns,
		From: "billing_line_items WHERE account_id = $1 AND invoice_id = $2 AND deleted_at IS NULL",
		Args: []any{accountID, invoiceID},
		Scan: func(r *sql.Rows) (billing.LineItem, error) { return scanLineItem(r) }}
	return offsetList(ctx, db.r, q, "created_at ASC, id ASC", p)
}

// InvoiceWithItems returns an invoice, the account it bills, and its first limit live line
// items (oldest first; every one when limit is 0), read in one transaction so that the items
// agree with the total. more reports whether items beyond limit exist.
func (db *DB) InvoiceWithItems(ctx context.Context, accountID, invoiceID string, limit int) (inv billing.Invoice, acct billing.Account, items []billing.LineItem, more bool, err error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return inv, acct, nil, false, err
	}
	defer tx.Rollback()
	if inv, err = invoice(ctx, tx, accountID, invoiceID); err != nil {
		return inv, acct, nil, false, err
	}
	acct.ID = accountID
	if err := tx.QueryRowContext(ctx, `SELECT name, brand FROM accounts WHERE id = $1`, accountID).Scan(&acct.Name, &acct.Brand); err != nil {
		return inv, acct, nil, false, err
	}
	stmt := `SELECT ` + lineItemColumns + ` FROM billing_line_items
		WHERE account_id = $1 AND invoice_id = $2 AND deleted_at IS NULL ORDER BY created_at ASC, id ASC`
	args := []any{accountID, invoiceID}
	if limit > 0 {
		stmt += " LIMIT $3"
		args = append(args, limit+1)
	}
	if items, err = collect(ctx, tx, stmt, args, scanLineItem); err != nil {
		return inv, acct, nil, false, err
	}
	if limit > 0 && len(items) > limit {
		items, more = items[:limit], true
	}
	if items == nil {
		items = []billing.LineItem{}
	}
	return inv, acct, items, more, nil
}

// lockBillingProfile locks the account's billing profile (db.lock): a change of it and the
// choice of the invoice a charge lands on (which reads its period) run one after the other.
func (db *DB) lockBillingProfile(ctx context.Context, tx *sql.Tx, accountID string) error {
	return db.lock(ctx, tx, `SELECT account_id FROM billing_profiles WHERE account_id = $1`, accountID)
}
