package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
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

type billingQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func billingProfile(ctx context.Context, q billingQuerier, accountID string) (billing.Profile, error) {
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

// UpdateBillingProfile changes the account's billing profile in one transaction: change edits
// the stored profile, the bill-to is checked (billing.NormalizeBillTo), and the result is
// stored and returned. The period cannot change once the account has an invoice
// (ErrInvalidState): invoice periods never overlap.
func (db *DB) UpdateBillingProfile(ctx context.Context, accountID string, change func(*billing.Profile)) (billing.Profile, error) {
	var p billing.Profile
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Locked before it is read: two changes of different fields must not undo each other,
		// and the first invoice (draftInvoiceFor) must not be made under the old period.
		if err := db.lockBillingProfile(ctx, tx, accountID); err != nil {
			return err
		}
		old, err := billingProfile(ctx, tx, accountID)
		if err != nil {
			return err
		}
		p = old
		if old.BillToAddress != nil {
			a := *old.BillToAddress
			p.BillToAddress = &a
		}
		change(&p)
		p.AccountID, p.Currency, p.NetTermsDays = old.AccountID, old.Currency, old.NetTermsDays
		if !p.Period.Valid() {
			return fmt.Errorf("store: unknown billing period %q", p.Period)
		}
		if err := billing.NormalizeBillTo(&p); err != nil {
			return err
		}
		if p.Period != old.Period {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices WHERE account_id = $1`, accountID).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w: the billing period cannot change once the account has invoices", billing.ErrInvalidState)
			}
		}
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
		res, err := tx.ExecContext(ctx, `UPDATE billing_profiles SET period = $1, bill_to_name = $2, bill_to_address = $3,
			updated_at = $4 WHERE account_id = $5`, string(p.Period), name, addr, db.now(), accountID)
		return rowsOrNotFound(res, err)
	})
	return p, err
}

// SetBillingPeriod changes the account's billing period. Periods of invoices never overlap, so
// the change is refused (ErrInvalidState) once the account has an invoice.
func (db *DB) SetBillingPeriod(ctx context.Context, accountID string, period billing.Period) error {
	if !period.Valid() {
		return fmt.Errorf("store: unknown billing period %q", period)
	}
	return db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices WHERE account_id = $1`, accountID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: the billing period cannot change once the account has invoices", billing.ErrInvalidState)
		}
		res, err := tx.ExecContext(ctx, `UPDATE billing_profiles SET period = $1, updated_at = $2 WHERE account_id = $3`,
			string(period), db.now(), accountID)
		return rowsOrNotFound(res, err)
	})
}

const invoiceColumns = `id, account_id, status, currency, invoice_number, period_start, period_end, total_cents,
	deferred_cents, invoice_date, due_date, finalized_at, paid_at, marked_uncollectible_at, voided_at, created_at, updated_at`

type billingRow interface{ Scan(dest ...any) error }

func scanInvoice(s billingRow) (billing.Invoice, error) {
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

func invoice(ctx context.Context, q billingQuerier, accountID, id string) (billing.Invoice, error) {
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
		args = append(args, string(f.Status))
		from += fmt.Sprintf(" AND status = $%d", len(args))
	}
	if f.Search != "" {
		args = append(args, "%"+likeEscaper.Replace(strings.ToUpper(f.Search))+"%")
		from += fmt.Sprintf(` AND invoice_number LIKE $%d ESCAPE '\'`, len(args))
	}
	q := Query[billing.Invoice]{Columns: invoiceColumns, From: from, Args: args,
		Scan: func(r *sql.Rows) (billing.Invoice, error) { return scanInvoice(r) }}
	return OffsetList(ctx, db.r, q, "period_start DESC, id DESC", p)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

const lineItemColumns = `id, invoice_id, type, carrier, service, tracking_code, description, postage_cents,
	surcharges_cents, total_cents, retail_cents, purchased_at, shipping_label_status, shipment_request_parameters,
	shipping_rate_metadata, created_at`

func scanLineItem(s billingRow) (billing.LineItem, error) {
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
		if fastRateMetadata(meta.String, &m) {
			it.ShippingRateMetadata = json.RawMessage(meta.String)
		} else {
			// Written in another shape (before the real product's field names): show it in
			// today's.
			if err := decodeRateMetadata(meta.String, &m); err != nil {
				return it, fmt.Errorf("line item %s: shipping_rate_metadata: %w", it.ID, err)
			}
			b, err := json.Marshal(m)
			if err != nil {
				return it, err
			}
			it.ShippingRateMetadata = b
		}
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
	q := Query[billing.LineItem]{Columns: lineItemColumns,
		From: "billing_line_items WHERE account_id = $1 AND invoice_id = $2 AND deleted_at IS NULL",
		Args: []any{accountID, invoiceID},
		Scan: func(r *sql.Rows) (billing.LineItem, error) { return scanLineItem(r) }}
	return OffsetList(ctx, db.r, q, "created_at ASC, id ASC", p)
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
	rows, err := tx.QueryContext(ctx, stmt, args...)
	if err != nil {
		return inv, acct, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		it, err := scanLineItem(rows)
		if err != nil {
			return inv, acct, nil, false, err
		}
		items = append(items, it)
	}
	if limit > 0 && len(items) > limit {
		items, more = items[:limit], true
	}
	if items == nil {
		items = []billing.LineItem{}
	}
	return inv, acct, items, more, rows.Err()
}

// OpenDraftInvoice returns the account's DRAFT invoice that a charge made now would land on,
// creating it if needed (see draftInvoiceFor); created reports whether it did.
func (db *DB) OpenDraftInvoice(ctx context.Context, accountID string) (inv billing.Invoice, created bool, err error) {
	err = db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var id string
		if id, created, err = db.draftInvoiceFor(ctx, tx, accountID, db.now()); err != nil {
			return err
		}
		inv, err = invoice(ctx, tx, accountID, id)
		return err
	})
	return inv, created, err
}

