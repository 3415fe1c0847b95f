package billing

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

func TestRetotal(t *testing.T) {
	fee := func(c int64) LineItem { return LineItem{Type: Fee, TotalCents: c} }
	tests := []struct {
		name           string
		status         Status
		total          int64
		added, removed []LineItem
		want           int64
		wantErr        error
	}{
		{"first charge", Draft, 0, []LineItem{fee(745)}, nil, 745, nil},
		{"a credit", Draft, 745, []LineItem{fee(-100)}, nil, 645, nil},
		{"an item removed", Draft, 645, nil, []LineItem{fee(745)}, -100, nil},
		{"added and removed", Draft, 1000, []LineItem{fee(250), fee(5)}, []LineItem{fee(300)}, 955, nil},
		{"nothing", Draft, 42, nil, nil, 42, nil},
		{"open", Open, 745, []LineItem{fee(1)}, nil, 0, ErrInvalidState},
		{"paid", Paid, 745, nil, []LineItem{fee(745)}, 0, ErrInvalidState},
		{"uncollectible", Uncollectible, 745, []LineItem{fee(1)}, nil, 0, ErrInvalidState},
		{"void", Void, 745, []LineItem{fee(1)}, nil, 0, ErrInvalidState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Invoice{Number: "INV-2026-000001", Status: tt.status, TotalCents: tt.total}
			got, err := Retotal(inv, tt.added, tt.removed)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("Retotal(%s %d, +%v, -%v) = %d, %v; want %d, %v", tt.status, tt.total, tt.added, tt.removed, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestRetotalKeepsTotal: an invoice's total kept by Retotal, one change at a time, is always
// Total of its live items.
func TestRetotalKeepsTotal(t *testing.T) {
	steps := []struct {
		add    int64 // a new item's total, or 0
		remove int   // the index of a live item to remove, or -1
	}{{745, -1}, {-100, -1}, {2500, -1}, {0, 0}, {990, -1}, {0, 1}, {1, -1}, {0, 0}}
	inv := Invoice{Status: Draft}
	var live []LineItem
	for i, s := range steps {
		var added, removed []LineItem
		if s.add != 0 {
			added = []LineItem{{TotalCents: s.add}}
			live = append(live, added...)
		} else {
			removed = []LineItem{live[s.remove]}
			live = append(live[:s.remove], live[s.remove+1:]...)
		}
		total, err := Retotal(inv, added, removed)
		if err != nil {
			t.Fatal(err)
		}
		inv.TotalCents = total
		if want := Total(live); total != want {
			t.Errorf("step %d: Retotal = %d; want Total of the live items %d", i, total, want)
		}
	}
}

func TestPlaceCharge(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 42, 3, 0, time.UTC)
	inv := func(id string, st Status, start, end string) Invoice {
		return Invoice{ID: id, Status: st, PeriodStart: start, PeriodEnd: end}
	}
	tests := []struct {
		name       string
		period     Period
		invoices   []Invoice
		wantID     string
		start, end string // the period to create when wantID is ""
	}{
		{"no invoice", Monthly, nil, "", "2026-11-01", "2026-11-30"},
		{"the period's draft", Monthly, []Invoice{inv("nov", Draft, "2026-11-01", "2026-11-30")}, "nov", "", ""},
		{"weekly, no invoice", Weekly, nil, "", "2026-11-16", "2026-11-22"},
		{"only a later invoice", Monthly, []Invoice{inv("dec", Draft, "2026-12-01", "2026-12-31")}, "", "2026-11-01", "2026-11-30"},
		{"finalized, a later draft", Monthly, []Invoice{inv("nov", Open, "2026-11-01", "2026-11-30"),
			inv("dec", Draft, "2026-12-01", "2026-12-31")}, "dec", "", ""},
		{"finalized, the earliest later draft", Monthly, []Invoice{inv("feb", Draft, "2027-02-01", "2027-02-28"),
			inv("nov", Paid, "2026-11-01", "2026-11-30"), inv("jan", Draft, "2027-01-01", "2027-01-31"),
			inv("dec", Open, "2026-12-01", "2026-12-31")}, "jan", "", ""},
		{"finalized, no draft: after the latest", Monthly, []Invoice{inv("nov", Open, "2026-11-01", "2026-11-30"),
			inv("dec", Void, "2026-12-01", "2026-12-31")}, "", "2027-01-01", "2027-01-31"},
		{"finalized alone", Monthly, []Invoice{inv("nov", Uncollectible, "2026-11-01", "2026-11-30")}, "", "2026-12-01", "2026-12-31"},
		{"weekly finalized", Weekly, []Invoice{inv("w47", Open, "2026-11-16", "2026-11-22")}, "", "2026-11-23", "2026-11-29"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, start, end := PlaceCharge(tt.period, at, tt.invoices)
			if id != tt.wantID || (id == "" && (Date(start) != tt.start || Date(end) != tt.end)) {
				t.Errorf("PlaceCharge(%s, %v) = %q, %s, %s; want %q, %s, %s", tt.period, tt.invoices, id, Date(start), Date(end),
					tt.wantID, tt.start, tt.end)
			}
		})
	}
}

func TestDeferred(t *testing.T) {
	label := func(status string, total, insurance int64) Label {
		return Label{Status: status, Rate: shipping.Rate{TotalCents: total}, InsuranceCents: insurance}
	}
	tests := []struct {
		name   string
		labels []Label
		want   int64
	}{
		{"none", nil, 0},
		{"in transit", []Label{label(shipping.LabelInTransit, 745, 0)}, 745},
		{"every status in transit", []Label{label(shipping.LabelInTransit, 200, 0),
			label(shipping.LabelOutForDelivery, 300, 0), label(shipping.LabelDeliveryException, 400, 0)}, 900},
		// Never scanned: it may be voided, and a return label may never be used (pay on use).
		{"not yet in transit", []Label{label(shipping.LabelPreTransit, 100, 0), label(shipping.LabelInTransit, 2, 0)}, 2},
		{"insured", []Label{label(shipping.LabelInTransit, 745, 170)}, 915},
		{"finished and voided never", []Label{label(shipping.LabelDelivered, 745, 0), label(shipping.LabelReturnToSender, 500, 0),
			label(shipping.LabelVoided, 222, 0), label(shipping.LabelInTransit, 1, 0)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Deferred(tt.labels); got != tt.want {
				t.Errorf("Deferred(%+v) = %d; want %d", tt.labels, got, tt.want)
			}
		})
	}
}

func TestPostageItem(t *testing.T) {
	base := Label{ID: "l1", Carrier: "ACME", Service: "REGEA", TrackingCode: "TRK1", Status: shipping.LabelDelivered,
		PurchasedAt: time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC), Request: []byte(`{"a":1}`),
		Rate: shipping.Rate{PostageCents: 700, SurchargesCents: 45, TotalCents: 745, RetailCents: 990, RateMetadata: shipping.RateMetadata{
			USPSZone: 5, BillableWeight: 12, WeightMetadata: shipping.WeightMetadata{ActualOzWeight: 12, BillableOzWeight: 12,
				DimFactor: 166, DimThreshold: 1728, Volume: 48},
			SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(45)}}}}}
	meta := `{"usps_zone":5,"billable_weight":12,"weight_metadata":{"actual_oz_weight":12,"billable_oz_weight":12,` +
		`"dim_factor":166,"dim_threshold":1728,"volume":48},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":` +
		`{"amount":0.45,"currency":"USD"}}`
	insured := base
	insured.InsuranceCents = 170
	tests := []struct {
		name                               string
		label                              Label
		postage, surcharges, total, retail int64
		wantMeta                           string
	}{
		{"uninsured: the rate's metadata", base, 700, 45, 745, 990, meta + `]}`},
		{"insured: with its INSURANCE surcharge", insured, 700, 215, 915, 1160,
			meta + `,{"surcharge_type":"INSURANCE","surcharge":{"amount":1.7,"currency":"USD"}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, err := PostageItem(tt.label)
			if err != nil {
				t.Fatal(err)
			}
			if it.Type != Postage || it.PostageCents != tt.postage || it.SurchargesCents != tt.surcharges || it.TotalCents != tt.total ||
				*it.RetailCents != tt.retail || *it.ShippingLabelStatus != shipping.LabelDelivered ||
				it.Description != "Postage ACME REGEA TRK1" || string(it.ShipmentRequestParameters) != `{"a":1}` {
				t.Errorf("PostageItem(%s) = %+v; want postage %d, surcharges %d, total %d, retail %d", tt.name, it,
					tt.postage, tt.surcharges, tt.total, tt.retail)
			}
			if string(it.ShippingRateMetadata) != tt.wantMeta {
				t.Errorf("PostageItem(%s) metadata = %s; want %s", tt.name, it.ShippingRateMetadata, tt.wantMeta)
			}
			if tt.label.InsuranceCents > 0 {
				if got := SurchargesOf(tt.label.Charge().RateMetadata); len(got) != 2 || got[1].Type != "INSURANCE" || got[1].AmountCents != 170 {
					t.Errorf("PostageItem(%s) surcharges = %+v; want FUEL then INSURANCE 170", tt.name, got)
				}
			}
		})
	}
}

// Every label status is settled, deferrable or not yet shipped (PRE_TRANSIT), exactly one: a
// status added to shipping is deferred postage until billing says otherwise.
func TestDeferrableAndSettled(t *testing.T) {
	for _, s := range shipping.LabelStatuses {
		n := 0
		for _, set := range [][]string{settled, deferrable, {shipping.LabelPreTransit}} {
			if slices.Contains(set, s) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("status %s is in %d of settled %v, deferrable %v and PRE_TRANSIT; want exactly one", s, n, settled, deferrable)
		}
	}
	if want := []string{shipping.LabelInTransit, shipping.LabelOutForDelivery,
		shipping.LabelDeliveryException}; !slices.Equal(deferrable, want) {
		t.Errorf("deferrable = %v; want %v", deferrable, want)
	}
}
