package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/waybill/waybill/billing"
)

// InvoiceStatement reads, in one transaction, what an invoice's documents show: the invoice,
// its account and billing profile, and every live line item, oldest first.
func (db *DB) InvoiceStatement(ctx context.Context, accountID, invoiceID string) (billing.Statement, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return billing.Statement{}, err
	}
	defer tx.Rollback()
	return statement(ctx, tx, accountID, invoiceID)
}

func statement(ctx context.Context, q billingQuerier, accountID, invoiceID string) (billing.Statement, error) {
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
	rows, err := q.QueryContext(ctx, `SELECT `+lineItemColumns+` FROM billing_line_items
		WHERE account_id = $1 AND invoice_id = $2 AND deleted_at IS NULL ORDER BY created_at ASC, id ASC`, accountID, invoiceID)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	st.Items = []billing.LineItem{}
	for rows.Next() {
		it, err := scanLineItem(rows)
		if err != nil {
			return st, err
		}
		st.Items = append(st.Items, it)
	}
	return st, rows.Err()
}

// storeInvoiceDocuments renders a finalized invoice's documents with r from the statement the
// transaction sees and stores them. Documents already stored are kept: they never change.
func (db *DB) storeInvoiceDocuments(ctx context.Context, tx *sql.Tx, accountID, invoiceID string, r billing.Renderer) error {
	st, err := statement(ctx, tx, accountID, invoiceID)
	if err != nil {
		return err
	}
	docs, err := r.Render(st)
	if err != nil {
		return err
	}
	return ledger{db, tx}.StoreDocuments(ctx, accountID, invoiceID, docs)
}

// Invoice document kinds.
const (
	InvoicePDF = "pdf"
	InvoiceCSV = "csv"
)

// Document is one stored invoice document.
type Document struct {
	Invoice billing.Invoice
	Body    []byte
	SHA256  string // hex digest of Body
}

// InvoiceDocument returns a finalized invoice's stored PDF or CSV (kind InvoicePDF or
// InvoiceCSV). A DRAFT invoice has no documents yet (ErrInvalidState). An invoice finalized by
// a waybill that did not store documents gets them rendered with r and stored now, once.
func (db *DB) InvoiceDocument(ctx context.Context, accountID, invoiceID, kind string, r billing.Renderer) (Document, error) {
	if kind != InvoicePDF && kind != InvoiceCSV {
		return Document{}, fmt.Errorf("store: unknown invoice document %q", kind)
	}
	// kind is one of two constants, which are also the column names.
	columns := kind + ", " + kind + "_sha256"
	for attempt := 0; ; attempt++ {
		inv, err := invoice(ctx, db.r, accountID, invoiceID)
		if err != nil {
			return Document{}, err
		}
		if inv.Status == billing.Draft {
			return Document{}, fmt.Errorf("%w: invoice %s is DRAFT; its documents exist once it is finalized", billing.ErrInvalidState, inv.Number)
		}
		d := Document{Invoice: inv}
		// The documents were written in the transaction that finalized the invoice, so they are
		// there once its status says so (unless an older waybill finalized it).
		err = db.r.QueryRowContext(ctx, `SELECT `+columns+` FROM invoice_documents WHERE account_id = $1 AND invoice_id = $2`,
			accountID, invoiceID).Scan(&d.Body, &d.SHA256)
		if !errors.Is(err, sql.ErrNoRows) || attempt > 0 {
			return d, err
		}
		if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			return db.storeInvoiceDocuments(ctx, tx, accountID, invoiceID, r)
		}); err != nil {
			return Document{}, err
		}
	}
}
