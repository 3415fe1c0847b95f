package shipping

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Label statuses. A label starts PRE_TRANSIT; tracking events move it; cancelling its shipment
// before it enters the carrier's network makes it VOIDED.
const (
	LabelPreTransit        = "PRE_TRANSIT"
	LabelInTransit         = "IN_TRANSIT"
	LabelOutForDelivery    = "OUT_FOR_DELIVERY"
	LabelDelivered         = "DELIVERED"
	LabelDeliveryException = "DELIVERY_EXCEPTION"
	LabelReturnToSender    = "RETURN_TO_SENDER"
	LabelVoided            = "VOIDED"
)

// LabelStatuses lists every label status.
var LabelStatuses = []string{LabelPreTransit, LabelInTransit, LabelOutForDelivery, LabelDelivered,
	LabelDeliveryException, LabelReturnToSender, LabelVoided}

// LabelSubstatuses lists the details a DELIVERY_EXCEPTION may carry.
var LabelSubstatuses = []string{"ADDRESS_ISSUE", "DAMAGED", "LOST", "WEATHER", "REFUSED", "MISSED_DELIVERY",
	"CUSTOMS_HOLD", "DELAYED", "OTHER"}

// Label is a purchased shipping label.
type Label struct {
	ID         string  `json:"id"`
	ShipmentID string  `json:"shipment_id"`
	Status     string  `json:"status"`
	Substatus  *string `json:"substatus"`
	LabelURL   string  `json:"label_url"`
	// CommercialInvoiceURL is the capability URL of an international label's commercial
	// invoice (the API's, like LabelURL); null for a domestic label, which has none.
	CommercialInvoiceURL *string    `json:"commercial_invoice_url"`
	LabelFile            string     `json:"label_file,omitempty"`
	LabelFormat          string     `json:"label_format"`
	TrackingCode         string     `json:"tracking_code"`
	Carrier              string     `json:"carrier"`
	Service              string     `json:"service"`
	ShippingRateID       string     `json:"shipping_rate_id"`
	ShippingRate         *Rate      `json:"shipping_rate"`
	InsuranceAmount      *float64   `json:"insurance_amount"` // the declared value insured, USD (compat); null if none
	ManifestID           *string    `json:"manifest_id"`      // the manifest (close-out) holding the label; null if none
	DeliveredAt          *Timestamp `json:"delivered_at"`
	FirstCarrierScanAt   *Timestamp `json:"first_carrier_scan_at"`
	CreatedAt            Timestamp  `json:"created_at"`
	UpdatedAt            Timestamp  `json:"updated_at"`

	// CommercialInvoice: the label's shipment is international (Shipment.HasCustomsDocuments),
	// so the label has a commercial invoice. The store sets it; the API links the URL.
	CommercialInvoice bool `json:"-"`
	// LastEventAt is the occurred_at of the tracking event the status follows.
	LastEventAt *time.Time `json:"-"`
	// FinishedAt is when the label first became DELIVERED or RETURN_TO_SENDER: when it is billed.
	FinishedAt *time.Time `json:"-"`
	// Billed: the label's postage is on an invoice. The store sets it where it decides a void.
	Billed bool `json:"-"`
	// InsuredCents is InsuranceAmount in cents (0 when not insured); InsuranceCents what the
	// insurance costs, an INSURANCE surcharge of the purchased rate.
	InsuredCents, InsuranceCents int64 `json:"-"`
}

// Insure records the label's insurance: insuredCents of declared value, costing chargeCents.
func (l *Label) Insure(insuredCents, chargeCents int64) {
	l.InsuredCents, l.InsuranceCents, l.InsuranceAmount = insuredCents, chargeCents, nil
	if insuredCents > 0 {
		amount := float64(insuredCents) / 100
		l.InsuranceAmount = &amount
	}
}

// Location is where a tracking event happened.
type Location struct {
	City    string `json:"city"`
	State   string `json:"state"`
	Zip     string `json:"zip"`
	Country string `json:"country"`
}

// TrackingEvent is one carrier scan or status report of a label.
type TrackingEvent struct {
	ID               string    `json:"id"`
	Status           string    `json:"status"`
	Substatus        *string   `json:"substatus"`
	StatusDetail     *string   `json:"status_detail"`
	Message          string    `json:"message"`
	OccurredAt       Timestamp `json:"occurred_at"`
	Source           string    `json:"source"`
	TrackingLocation *Location `json:"tracking_location"`
	CreatedAt        Timestamp `json:"created_at"`
}

// ValidLabelStatus reports whether s is a label status.
func ValidLabelStatus(s string) bool { return slices.Contains(LabelStatuses, s) }

