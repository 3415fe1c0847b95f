package shipping

import "context"

// LabelEvent is the payload of the LABEL_* webhook events.
type LabelEvent struct {
	ShipmentID      string          `json:"shipment_id"`
	ShippingLabelID string          `json:"shipping_label_id"`
	TrackingCode    string          `json:"tracking_code"`
	Status          string          `json:"status"`
	Substatus       *string         `json:"substatus"`
	TrackingEvents  []TrackingEvent `json:"tracking_events"`
}

// LabelEventOf is the LABEL_* payload of l with its events (none: an empty list).
func LabelEventOf(l *Label, events []TrackingEvent) LabelEvent {
	if events == nil {
		events = []TrackingEvent{}
	}
	return LabelEvent{ShipmentID: l.ShipmentID, ShippingLabelID: l.ID, TrackingCode: l.TrackingCode,
		Status: l.Status, Substatus: l.Substatus, TrackingEvents: events}
}

// TrackedLabel is a label held, in one transaction, for one tracking event
// (TrackingStore.TrackLabel).
type TrackedLabel interface {
	// Label is the label, locked until the transaction ends.
	Label() *Label
	// AddEvent records e for the label, with a new ID and created_at. When the label already
	// has it (same occurred_at, status and message) it records nothing and answers the recorded
	// one, with inserted false.
	AddEvent(ctx context.Context, e TrackingEvent) (recorded TrackingEvent, inserted bool, err error)
	// Save stores the label's tracking state (status, substatus, dates) and renders its
	// shipment again.
	Save(ctx context.Context) error
	// Events lists the label's events, oldest first.
	Events(ctx context.Context) ([]TrackingEvent, error)
	// Emit records a webhook event of the label's account.
	Emit(ctx context.Context, topic string, payload any) error
	// Bill bills the finished label (billing.BillFinishedLabel), in the same transaction.
	Bill(ctx context.Context) error
}

// TrackingStore is what recording a tracking event needs persisted.
type TrackingStore interface {
	// TrackLabel runs fn in one transaction on the label with the tracking code, of carrier
	// unless it is empty, locked; ErrNotFound when there is none. fn may run more than once.
	TrackLabel(ctx context.Context, carrier, trackingCode string, fn func(TrackedLabel) error) error
}

// RecordTrackingEvent records a validated event for the label with the tracking code, however it
// arrived (the operator feed, a carrier's signed push, a poll; carrier is empty for the feed,
// which reaches every carrier's labels), with its effects in the same transaction: the label
// follows the latest event (ApplyTrackingEvent), LABEL_TRACKING_UPDATED is emitted, and
// LABEL_IN_TRANSIT on the first in-network event; a label that finishes is billed. An event
// already recorded changes nothing and is answered with created false. An unknown code is
// ErrNotFound; a VOIDED label ErrInvalidState; an event dated before the purchase a
// *ValidationError (CheckTrackingEvent).
func RecordTrackingEvent(ctx context.Context, st TrackingStore, carrier, trackingCode string, e TrackingEvent) (ev TrackingEvent, created bool, err error) {
	err = st.TrackLabel(ctx, carrier, trackingCode, func(t TrackedLabel) error {
		ev, created = TrackingEvent{}, false
		l := t.Label()
		// Refused events are not recorded either.
		if err := CheckTrackingEvent(l, e); err != nil {
			return err
		}
		recorded, inserted, err := t.AddEvent(ctx, e)
		if ev = recorded; err != nil || !inserted {
			return err
		}
		created = true
		effect, err := ApplyTrackingEvent(l, recorded)
		if err != nil {
			return err
		}
		if err := t.Save(ctx); err != nil {
			return err
		}
		events, err := t.Events(ctx)
		if err != nil {
			return err
		}
		payload := LabelEventOf(l, events)
		if effect.EnteredNetwork {
			if err := t.Emit(ctx, "LABEL_IN_TRANSIT", payload); err != nil {
				return err
			}
		}
		if err := t.Emit(ctx, "LABEL_TRACKING_UPDATED", payload); err != nil {
			return err
		}
		if effect.Finished {
			return t.Bill(ctx) // the label's row already shows its final status, which billing records
		}
		return nil
	})
	return ev, created, err
}
