package shipping

import (
	"context"
	"time"

	"github.com/waybill/waybill/webhook"
)

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
	Emit(ctx context.Context, e Event) error
}

// TrackingStore is what recording a tracking event needs persisted. B is the billing books of
// the same transaction, which a label that finishes is billed through.
type TrackingStore[B any] interface {
	// TrackLabel runs fn in one transaction on the label with the tracking code, of carrier
	// unless it is empty, locked; ErrNotFound when there is none. fn may run more than once.
	TrackLabel(ctx context.Context, carrier, trackingCode string, fn func(t TrackedLabel, books B) error) error
}

// EventRecorder records a validated tracking event (Tracking.Record), for the workers that
// bring events in.
type EventRecorder interface {
	Record(ctx context.Context, carrier, trackingCode string, e TrackingEvent) (ev TrackingEvent, created bool, err error)
}

// Tracking records tracking events, however they arrive (the operator feed, a carrier's signed
// push, a poll, the simulator), and bills the labels they finish.
type Tracking[B any] struct {
	Store TrackingStore[B]
	// Bill bills a label that finished at finishedAt through the books of the transaction that
	// finished it (billing.BillFinishedLabel).
	Bill func(ctx context.Context, books B, labelID string, finishedAt time.Time) error
}

// Record records a validated event for the label with the tracking code (carrier is empty for
// the operator feed, which reaches every carrier's labels), with its effects in the same
// transaction: the label follows the latest event (ApplyTrackingEvent), LABEL_TRACKING_UPDATED
// is emitted, and LABEL_IN_TRANSIT on the first in-network event; a label that finishes is
// billed. An event already recorded changes nothing and is answered with created false. An
// unknown code is ErrNotFound; a VOIDED label ErrInvalidState; an event dated before the
// purchase a *ValidationError (CheckTrackingEvent).
func (tr Tracking[B]) Record(ctx context.Context, carrier, trackingCode string, e TrackingEvent) (ev TrackingEvent, created bool, err error) {
	err = tr.Store.TrackLabel(ctx, carrier, trackingCode, func(t TrackedLabel, books B) error {
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
			if err := t.Emit(ctx, Event{webhook.TopicLabelInTransit, payload}); err != nil {
				return err
			}
		}
		if err := t.Emit(ctx, Event{webhook.TopicLabelTrackingUpdated, payload}); err != nil {
			return err
		}
		if effect.Finished {
			// The label's row already shows its final status, which billing records.
			return tr.Bill(ctx, books, l.ID, Recorded(*l.FinishedAt))
		}
		return nil
	})
	return ev, created, err
}
