package shipping

import (
	"time"

	"github.com/waybill/waybill/webhook"
)

// Purchase is what buying one of a shipment's rates writes: a new label of that rate, bought
// at a moment, insured for a declared value (0 for none). The buy builds it; the store writes
// what Apply makes of the shipment, and Event.
type Purchase struct {
	LabelID, RateID string
	At              time.Time
	InsuredCents    int64
	// Durable: the carrier sells outside waybill, so the purchase is written as an attempt
	// before the carrier is called (Reservation.Prepare).
	Durable bool
}

// InsuranceCents is what the purchase's insurance costs.
func (p Purchase) InsuranceCents() int64 { return InsuranceCents(p.InsuredCents) }

// Apply makes s, as read before its purchase, what the purchase writes under trackingCode:
// the shipment PURCHASED from the rate's carrier, with its PRE_TRANSIT label insured as asked.
// It reports false, changing nothing, when s has no rate of the purchase's id.
func (p Purchase) Apply(s *Shipment, trackingCode string) bool {
	i := s.rateIndex(p.RateID)
	if i < 0 {
		return false
	}
	at := Timestamp{Time: Recorded(p.At)}
	charge := p.InsuranceCents()
	rate := s.ShippingRates[i]
	bought := rate.Insured(charge)
	s.Status, s.Carrier, s.UpdatedAt = StatusPurchased, rate.Carrier, at
	s.ShippingLabel = &Label{ID: p.LabelID, ShipmentID: s.ID, Status: LabelPreTransit, LabelFormat: s.LabelFormat,
		TrackingCode: trackingCode, Carrier: rate.Carrier, Service: rate.Service, ShippingRateID: rate.ID,
		ShippingRate: &bought, CreatedAt: at, UpdatedAt: at, CommercialInvoice: s.HasCustomsDocuments()}
	s.ShippingLabel.Insure(p.InsuredCents, charge)
	return true
}

// rateIndex is the index of the rate of that id among s's rates, -1 if it has none.
func (s *Shipment) rateIndex(id string) int {
	for i := range s.ShippingRates {
		if s.ShippingRates[i].ID == id {
			return i
		}
	}
	return -1
}

// Event is a webhook event a use case causes, built by the domain and handed to the store,
// which records it for the account's subscriptions in the transaction that writes its cause.
type Event struct {
	Topic   string
	Payload any
}

// PurchasedEvent is the LABEL_PURCHASED event of a bought label.
func PurchasedEvent(l *Label) Event {
	return Event{webhook.TopicLabelPurchased, LabelEventOf(l, nil)}
}

// VoidedEvent is the LABEL_VOIDED event of l, voided, with its tracking events.
func VoidedEvent(l *Label, events []TrackingEvent) Event {
	voided := *l
	voided.Status, voided.Substatus = LabelVoided, nil
	return Event{webhook.TopicLabelVoided, LabelEventOf(&voided, events)}
}