// draftInvoiceFor returns the DRAFT invoice a charge made at (microseconds) lands on:
//
//   - the invoice of the period containing at, created as a DRAFT if the account has none;
//   - if that invoice is already finalized, the account's earliest DRAFT of a later period;
//   - if there is none, a new DRAFT for the period following the account's latest invoice.
//
// So a charge is never lost and never lands on a finalized invoice: it is billed on the next
// invoice still open for changes.
func (db *DB) draftInvoiceFor(ctx context.Context, tx *sql.Tx, accountID string, at int64) (id string, created bool, err error) {
	if err := db.lockBillingProfile(ctx, tx, accountID); err != nil {
		return "", false, err
	}
	prof, err := billingProfile(ctx, tx, accountID)
	if err != nil {
		return "", false, err
	}
	start, end := prof.Period.Bounds(Time(at))
	var status billing.Status
	err = tx.QueryRowContext(ctx, `SELECT id, status FROM invoices WHERE account_id = $1 AND period_start = $2`,
		accountID, billing.Date(start)).Scan(&id, &status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return db.createInvoice(ctx, tx, prof, start, end)
	case err != nil:
		return "", false, err
	case status == billing.Draft:
		return id, false, nil
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM invoices WHERE account_id = $1 AND status = $2 AND period_start > $3
		ORDER BY period_start ASC LIMIT 1`, accountID, string(billing.Draft), billing.Date(start)).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, false, err
	}
	var latest string
	if err := tx.QueryRowContext(ctx, `SELECT MAX(period_end) FROM invoices WHERE account_id = $1`, accountID).Scan(&latest); err != nil {
		return "", false, err
	}
	last, err := billing.ParseDate(latest)
	if err != nil {
		return "", false, err
	}
	start, end = prof.Period.Bounds(last.AddDate(0, 0, 1))
	return db.createInvoice(ctx, tx, prof, start, end)
}

// createInvoice creates a DRAFT invoice for the period, numbering it from the year's invoice
// sequence in the same transaction. Numbers are gapless: the sequence row is locked first (a
// no-op upsert), then the period's invoice is looked up again (on PostgreSQL a concurrent
// transaction may have created it while this one waited for the lock; this statement sees
// its commit), and only a transaction that creates the invoice takes the next number. Should
// the period's invoice exist by then, it is returned and created is false.
func (db *DB) createInvoice(ctx context.Context, tx *sql.Tx, prof billing.Profile, start, end time.Time) (id string, created bool, err error) {
	var last int64
	err = tx.QueryRowContext(ctx, `INSERT INTO invoice_sequences (year, last_seq) VALUES ($1, 0)
		ON CONFLICT (year) DO UPDATE SET last_seq = invoice_sequences.last_seq RETURNING last_seq`, start.Year()).Scan(&last)
	if err != nil {
		return "", false, err
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM invoices WHERE account_id = $1 AND period_start = $2`,
		prof.AccountID, billing.Date(start)).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, false, err
	}
	seq := last + 1
	if _, err := tx.ExecContext(ctx, `UPDATE invoice_sequences SET last_seq = $1 WHERE year = $2`, seq, start.Year()); err != nil {
		return "", false, err
	}
	id = db.NewID()
	_, err = tx.ExecContext(ctx, `INSERT INTO invoices (id, account_id, status, currency, invoice_number, period_start, period_end,
		total_cents, deferred_cents, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 0, $8, $8)`,
		id, prof.AccountID, string(billing.Draft), prof.Currency, billing.Number(start.Year(), seq),
		billing.Date(start), billing.Date(end), db.now())
	if err != nil {
		return "", false, err
	}
	return id, true, nil
}

