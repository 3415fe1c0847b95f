package billing

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Retotal is a DRAFT invoice's total once the added items are on it and the removed ones are
// off it: Total of its live items, kept up to date without reading them all. An invoice in
// another status does not change (ErrInvalidState).
func Retotal(inv Invoice, added, removed []LineItem) (int64, error) {
	if !Editable(inv.Status) {
		return 0, fmt.Errorf("%w: invoice %s is %s; only DRAFT invoices change", ErrInvalidState, inv.Number, inv.Status)
	}
	return inv.TotalCents + Total(added) - Total(removed), nil
}

// PlaceCharge says which invoice a charge made at lands on, given the account's invoices whose
// periods start on or after the start of at's period (any order):
//
//   - the invoice of the period containing at, created as a DRAFT if the account has none;
//   - if that invoice is already finalized, the account's earliest DRAFT of a later period;
//   - if there is none, a new DRAFT for the period following the account's latest invoice.
//
// So a charge is never lost and never lands on a finalized invoice: it is billed on the next
// invoice still open for changes. The answer is an existing invoice's id, or (id "") the
// bounds of the period whose DRAFT is to be created.
func PlaceCharge(p Period, at time.Time, invoices []Invoice) (id string, start, end time.Time) {
	start, end = p.Bounds(at)
	current := slices.IndexFunc(invoices, func(inv Invoice) bool { return inv.PeriodStart == Date(start) })
	if current < 0 {
		return "", start, end
	}
	if invoices[current].Status == Draft {
		return invoices[current].ID, start, end
	}
	var draft *Invoice
	latest := invoices[current].PeriodEnd
	for i, inv := range invoices {
		if inv.Status == Draft && inv.PeriodStart > Date(start) && (draft == nil || inv.PeriodStart < draft.PeriodStart) {
			draft = &invoices[i]
		}
		latest = max(latest, inv.PeriodEnd)
	}
	if draft != nil {
		return draft.ID, start, end
	}
	last, err := ParseDate(latest)
	if err != nil {
		// Stored dates are written by Date; one that does not parse starts the period at.
		return "", start, end
	}
	start, end = p.Bounds(last.AddDate(0, 0, 1))
	return "", start, end
}

// Label is a purchased label as billing sees it.
type Label struct {
	ID           string
	AccountID    string
	Carrier      string
	Service      string
	TrackingCode string
	Status       string
	PurchasedAt  time.Time
	// Rate is the rate bought, without the label's insurance.
	Rate           shipping.Rate
	InsuranceCents int64
	// Request is the shipment's request parameters.
	Request json.RawMessage
	// Billed reports whether the label has a line item already.
	Billed bool
}

// settled are the label statuses whose postage is never deferred: finished labels are billed
// when they finish, voided ones never.
var settled = []string{shipping.LabelDelivered, shipping.LabelReturnToSender, shipping.LabelVoided}

// deferrable are the statuses of a label in transit: scanned into the network and not yet
// finished. A label in one of them, unbilled, is deferred postage. A PRE_TRANSIT label is not
// (yet): it may still be voided, and a return label may never be used (it is billed on use). A
// close asks the ledger for these, not for all but the settled: the labels in flight are few,
// every label ever bought is not.
var deferrable = slices.DeleteFunc(slices.Clone(shipping.LabelStatuses), func(s string) bool {
	return s == shipping.LabelPreTransit || slices.Contains(settled, s)
})

// Charge is what a label is billed: its rate as bought, with its insurance surcharge.
func (l Label) Charge() shipping.Rate { return l.Rate.Insured(l.InsuranceCents) }

// Deferred is the postage still to be billed of the given unbilled labels: what each will be
// billed (Charge), for every one in transit.
func Deferred(labels []Label) int64 {
	var sum int64
	for _, l := range labels {
		if slices.Contains(deferrable, l.Status) {
			sum += l.Charge().TotalCents
		}
	}
	return sum
}

// PostageItem is the POSTAGE line item billing a finished label. It records the label's
// status, so the label must have its finishing status.
func PostageItem(l Label) (LineItem, error) {
	// The postage is billed as bought: the rate with its insurance surcharge.
	rate := l.Charge()
	meta, err := json.Marshal(rate.RateMetadata)
	if err != nil {
		return LineItem{}, err
	}
	purchased := shipping.Timestamp{Time: l.PurchasedAt}
	return LineItem{Type: Postage, Carrier: &l.Carrier, Service: &l.Service, TrackingCode: &l.TrackingCode,
		Description: PostageDescription(l.Carrier, l.Service, l.TrackingCode), PostageCents: rate.PostageCents,
		SurchargesCents: rate.SurchargesCents, TotalCents: rate.TotalCents, RetailCents: &rate.RetailCents,
		PurchasedAt: &purchased, ShippingLabelStatus: &l.Status, ShipmentRequestParameters: l.Request,
		ShippingRateMetadata: meta}, nil
}
