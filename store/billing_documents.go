package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/waybill/waybill/billing"
)

func statement(ctx context.Context, q querier, accountID, invoiceID string) (billing.Statement, error) {
	var st billing.Statement
	var err error
	if st.Invoice, err = invoice(ctx, q, accountID, invoiceID); err != nil {
		return st, err
	}
	st.Account.ID = accountID
	if err := q.QueryRowContext(ctx, `SELECT name, brand FROM accounts WHERE id = $1`, accountID).Scan(&st.Account.Name, &st.Account.Brand); err != nil {
		return st, err
	}
	if st.Profile, err = billingProfile(ctx, q, accountID); err != nil {
		return st, err
	}
	st.Items, err = collect(ctx, q, `SELECT `+lineItemColumns+` FROM billing_line_items
		WHERE account_id = $1 AND invoice_id = $2 AND deleted_at IS NULL ORDER BY created_at ASC, id ASC`,
		[]any{accountID, invoiceID}, scanLineItem)
	if st.Items == nil {
		st.Items = []billing.LineItem{}
	}
	return st, err
}

// InvoiceDocument reads an invoice and its stored document of the kind (billing.Books).
func (db *DB) InvoiceDocument(ctx context.Context, accountID, invoiceID, kind string) (billing.Document, bool, error) {
	if kind != billing.DocumentPDF && kind != billing.DocumentCSV {
		return billing.Document{}, false, fmt.Errorf("store: unknown invoice document %q", kind)
	}
	inv, err := invoice(ctx, db.r, accountID, invoiceID)
	if err != nil {
		return billing.Document{}, false, err
	}
	// kind is one of two constants, which are also the column names. The documents are written
	// in the transaction that finalizes the invoice, so a finalized invoice read above has them
	// (unless an older waybill finalized it).
	d := billing.Document{Invoice: inv}
	err = db.r.QueryRowContext(ctx, `SELECT `+kind+`, `+kind+`_sha256 FROM invoice_documents
		WHERE account_id = $1 AND invoice_id = $2`, accountID, invoiceID).Scan(&d.Body, &d.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	return d, err == nil, err
}
