package shipping

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTimestampJSON(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 3, 42, 3, 123456000, time.UTC), `"2026-11-22T03:42:03.123456Z"`},
		{time.Date(2026, 11, 22, 3, 42, 3, 500000000, time.UTC), `"2026-11-22T03:42:03.500000Z"`},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.FixedZone("EST", -5*3600)), `"2026-11-22T05:00:00.000000Z"`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(Timestamp{tt.in})
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
		var back Timestamp
		if err := json.Unmarshal(got, &back); err != nil || !back.Equal(tt.in) {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", got, back, err, tt.in)
		}
	}
}
