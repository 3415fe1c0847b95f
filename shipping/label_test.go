package shipping

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLabelStatusModel(t *testing.T) {
	tests := []struct {
		status                     string
		valid, inNetwork, finished bool
	}{
		{LabelPreTransit, true, false, false},
		{LabelInTransit, true, true, false},
		{LabelOutForDelivery, true, true, false},
		{LabelDelivered, true, true, true},
		{LabelDeliveryException, true, true, false},
		{LabelReturnToSender, true, true, true},
		{LabelVoided, true, false, false},
		{"SHIPPED", false, false, false},
		{"", false, false, false},
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
	}
}

// TestVoidable: only a label never scanned and never billed can be voided, whatever its
// status says.
func TestVoidable(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		label Label
		want  bool
	}{
		{"fresh PRE_TRANSIT", Label{Status: LabelPreTransit}, true},
		{"in transit", Label{Status: LabelInTransit, FirstCarrierScanAt: &Timestamp{at}}, false},
		{"out for delivery", Label{Status: LabelOutForDelivery}, false},
		{"delivered", Label{Status: LabelDelivered, FinishedAt: &at}, false},
		{"exception", Label{Status: LabelDeliveryException}, false},
		{"returned", Label{Status: LabelReturnToSender, FinishedAt: &at}, false},
		{"voided", Label{Status: LabelVoided}, false},
		{"PRE_TRANSIT but scanned", Label{Status: LabelPreTransit, FirstCarrierScanAt: &Timestamp{at}}, false},
		{"PRE_TRANSIT but finished", Label{Status: LabelPreTransit, FinishedAt: &at}, false},
		{"PRE_TRANSIT but billed", Label{Status: LabelPreTransit, Billed: true}, false},
	}
	for _, tt := range tests {
		if got := tt.label.Voidable(); got != tt.want {
			t.Errorf("%s: Voidable() = %v; want %v", tt.name, got, tt.want)
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
			"finishing is once: a later delivery after return changes nothing",
			[]TrackingEvent{ev(LabelReturnToSender, 20), ev(LabelDelivered, 22)},
			want{LabelReturnToSender, "", 20, 0, 20, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true, Finished: true}, {}}},
		},
		{
			"a delivered label never returns to PRE_TRANSIT",
			[]TrackingEvent{ev(LabelInTransit, 9), ev(LabelDelivered, 10), ev(LabelPreTransit, 11)},
			want{LabelDelivered, "", 9, 10, 10, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {StatusChanged: true, Finished: true}, {}}},
		},
		{
			"a delivered label keeps its status after a later exception or return",
			[]TrackingEvent{ev(LabelDelivered, 10), {Status: LabelDeliveryException, Substatus: ptr("DAMAGED"), OccurredAt: Timestamp{at(11)}}, ev(LabelReturnToSender, 12), ev(LabelInTransit, 13)},
			want{LabelDelivered, "", 10, 10, 10, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true, Finished: true}, {}, {}, {}}},
		},
		{
			"a scanned label ignores a later PRE_TRANSIT",
			[]TrackingEvent{ev(LabelInTransit, 9), ev(LabelPreTransit, 11), ev(LabelOutForDelivery, 12)},
			want{LabelOutForDelivery, "", 9, 0, 0, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {}, {StatusChanged: true}}},
		},
		{
			"a late-reported first scan moves a PRE_TRANSIT label into the network",
			[]TrackingEvent{ev(LabelPreTransit, 11), ev(LabelInTransit, 9)},
			want{LabelInTransit, "", 9, 0, 0, []TrackingEffect{{}, {StatusChanged: true, EnteredNetwork: true}}},
		},
		{
			"a late-reported delivery finishes the label",
			[]TrackingEvent{ev(LabelOutForDelivery, 12), ev(LabelDelivered, 10)},
			want{LabelDelivered, "", 10, 10, 10, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true}, {StatusChanged: true, Finished: true}}},
		},
		{
			"an earlier delivery report moves delivered_at back",
			[]TrackingEvent{ev(LabelDelivered, 15), ev(LabelDelivered, 14)},
			want{LabelDelivered, "", 14, 14, 15, []TrackingEffect{{StatusChanged: true, EnteredNetwork: true, Finished: true}, {}}},
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

// TestApplyTrackingEventLegacyBackwards: a label an older version put back to PRE_TRANSIT
// after its first scan takes its real stage back with the next in-network event.
func TestApplyTrackingEventLegacyBackwards(t *testing.T) {
	nine, eleven := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	l := &Label{Status: LabelPreTransit, FirstCarrierScanAt: &Timestamp{nine}, LastEventAt: &eleven}
	eff, err := ApplyTrackingEvent(l, TrackingEvent{Status: LabelInTransit, OccurredAt: Timestamp{nine.Add(time.Hour)}})
	if err != nil || l.Status != LabelInTransit || !eff.StatusChanged || eff.EnteredNetwork {
		t.Errorf("ApplyTrackingEvent = %+v, %v, status %s; want IN_TRANSIT, changed, not entering again", eff, err, l.Status)
	}
}

func TestCheckTrackingEvent(t *testing.T) {
	bought := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		status  string
		at      time.Time
		invalid bool   // ErrInvalidState
		field   string // the *ValidationError's field
	}{
		{"after purchase", LabelPreTransit, bought.Add(time.Hour), false, ""},
		{"at purchase", LabelPreTransit, bought, false, ""},
		{"a microsecond before purchase", LabelPreTransit, bought.Add(-time.Microsecond), false, "occurred_at"},
		{"a day before purchase, label delivered", LabelDelivered, bought.Add(-24 * time.Hour), false, "occurred_at"},
		{"voided", LabelVoided, bought.Add(time.Hour), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Label{Status: tt.status, TrackingCode: "X1", CreatedAt: Timestamp{bought}}
			e := TrackingEvent{Status: LabelInTransit, OccurredAt: Timestamp{tt.at}}
			err := CheckTrackingEvent(l, e)
			var ve *ValidationError
			switch {
			case tt.invalid:
				if !errors.Is(err, ErrInvalidState) {
					t.Errorf("CheckTrackingEvent = %v; want ErrInvalidState", err)
				}
			case tt.field != "":
				if !errors.As(err, &ve) || len(ve.Fields) != 1 || ve.Fields[0].Field != tt.field {
					t.Errorf("CheckTrackingEvent = %v; want a validation error on %s", err, tt.field)
				} else if want := "(2026-11-22T08:00:00.000000Z)"; !strings.Contains(ve.Fields[0].Message, want) {
					// The purchase time is written as every timestamp is.
					t.Errorf("message %q; want the purchase time %s", ve.Fields[0].Message, want)
				}
				// ApplyTrackingEvent refuses it too, leaving the label alone.
				before := *l
				if _, err := ApplyTrackingEvent(l, e); !errors.As(err, &ve) || l.Status != before.Status || l.FirstCarrierScanAt != nil {
					t.Errorf("ApplyTrackingEvent = %v, label %+v; want the validation error and no change", err, l)
				}
			default:
				if err != nil {
					t.Errorf("CheckTrackingEvent = %v; want nil", err)
				}
			}
		})
	}
}

