package shipping

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLabelStatusModel(t *testing.T) {
	tests := []struct {
		status                     string
		valid, inNetwork, finished bool
		voidable                   bool
	}{
		{LabelPreTransit, true, false, false, true},
		{LabelInTransit, true, true, false, false},
		{LabelOutForDelivery, true, true, false, false},
		{LabelDelivered, true, true, true, false},
		{LabelDeliveryException, true, true, false, false},
		{LabelReturnToSender, true, true, true, false},
		{LabelVoided, true, false, false, false},
		{"SHIPPED", false, false, false, false},
		{"", false, false, false, false},
	}
	for _, tt := range tests {
		if got := ValidLabelStatus(tt.status); got != tt.valid {
			t.Errorf("ValidLabelStatus(%q) = %v; want %v", tt.status, got, tt.valid)
		}
		if got := InNetwork(tt.status); got != tt.inNetwork {
			t.Errorf("InNetwork(%q) = %v; want %v", tt.status, got, tt.inNetwork)
		}
		if got := Finished(tt.status); got != tt.finished {
			t.Errorf("Finished(%q) = %v; want %v", tt.status, got, tt.finished)
		}
		if got := Voidable(tt.status); got != tt.voidable {
			t.Errorf("Voidable(%q) = %v; want %v", tt.status, got, tt.voidable)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestValidateTrackingEvent(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ok := TrackingEvent{Status: LabelInTransit, Message: "Arrived at facility", OccurredAt: Timestamp{at}}
	tests := []struct {
		name   string
		edit   func(e *TrackingEvent)
		fields []string
	}{
		{"valid", func(e *TrackingEvent) {}, nil},
		{"exception with substatus", func(e *TrackingEvent) { e.Status, e.Substatus = LabelDeliveryException, ptr("WEATHER") }, nil},
		{"exception without substatus", func(e *TrackingEvent) { e.Status = LabelDeliveryException }, nil},
		{"missing everything", func(e *TrackingEvent) { *e = TrackingEvent{} }, []string{"status", "message", "occurred_at"}},
		{"unknown status", func(e *TrackingEvent) { e.Status = "LOST_IN_SPACE" }, []string{"status"}},
		{"voided", func(e *TrackingEvent) { e.Status = LabelVoided }, []string{"status"}},
		{"substatus without exception", func(e *TrackingEvent) { e.Substatus = ptr("DAMAGED") }, []string{"substatus"}},
		{"unknown substatus", func(e *TrackingEvent) { e.Status, e.Substatus = LabelDeliveryException, ptr("EATEN") }, []string{"substatus"}},
		{"long location", func(e *TrackingEvent) { e.TrackingLocation = &Location{City: string(make([]byte, 101))} }, []string{"tracking_location.city"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ok
			tt.edit(&e)
			err := ValidateTrackingEvent(&e)
			var ve *ValidationError
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("ValidateTrackingEvent = %v; want nil", err)
				}
				return
			}
			if !errors.As(err, &ve) {
				t.Fatalf("ValidateTrackingEvent = %v; want a *ValidationError", err)
			}
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Field)
			}
			if len(got) != len(tt.fields) {
				t.Fatalf("ValidateTrackingEvent fields = %v; want %v", got, tt.fields)
			}
			for i := range got {
				if got[i] != tt.fields[i] {
					t.Errorf("ValidateTrackingEvent fields = %v; want %v", got, tt.fields)
				}
			}
		})
	}
}

// TestApplyTrackingEvent plays sequences of events, as they arrive, onto a new label.
func TestApplyTrackingEvent(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 22, h, 0, 0, 0, time.UTC) }
	ev := func(status string, h int) TrackingEvent {
		return TrackingEvent{Status: status, OccurredAt: Timestamp{at(h)}}
	}
	type want struct {
		status             string
		substatus          string
		firstScan, deliver int // hour, 0 for unset
		finished           int
		effects            []TrackingEffect // one per event
	}
	tests := []struct {
		name   string
		events []TrackingEvent
		want   want
	}{
		{
			"in order to delivery",
			[]TrackingEvent{ev(LabelInTransit, 8), ev(LabelOutForDelivery, 12), ev(LabelDelivered, 15)},
			want{LabelDelivered, "", 8, 15, 15, []TrackingEffect{
				{StatusChanged: true, EnteredNetwork: true}, {StatusChanged: true}, {StatusChanged: true, Finished: true}}},
		},
		{
			"out of order: delivery first, then the older scans",
			[]TrackingEvent{ev(LabelDelivered, 15), ev(LabelInTransit, 8), ev(LabelOutForDelivery, 12)},
			want{LabelDelivered, "", 8, 15, 15, []TrackingEffect{
				{StatusChanged: true, EnteredNetwork: true, Finished: true}, {}, {}}},
		},
		{
			"pre-transit info does not start the network clock",
			[]TrackingEvent{ev(LabelPreTransit, 7), ev(LabelInTransit, 9)},
			want{LabelInTransit, "", 9, 0, 0, []TrackingEffect{{}, {StatusChanged: true, EnteredNetwork: true}}},
		},
		{
			"exception carries its substatus, a later scan clears it",
			[]TrackingEvent{ev(LabelInTransit, 8), {Status: LabelDeliveryException, Substatus: ptr("WEATHER"), OccurredAt: Timestamp{at(10)}}},
			want{LabelDeliveryException, "WEATHER", 8, 0, 0, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {StatusChanged: true}}},
		},
		{
			"return to sender finishes without delivery",
			[]TrackingEvent{ev(LabelInTransit, 8), ev(LabelReturnToSender, 20)},
			want{LabelReturnToSender, "", 8, 0, 20, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {StatusChanged: true, Finished: true}}},
		},
		{
			"finishing is once: a later delivery after return does not bill again",
			[]TrackingEvent{ev(LabelReturnToSender, 20), ev(LabelDelivered, 22)},
			want{LabelDelivered, "", 20, 22, 20, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true, Finished: true}, {StatusChanged: true}}},
		},
		{
			"a tie in occurred_at goes to the later report",
			[]TrackingEvent{ev(LabelInTransit, 8), ev(LabelOutForDelivery, 8)},
			want{LabelOutForDelivery, "", 8, 0, 0, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {StatusChanged: true}}},
		},
		{
			"an earlier in-network scan moves first_carrier_scan_at back without a second LABEL_IN_TRANSIT",
			[]TrackingEvent{ev(LabelOutForDelivery, 12), ev(LabelInTransit, 6)},
			want{LabelOutForDelivery, "", 6, 0, 0, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {}}},
		},
	}
	hour := func(p *time.Time) int {
		if p == nil {
			return 0
		}
		return p.Hour()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Label{Status: LabelPreTransit, TrackingCode: "X1"}
			for i, e := range tt.events {
				eff, err := ApplyTrackingEvent(l, e)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if eff != tt.want.effects[i] {
					t.Errorf("event %d (%s at %d h) effect = %+v; want %+v", i, e.Status, e.OccurredAt.Hour(), eff, tt.want.effects[i])
				}
			}
			sub := ""
			if l.Substatus != nil {
				sub = *l.Substatus
			}
			if l.Status != tt.want.status || sub != tt.want.substatus {
				t.Errorf("status = %s/%q; want %s/%q", l.Status, sub, tt.want.status, tt.want.substatus)
			}
			if got := hour(timeOf(l.FirstCarrierScanAt)); got != tt.want.firstScan {
				t.Errorf("first_carrier_scan_at hour = %d; want %d", got, tt.want.firstScan)
			}
			if got := hour(timeOf(l.DeliveredAt)); got != tt.want.deliver {
				t.Errorf("delivered_at hour = %d; want %d", got, tt.want.deliver)
			}
			if got := hour(l.FinishedAt); got != tt.want.finished {
				t.Errorf("finished_at hour = %d; want %d", got, tt.want.finished)
			}
		})
	}
}

