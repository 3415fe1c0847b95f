package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

var testRenderer = billing.Renderer{Issuer: billing.Issuer{Name: "Waybill Test Issuer", Address: []string{"1 Test St", "Oakland, CA 94607"}},
	ServiceName: func(carrier, service string) string { return carrier + " service " + service }}

// document reads an invoice's document through the use case (billing.Service.Document), which
// draws it with r if it was never stored.
func (b *billingDB) document(ctx context.Context, accountID, invoiceID, kind string, r billing.Renderer) (billing.Document, error) {
	s := &billing.Service{Books: b.DB, Now: b.DB.Now, Render: r}
	return s.Document(ctx, accountID, invoiceID, kind)
}

// storedDocuments reads both stored documents of an invoice.
func (b *billingDB) storedDocuments(accountID, invoiceID string, r billing.Renderer) billing.Documents {
	b.t.Helper()
	var docs billing.Documents
	for _, kind := range []string{billing.DocumentPDF, billing.DocumentCSV} {
		d, err := b.document(context.Background(), accountID, invoiceID, kind, r)
		if err != nil {
			b.t.Fatalf("InvoiceDocument(%s) = %v", kind, err)
		}
		if d.Invoice.ID != invoiceID || d.SHA256 == "" {
			b.t.Fatalf("InvoiceDocument(%s) = invoice %s, sha256 %q", kind, d.Invoice.ID, d.SHA256)
		}
		if kind == billing.DocumentPDF {
			docs.PDF = d.Body
		} else {
			docs.CSV = d.Body
		}
	}
	return docs
}

func sameDocuments(t *testing.T, when string, got, want billing.Documents) {
	t.Helper()
	if !bytes.Equal(got.PDF, want.PDF) {
		t.Errorf("%s: the stored PDF differs (%d bytes; want %d)", when, len(got.PDF), len(want.PDF))
	}
	if !bytes.Equal(got.CSV, want.CSV) {
		t.Errorf("%s: the stored CSV differs:\n%s\nwant:\n%s", when, got.CSV, want.CSV)
	}
}

// testInvoiceDocumentsRenderedOnce checks that finalizing stores documents equal to a fresh
// render of the invoice as finalized, and that nothing done afterwards changes them: paying,
// marking uncollectible, voiding, a new bill-to, later charges, the next invoice's edits and
// finalize, a reader asking with another renderer.
func testInvoiceDocumentsRenderedOnce(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	acct := b.account("acme")
	if _, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) {
		p.BillToName = "Acme Fulfillment LLC"
		p.BillToAddress = &billing.Address{Street1: "100 Commerce Way", City: "Reno", State: "nv", Zip: "89502", Country: "us"}
	}); err != nil {
		t.Fatal(err)
	}
	purchased := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	delivered := b.seedLabel(acct, label{status: "PRE_TRANSIT", purchased: purchased, postage: 700, surcharges: 45, total: 745, retail: 900})
	returned := b.seedLabel(acct, label{status: "PRE_TRANSIT", purchased: purchased, postage: 500, surcharges: 0, total: 500, retail: 600})
	inTransit := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: purchased, postage: 900, surcharges: 10, total: 910, retail: 1100})
	if err := b.finish(delivered, "DELIVERED", time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := b.finish(returned, "RETURN_TO_SENDER", time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	nov := b.invoices(acct)[0]
	fee, err := b.svc.AddFee(ctx, acct, nov.ID, "Platform fee", 1900)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.AddFee(ctx, acct, nov.ID, "Removed", 100); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.DeleteLineItem(ctx, acct, b.items(acct, nov.ID)[3].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.document(ctx, acct, nov.ID, billing.DocumentPDF, testRenderer); !errors.Is(err, billing.ErrInvalidState) {
		t.Fatalf("InvoiceDocument of a DRAFT = %v; want ErrInvalidState", err)
	}

	b.setClock(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	inv, err := b.finalize(ctx, acct, nov.ID, testRenderer)
	if err != nil {
		t.Fatal(err)
	}
	if inv.DeferredCents != 910 {
		t.Fatalf("deferred_cents = %d; want 910", inv.DeferredCents)
	}
	st, err := b.statement(ctx, acct, nov.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Items) != 3 || st.Items[2].ID != fee.ID || st.Profile.BillToAddress == nil || st.Profile.BillToAddress.State != "NV" {
		t.Fatalf("statement = %d items, bill-to %+v; want 3 items ending with the fee, state NV", len(st.Items), st.Profile.BillToAddress)
	}
	fresh, err := testRenderer.Render(st)
	if err != nil {
		t.Fatal(err)
	}
	issued := b.storedDocuments(acct, nov.ID, testRenderer)
	sameDocuments(t, "after finalize", issued, fresh)
	if !bytes.Contains(issued.PDF, []byte("Acme Fulfillment LLC")) || !bytes.Contains(issued.PDF, []byte("Waybill Test Issuer")) {
		t.Error("the stored PDF lacks the bill-to name or the issuer")
	}

	// A second invoice, to void, beside the first.
	other := b.account("other")
	b.setClock(time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC))
	otherDraft, _, err := b.svc.OpenDraft(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	b.setClock(time.Date(2026, 12, 1, 0, 0, 2, 0, time.UTC))
	if _, err := b.finalize(ctx, other, otherDraft.ID, testRenderer); err != nil {
		t.Fatal(err)
	}
	otherIssued := b.storedDocuments(other, otherDraft.ID, testRenderer)

	changes := []struct {
		name string
		do   func() error
	}{
		{"mark uncollectible", func() error { _, err := b.svc.Transition(ctx, acct, nov.ID, billing.MarkUncollectible); return err }},
		{"new bill-to", func() error {
			_, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) { p.BillToName, p.BillToAddress = "Someone Else Inc.", nil })
			return err
		}},
		{"in-transit label delivered (billed on the next invoice)", func() error {
			return b.finish(inTransit, "DELIVERED", time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
		}},
		{"fee on the next invoice", func() error {
			dec := b.invoices(acct)[0]
			_, err := b.svc.AddFee(ctx, acct, dec.ID, "December fee", 500)
			return err
		}},
		{"finalize the next invoice", func() error {
			b.setClock(time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC))
			_, err := b.finalize(ctx, acct, b.invoices(acct)[0].ID, billing.Renderer{})
			return err
		}},
		{"pay", func() error { _, err := b.svc.Transition(ctx, acct, nov.ID, billing.Pay); return err }},
		{"void the other account's invoice", func() error {
			_, err := b.svc.Transition(ctx, other, otherDraft.ID, billing.VoidInvoice)
			return err
		}},
		{"finalize again (refused)", func() error {
			if _, err := b.finalize(ctx, acct, nov.ID, billing.Renderer{}); !errors.Is(err, billing.ErrInvalidState) {
				return errors.Join(errors.New("finalizing a PAID invoice was not refused"), err)
			}
			return nil
		}},
	}
	for _, c := range changes {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// Asked with another renderer, the store still answers the documents as issued.
		sameDocuments(t, "after "+c.name, b.storedDocuments(acct, nov.ID, billing.Renderer{}), issued)
		sameDocuments(t, "after "+c.name+" (other account)", b.storedDocuments(other, otherDraft.ID, billing.Renderer{}), otherIssued)
	}
	if got := b.invoices(acct); len(got) != 2 || got[1].Status != billing.Paid || got[0].Status != billing.Open {
		t.Fatalf("invoices = %+v; want the December one OPEN and November PAID", got)
	}
	// The documents are the account's own.
	if _, err := b.document(ctx, other, nov.ID, billing.DocumentPDF, testRenderer); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another account's InvoiceDocument = %v; want ErrNotFound", err)
	}
}

