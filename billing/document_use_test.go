package billing

import (
	"context"
	"errors"
	"testing"
	"time"
)

// documentBooks is Books over one invoice and its stored documents; its ledger draws the
// statement of that invoice and stores documents where Document reads them.
type documentBooks struct {
	Books
	inv    Invoice
	stored *Documents
	draws  int
}

type documentLedger struct {
	Ledger
	b *documentBooks
}

func (b *documentBooks) InvoiceDocument(ctx context.Context, accountID, invoiceID, kind string) (Document, bool, error) {
	d := Document{Invoice: b.inv}
	if b.stored == nil {
		return d, false, nil
	}
	d.Body, d.SHA256 = b.stored.PDF, "sum"
	if kind == DocumentCSV {
		d.Body = b.stored.CSV
	}
	return d, true, nil
}

func (b *documentBooks) BillingTx(ctx context.Context, fn func(context.Context, Ledger) error) error {
	return fn(ctx, documentLedger{b: b})
}

func (l documentLedger) Statement(ctx context.Context, accountID, invoiceID string) (Statement, error) {
	return Statement{Invoice: l.b.inv, Profile: DefaultProfile(accountID), Items: []LineItem{}}, nil
}

func (l documentLedger) StoreDocuments(ctx context.Context, accountID, invoiceID string, d Documents) error {
	l.b.draws++
	if l.b.stored == nil { // documents already stored are kept
		l.b.stored = &d
	}
	return nil
}

// TestDocument: a finalized invoice's stored document is answered as stored; one an older
// waybill finalized without documents gets them drawn once and stored; a DRAFT invoice has
// none (ErrInvalidState); an unknown kind is an error.
func TestDocument(t *testing.T) {
	ctx := context.Background()
	open := Invoice{ID: "inv1", Number: "INV-2026-000001", Status: Open, Currency: "USD", PeriodStart: "2026-11-01",
		PeriodEnd: "2026-11-30", InvoiceDate: "2026-12-01", DueDate: "2026-12-16"}
	draft := open
	draft.Status = Draft
	kept := &Documents{PDF: []byte("%PDF kept"), CSV: []byte("kept,csv")}
	tests := []struct {
		name      string
		inv       Invoice
		stored    *Documents
		kind      string
		wantBody  string // "" with wantErr
		wantDraws int
		wantErr   error
	}{
		{"stored PDF", open, kept, DocumentPDF, "%PDF kept", 0, nil},
		{"stored CSV", open, kept, DocumentCSV, "kept,csv", 0, nil},
		{"finalized without documents", open, nil, DocumentPDF, "%PDF-", 1, nil},
		{"draft", draft, nil, DocumentPDF, "", 0, ErrInvalidState},
		{"unknown kind", open, kept, "xml", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &documentBooks{inv: tt.inv, stored: tt.stored}
			s := &Service{Books: b, Now: time.Now}
			d, err := s.Document(ctx, "acct", "inv1", tt.kind)
			if tt.wantBody == "" {
				if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("Document = %q, %v; want an error %v", d.Body, err, tt.wantErr)
				}
				return
			}
			if err != nil || len(d.Body) < len(tt.wantBody) || string(d.Body[:len(tt.wantBody)]) != tt.wantBody || d.Invoice.ID != "inv1" {
				t.Fatalf("Document = %.20q, %v; want a body starting %q", d.Body, err, tt.wantBody)
			}
			if b.draws != tt.wantDraws {
				t.Errorf("documents drawn %d times, want %d", b.draws, tt.wantDraws)
			}
			if again, err := s.Document(ctx, "acct", "inv1", tt.kind); err != nil || string(again.Body) != string(d.Body) || b.draws != tt.wantDraws {
				t.Errorf("asked again: %.20q, %v, drawn %d times; want the same, drawn %d", again.Body, err, b.draws, tt.wantDraws)
			}
		})
	}
}

// finalizeBooks is Books over one DRAFT invoice whose ledger finalizes it; it notes whether a
// transaction is running, so that a drawing inside one shows.
type finalizeBooks struct {
	Books
	inv    Invoice
	inTx   bool
	stored *Documents
}

type finalizeLedger struct {
	Ledger
	b *finalizeBooks
}

func (b *finalizeBooks) BillingTx(ctx context.Context, fn func(context.Context, Ledger) error) error {
	b.inTx = true
	defer func() { b.inTx = false }()
	return fn(ctx, finalizeLedger{b: b})
}

func (l finalizeLedger) LockInvoice(ctx context.Context, accountID, id string) (Invoice, error) {
	return l.b.inv, nil
}
func (l finalizeLedger) Invoice(ctx context.Context, accountID, id string) (Invoice, error) {
	return l.b.inv, nil
}
func (l finalizeLedger) Profile(ctx context.Context, accountID string) (Profile, error) {
	return DefaultProfile(accountID), nil
}

func (l finalizeLedger) UnbilledLabels(ctx context.Context, accountID string, before time.Time, statuses []string) ([]Label, error) {
	return nil, nil
}

func (l finalizeLedger) MoveInvoice(ctx context.Context, inv Invoice, from Status) (bool, error) {
	l.b.inv = inv
	return true, nil
}

func (l finalizeLedger) Statement(ctx context.Context, accountID, invoiceID string) (Statement, error) {
	carrier, service := "ACME", "GROUND"
	return Statement{Invoice: l.b.inv, Profile: DefaultProfile(accountID), Items: []LineItem{{Type: Postage,
		Carrier: &carrier, Service: &service, PostageCents: 700, TotalCents: 700}}}, nil
}

func (l finalizeLedger) StoreDocuments(ctx context.Context, accountID, invoiceID string, d Documents) error {
	l.b.stored = &d
	return nil
}

// TestFinalizeDrawsOutsideTransactions: finalizing an invoice stores its documents, drawn
// while no transaction of the ledger runs (the PDF names the services as it is drawn).
func TestFinalizeDrawsOutsideTransactions(t *testing.T) {
	b := &finalizeBooks{inv: Invoice{ID: "inv1", AccountID: "acct", Number: "INV-2026-000001", Status: Draft, Currency: "USD",
		PeriodStart: "2026-11-01", PeriodEnd: "2026-11-30"}}
	drawn, drawnInTx := 0, 0
	s := &Service{Books: b, Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) },
		Render: Renderer{ServiceName: func(carrier, service string) string {
			drawn++
			if b.inTx {
				drawnInTx++
			}
			return ""
		}}}
	inv, err := s.Transition(context.Background(), "acct", "inv1", Finalize)
	if err != nil || inv.Status != Open {
		t.Fatalf("Transition = %s, %v; want OPEN", inv.Status, err)
	}
	if b.stored == nil || drawn == 0 || drawnInTx != 0 {
		t.Errorf("documents stored %v, drawn %d times, %d inside a transaction; want stored, drawn outside", b.stored != nil,
			drawn, drawnInTx)
	}
}