func TestApplyTrackingEventToVoided(t *testing.T) {
	l := &Label{Status: LabelVoided, TrackingCode: "X1"}
	_, err := ApplyTrackingEvent(l, TrackingEvent{Status: LabelInTransit, OccurredAt: Timestamp{time.Now()}})
	if !errors.Is(err, ErrInvalidState) {
		t.Errorf("ApplyTrackingEvent(VOIDED label) = %v; want ErrInvalidState", err)
	}
	if l.Status != LabelVoided {
		t.Errorf("status = %s; want VOIDED unchanged", l.Status)
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		shipment, label string
		want            CancelAction
		invalid         bool
	}{
		{StatusOpen, "", CancelShipment, false},
		{StatusCancelled, "", CancelNothing, false},
		{StatusCancelled, LabelVoided, CancelNothing, false},
		{StatusPurchased, LabelPreTransit, CancelAndVoid, false},
		{StatusPurchased, LabelInTransit, 0, true},
		{StatusPurchased, LabelOutForDelivery, 0, true},
		{StatusPurchased, LabelDelivered, 0, true},
		{StatusPurchased, LabelDeliveryException, 0, true},
		{StatusPurchased, LabelReturnToSender, 0, true},
		{"WEIRD", "", 0, true},
	}
	for _, tt := range tests {
		got, err := Cancel(tt.shipment, tt.label)
		if tt.invalid {
			if !errors.Is(err, ErrInvalidState) {
				t.Errorf("Cancel(%q, %q) = %v, %v; want ErrInvalidState", tt.shipment, tt.label, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Cancel(%q, %q) = %v, %v; want %v", tt.shipment, tt.label, got, err, tt.want)
		}
	}
}

func TestCanBuy(t *testing.T) {
	for _, s := range ShipmentStatuses {
		err := CanBuy(s)
		if (s == StatusOpen) != (err == nil) {
			t.Errorf("CanBuy(%q) = %v", s, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidState) {
			t.Errorf("CanBuy(%q) = %v; want ErrInvalidState", s, err)
		}
	}
}

func timeOf(t *Timestamp) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

func TestLabelJSONTimestamps(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.FixedZone("EST", -5*3600))
	b, err := json.Marshal(Label{ID: "l1", Status: LabelInTransit, FirstCarrierScanAt: &Timestamp{at}, CreatedAt: Timestamp{at}, UpdatedAt: Timestamp{at}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"first_carrier_scan_at":"2026-11-22T14:00:00.000000Z"`, `"delivered_at":null`,
		`"created_at":"2026-11-22T14:00:00.000000Z"`, `"id":"l1"`, `"status":"IN_TRANSIT"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("json.Marshal(Label) = %s; want it to contain %s", b, want)
		}
	}
	// The JSON reads back into a Label (idempotent replays do).
	var l Label
	if err := json.Unmarshal(b, &l); err != nil || !l.FirstCarrierScanAt.Equal(at) || l.ID != "l1" {
		t.Errorf("json.Unmarshal = %+v, %v; want the label back", l, err)
	}
	b, _ = json.Marshal(TrackingEvent{ID: "e1", OccurredAt: Timestamp{at}, CreatedAt: Timestamp{at.Add(1500 * time.Nanosecond)}})
	for _, want := range []string{`"occurred_at":"2026-11-22T14:00:00.000000Z"`, `"created_at":"2026-11-22T14:00:00.000001Z"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("json.Marshal(TrackingEvent) = %s; want it to contain %s", b, want)
		}
	}
}