// TestApplyTrackingEventOrderIndependent plays every arrival order of one label's events:
// with one finishing event, where the label ends does not depend on the order.
func TestApplyTrackingEventOrderIndependent(t *testing.T) {
	at := func(h int) Timestamp { return Timestamp{time.Date(2026, 11, 22, h, 0, 0, 0, time.UTC)} }
	events := []TrackingEvent{
		{Status: LabelPreTransit, OccurredAt: at(7)},
		{Status: LabelInTransit, OccurredAt: at(9)},
		{Status: LabelDeliveryException, Substatus: ptr("WEATHER"), OccurredAt: at(11)},
		{Status: LabelOutForDelivery, OccurredAt: at(12)},
		{Status: LabelDelivered, OccurredAt: at(15)},
		{Status: LabelPreTransit, OccurredAt: at(16)},
	}
	var permute func(k int)
	n := 0
	permute = func(k int) {
		if k == len(events) {
			n++
			l := &Label{Status: LabelPreTransit, TrackingCode: "X1"}
			entered, finished := 0, 0
			for _, e := range events {
				eff, err := ApplyTrackingEvent(l, e)
				if err != nil {
					t.Fatal(err)
				}
				if eff.EnteredNetwork {
					entered++
				}
				if eff.Finished {
					finished++
				}
			}
			if l.Status != LabelDelivered || l.Substatus != nil || !l.FirstCarrierScanAt.Equal(at(9).Time) ||
				!l.DeliveredAt.Equal(at(15).Time) || !l.FinishedAt.Equal(at(15).Time) || entered != 1 || finished != 1 {
				var order []string
				for _, e := range events {
					order = append(order, fmt.Sprintf("%s@%d", e.Status, e.OccurredAt.Hour()))
				}
				t.Fatalf("order %v: label %s, scan %v, delivered %v, finished %v, entered %d, finished %d times; want DELIVERED 9/15/15, once each",
					order, l.Status, l.FirstCarrierScanAt, l.DeliveredAt, l.FinishedAt, entered, finished)
			}
			return
		}
		for i := k; i < len(events); i++ {
			events[k], events[i] = events[i], events[k]
			permute(k + 1)
			events[k], events[i] = events[i], events[k]
		}
	}
	permute(0)
	if n != 720 {
		t.Fatalf("played %d orders; want 720", n)
	}
}

