package shipping

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// SimulatedSource is the source of the tracking events the tracking simulator posts.
const SimulatedSource = "simulator"

// SimulatedMissedDelivery is the substatus of the simulator's one delivery exception.
const SimulatedMissedDelivery = "MISSED_DELIVERY"

// NextSimulatedEvent is the tracking simulator's rule: the event a carrier would scan next for
// a label in status (with substatus), one step after the label's last event (or its purchase)
// at last. The journey is PRE_TRANSIT → IN_TRANSIT → OUT_FOR_DELIVERY → DELIVERED; about one
// label in six, chosen by its id so the same label always takes the same road, misses its first
// delivery (DELIVERY_EXCEPTION, MISSED_DELIVERY) and is delivered at the next step. The next
// event follows from the stored status alone, so a restart carries on where it stopped. A
// label with nothing more to simulate (finished, voided, or an exception the simulator did not
// cause) has ok false.
func NextSimulatedEvent(labelID, status string, substatus *string, last time.Time, step time.Duration) (e TrackingEvent, ok bool) {
	e = TrackingEvent{OccurredAt: Timestamp{last.Add(step).UTC().Truncate(time.Microsecond)}, Source: SimulatedSource}
	switch status {
	case LabelPreTransit:
		e.Status, e.Message = LabelInTransit, "Picked up by the carrier"
	case LabelInTransit:
		e.Status, e.Message = LabelOutForDelivery, "Out for delivery"
	case LabelOutForDelivery:
		if missesDelivery(labelID) {
			sub := SimulatedMissedDelivery
			e.Status, e.Substatus, e.Message = LabelDeliveryException, &sub, "Delivery attempted: nobody was home; another attempt follows"
		} else {
			e.Status, e.Message = LabelDelivered, "Delivered"
		}
	case LabelDeliveryException:
		if substatus == nil || *substatus != SimulatedMissedDelivery {
			return TrackingEvent{}, false
		}
		e.Status, e.Message = LabelDelivered, "Delivered at the second attempt"
	default:
		return TrackingEvent{}, false
	}
	return e, true
}

// SimulatedStatuses are the statuses NextSimulatedEvent moves a label on from, besides its own
// missed delivery (DELIVERY_EXCEPTION with substatus SimulatedMissedDelivery).
var SimulatedStatuses = []string{LabelPreTransit, LabelInTransit, LabelOutForDelivery}

// missesDelivery picks the labels whose first delivery attempt fails: about one in six.
func missesDelivery(labelID string) bool {
	h := fnv.New32a()
	h.Write([]byte(labelID))
	return h.Sum32()%6 == 0
}

// SimulatedLabel is what the tracking simulator needs of a label to post its next event.
type SimulatedLabel struct {
	ID, TrackingCode, Status string
	Substatus                *string
	// LastEventAt is the occurred_at of the event the status follows, or the purchase time.
	LastEventAt time.Time
}

// SimulatorStore is what the tracking simulator reads and records through.
type SimulatorStore interface {
	// DueSimulatedLabels returns at most limit labels, of every account, whose status is in
	// SimulatedStatuses (or the simulator's own missed delivery) and whose last event (or
	// purchase) is at or before cutoff, the longest waiting first.
	DueSimulatedLabels(ctx context.Context, cutoff time.Time, limit int) ([]SimulatedLabel, error)
}

// Simulator moves purchased labels along on a compressed clock, a step apart: it records the
// events NextSimulatedEvent gives through Events, as the operator feed does, so
// webhooks, billing and invoices follow as they would for a real carrier. It keeps no state:
// what is due comes from the labels' stored status and last event time, so a restart carries
// on.
type Simulator struct {
	Store  SimulatorStore
	Events EventRecorder // records the events, as the operator feed does
	Step   time.Duration
	Now    func() time.Time
	Log    *slog.Logger
}

// Run records due simulated events until ctx ends, looking a few times per step.
func (s *Simulator) Run(ctx context.Context) {
	every := min(max(s.Step/4, 10*time.Millisecond), time.Second)
	work.Loop{Every: every, Log: s.Log, Name: "tracking simulator"}.Run(ctx, s.Drain)
}

// Drain records every simulated event that is due, once: a label far behind (the server was
// down) catches up one step per round.
func (s *Simulator) Drain(ctx context.Context) error {
	for range 100 {
		due, err := s.Store.DueSimulatedLabels(ctx, s.Now().Add(-s.Step), 100)
		if err != nil {
			return err
		}
		moved := 0
		for _, l := range due {
			e, ok := NextSimulatedEvent(l.ID, l.Status, l.Substatus, l.LastEventAt, s.Step)
			if !ok {
				continue
			}
			if err := ValidateTrackingEvent(&e); err != nil {
				return err
			}
			_, created, err := s.Events.Record(ctx, "", l.TrackingCode, e)
			switch {
			case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalidState):
				// Voided (or gone) since it was read: nothing to simulate.
			case err != nil:
				return err
			case created:
				moved++
				if s.Log != nil {
					s.Log.Info("tracking simulator", "label", l.ID, "status", e.Status, "occurred_at", e.OccurredAt.Time)
				}
			}
		}
		if moved == 0 {
			return nil
		}
	}
	return nil
}
