package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Books keeps the ledger; store implements it.
type Books interface {
	// BillingTx runs fn in one write transaction over the ledger, committing when fn returns
	// nil.
	BillingTx(ctx context.Context, fn func(ctx context.Context, l Ledger) error) error
	// EndedDrafts lists up to limit DRAFT invoices, of every account, whose period ended before
	// day, earliest period end first.
	EndedDrafts(ctx context.Context, day time.Time, limit int) ([]InvoiceRef, error)
	// InvoiceDocument reads an invoice and its stored document of the kind (DocumentPDF or
	// DocumentCSV); stored is false when it has none.
	InvoiceDocument(ctx context.Context, accountID, invoiceID, kind string) (d Document, stored bool, err error)
}

// Ledger is the invoices, their line items and the labels they bill, as one transaction sees
// them. Unknown rows are shipping.ErrNotFound.
type Ledger interface {
	// LockProfile returns the account's billing profile, locked for the rest of the
	// transaction: a change of it and the choice of the invoice a charge lands on (which
	// reads its period) run one after the other. Profile reads it without the lock.
	LockProfile(ctx context.Context, accountID string) (Profile, error)
	Profile(ctx context.Context, accountID string) (Profile, error)
	// SaveProfile stores p's period and bill-to as its account's profile.
	SaveProfile(ctx context.Context, p Profile) error
	// InvoicesFrom lists the account's invoices whose period starts on or after start.
	InvoicesFrom(ctx context.Context, accountID string, start time.Time) ([]Invoice, error)
	// CreateInvoice creates a DRAFT invoice of p's account for the period, numbered from the
	// year's gapless sequence. Should the period's invoice exist meanwhile (a concurrent
	// transaction made it), it returns that one's id and created false.
	CreateInvoice(ctx context.Context, p Profile, start, end time.Time) (id string, created bool, err error)
	// Invoice reads an invoice; LockInvoice reads it locked for the rest of the transaction,
	// so that its total and status change one transaction at a time.
	Invoice(ctx context.Context, accountID, id string) (Invoice, error)
	LockInvoice(ctx context.Context, accountID, id string) (Invoice, error)
	// SetTotal stores a DRAFT invoice's total.
	SetTotal(ctx context.Context, inv Invoice, totalCents int64) error
	// MoveInvoice stores inv's status, dates, deferred postage and stamps if the invoice is
	// still in status from; moved is false when it is not.
	MoveInvoice(ctx context.Context, inv Invoice, from Status) (moved bool, err error)
	// Label reads a label by its id alone (the caller's own row).
	Label(ctx context.Context, labelID string) (Label, error)
	// UnbilledLabels lists the account's labels purchased before t that have no line item and
	// whose status is one of statuses.
	UnbilledLabels(ctx context.Context, accountID string, before time.Time, statuses []string) ([]Label, error)
	// AddLineItem adds it to its invoice, billing the label labelID ("" for a fee); added is
	// false when the label has a line item already (a label is billed at most once).
	AddLineItem(ctx context.Context, accountID, labelID string, it LineItem) (id string, added bool, err error)
	// LineItem reads a live line item; DeleteLineItem soft-deletes one.
	LineItem(ctx context.Context, accountID, id string) (LineItem, error)
	DeleteLineItem(ctx context.Context, accountID, id string) error
	// Statement reads what an invoice's documents show; StoreDocuments keeps them (documents
	// already stored are kept: they never change).
	Statement(ctx context.Context, accountID, invoiceID string) (Statement, error)
	StoreDocuments(ctx context.Context, accountID, invoiceID string, d Documents) error
}

// InvoiceRef names an invoice of some account.
type InvoiceRef struct{ AccountID, ID string }

// DraftFor returns the DRAFT invoice a charge made at lands on (PlaceCharge), creating it if
// needed; created reports whether it did.
func DraftFor(ctx context.Context, l Ledger, accountID string, at time.Time) (id string, created bool, err error) {
	prof, err := l.LockProfile(ctx, accountID)
	if err != nil {
		return "", false, err
	}
	start, _ := prof.Period.Bounds(at)
	invoices, err := l.InvoicesFrom(ctx, accountID, start)
	if err != nil {
		return "", false, err
	}
	id, start, end := PlaceCharge(prof.Period, at, invoices)
	if id != "" {
		return id, false, nil
	}
	return l.CreateInvoice(ctx, prof, start, end)
}