// testInvoiceDocumentsBackfilled: an invoice finalized by a waybill that stored no documents gets
// them rendered at the first request, once.
func testInvoiceDocumentsBackfilled(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	inv, _, err := b.svc.OpenDraft(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.AddFee(ctx, acct, inv.ID, "Fee", 1200); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Transition(ctx, acct, inv.ID, billing.Finalize); err != nil {
		t.Fatal(err)
	}
	err = inTx(ctx, b.DB, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM invoice_documents`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	first := b.storedDocuments(acct, inv.ID, testRenderer)
	st, err := b.statement(ctx, acct, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := testRenderer.Render(st)
	sameDocuments(t, "backfilled", first, fresh)
	sameDocuments(t, "asked again", b.storedDocuments(acct, inv.ID, billing.Renderer{}), first)
}

// testUpdateBillingProfile: bill-to is normalized and validated; the period cannot change once
// invoices exist, but sending the same period is no change.
func testUpdateBillingProfile(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	p, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) {
		p.BillToName = "  Acme LLC "
		p.BillToAddress = &billing.Address{Street1: "1 Main St", City: "Boston", State: "ma", Zip: "02101", Country: "us"}
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.BillingProfile(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if got.BillToName != "Acme LLC" || got.BillToAddress == nil || *got.BillToAddress != *p.BillToAddress || got.BillToAddress.State != "MA" {
		t.Errorf("profile = %+v, %+v; want the normalized bill-to", got, got.BillToAddress)
	}
	_, err = b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) { p.BillToAddress = &billing.Address{Country: "US"} })
	var ve *shipping.ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) != 4 {
		t.Fatalf("invalid address = %v; want a validation error of street1, city, state and zip", err)
	}
	if again, _ := b.BillingProfile(ctx, acct); again.BillToAddress == nil || again.BillToAddress.City != "Boston" {
		t.Errorf("a refused change was stored: %+v", again.BillToAddress)
	}
	if _, _, err := b.svc.OpenDraft(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) { p.Period = billing.Weekly }); !errors.Is(err, billing.ErrInvalidState) {
		t.Errorf("period change with invoices = %v; want ErrInvalidState", err)
	}
	if _, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) { p.Period = billing.Monthly; p.BillToName = "" }); err != nil {
		t.Errorf("same period, bill-to cleared = %v; want nil", err)
	}
	if _, err := b.svc.UpdateProfile(ctx, "00000000-0000-7000-8000-ffffffffffff", func(*billing.Profile) {}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown account = %v; want ErrNotFound", err)
	}
}

// statement reads what an invoice's documents show as the billing service does, through the
// ledger of one transaction.
func (b *billingDB) statement(ctx context.Context, accountID, invoiceID string) (billing.Statement, error) {
	var st billing.Statement
	err := b.BillingTx(ctx, func(ctx context.Context, l billing.Ledger) error {
		var err error
		st, err = l.Statement(ctx, accountID, invoiceID)
		return err
	})
	return st, err
}
