package shipping

import "time"

// TimeLayout is how the API writes timestamps: RFC 3339 in UTC with exactly six fractional
// digits, where time.Time's own JSON drops trailing zeros.
const TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// Timestamp is a time that marshals to JSON in TimeLayout. Every API resource's timestamps use
// it, in every domain package.
type Timestamp struct{ time.Time }

// MarshalJSON writes t in TimeLayout.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(TimeLayout)+2)
	return append(t.UTC().AppendFormat(append(b, '"'), TimeLayout), '"'), nil
}

// Recorded is t as the record keeps it: in UTC, to the microsecond.
func Recorded(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Stamp converts an optional time.
func Stamp(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	return &Timestamp{*t}
}
