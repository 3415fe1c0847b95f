package shipping

import (
	"testing"
	"time"
)

func TestValidTrackingCode(t *testing.T) {
	for _, tt := range []struct {
		code string
		want bool
	}{
		{"1Z999AA10123456784", true},
		{"PL00000000000000018", true},
		{"AB-1234", true},
		{"ABC", false},                    // too short
		{string(make([]byte, 65)), false}, // too long
		{"AB 1234", false},                // a space
		{"AB/1234", false},                // a slash would break the URL
		{"ÄB1234", false},                 // not ASCII
		{"AB1234\n", false},               // a control character
	} {
		if got := ValidTrackingCode(tt.code); got != tt.want {
			t.Errorf("ValidTrackingCode(%q) = %v; want %v", tt.code, got, tt.want)
		}
	}
}

func TestVoidRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		attempts int
		want     time.Duration
	}{
		{1, time.Minute}, {2, 2 * time.Minute}, {3, 4 * time.Minute}, {6, 32 * time.Minute},
		{7, time.Hour}, {50, time.Hour},
	} {
		if got := VoidRetryAfter(tt.attempts); got != tt.want {
			t.Errorf("VoidRetryAfter(%d) = %v; want %v", tt.attempts, got, tt.want)
		}
	}
}

func TestVoidLease(t *testing.T) {
	for _, tt := range []struct {
		timeout, want time.Duration
	}{
		{0, 70 * time.Second}, // the default deadline, 30 s
		{time.Second, 12 * time.Second},
	} {
		if got := (&Buyer{Timeout: tt.timeout}).VoidLease(); got != tt.want {
			t.Errorf("VoidLease with timeout %v = %v; want %v", tt.timeout, got, tt.want)
		}
	}
}
