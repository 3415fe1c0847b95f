package shipping

import (
	"errors"
	"strings"
	"time"
)

// MaxEventSkew is how far in the future an event's occurred_at may lie: the clock skew allowed
// between a carrier and waybill.
const MaxEventSkew = 24 * time.Hour

// InFuture reports whether an event that occurred at at lies too far in the future at now.
func InFuture(at, now time.Time) bool { return at.After(now.Add(MaxEventSkew)) }

// TrackingEventInput is a tracking event as the operator feed (POST /admin/tracking_events) and
// the carriers' pushes send it.
type TrackingEventInput struct {
	TrackingCode string    `json:"tracking_code"`
	Status       string    `json:"status"`
	Substatus    *string   `json:"substatus" nullable:"true"`
	StatusDetail *string   `json:"status_detail" nullable:"true"`
	Message      string    `json:"message"`
	OccurredAt   string    `json:"occurred_at"`
	Location     *Location `json:"location" nullable:"true"`
	// TrackingLocation is the place under the name events are returned with; location is
	// accepted as its alias.
	TrackingLocation *Location `json:"tracking_location" nullable:"true"`
}

// Event validates in, at now, and returns the event with its source; in.TrackingCode is
// trimmed. The one set of input rules for every way an event is sent; a poll's events, which
// come as TrackingEvents, take ValidateTrackingEvent and InFuture, the same rules.
func (in *TrackingEventInput) Event(source string, now time.Time) (TrackingEvent, error) {
	var v ValidationError
	location, locationField := in.TrackingLocation, "tracking_location"
	switch {
	case in.TrackingLocation != nil && in.Location != nil:
		v.Add("location", "conflict", "send tracking_location or its alias location, not both")
	case in.Location != nil:
		location, locationField = in.Location, "location"
	}
	e := TrackingEvent{Status: in.Status, Substatus: nonEmpty(in.Substatus), StatusDetail: nonEmpty(in.StatusDetail),
		Message: strings.TrimSpace(in.Message), Source: source, TrackingLocation: location}
	in.TrackingCode = strings.TrimSpace(in.TrackingCode)
	if in.TrackingCode == "" {
		v.Add("tracking_code", "required", "is required")
	} else if len(in.TrackingCode) > 64 {
		v.Add("tracking_code", "too_long", "must be at most 64 characters")
	}
	var badTime *FieldError
	if in.OccurredAt != "" {
		at, err := time.Parse(time.RFC3339Nano, in.OccurredAt)
		switch {
		case err != nil:
			badTime = &FieldError{Field: "occurred_at", Code: "invalid", Message: "must be an RFC 3339 timestamp"}
		case InFuture(at, now):
			badTime = &FieldError{Field: "occurred_at", Code: "in_future", Message: "must not be more than 24 hours in the future"}
		default:
			e.OccurredAt = Timestamp{Time: at.UTC().Truncate(time.Microsecond)}
		}
	}
	var ve *ValidationError
	if errors.As(ValidateTrackingEvent(&e), &ve) {
		for _, f := range ve.Fields {
			// A bad occurred_at is reported as such, not as missing; the place under the name
			// the client sent it with.
			if f.Field != "occurred_at" || badTime == nil {
				if rest, ok := strings.CutPrefix(f.Field, "tracking_location."); ok {
					f.Field = locationField + "." + rest
				}
				v.Fields = append(v.Fields, f)
			}
		}
	}
	if badTime != nil {
		v.Fields = append(v.Fields, *badTime)
	}
	return e, v.Err()
}

// nonEmpty treats an empty string like an absent one.
func nonEmpty(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}
