package shipping

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTrackingEventInput(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	blank, city := "  ", &Location{City: "Austin", State: "TX", Zip: "78701", Country: "US"}
	ok := TrackingEventInput{TrackingCode: " PL123 ", Status: LabelInTransit, Message: " Arrived ", OccurredAt: "2026-11-26T10:00:00.1234567Z"}
	for _, tt := range []struct {
		name   string
		change func(*TrackingEventInput)
		fields []string // the fields refused, "field:code"; none for a valid input
	}{
		{"valid", func(*TrackingEventInput) {}, nil},
		{"blank substatus is absent", func(in *TrackingEventInput) { in.Substatus = &blank }, nil},
		{"alias location", func(in *TrackingEventInput) { in.Location = city }, nil},
		{"both location names", func(in *TrackingEventInput) { in.Location, in.TrackingLocation = city, city }, []string{"location:conflict"}},
		{"no tracking code", func(in *TrackingEventInput) { in.TrackingCode = " " }, []string{"tracking_code:required"}},
		{"long tracking code", func(in *TrackingEventInput) { in.TrackingCode = strings.Repeat("A", 65) }, []string{"tracking_code:too_long"}},
		{"not RFC 3339", func(in *TrackingEventInput) { in.OccurredAt = "yesterday" }, []string{"occurred_at:invalid"}},
		{"a day and a second ahead", func(in *TrackingEventInput) { in.OccurredAt = "2026-11-27T12:00:01Z" }, []string{"occurred_at:in_future"}},
		{"a day ahead", func(in *TrackingEventInput) { in.OccurredAt = "2026-11-27T12:00:00Z" }, nil},
		{"no status", func(in *TrackingEventInput) { in.Status = "" }, []string{"status:required"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := ok
			tt.change(&in)
			e, err := in.Event("admin", now)
			var ve *ValidationError
			var got []string
			if errors.As(err, &ve) {
				for _, f := range ve.Fields {
					got = append(got, f.Field+":"+f.Code)
				}
			} else if err != nil {
				t.Fatalf("Event = %v; want a validation error or none", err)
			}
			if !slices.Equal(got, tt.fields) {
				t.Fatalf("refused %v; want %v", got, tt.fields)
			}
			if err == nil && (in.TrackingCode != "PL123" || e.Message != "Arrived" || e.Source != "admin" || e.Substatus != nil ||
				!e.OccurredAt.Equal(e.OccurredAt.Truncate(time.Microsecond))) {
				t.Errorf("event %+v from %+v; want trimmed, sourced, to the microsecond", e, in)
			}
		})
	}
}