// InNetwork reports whether a label in status s has entered the carrier's network: any
// status but PRE_TRANSIT and VOIDED. The first such event is the first carrier scan.
func InNetwork(status string) bool {
	return ValidLabelStatus(status) && status != LabelPreTransit && status != LabelVoided
}

// Finished reports whether a label in status s has finished its journey — delivered or
// returned — which is when its postage is billed.
func Finished(status string) bool {
	return status == LabelDelivered || status == LabelReturnToSender
}

// Scanned reports whether the carrier has ever reported the label in its network.
func (l *Label) Scanned() bool { return l.FirstCarrierScanAt != nil || InNetwork(l.Status) }

// Voidable reports whether the label can still be voided (its shipment cancelled): only while
// PRE_TRANSIT, never scanned and never billed. A label's life only moves forward, so the
// status alone is not trusted: a label that was scanned or billed stays unvoidable even if
// an older bug put it back to PRE_TRANSIT.
func (l *Label) Voidable() bool {
	return l.Status == LabelPreTransit && !l.Scanned() && l.FinishedAt == nil && !l.Billed
}

// stage orders a label's life: it only moves forward, from PRE_TRANSIT (0) into the
// carrier's network (1) to finished (2).
func stage(status string) int {
	switch {
	case Finished(status):
		return 2
	case InNetwork(status):
		return 1
	}
	return 0
}

// labelStage is the furthest stage the label has reached, by its status and by its history.
func labelStage(l *Label) int {
	s := stage(l.Status)
	if l.FirstCarrierScanAt != nil {
		s = max(s, 1)
	}
	if l.FinishedAt != nil || l.Billed {
		s = 2
	}
	return s
}

// ValidateTrackingEvent checks an event as an operator feed posts it. VOIDED is not an event:
// labels are voided by cancelling their shipment.
func ValidateTrackingEvent(e *TrackingEvent) error {
	var v ValidationError
	switch {
	case e.Status == "":
		v.Add("status", "required", "is required")
	case e.Status == LabelVoided:
		v.Add("status", "invalid", "VOIDED is not a tracking status; cancel the shipment to void its label")
	case !ValidLabelStatus(e.Status):
		v.Add("status", "invalid", "must be one of PRE_TRANSIT, IN_TRANSIT, OUT_FOR_DELIVERY, DELIVERED, DELIVERY_EXCEPTION, RETURN_TO_SENDER")
	}
	if e.Substatus != nil {
		switch {
		case e.Status != LabelDeliveryException:
			v.Add("substatus", "invalid", "is only allowed with status DELIVERY_EXCEPTION")
		case !slices.Contains(LabelSubstatuses, *e.Substatus):
			v.Add("substatus", "invalid", "must be one of "+strings.Join(LabelSubstatuses, ", "))
		}
	}
	if e.Message == "" {
		v.Add("message", "required", "is required")
	} else if len(e.Message) > 1000 {
		v.Add("message", "too_long", "must be at most 1000 characters")
	}
	if e.StatusDetail != nil && len(*e.StatusDetail) > 200 {
		v.Add("status_detail", "too_long", "must be at most 200 characters")
	}
	if e.OccurredAt.IsZero() {
		v.Add("occurred_at", "required", "is required (RFC 3339)")
	}
	if l := e.TrackingLocation; l != nil {
		for _, f := range []struct{ name, value string }{{"city", l.City}, {"state", l.State}, {"zip", l.Zip}, {"country", l.Country}} {
			if len(f.value) > 100 {
				v.Add("tracking_location."+f.name, "too_long", "must be at most 100 characters")
			}
		}
	}
	return v.Err()
}

// TrackingEffect is what applying a tracking event did to a label.
type TrackingEffect struct {
	// StatusChanged: the event is now the latest, so the label's status (and substatus)
	// follow it.
	StatusChanged bool
	// EnteredNetwork: the first in-network event of the label (emit LABEL_IN_TRANSIT).
	EnteredNetwork bool
	// Finished: the label just became DELIVERED or RETURN_TO_SENDER for the first time
	// (bill it, at FinishedAt).
	Finished bool
}

// CheckTrackingEvent reports whether the label can take the event at all: a VOIDED label
// takes none (shipping.ErrInvalidState), and an event dated before the label was purchased
// is invalid (a *ValidationError on occurred_at). It runs before the event is recorded.
func CheckTrackingEvent(l *Label, e TrackingEvent) error {
	if l.Status == LabelVoided {
		return fmt.Errorf("%w: label %s is VOIDED", ErrInvalidState, l.TrackingCode)
	}
	if !l.CreatedAt.IsZero() && e.OccurredAt.Before(l.CreatedAt.Time) {
		var v ValidationError
		v.Add("occurred_at", "before_purchase", "must not be before the label was purchased ("+FormatTime(l.CreatedAt.Time)+")")
		return &v
	}
	return nil
}

