package shipping

import (
	"slices"
	"testing"
	"time"
)

func TestNextPoll(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		interval time.Duration
		failures int
		want     time.Duration
	}{
		{time.Hour, 0, time.Hour},
		{time.Hour, 1, 2 * time.Hour},
		{time.Hour, 2, 4 * time.Hour},
		{time.Hour, 4, 16 * time.Hour},
		{time.Hour, 5, 24 * time.Hour},
		{time.Hour, 1000, 24 * time.Hour},
		{time.Minute, 3, 8 * time.Minute},
		{48 * time.Hour, 0, 48 * time.Hour},
		{48 * time.Hour, 3, 48 * time.Hour},
	}
	for _, tt := range tests {
		if got := NextPoll(now, tt.interval, tt.failures).Sub(now); got != tt.want {
			t.Errorf("NextPoll(now, %v, %d) = now+%v; want now+%v", tt.interval, tt.failures, got, tt.want)
		}
	}
}

func TestPolled(t *testing.T) {
	for _, s := range LabelStatuses {
		want := s != LabelDelivered && s != LabelReturnToSender && s != LabelVoided
		if got := Polled(s); got != want {
			t.Errorf("Polled(%q) = %v; want %v", s, got, want)
		}
		if got := slices.Contains(PolledStatuses, s); got != want {
			t.Errorf("PolledStatuses holds %q: %v; want %v", s, got, want)
		}
	}
}
