package billing

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// fakeLedger is the part of Ledger that billing a label uses, over in-memory invoices.
type fakeLedger struct {
	Ledger
	label    Label
	invoices []Invoice
	// finalizeOnLock finalizes this invoice when it is first locked: a finalize that won the race.
	finalizeOnLock string
	// concurrent makes AddLineItem find the label billed already.
	concurrent bool
	items      []LineItem
}

func (f *fakeLedger) LockProfile(ctx context.Context, accountID string) (Profile, error) {
	return DefaultProfile(accountID), nil
}

func (f *fakeLedger) InvoicesFrom(ctx context.Context, accountID string, start time.Time) ([]Invoice, error) {
	var out []Invoice
	for _, inv := range f.invoices {
		if inv.PeriodStart >= Date(start) {
			out = append(out, inv)
		}
	}
	return out, nil
}

func (f *fakeLedger) CreateInvoice(ctx context.Context, p Profile, start, end time.Time) (string, bool, error) {
	id := fmt.Sprint("inv", len(f.invoices)+1)
	f.invoices = append(f.invoices, Invoice{ID: id, AccountID: p.AccountID, Status: Draft, PeriodStart: Date(start), PeriodEnd: Date(end)})
	return id, true, nil
}

func (f *fakeLedger) LockInvoice(ctx context.Context, accountID, id string) (Invoice, error) {
	for i, inv := range f.invoices {
		if inv.ID == id {
			if id == f.finalizeOnLock {
				f.invoices[i].Status, f.finalizeOnLock = Open, ""
			}
			return f.invoices[i], nil
		}
	}
	return Invoice{}, shipping.ErrNotFound
}

func (f *fakeLedger) SetTotal(ctx context.Context, inv Invoice, total int64) error {
	for i := range f.invoices {
		if f.invoices[i].ID == inv.ID {
			f.invoices[i].TotalCents = total
		}
	}
	return nil
}

func (f *fakeLedger) Label(ctx context.Context, labelID string) (Label, error) { return f.label, nil }

func (f *fakeLedger) AddLineItem(ctx context.Context, accountID, labelID string, it LineItem) (string, bool, error) {
	if f.concurrent {
		return "", false, nil
	}
	f.items = append(f.items, it)
	return "item", true, nil
}

func TestBillFinishedLabel(t *testing.T) {
	finished := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	label := Label{ID: "l1", AccountID: "a1", Carrier: "ACME", Service: "REGEA", TrackingCode: "TRK1", Status: shipping.LabelDelivered,
		Rate: shipping.Rate{PostageCents: 700, SurchargesCents: 45, TotalCents: 745}}
	nov := Invoice{ID: "nov", AccountID: "a1", Status: Draft, PeriodStart: "2026-11-01", PeriodEnd: "2026-11-30", TotalCents: 100}
	voided, billed := label, label
	voided.Status, billed.Billed = shipping.LabelVoided, true
	tests := []struct {
		name   string
		ledger fakeLedger
		// totals are the invoices' totals afterwards, by id; onto is the invoice billed.
		totals map[string]int64
		onto   string
	}{
		{"onto a new invoice", fakeLedger{label: label}, map[string]int64{"inv1": 745}, "inv1"},
		{"onto the period's draft", fakeLedger{label: label, invoices: []Invoice{nov}}, map[string]int64{"nov": 845}, "nov"},
		{"finalized meanwhile: onto the next draft", fakeLedger{label: label, invoices: []Invoice{nov}, finalizeOnLock: "nov"},
			map[string]int64{"nov": 100, "inv2": 745}, "inv2"},
		{"billed concurrently: the total stays", fakeLedger{label: label, invoices: []Invoice{nov}, concurrent: true},
			map[string]int64{"nov": 100}, ""},
		{"voided: never billed", fakeLedger{label: voided, invoices: []Invoice{nov}}, map[string]int64{"nov": 100}, ""},
		{"billed already", fakeLedger{label: billed, invoices: []Invoice{nov}}, map[string]int64{"nov": 100}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.ledger
			if err := BillFinishedLabel(context.Background(), &f, "l1", finished); err != nil {
				t.Fatalf("BillFinishedLabel(%s) = %v; want nil", tt.name, err)
			}
			got := map[string]int64{}
			for _, inv := range f.invoices {
				got[inv.ID] = inv.TotalCents
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.totals) {
				t.Errorf("BillFinishedLabel(%s): totals %v; want %v", tt.name, got, tt.totals)
			}
			onto := ""
			if len(f.items) == 1 {
				onto = f.items[0].InvoiceID
			}
			if onto != tt.onto || len(f.items) > 1 {
				t.Errorf("BillFinishedLabel(%s): items %+v; want one on %q", tt.name, f.items, tt.onto)
			}
		})
	}
}