// BillFinishedLabel bills a label whose shipment finished (DELIVERED or RETURN_TO_SENDER) at
// finishedAt, inside the transaction that finished it: one POSTAGE line item on the DRAFT
// invoice DraftFor picks. Billing a label again does nothing; VOIDED labels are never billed.
func BillFinishedLabel(ctx context.Context, l Ledger, labelID string, finishedAt time.Time) error {
	label, err := l.Label(ctx, labelID)
	if err != nil || label.Status == shipping.LabelVoided || label.Billed {
		return err
	}
	it, err := PostageItem(label)
	if err != nil {
		return err
	}
	// The invoice is locked before the item is written, so a finalize cannot slip in between.
	// Should one have finalized the chosen invoice first, the charge goes to the next DRAFT,
	// chosen again.
	for attempt := 1; ; attempt++ {
		inv, err := lockedDraftFor(ctx, l, label.AccountID, finishedAt)
		if err != nil {
			return err
		}
		total, err := Retotal(inv, []LineItem{it}, nil)
		if errors.Is(err, ErrInvalidState) && attempt < 3 {
			continue
		}
		if err != nil {
			return err
		}
		it.InvoiceID = inv.ID
		_, added, err := l.AddLineItem(ctx, label.AccountID, labelID, it)
		if err != nil || !added {
			// Not added: billed concurrently, and the total stays.
			return err
		}
		return l.SetTotal(ctx, inv, total)
	}
}

func lockedDraftFor(ctx context.Context, l Ledger, accountID string, at time.Time) (Invoice, error) {
	id, _, err := DraftFor(ctx, l, accountID, at)
	if err != nil {
		return Invoice{}, err
	}
	return l.LockInvoice(ctx, accountID, id)
}

// Service runs billing's operator use cases, each in one transaction of Books.
type Service struct {
	Books Books
	Now   func() time.Time
	// Render draws an invoice's documents when it is finalized.
	Render Renderer
}

// OpenDraft returns the account's DRAFT invoice that a charge made now would land on,
// creating it if needed (DraftFor); created reports whether it did.
func (s *Service) OpenDraft(ctx context.Context, accountID string) (inv Invoice, created bool, err error) {
	err = s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
		var id string
		if id, created, err = DraftFor(ctx, l, accountID, s.Now()); err != nil {
			return err
		}
		inv, err = l.Invoice(ctx, accountID, id)
		return err
	})
	return inv, created, err
}

// AddFee adds a FEE line item (a credit when amountCents is negative) to a DRAFT invoice.
func (s *Service) AddFee(ctx context.Context, accountID, invoiceID, description string, amountCents int64) (LineItem, error) {
	if err := ValidateFee(description, amountCents); err != nil {
		return LineItem{}, err
	}
	var it LineItem
	err := s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
		inv, err := l.LockInvoice(ctx, accountID, invoiceID)
		if err != nil {
			return err
		}
		fee := LineItem{InvoiceID: invoiceID, Type: Fee, Description: description, TotalCents: amountCents}
		total, err := Retotal(inv, []LineItem{fee}, nil)
		if err != nil {
			return err
		}
		if err := l.SetTotal(ctx, inv, total); err != nil {
			return err
		}
		id, _, err := l.AddLineItem(ctx, accountID, "", fee)
		if err != nil {
			return err
		}
		it, err = l.LineItem(ctx, accountID, id)
		return err
	})
	return it, err
}

// DeleteLineItem soft-deletes a line item of a DRAFT invoice and takes it off the invoice's
// total. A deleted or unknown item is not found; an item of a finalized invoice is
// ErrInvalidState.
func (s *Service) DeleteLineItem(ctx context.Context, accountID, itemID string) error {
	return s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
		it, err := l.LineItem(ctx, accountID, itemID)
		if err != nil {
			return err
		}
		inv, err := l.LockInvoice(ctx, accountID, it.InvoiceID)
		if err != nil {
			return err
		}
		total, err := Retotal(inv, nil, []LineItem{it})
		if err != nil {
			return err
		}
		if err := l.SetTotal(ctx, inv, total); err != nil {
			return err
		}
		return l.DeleteLineItem(ctx, accountID, itemID)
	})
}

