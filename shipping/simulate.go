package shipping

import (
	"hash/fnv"
	"time"
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