// addToDraft adds cents to a DRAFT invoice's total; an invoice in another status is
// ErrInvalidState, an unknown one ErrNotFound. In PostgreSQL the update also locks the row, so
// a concurrent finalize waits for the charge.
func (db *DB) addToDraft(ctx context.Context, tx *sql.Tx, accountID, invoiceID string, cents int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE invoices SET total_cents = total_cents + $1, updated_at = $2
		WHERE account_id = $3 AND id = $4 AND status = $5`, cents, db.now(), accountID, invoiceID, string(billing.Draft))
	if err := rowsOrNotFound(res, err); !errors.Is(err, ErrNotFound) {
		return err
	}
	inv, err := invoice(ctx, tx, accountID, invoiceID)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: invoice %s is %s; only DRAFT invoices change", billing.ErrInvalidState, inv.Number, inv.Status)
}

// BillFinishedLabel is billFinishedLabel for a caller's own transaction (the store suite
// stands in for the tracking work with it).
func (db *DB) BillFinishedLabel(ctx context.Context, tx *sql.Tx, labelID string, finishedAt int64) error {
	return db.billFinishedLabel(ctx, tx, labelID, finishedAt)
}

// billFinishedLabel bills a label whose shipment finished (DELIVERED or RETURN_TO_SENDER) at
// finishedAt (microseconds), inside the tracking event's transaction: one POSTAGE line item on
// the DRAFT invoice draftInvoiceFor picks. Call it after the label row has its finishing
// status (the line item records it). Calling it again for the same label does nothing: a label
// is billed at most once (billing_line_items.label_id is UNIQUE). VOIDED labels are never billed.
// The label is looked up by its id alone (the caller's own row); every later query is scoped to
// the label's account.
func (db *DB) billFinishedLabel(ctx context.Context, tx *sql.Tx, labelID string, finishedAt int64) error {
	var accountID, carrier, service, tracking, status, request, meta string
	var rate shipping.Rate
	var purchased, insurance int64
	err := tx.QueryRowContext(ctx, `SELECT l.account_id, l.carrier, l.service, l.tracking_code, l.status, l.created_at,
			l.insurance_cents, q.request, r.postage_cents, r.surcharges_cents, r.total_cents, r.retail_cents, r.rate_metadata
		FROM shipping_labels l
		JOIN shipment_requests q ON q.shipment_id = l.shipment_id
		JOIN shipping_rates r ON r.id = l.shipping_rate_id AND r.account_id = l.account_id
		WHERE l.id = $1`, labelID).
		Scan(&accountID, &carrier, &service, &tracking, &status, &purchased, &insurance, &request,
			&rate.PostageCents, &rate.SurchargesCents, &rate.TotalCents, &rate.RetailCents, &meta)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil || status == "VOIDED" {
		return err
	}
	if insurance > 0 {
		// The postage is billed as bought: the rate with its insurance surcharge.
		if err := decodeRateMetadata(meta, &rate.RateMetadata); err != nil {
			return fmt.Errorf("label %s: rate_metadata: %w", labelID, err)
		}
		rate = rate.Insured(insurance)
		b, err := json.Marshal(rate.RateMetadata)
		if err != nil {
			return err
		}
		meta = string(b)
	}
	postage, surcharges, total, retail := rate.PostageCents, rate.SurchargesCents, rate.TotalCents, rate.RetailCents
	var billed int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM billing_line_items WHERE account_id = $1 AND label_id = $2`,
		accountID, labelID).Scan(&billed); err != nil || billed > 0 {
		return err
	}
	// The invoice's total is updated (in PostgreSQL: the row locked) before the item is written,
	// so a finalize cannot slip in between. Should one have finalized the chosen invoice first,
	// the charge goes to the next DRAFT, chosen again.
	var invoiceID string
	for attempt := 1; ; attempt++ {
		if invoiceID, _, err = db.draftInvoiceFor(ctx, tx, accountID, finishedAt); err != nil {
			return err
		}
		err = db.addToDraft(ctx, tx, accountID, invoiceID, total)
		if err == nil {
			break
		}
		if !errors.Is(err, billing.ErrInvalidState) || attempt == 3 {
			return err
		}
	}
	var itemID string
	err = tx.QueryRowContext(ctx, `INSERT INTO billing_line_items (id, account_id, invoice_id, type, label_id, carrier, service,
			tracking_code, description, postage_cents, surcharges_cents, total_cents, retail_cents, purchased_at,
			shipping_label_status, shipment_request_parameters, shipping_rate_metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
		ON CONFLICT (label_id) DO NOTHING RETURNING id`,
		db.NewID(), accountID, invoiceID, billing.Postage, labelID, carrier, service, tracking,
		billing.PostageDescription(carrier, service, tracking), postage, surcharges, total, retail, purchased,
		status, request, meta, db.now()).Scan(&itemID)
	if errors.Is(err, sql.ErrNoRows) {
		// Billed concurrently: take the charge back off the total.
		return db.addToDraft(ctx, tx, accountID, invoiceID, -total)
	}
	return err
}