// ApplyTrackingEvent updates the label for a new tracking event and reports what changed.
// A label's life only moves forward, through three stages: PRE_TRANSIT, in the carrier's
// network, finished (DELIVERED or RETURN_TO_SENDER). An event of a later stage than the
// label's always takes the status, whatever its date (a late-reported first scan or delivery
// still counts); within the PRE_TRANSIT and in-network stages events may arrive out of order
// and the status follows the one with the latest occurred_at (an event as late as the current
// one wins, being the newer report); an event of an earlier stage never does, so a scanned
// label never returns to PRE_TRANSIT. A finished label keeps its status: later events are
// only history. first_carrier_scan_at is the earliest in-network event, delivered_at the
// earliest DELIVERED one of a DELIVERED label. The caller records the event and sets UpdatedAt.
func ApplyTrackingEvent(l *Label, e TrackingEvent) (TrackingEffect, error) {
	var eff TrackingEffect
	if err := CheckTrackingEvent(l, e); err != nil {
		return eff, err
	}
	at := e.OccurredAt.Time
	current, next := labelStage(l), stage(e.Status)
	latest := l.LastEventAt == nil || !at.Before(*l.LastEventAt)
	// stage(l.Status) < current only for a label an older version moved backwards: the first
	// event of its real stage repairs its status.
	if next > current || next == current && (stage(l.Status) < current || next < 2 && latest) {
		eff.StatusChanged = l.Status != e.Status || !sameString(l.Substatus, e.Substatus)
		l.Status, l.Substatus, l.LastEventAt = e.Status, e.Substatus, &at
	}
	if InNetwork(e.Status) {
		if l.FirstCarrierScanAt == nil {
			eff.EnteredNetwork = true
		}
		if l.FirstCarrierScanAt == nil || at.Before(l.FirstCarrierScanAt.Time) {
			l.FirstCarrierScanAt = &Timestamp{at}
		}
	}
	if e.Status == LabelDelivered && l.Status == LabelDelivered && (l.DeliveredAt == nil || at.Before(l.DeliveredAt.Time)) {
		l.DeliveredAt = &Timestamp{at}
	}
	if Finished(l.Status) && l.FinishedAt == nil {
		eff.Finished = true
		l.FinishedAt = &at
	}
	return eff, nil
}

func sameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// CancelAction is what cancelling a shipment takes.
type CancelAction int

const (
	// CancelNothing: the shipment is already CANCELLED; PUT is idempotent.
	CancelNothing CancelAction = iota
	// CancelShipment: an OPEN shipment just becomes CANCELLED.
	CancelShipment
	// CancelAndVoid: the shipment becomes CANCELLED and its PRE_TRANSIT label VOIDED.
	CancelAndVoid
)

// Cancel decides what cancelling a shipment in shipmentStatus takes; l is its label (nil
// without one). Only a label never scanned and never billed can be voided (Label.Voidable),
// and not once it is in a manifest (ErrLabelManifested): the carrier holds the manifest.
func Cancel(shipmentStatus string, l *Label) (CancelAction, error) {
	switch shipmentStatus {
	case StatusCancelled:
		return CancelNothing, nil
	case StatusOpen:
		return CancelShipment, nil
	case StatusPurchased:
		switch {
		case l == nil:
			return 0, fmt.Errorf("%w: the shipment has no label to void", ErrInvalidState)
		case l.Voidable() && l.ManifestID != nil:
			return 0, ErrLabelManifested
		case l.Voidable():
			return CancelAndVoid, nil
		case l.Status != LabelPreTransit:
			return 0, fmt.Errorf("%w: the label is %s; only a PRE_TRANSIT label can be voided", ErrInvalidState, l.Status)
		}
		return 0, fmt.Errorf("%w: the label was already scanned or billed; it can no longer be voided", ErrInvalidState)
	}
	return 0, fmt.Errorf("%w: shipment is %s", ErrInvalidState, shipmentStatus)
}

// CanBuy reports, as an error, whether a shipment in status s can have a rate bought.
func CanBuy(shipmentStatus string) error {
	if shipmentStatus != StatusOpen {
		return fmt.Errorf("%w: shipment is %s; only an OPEN shipment can buy a rate", ErrInvalidState, shipmentStatus)
	}
	return nil
}