func TestCancel(t *testing.T) {
	scan := &Timestamp{time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	manifest := "m1"
	tests := []struct {
		name     string
		shipment string
		label    *Label
		want     CancelAction
		invalid  bool
	}{
		{"open", StatusOpen, nil, CancelShipment, false},
		{"cancelled", StatusCancelled, nil, CancelNothing, false},
		{"cancelled, voided label", StatusCancelled, &Label{Status: LabelVoided}, CancelNothing, false},
		{"purchased, fresh label", StatusPurchased, &Label{Status: LabelPreTransit}, CancelAndVoid, false},
		{"in transit", StatusPurchased, &Label{Status: LabelInTransit, FirstCarrierScanAt: scan}, 0, true},
		{"out for delivery", StatusPurchased, &Label{Status: LabelOutForDelivery, FirstCarrierScanAt: scan}, 0, true},
		{"delivered", StatusPurchased, &Label{Status: LabelDelivered, FirstCarrierScanAt: scan, FinishedAt: &scan.Time}, 0, true},
		{"exception", StatusPurchased, &Label{Status: LabelDeliveryException, FirstCarrierScanAt: scan}, 0, true},
		{"returned", StatusPurchased, &Label{Status: LabelReturnToSender, FirstCarrierScanAt: scan, FinishedAt: &scan.Time}, 0, true},
		{"PRE_TRANSIT after a scan", StatusPurchased, &Label{Status: LabelPreTransit, FirstCarrierScanAt: scan}, 0, true},
		{"PRE_TRANSIT but billed", StatusPurchased, &Label{Status: LabelPreTransit, Billed: true}, 0, true},
		{"purchased without a label", StatusPurchased, nil, 0, true},
		{"manifested, in transit", StatusPurchased, &Label{Status: LabelInTransit, FirstCarrierScanAt: scan, ManifestID: &manifest}, 0, true},
		{"unknown status", "WEIRD", nil, 0, true},
	}
	for _, tt := range tests {
		got, err := Cancel(tt.shipment, tt.label)
		if tt.invalid {
			if !errors.Is(err, ErrInvalidState) {
				t.Errorf("%s: Cancel = %v, %v; want ErrInvalidState", tt.name, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: Cancel = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// TestCancelManifested: a label in a manifest is refused with ErrLabelManifested, not voided,
// and not reported as another invalid state.
func TestCancelManifested(t *testing.T) {
	manifest := "m1"
	got, err := Cancel(StatusPurchased, &Label{Status: LabelPreTransit, ManifestID: &manifest})
	if !errors.Is(err, ErrLabelManifested) || errors.Is(err, ErrInvalidState) {
		t.Errorf("Cancel(manifested PRE_TRANSIT) = %v, %v; want ErrLabelManifested", got, err)
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