// AddFee adds a FEE line item (a credit when amountCents is negative) to a DRAFT invoice.
func (db *DB) AddFee(ctx context.Context, accountID, invoiceID, description string, amountCents int64) (billing.LineItem, error) {
	if err := billing.ValidateFee(description, amountCents); err != nil {
		return billing.LineItem{}, err
	}
	var it billing.LineItem
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.addToDraft(ctx, tx, accountID, invoiceID, amountCents); err != nil {
			return err
		}
		id := db.NewID()
		_, err := tx.ExecContext(ctx, `INSERT INTO billing_line_items (id, account_id, invoice_id, type, description,
			postage_cents, surcharges_cents, total_cents, created_at) VALUES ($1, $2, $3, $4, $5, 0, 0, $6, $7)`,
			id, accountID, invoiceID, billing.Fee, description, amountCents, db.now())
		if err != nil {
			return err
		}
		it, err = scanLineItem(tx.QueryRowContext(ctx, `SELECT `+lineItemColumns+` FROM billing_line_items
			WHERE account_id = $1 AND id = $2`, accountID, id))
		return err
	})
	return it, err
}

// DeleteLineItem soft-deletes a line item of a DRAFT invoice and takes it off the invoice's
// total. A deleted or unknown item is ErrNotFound; an item of a finalized invoice is
// ErrInvalidState.
func (db *DB) DeleteLineItem(ctx context.Context, accountID, itemID string) error {
	return db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var invoiceID string
		var total int64
		err := tx.QueryRowContext(ctx, `SELECT invoice_id, total_cents FROM billing_line_items
			WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`, accountID, itemID).Scan(&invoiceID, &total)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := db.addToDraft(ctx, tx, accountID, invoiceID, -total); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE billing_line_items SET deleted_at = $1
			WHERE account_id = $2 AND id = $3 AND deleted_at IS NULL`, db.now(), accountID, itemID)
		return rowsOrNotFound(res, err)
	})
}

// TransitionInvoice applies an action to an invoice (billing.Next decides whether it may).
// Finalizing sets invoice_date (today), due_date (net terms later) and deferred_cents, and
// renders the documents with billing.DefaultIssuer (FinalizeInvoice names the renderer). The
// update is conditional on the status read, so concurrent moves cannot both happen.
func (db *DB) TransitionInvoice(ctx context.Context, accountID, invoiceID string, action billing.Action) (billing.Invoice, error) {
	return db.transitionInvoice(ctx, accountID, invoiceID, action, billing.Renderer{})
}

// FinalizeInvoice finalizes a DRAFT invoice (see TransitionInvoice) and, in the same
// transaction, renders its PDF and CSV with r and stores them: a finalized invoice never
// changes, so its documents are drawn once and served from the store.
func (db *DB) FinalizeInvoice(ctx context.Context, accountID, invoiceID string, r billing.Renderer) (billing.Invoice, error) {
	return db.transitionInvoice(ctx, accountID, invoiceID, billing.Finalize, r)
}

func (db *DB) transitionInvoice(ctx context.Context, accountID, invoiceID string, action billing.Action, r billing.Renderer) (billing.Invoice, error) {
	var inv billing.Invoice
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, err := invoice(ctx, tx, accountID, invoiceID)
		if err != nil {
			return err
		}
		to, err := billing.Next(cur.Status, action)
		if err != nil {
			return err
		}
		now := db.now()
		var res sql.Result
		switch action {
		case billing.Finalize:
			res, err = db.finalize(ctx, tx, cur, now)
		default:
			column := map[billing.Action]string{billing.Pay: "paid_at", billing.MarkUncollectible: "marked_uncollectible_at",
				billing.VoidInvoice: "voided_at"}[action]
			res, err = tx.ExecContext(ctx, `UPDATE invoices SET status = $1, `+column+` = $2, updated_at = $2
				WHERE account_id = $3 AND id = $4 AND status = $5`, string(to), now, accountID, invoiceID, string(cur.Status))
		}
		if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: invoice %s changed concurrently", billing.ErrInvalidState, cur.Number)
		} else if err != nil {
			return err
		}
		if action == billing.Finalize {
			if err := db.storeInvoiceDocuments(ctx, tx, accountID, invoiceID, r); err != nil {
				return err
			}
		}
		inv, err = invoice(ctx, tx, accountID, invoiceID)
		return err
	})
	return inv, err
}

// lockBillingProfile locks the account's billing profile (db.lock): a change of it and the
// choice of the invoice a charge lands on (which reads its period) run one after the other.
func (db *DB) lockBillingProfile(ctx context.Context, tx *sql.Tx, accountID string) error {
	return db.lock(ctx, tx, `SELECT account_id FROM billing_profiles WHERE account_id = $1`, accountID)
}

// finalize moves a DRAFT invoice to OPEN, only if it still is DRAFT. The invoice is locked
// before deferred postage is summed, so a label billed onto it meanwhile (addToDraft locks it
// too) is counted once: in the total, not also as deferred.
func (db *DB) finalize(ctx context.Context, tx *sql.Tx, inv billing.Invoice, now int64) (sql.Result, error) {
	if err := db.lock(ctx, tx, `SELECT id FROM invoices WHERE account_id = $1 AND id = $2`, inv.AccountID, inv.ID); err != nil {
		return nil, err
	}
	prof, err := billingProfile(ctx, tx, inv.AccountID)
	if err != nil {
		return nil, err
	}
	deferred, err := db.deferredCents(ctx, tx, inv)
	if err != nil {
		return nil, err
	}
	today := billing.Day(Time(now))
	return tx.ExecContext(ctx, `UPDATE invoices SET status = $1, invoice_date = $2, due_date = $3, deferred_cents = $4,
		finalized_at = $5, updated_at = $5 WHERE account_id = $6 AND id = $7 AND status = $8`,
		string(billing.Open), billing.Date(today), billing.Date(billing.DueDate(today, prof.NetTermsDays)), deferred,
		now, inv.AccountID, inv.ID, string(billing.Draft))
}

// deferredCents is the postage (rate total: postage plus surcharges, insurance included: what
// will be billed) of the account's labels purchased on or before the invoice's period_end that
// have not finished yet: neither DELIVERED nor RETURN_TO_SENDER, not VOIDED, not billed.
func (db *DB) deferredCents(ctx context.Context, tx *sql.Tx, inv billing.Invoice) (int64, error) {
	end, err := billing.ParseDate(inv.PeriodEnd)
	if err != nil {
		return 0, err
	}
	cutoff := Micros(end.AddDate(0, 0, 1))
	var sum int64
	err = tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(r.total_cents + l.insurance_cents), 0) FROM shipping_labels l
		JOIN shipping_rates r ON r.id = l.shipping_rate_id AND r.account_id = l.account_id
		WHERE l.account_id = $1 AND l.created_at < $2 AND l.status NOT IN ('DELIVERED', 'RETURN_TO_SENDER', 'VOIDED')
		AND NOT EXISTS (SELECT 1 FROM billing_line_items b WHERE b.account_id = l.account_id AND b.label_id = l.id)`,
		inv.AccountID, cutoff).Scan(&sum)
	return sum, err
}

// InvoiceRef names an invoice of some account.
type InvoiceRef struct{ AccountID, ID string }

// EndedDrafts lists the DRAFT invoices, of every account, whose period ended before now's UTC
// day: the period closer finalizes them.
func (db *DB) EndedDrafts(ctx context.Context, limit int) ([]InvoiceRef, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT account_id, id FROM invoices WHERE status = $1 AND period_end < $2
		ORDER BY period_end, id LIMIT $3`, string(billing.Draft), billing.Date(db.Now()), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []InvoiceRef
	for rows.Next() {
		var r InvoiceRef
		if err := rows.Scan(&r.AccountID, &r.ID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