// Transition applies an action to an invoice (Next decides whether it may). Finalizing sets
// the invoice date (today), the due date (net terms later) and the deferred postage, and
// stores the documents drawn with Render: a finalized invoice never changes, so its documents
// are drawn once. The invoice is locked first, so concurrent moves cannot both happen, and a
// label billed onto it meanwhile is counted once: in the total, not also as deferred. The
// documents are drawn after the move commits, from the statement it read, and stored in a
// transaction of their own, so no drawing holds the ledger's writer; should that step fail, the
// invoice is finalized without documents and Document draws them when they are first asked for.
func (s *Service) Transition(ctx context.Context, accountID, invoiceID string, action Action) (Invoice, error) {
	var inv Invoice
	var st *Statement
	err := s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
		st = nil
		cur, err := l.LockInvoice(ctx, accountID, invoiceID)
		if err != nil {
			return err
		}
		next, err := s.moved(ctx, l, cur, action)
		if err != nil {
			return err
		}
		if moved, err := l.MoveInvoice(ctx, next, cur.Status); err != nil {
			return err
		} else if !moved {
			return fmt.Errorf("%w: invoice %s changed concurrently", ErrInvalidState, cur.Number)
		}
		if action == Finalize {
			read, err := l.Statement(ctx, accountID, invoiceID)
			if err != nil {
				return err
			}
			st = &read
		}
		inv, err = l.Invoice(ctx, accountID, invoiceID)
		return err
	})
	if err != nil || st == nil {
		return inv, err
	}
	return inv, s.storeDocuments(ctx, accountID, invoiceID, *st)
}

// storeDocuments draws an invoice's documents with Render from its statement st, outside any
// transaction, and stores them (documents already stored are kept).
func (s *Service) storeDocuments(ctx context.Context, accountID, invoiceID string, st Statement) error {
	docs, err := s.Render.Render(st)
	if err != nil {
		return err
	}
	return s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
		return l.StoreDocuments(ctx, accountID, invoiceID, docs)
	})
}

// Invoice document kinds: a finalized invoice's PDF and CSV.
const (
	DocumentPDF = "pdf"
	DocumentCSV = "csv"
)

// Document is one stored invoice document.
type Document struct {
	Invoice Invoice
	Body    []byte
	SHA256  string // hex digest of Body
}

// Document returns a finalized invoice's stored PDF or CSV (kind DocumentPDF or DocumentCSV).
// A DRAFT invoice has no documents yet (ErrInvalidState). An invoice finalized by a waybill
// that did not store documents gets them drawn with Render now and stored, once: documents
// already stored are kept.
func (s *Service) Document(ctx context.Context, accountID, invoiceID, kind string) (Document, error) {
	if kind != DocumentPDF && kind != DocumentCSV {
		return Document{}, fmt.Errorf("billing: unknown invoice document %q", kind)
	}
	for attempt := 0; ; attempt++ {
		d, stored, err := s.Books.InvoiceDocument(ctx, accountID, invoiceID, kind)
		if err != nil {
			return Document{}, err
		}
		if d.Invoice.Status == Draft {
			return Document{}, fmt.Errorf("%w: invoice %s is DRAFT; its documents exist once it is finalized", ErrInvalidState, d.Invoice.Number)
		}
		if stored {
			return d, nil
		}
		if attempt > 0 {
			return Document{}, fmt.Errorf("billing: invoice %s: documents stored but not found", invoiceID)
		}
		var st Statement
		err = s.Books.BillingTx(ctx, func(ctx context.Context, l Ledger) error {
			st, err = l.Statement(ctx, accountID, invoiceID)
			return err
		})
		if err != nil {
			return Document{}, err
		}
		if err := s.storeDocuments(ctx, accountID, invoiceID, st); err != nil {
			return Document{}, err
		}
	}
}

// moved is inv after action, now.
func (s *Service) moved(ctx context.Context, l Ledger, inv Invoice, action Action) (Invoice, error) {
	to, err := Next(inv.Status, action)
	if err != nil {
		return inv, err
	}
	now := s.Now()
	inv.Status, inv.UpdatedAt = to, now
	switch action {
	case Finalize:
		prof, err := l.Profile(ctx, inv.AccountID)
		if err != nil {
			return inv, err
		}
		end, err := ParseDate(inv.PeriodEnd)
		if err != nil {
			return inv, err
		}
		// Deferred: labels purchased on or before the period's last day.
		unbilled, err := l.UnbilledLabels(ctx, inv.AccountID, end.AddDate(0, 0, 1), deferrable)
		if err != nil {
			return inv, err
		}
		today := Day(now)
		inv.DeferredCents = Deferred(unbilled)
		inv.InvoiceDate, inv.DueDate = Date(today), Date(DueDate(today, prof.NetTermsDays))
		inv.FinalizedAt = &now
	case Pay:
		inv.PaidAt = &now
	case MarkUncollectible:
		inv.MarkedUncollectibleAt = &now
	case VoidInvoice:
		inv.VoidedAt = &now
	}
	return inv, nil
}
