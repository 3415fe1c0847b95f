package billing

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Status is an invoice's lifecycle state (Stripe's).
type Status string

const (
	Draft         Status = "DRAFT"
	Open          Status = "OPEN"
	Paid          Status = "PAID"
	Uncollectible Status = "UNCOLLECTIBLE"
	Void          Status = "VOID"
)

// Statuses lists every invoice status.
var Statuses = []Status{Draft, Open, Paid, Uncollectible, Void}

// ParseStatus accepts one of Statuses exactly.
func ParseStatus(s string) (Status, bool) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

// Action is an operator's move on an invoice.
type Action string

const (
	Finalize          Action = "finalize"
	Pay               Action = "pay"
	MarkUncollectible Action = "mark_uncollectible"
	VoidInvoice       Action = "void"
)

// transitions is the whole lifecycle: DRAFT → OPEN, OPEN → PAID | UNCOLLECTIBLE | VOID,
// UNCOLLECTIBLE → PAID | VOID. PAID and VOID are final.
var transitions = map[Status]map[Action]Status{
	Draft:         {Finalize: Open},
	Open:          {Pay: Paid, MarkUncollectible: Uncollectible, VoidInvoice: Void},
	Uncollectible: {Pay: Paid, VoidInvoice: Void},
}

// Next is the status action moves an invoice in status from to; every other move is an error
// wrapping ErrInvalidState.
func Next(from Status, action Action) (Status, error) {
	if to, ok := transitions[from][action]; ok {
		return to, nil
	}
	switch action {
	case Finalize, Pay, MarkUncollectible, VoidInvoice:
		return "", fmt.Errorf("%w: cannot %s an invoice that is %s", ErrInvalidState, strings.ReplaceAll(string(action), "_", " "), from)
	}
	return "", fmt.Errorf("%w: unknown action %q", ErrInvalidState, action)
}

// Editable reports whether line items may be added to or removed from an invoice in status.
func Editable(status Status) bool { return status == Draft }

// Invoice is one billing period's invoice of an account.
type Invoice struct {
	ID          string
	AccountID   string
	Status      Status
	Currency    string
	Number      string
	PeriodStart string // YYYY-MM-DD
	PeriodEnd   string // YYYY-MM-DD, inclusive: the billed-through cutoff
	TotalCents  int64
	// DeferredCents is the unbilled postage of labels purchased on or before PeriodEnd that were
	// still in transit when the invoice was finalized; 0 while DRAFT.
	DeferredCents int64
	InvoiceDate   string // YYYY-MM-DD; "" while DRAFT
	DueDate       string // YYYY-MM-DD; "" while DRAFT
	CreatedAt     time.Time
	UpdatedAt     time.Time

	FinalizedAt           *time.Time
	PaidAt                *time.Time
	MarkedUncollectibleAt *time.Time
	VoidedAt              *time.Time
}

// Line item types.
const (
	Postage = "POSTAGE"
	Fee     = "FEE"
)

// LineItem is one charge on an invoice: a finished label's postage, or a fee (or credit) an
// operator added. Fields that only postage has are nil on fees.
type LineItem struct {
	ID                        string              `json:"id"`
	InvoiceID                 string              `json:"invoice_id"`
	Type                      string              `json:"type"`
	Carrier                   *string             `json:"carrier"`
	Service                   *string             `json:"service"`
	TrackingCode              *string             `json:"tracking_code"`
	Description               string              `json:"description"`
	PostageCents              int64               `json:"postage_cents"`
	SurchargesCents           int64               `json:"surcharges_cents"`
	Surcharges                []Surcharge         `json:"surcharges"`
	TotalCents                int64               `json:"total_cents"`
	RetailCents               *int64              `json:"retail_cents"`
	PurchasedAt               *shipping.Timestamp `json:"purchased_at"`
	ShippingLabelStatus       *string             `json:"shipping_label_status"`
	ShipmentRequestParameters json.RawMessage     `json:"shipment_request_parameters"`
	ShippingRateMetadata      json.RawMessage     `json:"shipping_rate_metadata"`
	CreatedAt                 shipping.Timestamp  `json:"created_at"`
}

// Surcharge is one of a line item's surcharges (compat: the real product's line items list
// them); they add up to the item's surcharges_cents.
type Surcharge struct {
	Type        string `json:"type"` // FUEL, DAS, EDAS, INSURANCE
	AmountCents int64  `json:"amount_cents"`
}

// SurchargesOf lists a rate's surcharges in cents, from its rate_metadata (amounts in dollars).
func SurchargesOf(m shipping.RateMetadata) []Surcharge {
	out := make([]Surcharge, 0, len(m.SurchargesMetadata))
	for _, s := range m.SurchargesMetadata {
		out = append(out, Surcharge{Type: s.SurchargeType, AmountCents: int64(math.Round(s.Surcharge.Amount * 100))})
	}
	return out
}

// Total is the sum of the items' totals: an invoice's total is always Total of its live items.
func Total(items []LineItem) int64 {
	var sum int64
	for _, it := range items {
		sum += it.TotalCents
	}
	return sum
}

// PostageDescription describes a finished label's POSTAGE line item.
func PostageDescription(carrier, service, trackingCode string) string {
	return "Postage " + carrier + " " + service + " " + trackingCode
}

// Fee limits: a fee's description is required and short; its amount is non-zero cents (a
// negative amount is a credit) of at most MaxFeeCents either way.
const (
	MaxDescription = 500
	MaxFeeCents    = 100_000_000_00 // $100M
)

// ValidateFee checks a FEE line item an operator adds.
func ValidateFee(description string, amountCents int64) error {
	var v shipping.ValidationError
	switch d := strings.TrimSpace(description); {
	case d == "":
		v.Add("description", "required", "is required")
	case len(description) > MaxDescription:
		v.Add("description", "too_long", fmt.Sprintf("must be at most %d characters", MaxDescription))
	}
	switch {
	case amountCents == 0:
		v.Add("amount_cents", "invalid", "must not be zero")
	case amountCents > MaxFeeCents || amountCents < -MaxFeeCents:
		v.Add("amount_cents", "out_of_range", fmt.Sprintf("must be between %d and %d", -MaxFeeCents, MaxFeeCents))
	}
	return v.Err()
}

// Number formats an invoice number: the year of the invoice's period and that year's
// sequence number across all accounts, e.g. INV-2026-000042, so numbers are unique.
func Number(year int, seq int64) string {
	return fmt.Sprintf("INV-%04d-%06d", year, seq)
}
