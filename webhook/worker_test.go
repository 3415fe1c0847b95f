package webhook

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"Sun, 22 Nov 2026 03:10:00 GMT", 10 * time.Minute},
		{"Sun, 22 Nov 2026 02:50:00 GMT", 0},
		{"999999999", maxRetryAfter},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.v, now); got != tt.want {
			t.Errorf("RetryAfter(%q) = %v; want %v", tt.v, got, tt.want)
		}
	}
}

func TestJitter(t *testing.T) {
	d := 10 * time.Second
	seen := map[time.Duration]bool{}
	for i := range 200 {
		key := "sub/" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		got := Jitter(d, key, 1)
		if got < 9*time.Second || got > 11*time.Second {
			t.Errorf("Jitter(%v, %q, 1) = %v; want within ±10%%", d, key, got)
		}
		if again := Jitter(d, key, 1); again != got {
			t.Errorf("Jitter(%v, %q, 1) = %v then %v; want the same", d, key, got, again)
		}
		seen[got] = true
	}
	if len(seen) < 150 {
		t.Errorf("Jitter gave %d distinct delays for 200 records; want them spread", len(seen))
	}
}
