package shipping

import (
	"fmt"
	"testing"
	"time"
)

func TestNextSimulatedEvent(t *testing.T) {
	last := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	missed := SimulatedMissedDelivery
	lost := "LOST"
	// Labels whose first delivery attempt fails and does not, found by the rule itself.
	var unlucky, lucky string
	for i := 0; unlucky == "" || lucky == ""; i++ {
		id := fmt.Sprintf("label-%d", i)
		if missesDelivery(id) {
			unlucky = id
		} else {
			lucky = id
		}
	}
	tests := []struct {
		label, status string
		substatus     *string
		want          string // the next status, "" for none
		wantSub       *string
	}{
		{lucky, LabelPreTransit, nil, LabelInTransit, nil},
		{lucky, LabelInTransit, nil, LabelOutForDelivery, nil},
		{lucky, LabelOutForDelivery, nil, LabelDelivered, nil},
		{unlucky, LabelOutForDelivery, nil, LabelDeliveryException, &missed},
		{unlucky, LabelDeliveryException, &missed, LabelDelivered, nil},
		{lucky, LabelDeliveryException, &lost, "", nil}, // an operator's exception is the operator's
		{lucky, LabelDeliveryException, nil, "", nil},
		{lucky, LabelDelivered, nil, "", nil},
		{lucky, LabelReturnToSender, nil, "", nil},
		{lucky, LabelVoided, nil, "", nil},
	}
	for _, tt := range tests {
		e, ok := NextSimulatedEvent(tt.label, tt.status, tt.substatus, last, time.Minute)
		if tt.want == "" {
			if ok {
				t.Errorf("NextSimulatedEvent(%s, %s) = %s; want none", tt.label, tt.status, e.Status)
			}
			continue
		}
		if !ok || e.Status != tt.want || !sameString(e.Substatus, tt.wantSub) {
			t.Errorf("NextSimulatedEvent(%s, %s) = %s %v, %v; want %s %v", tt.label, tt.status, e.Status, e.Substatus, ok, tt.want, tt.wantSub)
			continue
		}
		if !e.OccurredAt.Equal(last.Add(time.Minute)) || e.Source != SimulatedSource {
			t.Errorf("NextSimulatedEvent(%s, %s) occurred at %v from %q; want one step after the last event, from the simulator", tt.label, tt.status, e.OccurredAt, e.Source)
		}
		if err := ValidateTrackingEvent(&e); err != nil {
			t.Errorf("NextSimulatedEvent(%s, %s) is not a valid event: %v", tt.label, tt.status, err)
		}
	}
}

func TestSimulatedDeliveryExceptionsAreOccasional(t *testing.T) {
	n := 0
	for i := range 6000 {
		if missesDelivery(fmt.Sprintf("%08x-label", i)) {
			n++
		}
	}
	if n < 800 || n > 1200 {
		t.Errorf("%d of 6000 labels miss their delivery; want about 1000", n)
	}
}
